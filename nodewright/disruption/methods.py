"""The disruption methods (Karpenter ``disruption/emptiness.go``, ``staticdrift.go``, ``drift.go``,
``consolidation.go``, ``multinodeconsolidation.go``, ``singlenodeconsolidation.go``).

Each method filters candidates (``should_disrupt``), then computes commands against the per-pool
budget mapping of its reason. Consolidation replaces at most with one NodeClaim whose worst-case
launch price is strictly below the candidates' summed price; an on-demand candidate's replacement
that could be spot or on-demand is pinned to spot; spot-to-spot needs the SpotToSpotConsolidation
gate and, for a single node, 15 cheaper options (the launch keeps the 15 cheapest, or as many as
minValues needs). Multi-node consolidation binary-searches the longest prefix (at most 100) of the
candidates sorted by savings ratio that consolidates, dropping replacement types that are not
cheaper than a same-type candidate. Balanced pools approve a move only when
(savings / pool cost) / (disruption / pool disruption) >= 1/2 (:mod:`.balanced`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from nodewright import labels
from nodewright.algebra.quantity import parse_quantity
from nodewright.algebra.requirements import Requirements as Reqs
from nodewright.disruption.balanced import Evaluator, ScoreResult
from nodewright.disruption.candidates import EVENTUAL, GRACEFUL, Candidate, consolidate_after_ns
from nodewright.disruption.filtered import SAVINGS, Sorted
from nodewright.disruption.simulate import Replacement, Simulation, cheapest_price
from nodewright.scheduling.instancetypes import satisfies_min_values

EMPTY: Final = "Empty"
DRIFTED: Final = "Drifted"
UNDERUTILIZED: Final = "Underutilized"
SPOT_TO_SPOT_MIN_TYPES: Final = 15
MULTI_NODE_MAX: Final = 100


@dataclass
class Command:
    method: str
    reason: str
    candidates: list[Candidate]
    replacements: list[Replacement] = field(default_factory=list)
    sim: Simulation | None = None
    scores: dict[str, ScoreResult] = field(default_factory=dict)

    @property
    def decision(self) -> str:
        if self.candidates and self.replacements:
            return "replace"
        return "delete" if self.candidates else "no-op"

    def source_cost(self) -> float:
        return sum(c.price for c in self.candidates)

    def estimated_savings(self) -> float:
        return self.source_cost() - sum(r.price() for r in self.replacements)


class Simulate(Protocol):
    """``SimulateScheduling`` of the candidates; ``claim_limit``: it may stop once it needs more
    new NodeClaims than that (its result then only says so), or not run at all when resource
    arithmetic shows it would (``over_limit``)."""

    def __call__(self, cands: Sequence[Candidate], claim_limit: int | None = None, /) -> Simulation: ...


Note = Callable[[Candidate, str], None]


@dataclass
class Env:
    """What a method needs from the loop: the simulation, gates, and where to report."""

    simulate: Simulate
    unconsolidatable: Note
    drift_blocked: Note
    spot_to_spot: bool
    evaluator: Evaluator
    # the candidate lists sorted by savings, kept between reconciles (methods of one reconcile
    # share the last one)
    sorted_kept: Sorted = field(default_factory=Sorted)


def sort_by_savings(cands: Sequence[Candidate], env: Env | None = None) -> list[Candidate]:
    """Savings ratio descending, by name on ties (Go's sort.Slice is not stable: ties are
    arbitrary there); with ``env``, a list sorted before (the same list object, or the previous
    list's successor) is not sorted again (the list returned is shared: read it only)."""
    if env is not None:
        return env.sorted_kept.sort(cands)
    return sorted(cands, key=SAVINGS)


# -- filters ----------------------------------------------------------------------------------------
def emptiness_should(c: Candidate, env: Env, consolidatable: bool) -> bool:
    if c.static:
        return False
    if consolidate_after_ns(c.pool) is None:
        env.unconsolidatable(c, f'NodePool "{c.pool.name}" has consolidation disabled')
        return False
    return c.is_empty() and consolidatable


def consolidation_should(c: Candidate, env: Env, consolidatable: bool) -> bool:
    if c.static:
        return False
    if c.instance_type is None:
        env.unconsolidatable(c, f'Instance Type "{c.node_labels.get(labels.INSTANCE_TYPE, "")}" not found')
        return False
    if labels.CAPACITY_TYPE not in c.node_labels:
        env.unconsolidatable(c, f'Node does not have label "{labels.CAPACITY_TYPE}"')
        return False
    if labels.ZONE not in c.node_labels:
        env.unconsolidatable(c, f'Node does not have label "{labels.ZONE}"')
        return False
    if consolidate_after_ns(c.pool) is None:
        env.unconsolidatable(c, f'NodePool "{c.pool.name}" has consolidation disabled')
        return False
    if c.is_empty():
        return False
    if c.pool.spec.disruption.consolidation_policy == "WhenEmpty":
        env.unconsolidatable(
            c, f'NodePool "{c.pool.name}" has consolidation policy WhenEmpty, but node is not empty'
        )
        return False
    return consolidatable


def drift_should(c: Candidate) -> bool:
    return not c.static and c.condition_true(DRIFTED)


def static_drift_should(c: Candidate) -> bool:
    return c.static and c.condition_true(DRIFTED)


DRIFT_ONLY: Final = frozenset({"static-drift", "drift"})
"""The methods whose filter keeps only ``Drifted=True`` nodes and notes nothing."""
CLASS: Final = {
    "emptiness": GRACEFUL,
    "static-drift": EVENTUAL,
    "drift": EVENTUAL,
    "multi-node-consolidation": GRACEFUL,
    "single-node-consolidation": GRACEFUL,
}
REASON: Final = {
    "emptiness": EMPTY,
    "static-drift": DRIFTED,
    "drift": DRIFTED,
    "multi-node-consolidation": UNDERUTILIZED,
    "single-node-consolidation": UNDERUTILIZED,
}


# the methods whose candidate filter is one function (its list is kept for the next of them)
FILTER: Final = {
    "multi-node-consolidation": "consolidation",
    "single-node-consolidation": "consolidation",
}


# -- emptiness --------------------------------------------------------------------------------------
def emptiness(cands: Sequence[Candidate], budgets: dict[str, int]) -> list[Command]:
    chosen: list[Candidate] = []
    for c in sort_by_savings(cands):
        if not c.is_empty():
            continue
        if budgets.get(c.pool_name, 0) == 0:
            continue
        chosen.append(c)
        budgets[c.pool_name] -= 1
    return [Command("emptiness", EMPTY, chosen)] if chosen else []


# -- drift ------------------------------------------------------------------------------------------
def _drifted_at(c: Candidate) -> str:
    claim = c.state.nodeclaim
    cond = claim.condition(DRIFTED) if claim is not None else None
    return (cond.last_transition_time or "") if cond is not None else ""


def drift(cands: Sequence[Candidate], budgets: dict[str, int], env: Env) -> list[Command]:
    ordered = sorted(sorted(cands, key=lambda c: c.name), key=_drifted_at)
    empty = [c for c in ordered if not c.reschedulable]
    busy = [c for c in ordered if c.reschedulable]
    for c in [*empty, *busy]:
        if budgets.get(c.pool_name, 0) == 0:
            continue
        sim = env.simulate([c])
        if not sim.all_non_pending_scheduled():
            env.drift_blocked(c, sim.error_text()[:1].upper() + sim.error_text()[1:])
            continue
        return [Command("drift", DRIFTED, [c], list(sim.new), sim)]
    return []


def static_drift(
    cands: Sequence[Candidate], budgets: dict[str, int], counts: Callable[[str], tuple[int, int]]
) -> list[Command]:
    """Per static pool: up to min(budget, drifted) replacements once the pool is not over its
    replicas (``counts(pool)`` = running nodes, nodes pending disruption)."""
    by_pool: dict[str, list[Candidate]] = {}
    for c in cands:
        by_pool.setdefault(c.pool_name, []).append(c)
    cmds: list[Command] = []
    for name, group in by_pool.items():
        pool = group[0].pool
        if budgets.get(name, 0) == 0:
            continue
        running, pending = counts(name)
        if running + pending > (pool.spec.replicas or 0):
            continue
        limit = pool.spec.limits.get("nodes")
        room = len(group) if limit is None else max(parse_quantity(str(limit)).milli // 1000 - running, 0)
        n = min(budgets[name], len(group), room)
        for c in group[:n]:
            cmds.append(Command("static-drift", DRIFTED, [c]))
    return cmds


# -- consolidation ----------------------------------------------------------------------------------
def compute_consolidation(cands: Sequence[Candidate], env: Env, method: str) -> Command | None:
    single = len(cands) == 1
    # several candidates are replaced by at most one NodeClaim: a simulation that needs a second
    # one is rejected whatever else it finds, so it may stop there (one candidate's note counts them)
    sim = env.simulate(cands, None if single else 1)
    if sim.over_limit:
        return None
    if not sim.all_non_pending_scheduled():
        if single:
            text = sim.error_text()
            env.unconsolidatable(cands[0], text[:1].upper() + text[1:])
        return None
    if not sim.new:
        return Command(method, UNDERUTILIZED, list(cands), [], sim)
    if len(sim.new) != 1:
        if single:
            env.unconsolidatable(cands[0], f"Can't remove without creating {len(sim.new)} candidates")
        return None
    price = sum(c.price for c in cands)
    rep = sim.new[0]
    # ordered by price once the price filters kept some (they keep the order, so ordering after
    # them is the same): most candidates fail on price, and then nothing needs ordering
    all_spot = all(c.capacity_type == labels.CAPACITY_TYPE_SPOT for c in cands)
    if all_spot and rep.capacity_types().has(labels.CAPACITY_TYPE_SPOT):
        return _spot_to_spot(cands, env, sim, rep, price, method)
    if not _cheaper_options(cands, env, rep, price, single):
        return None
    rep.order_by_price()
    ct = rep.capacity_types()
    if ct.has(labels.CAPACITY_TYPE_SPOT) and ct.has(labels.CAPACITY_TYPE_ON_DEMAND):
        rep.require(labels.CAPACITY_TYPE, labels.CAPACITY_TYPE_SPOT)
    return Command(method, UNDERUTILIZED, list(cands), [rep], sim)


def _cheaper_options(
    cands: Sequence[Candidate], env: Env, rep: Replacement, price: float, single: bool
) -> bool:
    """Keep the replacement's types whose worst-case launch price is below the candidates' and
    still meet minValues; False (with upstream's message for a single node) when none is left."""
    err = rep.remove_by_price_and_min_values(price)
    if err is not None:
        if single:
            env.unconsolidatable(cands[0], f"Filtering by price: {err}")
        return False
    if not rep.types:
        if single:
            env.unconsolidatable(cands[0], "Can't replace with a cheaper node")
        return False
    return True


def _spot_to_spot(
    cands: Sequence[Candidate], env: Env, sim: Simulation, rep: Replacement, price: float, method: str
) -> Command | None:
    single = len(cands) == 1
    if not env.spot_to_spot:
        if single:
            env.unconsolidatable(
                cands[0], "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node"
            )
        return None
    launch = rep.requirements.copy()  # the order is by price under the simulation's requirements
    rep.require(labels.CAPACITY_TYPE, labels.CAPACITY_TYPE_SPOT)
    rep.compatible()
    if not _cheaper_options(cands, env, rep, price, single):
        return None
    rep.order_by_price(launch)
    if not single:
        return Command(method, UNDERUTILIZED, list(cands), [rep], sim)
    if len(rep.types) < SPOT_TO_SPOT_MIN_TYPES:
        env.unconsolidatable(
            cands[0],
            f"SpotToSpotConsolidation requires {SPOT_TO_SPOT_MIN_TYPES} cheaper instance type options than "
            f"the current candidate to consolidate, got {len(rep.types)}",
        )
        return None
    keep = SPOT_TO_SPOT_MIN_TYPES
    if rep.requirements.has_min_values():
        needed, _, _ = satisfies_min_values(rep.requirements, rep.types)
        keep = max(keep, needed)
    rep.types = rep.types[:keep]
    return Command(method, UNDERUTILIZED, list(cands), [rep], sim)


def _filter_out_same_type(rep: Replacement, cands: Sequence[Candidate]) -> bool:
    """``filterOutSameInstanceType``: a replacement may not be one of the candidates' own types
    unless cheaper than that candidate's cheapest compatible offering; False when unusable."""
    existing: dict[str, float] = {}
    for c in cands:
        if c.instance_type is None:
            continue
        name = c.instance_type.name
        p = cheapest_price(c.instance_type, Reqs.from_labels(c.node_labels))
        existing.setdefault(name, float("inf"))
        if p < existing[name]:
            existing[name] = p
    max_price = float("inf")
    for it in rep.types:
        if it.name in existing and existing[it.name] < max_price:
            max_price = existing[it.name]
    err = rep.remove_by_price_and_min_values(max_price)
    return err is None and bool(rep.types)


def multi_node(cands: Sequence[Candidate], budgets: dict[str, int], env: Env) -> list[Command]:
    usable: list[Candidate] = []
    for c in sort_by_savings(cands, env):
        if budgets.get(c.pool_name, 0) == 0:
            continue
        usable.append(c)
        budgets[c.pool_name] -= 1
        if len(usable) > MULTI_NODE_MAX:
            break  # the search below reads at most the first MULTI_NODE_MAX + 1
    if len(usable) < 2:
        return []
    hi = min(len(usable), MULTI_NODE_MAX)
    if len(usable) <= hi:
        hi = len(usable) - 1
    lo = 1
    best: Command | None = None
    while lo <= hi:
        mid = (lo + hi) // 2
        batch = usable[: mid + 1]
        cmd = compute_consolidation(batch, env, "multi-node-consolidation")
        valid = cmd is not None and cmd.decision == "delete"
        if cmd is not None and cmd.decision == "replace":
            valid = _filter_out_same_type(cmd.replacements[0], batch)
        if valid and cmd is not None:
            approved, scores = env.evaluator.approve(cmd.candidates, cmd.estimated_savings())
            cmd.scores = scores
            valid = approved
        if valid:
            best = cmd
            lo = mid + 1
        else:
            hi = mid - 1
    return [best] if best is not None else []


def interweave(cands: Sequence[Candidate], env: Env | None = None) -> Iterator[Candidate]:
    """Sorted by savings ratio, then one per pool in turn (pools in order of first appearance;
    Karpenter takes Go map order, which is random); lazily (single-node consolidation usually
    stops at one of the first)."""
    by_pool: dict[str, list[Candidate]] = {}
    for c in sort_by_savings(cands, env):
        group = by_pool.get(c.pool_name)
        if group is None:
            by_pool[c.pool_name] = [c]
            yield c  # the first turn: each pool's first, as the pools first appear
        else:
            group.append(c)
    groups = [g for g in by_pool.values() if len(g) > 1]
    i = 1
    while groups:
        for group in groups:
            yield group[i]
        i += 1
        groups = [g for g in groups if len(g) > i]


def single_node(cands: Sequence[Candidate], budgets: dict[str, int], env: Env) -> list[Command]:
    for c in interweave(cands, env):
        if budgets.get(c.pool_name, 0) == 0:
            continue
        if not env.evaluator.can_pass(c):
            continue
        cmd = compute_consolidation([c], env, "single-node-consolidation")
        if cmd is None or cmd.decision == "no-op":
            continue
        approved, scores = env.evaluator.approve(cmd.candidates, cmd.estimated_savings())
        cmd.scores = scores
        if not approved:
            continue
        return [cmd]
    return []
