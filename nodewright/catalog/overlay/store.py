"""The NodeOverlay controller and its instance-type store, as pure functions over values.

Translates kubernetes-sigs/karpenter v1.14.1 ``pkg/controllers/nodeoverlay/controller.go``
(``Reconcile``: order overlays by weight, drop the ones failing ``RuntimeValidate``, refuse an
overlay that conflicts with one already kept, record the ``ValidationSucceeded`` condition) and
``store.go`` (``internalInstanceTypeStore``: per NodePool and instance type, the price change of
each offering and the capacity additions; ``apply`` builds the overlaid instance type), and
``pkg/cloudprovider/types.go`` ``AdjustedPrice`` / ``ApplyCapacityOverlay``.

Boundary: NodeOverlays, NodePools and their instance types in; an :class:`OverlayStore` (the
changes and each overlay's condition) out, and :func:`apply_all` to read instance types through
it. No files, no CLI, no feature gate (the caller decides whether overlays apply at all).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from nodewright import labels
from nodewright.algebra.quantity import parse_quantity
from nodewright.algebra.requirements import (
    ALLOW_UNDEFINED_WELL_KNOWN,
    Requirement,
    RequirementError,
    Requirements,
)
from nodewright.api.karpenter import NodePool
from nodewright.api.nodeoverlay import NodeOverlay
from nodewright.catalog.model import InstanceType, Offering
from nodewright.crd.runtime import nodeoverlay_problems

RUNTIME_VALIDATION: Final = "RuntimeValidation"
CONFLICT: Final = "Conflict"
CONFLICT_MESSAGE: Final = "conflict with another overlay"

OfferingKey = tuple[str, str, str]  # zone, capacity type, reservation id ("" when none)


def offering_key(o: Offering) -> OfferingKey:
    """Upstream keys a price change by ``offering.Requirements.String()``: one per offering."""
    return (o.zone, o.capacity_type, o.reservation_id or "")


def adjusted_price(price: float, change: str) -> float:
    """``AdjustedPrice``: an unsigned value replaces the price; ``+x``/``-x`` adds, ``+x%``/``-x%``
    scales; the result never goes below 0. The CRD patterns guarantee a valid number."""
    if change == "":
        return price
    if not change.startswith(("+", "-")):
        return float(change)
    out = price * (1 + float(change[:-1]) / 100) if change.endswith("%") else price + float(change)
    return out if out >= 0 else 0.0


@dataclass(frozen=True, kw_only=True)
class OverlayCondition:
    """An overlay's ``ValidationSucceeded`` condition as the controller would set it."""

    name: str
    succeeded: bool
    reason: str = ""
    message: str = ""


@dataclass
class _PriceUpdate:
    change: str
    lowest_weight: int


@dataclass
class _CapacityUpdate:
    update: dict[str, int] = field(default_factory=dict)
    lowest_weight_resources: frozenset[str] = frozenset()
    lowest_weight: int | None = None  # None: no capacity overlay recorded yet


@dataclass
class _TypeUpdate:
    price: dict[OfferingKey, _PriceUpdate] = field(default_factory=dict)
    capacity: _CapacityUpdate = field(default_factory=_CapacityUpdate)


@dataclass
class OverlayStore:
    """The controller's result: changes per NodePool and instance type, and every condition."""

    updates: dict[str, dict[str, _TypeUpdate]] = field(default_factory=dict)
    evaluated: set[str] = field(default_factory=set)
    conditions: list[OverlayCondition] = field(default_factory=list)

    def condition(self, name: str) -> OverlayCondition | None:
        return next((c for c in self.conditions if c.name == name), None)

    def succeeded(self) -> list[str]:
        return [c.name for c in self.conditions if c.succeeded]


def order_by_weight(overlays: Sequence[NodeOverlay]) -> list[NodeOverlay]:
    """``NodeOverlayList.OrderByWeight``: higher weight first; equal weights by name, Z to A."""
    by_name = sorted(overlays, key=lambda o: o.name.encode(), reverse=True)  # Go compares bytes
    return sorted(by_name, key=lambda o: -o.weight)  # stable: names stay Z to A within a weight


def overlay_requirements(overlay: NodeOverlay) -> Requirements:
    return Requirements(Requirement.new(r.key, r.operator, r.values) for r in overlay.spec.requirements)


def _offering_requirements(o: Offering) -> Requirements:
    reqs = [
        Requirement.new(labels.CAPACITY_TYPE, "In", (o.capacity_type,)),
        Requirement.new(labels.ZONE, "In", (o.zone,)),
        Requirement.new(labels.CAPACITY_RESERVATION_ID, "In", (o.reservation_id,))
        if o.reservation_id is not None
        else Requirement.new(labels.CAPACITY_RESERVATION_ID, "DoesNotExist"),
    ]
    if o.zone_id:
        reqs.append(Requirement.new(labels.ZONE_ID, "In", (o.zone_id,)))
    return Requirements(reqs)


class _Matcher:
    """``getOverlaidOfferings`` with requirements built once. An overlay naming no key of the
    NodePool's own requirements (``karpenter.sh/nodepool``, template labels) sees the same
    offerings of a type in every NodePool, so that answer is computed once per type."""

    def __init__(self) -> None:
        self._pool_reqs: dict[str, Requirements] = {}
        self._type_reqs: dict[tuple[str, int], Requirements] = {}
        self._offer_reqs: dict[int, Requirements] = {}
        self._shared: dict[tuple[int, int], list[Offering]] = {}  # (overlay index, id(type))

    def _pool(self, pool: NodePool) -> Requirements:
        reqs = self._pool_reqs.get(pool.name)
        if reqs is None:
            reqs = Requirements([Requirement.new(labels.NODEPOOL, "In", (pool.name,))])
            reqs.add_all(Requirements.from_labels(pool.spec.template.metadata.labels))
            self._pool_reqs[pool.name] = reqs
        return reqs

    def offerings(
        self, pool: NodePool, it: InstanceType, overlay_reqs: Requirements, overlay_index: int
    ) -> list[Offering]:
        pool_reqs = self._pool(pool)
        if not (overlay_reqs.keys() & pool_reqs.keys()):
            key = (overlay_index, id(it))
            found = self._shared.get(key)
            if found is None:
                found = self._shared[key] = self._match(it.requirements, it, overlay_reqs)
            return found
        type_key = (pool.name, id(it))
        reqs = self._type_reqs.get(type_key)
        if reqs is None:
            reqs = pool_reqs.copy()
            reqs.add_all(it.requirements)
            self._type_reqs[type_key] = reqs
        return self._match(reqs, it, overlay_reqs)

    def _match(self, reqs: Requirements, it: InstanceType, overlay_reqs: Requirements) -> list[Offering]:
        if not reqs.is_compatible(overlay_reqs):
            return []
        out = []
        for o in it.offerings:
            oreqs = self._offer_reqs.get(id(o))
            if oreqs is None:
                oreqs = self._offer_reqs[id(o)] = _offering_requirements(o)
            if overlay_reqs.is_compatible(oreqs, allow_undefined=ALLOW_UNDEFINED_WELL_KNOWN):
                out.append(o)
        return out


def _capacity(overlay: NodeOverlay) -> dict[str, int] | None:
    if overlay.spec.capacity is None:
        return None
    return {k: parse_quantity(v).milli for k, v in overlay.spec.capacity.items()}


def _price_change(overlay: NodeOverlay) -> str | None:
    return overlay.spec.price if overlay.spec.price is not None else overlay.spec.price_adjustment


def _conflicts(
    store: OverlayStore, pool: str, it_name: str, offers: list[Offering], overlay: NodeOverlay
) -> bool:
    update = store.updates.get(pool, {}).get(it_name)
    if update is None:
        return False
    if overlay.spec.price is not None or overlay.spec.price_adjustment is not None:
        for o in offers:
            prev = update.price.get(offering_key(o))
            if prev is not None and prev.lowest_weight == overlay.weight:
                return True
    if overlay.spec.capacity is not None:
        cap = update.capacity
        same_weight = cap.lowest_weight is not None and cap.lowest_weight == overlay.weight
        if same_weight and any(r in cap.lowest_weight_resources for r in overlay.spec.capacity):
            return True
    return False


def _store(
    store: OverlayStore, pool: str, it_name: str, offers: list[Offering], overlay: NodeOverlay
) -> None:
    change = _price_change(overlay)
    capacity = _capacity(overlay)
    if change is None and capacity is None:
        return
    update = store.updates.setdefault(pool, {}).setdefault(it_name, _TypeUpdate())
    if change is not None:
        for o in offers:
            prev = update.price.get(offering_key(o))
            if prev is not None:  # a heavier overlay already set it; remember the lower weight
                prev.lowest_weight = overlay.weight
                continue
            update.price[offering_key(o)] = _PriceUpdate(change=change, lowest_weight=overlay.weight)
    if capacity is not None:
        cap = update.capacity
        for resource, value in capacity.items():
            cap.update.setdefault(resource, value)  # a heavier overlay's value stays
        cap.lowest_weight_resources = frozenset(capacity)
        cap.lowest_weight = overlay.weight


def evaluate(
    overlays: Sequence[NodeOverlay],
    nodepools: Sequence[NodePool],
    types_for: Mapping[str, Sequence[InstanceType]],
) -> OverlayStore:
    """The controller's ``Reconcile`` over every NodePool whose instance types are known
    (``types_for``: NodePool name -> the cloud provider's instance types for it)."""
    store = OverlayStore()
    pools = [np for np in nodepools if np.name in types_for]
    matcher = _Matcher()
    failures: dict[str, str] = {}
    conflicting: set[str] = set()
    for index, overlay in enumerate(order_by_weight(overlays)):
        body = overlay.stored_body or overlay.to_k8s()
        problems = nodeoverlay_problems(body, file=overlay.origin_file, base="")
        if problems:
            failures[overlay.name] = "; ".join(p.message.split("; Karpenter's")[0] for p in problems)
            continue
        try:
            reqs = overlay_requirements(overlay)
        except RequirementError as exc:
            failures[overlay.name] = str(exc)
            continue
        matches = [
            (np.name, it.name, offers)
            for np in pools
            for it in types_for[np.name]
            if (offers := matcher.offerings(np, it, reqs, index))
        ]
        if any(_conflicts(store, p, n, offers, overlay) for p, n, offers in matches):
            conflicting.add(overlay.name)
            continue
        for p, n, offers in matches:
            _store(store, p, n, offers, overlay)
    store.evaluated.update(np.name for np in pools)
    for overlay in overlays:
        if overlay.name in failures:
            cond = OverlayCondition(
                name=overlay.name, succeeded=False, reason=RUNTIME_VALIDATION, message=failures[overlay.name]
            )
        elif overlay.name in conflicting:
            cond = OverlayCondition(
                name=overlay.name, succeeded=False, reason=CONFLICT, message=CONFLICT_MESSAGE
            )
        else:
            cond = OverlayCondition(name=overlay.name, succeeded=True)
        store.conditions.append(cond)
    return store


class UnevaluatedNodePoolError(LookupError):
    """``cloudprovider.NewUnevaluatedNodePoolError``: the store never saw this NodePool."""


def _with_cached_requirements(new: InstanceType, old: InstanceType) -> InstanceType:
    cached = old.__dict__.get("requirements")
    if cached is not None:
        new.__dict__["requirements"] = cached  # the requirements are shared, never modified
    return new


def apply_one(store: OverlayStore, pool: str, it: InstanceType) -> InstanceType:
    """``internalInstanceTypeStore.apply``: the instance type with its overlays (itself if none)."""
    update = store.updates.get(pool, {}).get(it.name)
    if update is None:
        return it
    capacity = it.capacity
    if update.capacity.update:
        capacity = {**it.capacity, **update.capacity.update}
    offerings = it.offerings
    if update.price:
        offerings = tuple(
            replace(o, price=adjusted_price(o.price, update.price[offering_key(o)].change))
            if offering_key(o) in update.price
            else o
            for o in it.offerings
        )
    return _with_cached_requirements(replace(it, capacity=capacity, offerings=offerings), it)


def apply_all(store: OverlayStore, pool: str, types: Sequence[InstanceType]) -> list[InstanceType]:
    """``InstanceTypeStore.ApplyAll``: every type through the store; an unevaluated NodePool is an error."""
    if pool not in store.evaluated:
        raise UnevaluatedNodePoolError(pool)
    if pool not in store.updates:
        return list(types)
    return [apply_one(store, pool, it) for it in types]
