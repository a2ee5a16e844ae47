"""NodeOverlays applied to the instance types a NodePool sees, as Karpenter v1.14.1 does.

Public API: :func:`overlay_catalogs` (the one entry point: NodeOverlays, NodePools, their
instance types and the feature gates in; an :class:`Overlaid` with each NodePool's overlaid
instance types and each overlay's ``ValidationSucceeded`` condition out), plus the pieces it is
made of: :func:`.store.evaluate` / :func:`.store.apply_all`
(the core controller and store, :mod:`.store`) and :func:`overlay_prices` /
:func:`price_unpriced` (the AWS provider's offering resolver pricing types the price list lacks).

Order, as upstream: the AWS provider builds offerings (an instance type without a public price
takes the ``price`` of a valid overlay naming it alone by ``node.kubernetes.io/instance-type In``,
aws/karpenter-provider-aws ``pkg/providers/instancetype/offering``: ``GetOverlayPrice``); the core
controller then evaluates every overlay against every NodePool's types and the cloud-provider
decorator (``pkg/cloudprovider/overlay``) returns them through the store. Everything is gated by
the ``NodeOverlay`` feature gate (off by default in v1.14.1).

Boundary: values in, values out; loading overlays is :mod:`nodewright.api.loading`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from nodewright import labels
from nodewright.api.karpenter import NodePool
from nodewright.api.nodeoverlay import NodeOverlay
from nodewright.catalog.aws import with_offerings
from nodewright.catalog.model import InstanceType
from nodewright.catalog.overlay.store import (
    OverlayCondition,
    OverlayStore,
    adjusted_price,
    apply_all,
    evaluate,
    order_by_weight,
)
from nodewright.settings import FeatureGates

TypesFor = Callable[[NodePool], Sequence[InstanceType]]


def merge_overlays(
    from_files: Sequence[NodeOverlay], from_cluster: Sequence[NodeOverlay]
) -> list[NodeOverlay]:
    """The overlays in force after the change: the cluster's, each replaced by the file's of the
    same name (the PR's version), plus the files' new ones."""
    names = {o.name for o in from_files}
    return [*(o for o in from_cluster if o.name not in names), *from_files]


def overlay_prices(overlays: Sequence[NodeOverlay], succeeded: set[str]) -> dict[str, float]:
    """``GetOverlayPrice``'s table: instance type -> price, from overlays whose condition is True,
    with an absolute ``price`` and exactly one requirement ``node.kubernetes.io/instance-type In``
    (of two naming a type, the later by name wins, as upstream's map does)."""
    prices: dict[str, float] = {}
    for o in sorted(overlays, key=lambda o: o.name):  # the API server lists by name
        if o.name not in succeeded or o.spec.price is None or len(o.spec.requirements) != 1:
            continue
        req = o.spec.requirements[0]
        if req.key != labels.INSTANCE_TYPE or req.operator != "In":
            continue
        try:
            price = float(o.spec.price)
        except ValueError:
            continue
        for name in req.values:
            prices[name] = price
    return prices


def is_unpriced(it: InstanceType, index: int) -> bool:
    """An offering left unavailable only because the price list has no price for its type
    (:func:`nodewright.catalog.aws.make_offerings` marks those ``unpriced``)."""
    o = it.offerings[index]
    return o.unpriced and not o.available


def price_unpriced(types: Sequence[InstanceType], prices: dict[str, float]) -> list[InstanceType]:
    """The offering resolver's fallback: unpriced offerings of a type in ``prices`` get that price
    and become available."""
    out = []
    for it in types:
        price = prices.get(it.name)
        if price is None or not any(is_unpriced(it, i) for i in range(len(it.offerings))):
            out.append(it)
            continue
        offerings = tuple(
            replace(o, price=price, available=True, unpriced=False) if is_unpriced(it, i) else o
            for i, o in enumerate(it.offerings)
        )
        out.append(with_offerings(it, offerings))
    return out


@dataclass(frozen=True, kw_only=True)
class Overlaid:
    """NodePool name -> its overlaid instance types, and every overlay's condition."""

    types: dict[str, list[InstanceType]] = field(default_factory=dict)
    conditions: tuple[OverlayCondition, ...] = ()
    applied: bool = False  # False: the NodeOverlay gate is off (types are the provider's)
    ignored: int = 0  # overlays present but not applied (gate off)

    def types_for(self, fallback: TypesFor) -> TypesFor:
        """A ``catalog_for`` reading the overlaid types (``fallback`` for NodePools not evaluated)."""

        def catalog_for(np: NodePool) -> Sequence[InstanceType]:
            found = self.types.get(np.name)
            return found if found is not None else fallback(np)

        return catalog_for

    def warnings(self) -> list[str]:
        """One line per overlay Karpenter would ignore, and for overlays the gate leaves unused."""
        if not self.applied:
            if not self.ignored:
                return []
            return [
                f"{self.ignored} NodeOverlay(s) ignored: the NodeOverlay feature gate is off "
                "(Karpenter v1.14.1's default); enable it with --feature-gates NodeOverlay=true"
            ]
        return [
            f'NodeOverlay "{c.name}": ValidationSucceeded=False ({c.reason}: {c.message}); '
            "Karpenter does not apply it"
            for c in self.conditions
            if not c.succeeded
        ]


def overlay_catalogs(
    overlays: Sequence[NodeOverlay],
    nodepools: Sequence[NodePool],
    catalog_for: TypesFor,
    *,
    gates: FeatureGates,
) -> Overlaid:
    """Every NodePool's instance types with the NodeOverlays applied (when the gate is on)."""
    if not gates.node_overlay:
        return Overlaid(ignored=len(overlays))
    base: dict[str, Sequence[InstanceType]] = {}
    for np in nodepools:
        base[np.name] = catalog_for(np)
    if not overlays:
        return Overlaid(types={k: list(v) for k, v in base.items()}, applied=True)
    # The controller's verdicts do not depend on prices or availability (it matches offerings by
    # their requirements), so one evaluation serves the offerings the resolver then prices.
    store = evaluate(overlays, nodepools, base)
    prices = overlay_prices(overlays, set(store.succeeded()))
    if prices:
        priced: dict[int, list[InstanceType]] = {}
        for name, types in base.items():
            key = id(types)
            if key not in priced:
                priced[key] = price_unpriced(types, prices)
            base[name] = priced[key]
    out = {np.name: apply_all(store, np.name, base[np.name]) for np in nodepools if np.name in base}
    return Overlaid(types=out, conditions=tuple(store.conditions), applied=True)


__all__ = [
    "Overlaid",
    "OverlayCondition",
    "OverlayStore",
    "TypesFor",
    "adjusted_price",
    "apply_all",
    "evaluate",
    "merge_overlays",
    "order_by_weight",
    "overlay_catalogs",
    "overlay_prices",
    "price_unpriced",
]
