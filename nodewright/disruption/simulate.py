"""``SimulateScheduling`` (Karpenter ``disruption/helpers.go``) through nodewright's own scheduler,
and the replacement NodeClaim's price rules (``provisioning/scheduling/nodeclaim.go``
``RemoveInstanceTypeOptionsByPriceAndMinValues``, ``cloudprovider/types.go`` ``OrderByPrice``,
``WorstLaunchPrice``).

One simulation: the candidates leave the active nodes (they are marked for deletion in a copy of
the state), and one provisioning round (:func:`nodewright.scheduling.plan.prepare_round`) places the
pending pods, the candidates' currently reschedulable pods and the pods of deleting nodes on the
remaining nodes and new NodeClaims. A pod placed on an uninitialized node that did not come from a
deleting node is an error ("would schedule against uninitialized ..."): disruption never relies
on capacity that has not come up.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from nodewright import labels
from nodewright.algebra.requirements import ALLOW_UNDEFINED_WELL_KNOWN, Requirement, Requirements
from nodewright.api.core import Pod, Taint
from nodewright.api.karpenter import NodePool
from nodewright.catalog.model import InstanceType, Offering
from nodewright.cluster.state import ClusterState
from nodewright.disruption.candidates import Candidate
from nodewright.disruption.claimbound import ClaimBounds
from nodewright.disruption.deleting import Deleting, deleting_pod_keys, mark_deleting
from nodewright.disruption.pods import PdbLimits
from nodewright.disruption.simbase import SimBase, universe_for
from nodewright.scheduling import podutil
from nodewright.scheduling.existingnode import StateNode
from nodewright.scheduling.identity import same_objects
from nodewright.scheduling.instancetypes import TypeIndex, satisfies_min_values
from nodewright.scheduling.nodememo import NodeMemo
from nodewright.scheduling.plan import MAX_INSTANCE_TYPES, CatalogFor, PlanOptions, prepare_round
from nodewright.scheduling.poddata import PodData
from nodewright.scheduling.scheduler import BEST_EFFORT, Scheduler
from nodewright.scheduling.topologybase import TopoViews
from nodewright.scheduling.topologydomains import DomainUniverse

_CT_ORDER: Final = (labels.CAPACITY_TYPE_RESERVED, labels.CAPACITY_TYPE_SPOT, labels.CAPACITY_TYPE_ON_DEMAND)
_INF: Final = float("inf")


def _compatible(o: Offering, reqs: Requirements) -> bool:
    return reqs.is_compatible(o.requirements, allow_undefined=ALLOW_UNDEFINED_WELL_KNOWN)


_OfferKey = tuple[str, str, str | None]


class Compatibility:
    """Whether an offering is compatible with ``reqs`` (which must not change while this is used),
    decided once per distinct offering requirement: an offering's requirements are its capacity
    type, zone and reservation, and a replacement's hundreds of types repeat a few of them."""

    __slots__ = ("allowed", "of_keys", "reqs", "seen")

    def __init__(self, reqs: Requirements) -> None:
        self.reqs = reqs
        self.seen: dict[tuple[str, str, str | None], bool] = {}
        self.allowed: set[tuple[str, str, str | None]] = set()
        # per (interned) set of a type's offering keys: those of them allowed (interned)
        self.of_keys: dict[int, tuple[frozenset[_OfferKey], frozenset[_OfferKey]]] = {}

    def check(self, key: tuple[str, str, str | None], o: Offering) -> bool:
        got = self.seen[key] = _compatible(o, self.reqs)
        if got:
            self.allowed.add(key)
        return got


_Offer = tuple[_OfferKey, str, float, Offering]
# per instance type (kept alive with its entry, so that ids are not reused): its available
# offerings as (compatibility key, capacity type, price, offering) and their keys (interned);
# types and offerings are frozen
_OFFERS: dict[int, tuple[InstanceType, tuple[_Offer, ...], frozenset[_OfferKey]]] = {}
# sets of offering keys, one object per value (so that a set's id names its value)
_KEYSETS: dict[frozenset[_OfferKey], frozenset[_OfferKey]] = {}
# per (type, id of the interned set of its offerings' keys a Compatibility allows): the type,
# its cheapest and its worst launch price
_PRICES: dict[tuple[int, int], tuple[InstanceType, float, float]] = {}
_OFFERS_MAX: Final = 50_000


def _interned(keys: frozenset[_OfferKey]) -> frozenset[_OfferKey]:
    got = _KEYSETS.get(keys)
    if got is None:
        if len(_KEYSETS) >= _OFFERS_MAX:
            # the ids the other caches hold name sets that go: they go too
            _KEYSETS.clear()
            _PRICES.clear()
            _OFFERS.clear()
        got = _KEYSETS[keys] = keys
    return got


def _available(it: InstanceType) -> tuple[InstanceType, tuple[_Offer, ...], frozenset[_OfferKey]]:
    got = _OFFERS.get(id(it))
    if got is None or got[0] is not it:
        if len(_OFFERS) >= _OFFERS_MAX:
            _OFFERS.clear()
        offers = tuple(
            ((o.capacity_type, o.zone, o.reservation_id), o.capacity_type, o.price, o)
            for o in it.offerings
            if o.available
        )
        keys = _interned(frozenset(k for k, _, _, _ in offers))
        got = _OFFERS[id(it)] = (it, offers, keys)
    return got


def _prices(it: InstanceType, ok: Compatibility) -> tuple[float, float]:
    """``it``'s cheapest compatible available offering's price and its worst launch price (see
    :func:`worst_launch_price`), kept per type and set of allowed offering keys."""
    _, offers, keys = _available(it)
    mine = ok.of_keys.get(id(keys))
    if mine is None or mine[0] is not keys:
        seen = ok.seen
        for key, _ct, _price, o in offers:
            if key not in seen:
                ok.check(key, o)
        mine = ok.of_keys[id(keys)] = (keys, _interned(keys & ok.allowed))
    allowed = mine[1]
    got = _PRICES.get((id(it), id(allowed)))
    if got is None or got[0] is not it:
        best = _INF
        worst: dict[str, float] = {}
        for key, ct, price, _o in offers:
            if key in allowed:
                if price < best:
                    best = price
                if price > worst.get(ct, -_INF):
                    worst[ct] = price
        dearest = next((worst[ct] for ct in _CT_ORDER if ct in worst), _INF)
        if len(_PRICES) >= _OFFERS_MAX:
            _PRICES.clear()
        got = _PRICES[(id(it), id(allowed))] = (it, best, dearest)
    return got[1], got[2]


# per list of types (by identity, in order): the types, their offering keys and one offering of
# each key; per (that list, the keys a Compatibility allows): each type's worst launch price
_LISTS: dict[tuple[int, ...], tuple[tuple[InstanceType, ...], dict[_OfferKey, Offering]]] = {}
_WORST: dict[
    tuple[tuple[int, ...], frozenset[_OfferKey]],
    tuple[tuple[InstanceType, ...], list[float], dict[float, list[InstanceType]]],
] = {}
_LISTS_MAX: Final = 2_000


def _worst_prices(types: Sequence[InstanceType], ok: Compatibility) -> list[float]:
    """:func:`worst_launch_price` of each of ``types`` (a replacement's options: the same lists
    recur across simulations), kept per list and set of allowed offering keys."""
    return _worst(types, ok)[1]


def _below(types: Sequence[InstanceType], ok: Compatibility, max_price: float) -> list[InstanceType]:
    """Of ``types``, in order, those whose worst launch price is below ``max_price``: a new list
    (kept per list, set of allowed offering keys and price, as :func:`_worst_prices`)."""
    _, worst, below = _worst(types, ok)
    kept = below.get(max_price)
    if kept is None:
        kept = below[max_price] = [it for it, w in zip(types, worst, strict=True) if w < max_price]
    return list(kept)


def _worst(
    types: Sequence[InstanceType], ok: Compatibility
) -> tuple[tuple[InstanceType, ...], list[float], dict[float, list[InstanceType]]]:
    ids = tuple(map(id, types))
    known = _LISTS.get(ids)
    if known is None or not same_objects(known[0], types):
        if len(_LISTS) >= _LISTS_MAX:
            _LISTS.clear()
            _WORST.clear()
        one: dict[_OfferKey, Offering] = {}
        for it in types:
            for key, _ct, _price, o in _available(it)[1]:
                one.setdefault(key, o)
        known = _LISTS[ids] = (tuple(types), one)  # holds the types: their ids are not reused
    seen = ok.seen
    for key, o in known[1].items():
        if key not in seen:
            ok.check(key, o)
    allowed = frozenset(k for k in known[1] if seen[k])
    got = _WORST.get((ids, allowed))
    if got is None or got[0] is not known[0]:
        got = _WORST[(ids, allowed)] = (known[0], [_prices(it, ok)[1] for it in types], {})
    return got


def cheapest_price(it: InstanceType, reqs: Requirements, ok: Compatibility | None = None) -> float:
    """The cheapest compatible available offering's price (infinite: none)."""
    return _prices(it, ok or Compatibility(reqs))[0]


def worst_launch_price(it: InstanceType, reqs: Requirements, ok: Compatibility | None = None) -> float:
    """``Offerings.Available().WorstLaunchPrice``: the dearest compatible offering of the capacity
    type the launch would use (reserved, then spot, then on-demand)."""
    return _prices(it, ok or Compatibility(reqs))[1]


@dataclass
class Replacement:
    """One new NodeClaim of a simulation: its pool, requirements and instance-type options."""

    pool: str
    requirements: Requirements
    types: list[InstanceType]
    pods: list[Pod]
    node_class: str = ""
    taints: list[Taint] = field(default_factory=list)

    def order_by_price(self, requirements: Requirements | None = None) -> None:
        """Cheapest first (by the cheapest offering compatible with ``requirements``, by default
        the replacement's own), then by name."""
        reqs = self.requirements if requirements is None else requirements
        ok = Compatibility(reqs)
        self.types.sort(key=lambda it: (cheapest_price(it, reqs, ok), it.name))

    def compatible(self) -> None:
        ok = Compatibility(self.requirements)
        self.types = [it for it in self.types if cheapest_price(it, self.requirements, ok) < _INF]

    def remove_by_price_and_min_values(self, max_price: float) -> str | None:
        """Keep the types whose worst-case launch price is below ``max_price``; the minValues
        error text when the rest no longer satisfies them (the replacement is then unusable)."""
        self.types = _below(self.types, Compatibility(self.requirements), max_price)
        _, _, err = satisfies_min_values(self.requirements, self.types)
        return err

    def require(self, key: str, *values: str) -> None:
        self.requirements.add(Requirement.new(key, "In", values))

    def capacity_types(self) -> Requirement:
        return self.requirements.get(labels.CAPACITY_TYPE)

    def launch(self) -> tuple[InstanceType, Offering] | None:
        """The first (cheapest) type and its cheapest compatible available offering."""
        for it in self.types[:1]:
            offers = [o for o in it.offerings if o.available and _compatible(o, self.requirements)]
            if offers:
                return it, min(offers, key=lambda o: (o.price, o.zone, o.capacity_type))
        return None

    def price(self) -> float:
        got = self.launch()
        return got[1].price if got is not None else 0.0

    def as_dict(self) -> dict[str, object]:
        ct = self.capacity_types()
        capacity = next((c for c in _CT_ORDER if ct.has(c)), labels.CAPACITY_TYPE_ON_DEMAND)
        zones = sorted(
            {
                o.zone
                for it in self.types
                for o in it.offerings
                if o.available and _compatible(o, self.requirements)
            }
        )
        out: dict[str, object] = {
            "nodePool": self.pool,
            "instanceTypes": [it.name for it in self.types],
            "capacityType": capacity,
            "zones": zones,
        }
        got = self.launch()
        if got is not None:
            it, o = got
            if o.reservation_id:
                out["reservationID"] = o.reservation_id
            out["launch"] = {
                "instanceType": it.name,
                "zone": o.zone,
                "capacityType": o.capacity_type,
                "price": round(o.price, 6),
            }
        return out


class Simulation:
    """``scheduling.Results`` as disruption reads them."""

    __slots__ = ("_origins", "_placed", "_placements", "errors", "new", "over_limit")

    def __init__(
        self,
        *,
        new: list[Replacement],
        errors: dict[str, str],  # non-pending pods that would not schedule
        placed: Sequence[tuple[str, Sequence[PodData]]] = (),
        over_limit: bool = False,
    ) -> None:
        self.new = new
        self.errors = errors
        # not solved: it would need more new NodeClaims than its limit, or leave a bound pod unscheduled
        self.over_limit = over_limit
        # where the pods went: (existing node name or "new:<i>", its pods), read only by the
        # command that completes
        self._placed = placed
        self._placements: dict[str, str] | None = None
        self._origins: set[str] | None = None

    @property
    def placements(self) -> dict[str, str]:
        """Pod key -> existing node name or "new:<i>"."""
        if self._placements is None:
            self._placements = {pd.key: where for where, pods in self._placed for pd in pods}
        return self._placements

    @property
    def origins(self) -> set[str]:
        """The nodes the placed pods are bound to now ("" for pending pods)."""
        if self._origins is None:
            self._origins = {pd.pod.spec.node_name or "" for _, pods in self._placed for pd in pods}
        return self._origins

    def all_non_pending_scheduled(self) -> bool:
        return not self.errors

    def error_text(self) -> str:
        if not self.errors:
            return "No Pod Scheduling Errors"
        parts = ["not all pods would schedule, "]
        keys = sorted(self.errors)
        for n, key in enumerate(keys):
            parts.append(f"{key} => {self.errors[key]} ")
            if n + 1 >= 5 and len(keys) > 5:
                parts.append(f" and {len(keys) - 5} other(s)")
                break
        return "".join(parts)


@dataclass
class SimCache:
    """What every simulation of one forecast shares: the topology domains of the NodePools, each
    NodePool's filtered instance types (rebuilt when the pools or types change), the per-node
    scheduling facts, and the current reconcile's :class:`~.simbase.SimBase`."""

    universe_key: tuple[object, ...] = ()
    universe: DomainUniverse | None = None
    type_cache: dict[tuple[object, ...], TypeIndex | None] = field(default_factory=dict)
    node_memo: NodeMemo = field(default_factory=NodeMemo)
    bounds: ClaimBounds | None = None  # the room facts of the claim bound, the last reconcile's
    base: SimBase | None = None
    # per Node and NodeClaim object, whether (and as which node name) it is deleting
    deleting: Deleting = field(default_factory=Deleting)
    # per Node object, its topology view (see TopologyBase)
    topo_nodes: TopoViews = field(default_factory=TopoViews)
    # what prepare_round keeps between rounds over the same catalogs
    round_kept: dict[str, Any] = field(default_factory=dict)
    # per Pod object, its entry among a node's moving pods (see SimBase._moving), under one key
    pod_entries: dict[int, tuple[Pod, Any]] = field(default_factory=dict)
    pod_entries_key: tuple[object, ...] | None = None


@dataclass(frozen=True, kw_only=True)
class SimContext:
    nodepools: Sequence[NodePool]
    catalog_for: CatalogFor
    options: PlanOptions
    pdbs: PdbLimits
    now: datetime
    cache: SimCache = field(default_factory=SimCache)
    # False: every simulation prepares its round from scratch (the reference the tests compare with)
    incremental: bool = True


def _scratch(
    cluster: ClusterState, candidates: Sequence[Candidate], ctx: SimContext
) -> tuple[list[PodData], Scheduler]:
    """A simulation's round prepared from the cluster with the candidates marked for deletion."""
    names = {c.name for c in candidates}
    nodes = tuple(mark_deleting(n) if n.metadata.name in names else n for n in cluster.nodes)
    view = dataclasses.replace(cluster, nodes=nodes, _node_index={})
    rnd = prepare_round(
        nodepools=ctx.nodepools,
        cluster=view,
        catalog_for=ctx.catalog_for,
        options=ctx.options,
    )
    universe_for(rnd, ctx)
    # only currently reschedulable pods of candidates and deleting nodes get new homes
    rnd.datas = [
        d
        for d in rnd.datas
        if not d.pod.spec.node_name or ctx.pdbs.is_currently_reschedulable(d.pod, ctx.now)
    ]
    return rnd.datas, rnd.scheduler()


def simulate(
    cluster: ClusterState,
    candidates: Sequence[Candidate],
    ctx: SimContext,
    *,
    state_nodes: Sequence[StateNode] | None = None,
    claim_limit: int | None = None,
) -> Simulation:
    """``SimulateScheduling`` of ``candidates`` leaving ``cluster`` (``state_nodes``: its state
    nodes, when already built). ``claim_limit``: the solve may stop once it has opened more new
    NodeClaims than that (then ``new`` holds more than ``claim_limit`` entries and the rest of the
    result is incomplete); kept only while no NodeClaim can be dropped afterwards for minValues. A
    simulation that resource arithmetic shows to need more than ``claim_limit`` NodeClaims (or to
    leave a bound pod unscheduled) is not solved at all: ``over_limit``."""
    got = None
    if ctx.incremental:
        base = ctx.cache.base
        if base is None or base.cluster is not cluster:
            base = ctx.cache.base = SimBase(cluster, ctx, state_nodes)
        if claim_limit is not None and base.needs_more_claims(candidates, claim_limit):
            return Simulation(new=[], errors={}, over_limit=True)
        got = base.round(candidates)
        deleting_keys = base.deleting_keys
    else:
        deleting_keys = deleting_pod_keys(cluster)
    if got is not None:
        datas, scheduler, pending = got
    else:
        datas, scheduler = _scratch(cluster, candidates, ctx)
        pending = {d.key for d in datas if podutil.is_provisionable(d.pod)}
    if claim_limit is not None and (
        ctx.options.min_values_policy == BEST_EFFORT
        or not any(t.requirements.has_min_values() for t in scheduler.templates)
    ):
        scheduler.claim_limit = claim_limit
    result = scheduler.solve(datas)
    errors: dict[str, str] = {}
    for key, err in result.errors.items():
        if key not in pending:
            errors[key] = err
    placed: list[tuple[str, Sequence[PodData]]] = []
    for en in result.placed_on():
        if not en.pods:
            continue
        placed.append((en.name, en.pods))
        if en.initialized:
            continue
        for pd in en.pods:
            if pd.key not in deleting_keys and pd.key not in pending:
                info = []
                if en.state.nodeclaim is not None:
                    info.append(f"nodeclaim/{en.state.nodeclaim.name}")
                if en.state.node is not None:
                    info.append(f"node/{en.state.node.metadata.name}")
                errors[pd.key] = f"would schedule against uninitialized {', '.join(info)}"
    new: list[Replacement] = []
    for claim in result.new_claims:
        idx = claim.template.types
        ordered = idx.order_by_price(claim.options, claim.requirements)[:MAX_INSTANCE_TYPES]
        types = [idx.types[i] for i in ordered]
        if claim.requirements.has_min_values() and ctx.options.min_values_policy != BEST_EFFORT:
            _, _, mv_err = satisfies_min_values(claim.requirements, types)
            if mv_err is not None:
                for pd in claim.pods:
                    if pd.key not in pending:
                        errors[pd.key] = (
                            "pod didn’t schedule because NodePool couldn’t meet minValues requirements, "
                            f"{mv_err} (NodePool={claim.template.name})"
                        )
                continue
        ref = claim.template.nodepool.spec.template.spec.node_class_ref
        placed.append((f"new:{len(new)}", claim.pods))
        reqs = claim.requirements.copy()
        # the placeholder hostname is the scheduler's, not a label the node will carry
        reqs = Requirements([r for r in reqs.values() if r.key != labels.HOSTNAME])
        new.append(
            Replacement(
                pool=claim.template.name,
                requirements=reqs,
                types=types,
                pods=[pd.pod for pd in claim.pods],
                node_class=ref.name,
                taints=list(claim.template.taints),
            )
        )
    return Simulation(new=new, errors=errors, placed=placed)
