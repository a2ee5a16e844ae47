"""Disruption candidates and per-reason budgets (Karpenter ``disruption/types.go`` ``NewCandidate``,
``helpers.go`` ``GetCandidatesWithTotals``/``BuildDisruptionBudgetMapping``, ``state/statenode.go``
``ValidateNodeDisruptable``/``ValidatePodsDisruptable``, ``nodeclaim/disruption/consolidation.go``).

A node is a candidate when it is managed (has a NodeClaim) and has a Node, is initialized, is not
deleting or marked for deletion, carries no ``karpenter.sh/do-not-disrupt: "true"``, has the
NodePool label of a known NodePool with instance types, and its pods allow eviction (no active
do-not-disrupt pod, no PDB at zero disruptions); for eventual methods (drift) a NodeClaim with a
``terminationGracePeriod`` ignores the pod-level blocks. The blocking texts are Karpenter's
``DisruptionBlocked`` event messages. ``Consolidatable`` is recomputed at the forecast's clock:
consolidation not disabled (``consolidateAfter: Never``), ``Initialized=True``, and
``consolidateAfter`` elapsed since the last pod event (else since initialization).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from nodewright import labels
from nodewright.api.core import Pod
from nodewright.api.karpenter import NodePool
from nodewright.catalog.model import InstanceType
from nodewright.disruption.pods import PdbLimits, pods_block_reason
from nodewright.drift.detect import parse_time
from nodewright.drift.rollout import allowed_disruptions
from nodewright.goduration import DurationError, parse_duration
from nodewright.scheduling import podutil
from nodewright.scheduling.existingnode import StateNode
from nodewright.scheduling.identity import Derived, Successor, by_identity, step
from nodewright.scheduling.podutil import eviction_cost

GRACEFUL: Final = "graceful"
EVENTUAL: Final = "eventual"
PER_NODE_BASE_COST: Final = 1.0
INSTANCE_TERMINATING: Final = "InstanceTerminating"


def consolidate_after_ns(pool: NodePool) -> int | None:
    """``spec.disruption.consolidateAfter`` in nanoseconds; ``None`` for ``Never``."""
    raw = pool.spec.disruption.consolidate_after
    if raw == "Never":
        return None
    try:
        return parse_duration(raw)
    except DurationError:
        return None


def _cond_true(sn: StateNode, type_: str) -> bool:
    if sn.nodeclaim is None:
        return False
    c = sn.nodeclaim.condition(type_)
    return c is not None and c.status == "True"


def consolidatable(sn: StateNode, pool: NodePool, now: datetime) -> bool:
    """The ``Consolidatable`` condition as the NodeClaim disruption controller sets it at ``now``."""
    after = consolidate_after_ns(pool)
    if after is None or sn.nodeclaim is None:
        return False
    init = sn.nodeclaim.condition("Initialized")
    if init is None or init.status != "True":
        return False
    if after == 0:
        return True
    since = parse_time(sn.nodeclaim.status.last_pod_event_time) or parse_time(init.last_transition_time)
    if since is None:
        return True
    return (now - since).total_seconds() * 1e9 >= after


@dataclass(eq=False)
class Candidate:
    """A disruptable node with its pool, instance type, price and costs."""

    state: StateNode
    pool: NodePool
    instance_type: InstanceType | None
    zone: str
    capacity_type: str
    price: float
    pods: list[Pod]
    reschedulable: list[Pod]
    reschedule_cost: float
    node_labels: dict[str, str] = field(default_factory=dict)
    # the sort by savings ratio (descending), ties by name: the fields above do not change
    savings_key: tuple[float, str] = field(init=False, repr=False)
    pool_name: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.savings_key = (-self.price / self.reschedule_cost, self.state.name)
        self.pool_name = self.pool.name

    @property
    def name(self) -> str:
        return self.state.name

    @property
    def claim_name(self) -> str:
        return self.state.nodeclaim.name if self.state.nodeclaim is not None else ""

    @property
    def static(self) -> bool:
        return self.pool.spec.replicas is not None

    def is_empty(self) -> bool:
        return self.reschedule_cost <= PER_NODE_BASE_COST

    def savings_ratio(self) -> float:
        return self.price / self.reschedule_cost

    def condition_true(self, type_: str) -> bool:
        return _cond_true(self.state, type_)

    def as_dict(self) -> dict[str, object]:
        return {
            "nodeClaim": self.claim_name,
            "node": self.name,
            "nodePool": self.pool.name,
            "instanceType": self.node_labels.get(labels.INSTANCE_TYPE, ""),
            "capacityType": self.capacity_type,
            "zone": self.zone,
            "price": round(self.price, 6),
        }


def node_price(sn_labels: Mapping[str, str], it: InstanceType | None) -> float:
    """``resolveNodePrice``: the offering of the node's zone and capacity type; 0 when unknown."""
    if it is None:
        return 0.0
    zone, ct = sn_labels.get(labels.ZONE), sn_labels.get(labels.CAPACITY_TYPE)
    rid = sn_labels.get(labels.CAPACITY_RESERVATION_ID)
    for o in it.offerings:
        if (
            o.zone == zone
            and o.capacity_type == ct
            and (ct != "reserved" or not rid or o.reservation_id == rid)
        ):
            return o.price
    return 0.0


def _annotations(sn: StateNode) -> dict[str, str]:
    if sn.node is not None:
        return dict(sn.node.metadata.annotations)
    return dict(sn.nodeclaim.metadata.annotations) if sn.nodeclaim is not None else {}


def node_block_reason(sn: StateNode) -> str | None:
    """``ValidateNodeDisruptable`` (lower case); nomination is not modelled."""
    if sn.nodeclaim is None:
        return "node isn't managed by karpenter"
    if sn.node is None:
        return "nodeclaim does not have an associated node"
    if not sn.initialized():
        return "node isn't initialized"
    if sn.marked_for_deletion() or deleted(sn):
        return "node is deleting or marked for deletion"
    if _annotations(sn).get(labels.DO_NOT_DISRUPT) == "true":
        return f'disruption is blocked through the "{labels.DO_NOT_DISRUPT}" annotation'
    if labels.NODEPOOL not in sn.labels():
        return f"node doesn't have required label (label={labels.NODEPOOL})"
    return None


def deleted(sn: StateNode) -> bool:
    return sn.nodeclaim is not None and (
        sn.nodeclaim.metadata.deletion_timestamp is not None or _cond_true(sn, INSTANCE_TERMINATING)
    )


def sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


@dataclass
class Blocked:
    node: str
    node_claim: str
    reason: str


def new_candidate(
    sn: StateNode,
    *,
    pools: Mapping[str, NodePool],
    types: Mapping[str, Mapping[str, InstanceType]],
    pdbs: PdbLimits,
    now: datetime,
    disruption_class: str,
    blocked: Callable[[Blocked], None],
) -> Candidate | None:
    why = node_block_reason(sn)
    if why is not None:
        if sn.nodeclaim is not None:
            blocked(Blocked(sn.name, sn.nodeclaim.name, sentence(why)))
        return None
    assert sn.nodeclaim is not None
    node_labels = sn.labels()
    pool_name = node_labels.get(labels.NODEPOOL, "")
    pool, type_map = pools.get(pool_name), types.get(pool_name)
    if pool is None or type_map is None:
        blocked(Blocked(sn.name, sn.nodeclaim.name, f"NodePool not found (NodePool={pool_name})"))
        return None
    it = type_map.get(node_labels.get(labels.INSTANCE_TYPE, ""))
    pods = list(sn.pods)
    err = pods_block_reason(pods, pdbs, now)
    if err is not None:
        eventual = sn.nodeclaim.spec.termination_grace_period is not None and disruption_class == EVENTUAL
        if not eventual:
            blocked(Blocked(sn.name, sn.nodeclaim.name, sentence(err)))
            return None
    resched = [p for p in pods if podutil.is_reschedulable(p)]
    return Candidate(
        state=sn,
        pool=pool,
        instance_type=it,
        zone=node_labels.get(labels.ZONE, ""),
        capacity_type=node_labels.get(labels.CAPACITY_TYPE, ""),
        price=node_price(node_labels, it),
        pods=pods,
        reschedulable=resched,
        reschedule_cost=PER_NODE_BASE_COST + sum(max(0.0, eviction_cost(p)) for p in resched),
        node_labels=node_labels,
    )


def node_disruption_cost(sn: StateNode) -> float:
    """``StateNode.DisruptionCost``: the base cost plus each reschedulable pod's eviction cost."""
    return PER_NODE_BASE_COST + sum(
        max(0.0, eviction_cost(p)) for p in sn.pods if podutil.is_reschedulable(p)
    )


@dataclass(frozen=True)
class PoolBudget:
    pool: str
    reason: str
    allowed: int
    disrupting: int
    nodes: int

    @property
    def remaining(self) -> int:
        return max(self.allowed - self.disrupting, 0)


class PoolTally:
    """:func:`pool_node_counts` kept between calls: each state node's answer (a StateNode's objects
    do not change) and the counts, moved by the state nodes that left and came."""

    def __init__(self) -> None:
        self.derived: Derived[StateNode, tuple[str, bool]] = Derived(pool_count)
        self.num: Counter[str] = Counter()
        self.busy: Counter[str] = Counter()

    def counts(self, state_nodes: Sequence[StateNode]) -> tuple[dict[str, int], dict[str, int]]:
        _, gone, came = self.derived.changes(state_nodes)
        num, busy = self.num, self.busy
        for pool, disrupting in gone:
            num[pool] -= 1
            if disrupting:
                busy[pool] -= 1
        for pool, disrupting in came:
            num[pool] += 1
            if disrupting:
                busy[pool] += 1
        return {k: v for k, v in num.items() if v > 0}, {k: v for k, v in busy.items() if v > 0}


def pool_node_counts(
    state_nodes: Sequence[StateNode], kept: PoolTally | None = None
) -> tuple[dict[str, int], dict[str, int]]:
    """Per pool, its initialized, not terminating nodes, and those of them already disrupting
    (NotReady or marked for deletion): what every reason's budget mapping counts. ``kept``: the
    counts of earlier calls, moved by the state nodes that changed."""
    return (kept if kept is not None else PoolTally()).counts(state_nodes)


def pool_count(sn: StateNode) -> tuple[str, bool] | None:
    """The node's pool and whether it is disrupting, when its pool's budgets count it."""
    if sn.nodeclaim is None or not sn.initialized() or _cond_true(sn, INSTANCE_TERMINATING):
        return None
    ready = sn.node is not None and any(
        c.type == "Ready" and c.status == "True" for c in sn.node.status.conditions
    )
    return sn.label(labels.NODEPOOL) or "", not ready or sn.marked_for_deletion()


@dataclass
class BudgetMemo:
    """What budget mappings keep between calls of one forecast (its NodePools are never changed in
    place; they are held, so their ids are not reused): each pool's budgets as data, and each
    pool's mapping per reason for the clock and node counts it was made for."""

    budgets: dict[int, tuple[NodePool, list[dict[str, Any]]]] = field(default_factory=dict)
    mapped: dict[tuple[str, str], tuple[NodePool, tuple[datetime, int, int], PoolBudget]] = field(
        default_factory=dict
    )


def budget_mapping(
    state_nodes: Sequence[StateNode],
    pools: Sequence[NodePool],
    reason: str,
    now: datetime,
    counts: tuple[dict[str, int], dict[str, int]] | None = None,
    kept: BudgetMemo | None = None,
) -> dict[str, PoolBudget]:
    """``BuildDisruptionBudgetMapping``: per pool, allowed disruptions for ``reason`` minus the
    initialized nodes already disrupting (NotReady or marked for deletion); invalid budgets: 0.
    ``counts``: :func:`pool_node_counts` of ``state_nodes``, when already known; ``kept``: the
    pools' budgets as data, kept between calls."""
    num, disrupting = counts if counts is not None else pool_node_counts(state_nodes)
    out: dict[str, PoolBudget] = {}
    for np in pools:
        n, busy = num.get(np.name, 0), disrupting.get(np.name, 0)
        got = kept.mapped.get((np.name, reason)) if kept is not None else None
        if got is not None and got[0] is np and got[1] == (now, n, busy):
            out[np.name] = got[2]
            continue
        budgets = _budgets(np, kept.budgets if kept is not None else None)
        allowed, errors = allowed_disruptions(budgets, now, n, reason)
        out[np.name] = PoolBudget(
            pool=np.name, reason=reason, allowed=0 if errors else allowed, disrupting=busy, nodes=n
        )
        if kept is not None:
            kept.mapped[(np.name, reason)] = (np, (now, n, busy), out[np.name])
    return out


def _budgets(
    np: NodePool, kept: dict[int, tuple[NodePool, list[dict[str, Any]]]] | None
) -> list[dict[str, Any]]:
    """The NodePool's disruption budgets as plain data (``kept``: per NodePool object, which a
    forecast never changes)."""
    got = kept.get(id(np)) if kept is not None else None
    if got is None or got[0] is not np:
        got = (np, [b.model_dump(exclude_none=True) for b in np.spec.disruption.budgets])
        if kept is not None:
            kept[id(np)] = got  # holds the NodePool: its id is not reused
    return got[1]


@dataclass(slots=True)
class _Verdict:
    node: object
    nodeclaim: object
    pods: tuple[Pod, ...]  # kept alive with the entry, so their ids are not reused
    ids: tuple[int, ...]
    candidate: Candidate | None
    blocked: list[Blocked]


class CandidateMemo:
    """Each node's verdict per disruption class while its Node, NodeClaim and pods are the same
    objects (one forecast: NodePools, instance types, PDBs and clock do not change)."""

    def __init__(self) -> None:
        self._by_key: dict[tuple[str, str], _Verdict] = {}
        # per disruption class: the state last asked about, its nodes and their candidates (by
        # identity), for a state that says what left and came since (identity.Successor)
        self.last: dict[
            str,
            tuple[Sequence[StateNode], dict[int, StateNode], dict[int, Candidate | None], list[Candidate]],
        ] = {}

    def get(self, sn: StateNode, disruption_class: str, slot: str | None = None) -> _Verdict | None:
        """``slot``: ``"candidate-" + disruption_class``, when known."""
        slot = slot or "candidate-" + disruption_class
        mine = sn.memo.get(slot)
        if isinstance(mine, _Verdict):
            return mine
        got = self._by_key.get((sn.name, disruption_class))
        if (
            got is not None
            and got.node is sn.node
            and got.nodeclaim is sn.nodeclaim
            and got.ids == tuple(map(id, sn.pods))
        ):
            sn.memo[slot] = got
            return got
        return None

    def put(
        self, sn: StateNode, disruption_class: str, candidate: Candidate | None, blocked: list[Blocked]
    ) -> None:
        self._by_key[(sn.name, disruption_class)] = sn.memo["candidate-" + disruption_class] = _Verdict(
            sn.node, sn.nodeclaim, tuple(sn.pods), tuple(map(id, sn.pods)), candidate, blocked
        )


def get_candidates(
    state: Sequence[StateNode],
    *,
    pools: Mapping[str, NodePool],
    types: Mapping[str, Mapping[str, InstanceType]],
    pdbs: PdbLimits,
    now: datetime,
    disruption_class: str,
    memo: CandidateMemo | None = None,
    want_blocked: bool = True,
) -> tuple[list[Candidate], list[Blocked]]:
    """``GetCandidates`` before the method's own filter: the candidates, and why the others are not
    (unless ``want_blocked`` is false: then none). ``memo``: verdicts kept from earlier calls of the
    same forecast."""
    blocked: list[Blocked] = []
    slot = "candidate-" + disruption_class

    def verdict(sn: StateNode) -> Candidate | None:
        got = memo.get(sn, disruption_class, slot) if memo is not None else None
        if got is not None:
            if want_blocked and got.blocked:
                blocked.extend(got.blocked)
            return got.candidate
        mine: list[Blocked] = []
        c = new_candidate(
            sn,
            pools=pools,
            types=types,
            pdbs=pdbs,
            now=now,
            disruption_class=disruption_class,
            blocked=mine.append,
        )
        blocked.extend(mine)
        if memo is not None:
            memo.put(sn, disruption_class, c, mine)
        return c

    last = memo.last.get(disruption_class) if memo is not None and not want_blocked else None
    known = step(last[1], last[0], state) if last is not None else None
    out: list[Candidate]
    if last is not None and known is not None:
        # what left and came since the state last asked about: only those are visited (the others'
        # verdicts are kept, and blocked ones are not wanted); the list says what left and came
        _, held, of, before = last
        left = {id(c): c for sn in known[0] if (c := of.pop(id(sn))) is not None}
        for sn in known[0]:
            del held[id(sn)]
        came: dict[int, Candidate] = {}
        for sn in known[1]:
            held[id(sn)] = sn
            c = of[id(sn)] = verdict(sn)
            if c is not None and left.pop(id(c), None) is None:
                came[id(c)] = c
        cands = [c for c in map(of.__getitem__, map(id, state)) if c is not None]
        out = Successor(cands, before, list(left.values()), list(came.values()))
    else:
        held, of = by_identity(state), {}
        for sn in state:
            of[id(sn)] = verdict(sn)
        out = [c for c in map(of.__getitem__, map(id, state)) if c is not None]
    if memo is not None:
        memo.last[disruption_class] = (state, held, of, out)
    return out, blocked
