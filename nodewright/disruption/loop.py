"""The disruption controller's loop as a forecast (Karpenter ``disruption/controller.go``).

A reconcile tries the methods in production order (emptiness, static drift, drift, multi-node
consolidation, single-node consolidation); the first that yields commands ends it. Without
``until_quiet`` nothing completes: the commands' candidates stay marked for deletion (they consume
budgets and their pods are pods of deleting nodes) and replacements are launched but never
initialize; reconciles repeat until one yields nothing. With ``until_quiet`` each command completes
before the next reconcile: replacements come up initialized and receive the moved pods, the
candidates leave; the loop stops at steady state. Both stop at ``max_rounds``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, Literal

from nodewright import labels
from nodewright.api.karpenter import NodeClaim, NodePool
from nodewright.catalog.model import InstanceType
from nodewright.cluster.state import ClusterState
from nodewright.disruption import methods as m
from nodewright.disruption.balanced import BALANCED, Evaluator, Totals
from nodewright.disruption.candidates import (
    BudgetMemo,
    Candidate,
    CandidateMemo,
    PoolTally,
    budget_mapping,
    consolidatable,
    get_candidates,
    node_disruption_cost,
    node_price,
    pool_node_counts,
)
from nodewright.disruption.deleting import mark_deleting
from nodewright.disruption.filtered import Filtered, Sorted
from nodewright.disruption.pods import PdbLimits
from nodewright.disruption.result import (
    BlockedNode,
    BlockedPool,
    CommandResult,
    DisruptionForecast,
    Unconsolidatable,
)
from nodewright.disruption.simbase import carry_entries
from nodewright.disruption.simulate import Replacement, SimCache, SimContext, simulate
from nodewright.disruption.world import World, drifted_claim, replacement_objects, state_notes
from nodewright.scheduling.existingnode import StateNode, build_state_nodes
from nodewright.scheduling.identity import Derived
from nodewright.scheduling.nodeclaim import template_requirements
from nodewright.scheduling.plan import CatalogFor, PlanOptions
from nodewright.settings import KarpenterSettings

METHODS: Final = (
    "emptiness",
    "static-drift",
    "drift",
    "multi-node-consolidation",
    "single-node-consolidation",
)
DRIFT_METHODS: Final = ("emptiness", "static-drift", "drift")
"""``scope="drift"``: the methods that roll drifted nodes (emptiness only for drifted nodes)."""
MAX_ROUNDS: Final = 10_000


@dataclass
class _Notes:
    blocked: dict[str, BlockedNode] = field(default_factory=dict)
    pools: dict[tuple[str, str], BlockedPool] = field(default_factory=dict)
    unconsolidatable: dict[str, str] = field(default_factory=dict)
    record_blocked: bool = True


class _Forecast:
    def __init__(
        self,
        *,
        nodepools: Sequence[NodePool],
        cluster: ClusterState,
        catalog_for: CatalogFor,
        settings: KarpenterSettings,
        at: datetime,
        until_quiet: bool,
    ) -> None:
        self.pools = list(nodepools)
        self.pool_map = {np.name: np for np in self.pools}
        self._any_balanced = any(np.spec.disruption.consolidation_policy == BALANCED for np in self.pools)
        self.types: dict[str, dict[str, InstanceType]] = {}
        for np in self.pools:
            its = list(catalog_for(np))
            if its:
                self.types[np.name] = {it.name: it for it in its}
        self.catalog_for = catalog_for
        self.at = at
        self.at_text = at.strftime("%Y-%m-%dT%H:%M:%SZ")
        self.until_quiet = until_quiet
        self.settings = settings
        self.pdbs = PdbLimits(cluster.pdbs)
        self.world = World(cluster, list(cluster.nodes), list(cluster.nodeclaims), list(cluster.pods))
        self.notes = _Notes()
        self.sim_cache = SimCache()
        self.candidate_memo = CandidateMemo()
        self._consolidatable: dict[int, tuple[Candidate, bool]] = {}
        # per method, per candidate (by identity): whether its filter keeps it, and its note
        self._should_memo: dict[str, dict[int, tuple[Candidate, bool, str | None]]] = {}
        self._budgets = BudgetMemo()
        self._counted = PoolTally()
        self._drifted: Derived[NodeClaim, bool] = Derived(_drifted_or_none)
        self._none_drifted = False
        self._filtered: dict[str, Filtered] = {}  # per method, its filter kept between reconciles
        self._sorted: dict[str, Sorted] = {}  # per disruption class, its savings order
        self._node_costs: dict[str, tuple[object, object, tuple[int, ...], object, float, float]] = {}
        self.options = PlanOptions(
            preference_policy=settings.preference_policy, min_values_policy=settings.min_values_policy
        )
        # waves (see forecast's ``waves``): the commands in flight, completed together
        self.methods: Sequence[str] = METHODS
        self.drift_only = False
        self.waves = False
        self.in_flight: list[tuple[m.Command, list[str]]] = []

    # -- prices -------------------------------------------------------------------------------------
    def price_of(self, sn: StateNode) -> float:
        if sn.nodeclaim is None:
            return 0.0
        lab = sn.labels()
        it = self.types.get(lab.get(labels.NODEPOOL, ""), {}).get(lab.get(labels.INSTANCE_TYPE, ""))
        return node_price(lab, it)

    def _costs(self, sn: StateNode) -> tuple[float, float]:
        """``price_of`` and ``node_disruption_cost`` of ``sn``, kept while its objects are the same."""
        mine = sn.memo.get("costs")
        if mine is not None:
            return mine  # type: ignore[no-any-return]
        got = self._node_costs.get(sn.name)
        ids = tuple(map(id, sn.pods))
        if got is None or got[0] is not sn.node or got[1] is not sn.nodeclaim or got[2] != ids:
            got = (sn.node, sn.nodeclaim, ids, tuple(sn.pods), self.price_of(sn), node_disruption_cost(sn))
            self._node_costs[sn.name] = got
        sn.memo["costs"] = (got[4], got[5])
        return got[4], got[5]

    def cluster_cost(self, nodes: Sequence[StateNode]) -> float:
        return sum(self.price_of(sn) for sn in nodes if not sn.marked_for_deletion())

    # -- one reconcile ------------------------------------------------------------------------------
    def candidates(self, state: Sequence[StateNode], method: str) -> list[Candidate]:
        out, blocked = get_candidates(
            state,
            pools=self.pool_map,
            types=self.types,
            pdbs=self.pdbs,
            now=self.at,
            disruption_class=m.CLASS[method],
            memo=self.candidate_memo,
            want_blocked=self.notes.record_blocked,
        )
        if self.notes.record_blocked:
            for b in blocked:
                if b.node not in self.notes.blocked:
                    self.notes.blocked[b.node] = BlockedNode(
                        node=b.node, node_claim=b.node_claim, reason=b.reason
                    )
        return out

    def env(
        self, cluster: ClusterState, all_cands: Sequence[Candidate], state: Sequence[StateNode], cls: str
    ) -> m.Env:
        ctx = SimContext(
            nodepools=self.pools,
            catalog_for=self.catalog_for,
            options=self.options,
            pdbs=self.pdbs,
            now=self.at,
            cache=self.sim_cache,
        )

        def note(c: Candidate, msg: str) -> None:
            self.notes.unconsolidatable[c.claim_name] = msg

        def drift_blocked(c: Candidate, msg: str) -> None:
            if c.name not in self.notes.blocked:
                self.notes.blocked[c.name] = BlockedNode(node=c.name, node_claim=c.claim_name, reason=msg)

        return m.Env(
            simulate=lambda cands, limit=None: simulate(
                cluster, cands, ctx, state_nodes=state, claim_limit=limit
            ),
            unconsolidatable=note,
            drift_blocked=drift_blocked,
            spot_to_spot=self.settings.feature_gates.spot_to_spot_consolidation,
            # the totals are read only for Balanced pools' moves
            evaluator=Evaluator(self._totals(all_cands, state) if self._any_balanced else None),
            sorted_kept=self._sorted.setdefault(cls, Sorted()),
        )

    def _totals(self, cands: Sequence[Candidate], state: Sequence[StateNode]) -> dict[str, Totals]:
        by_name = {c.name: c for c in cands}
        cost: dict[str, float] = {}
        disruption: dict[str, float] = {}
        for sn in state:
            pool = sn.label(labels.NODEPOOL) if sn.nodeclaim is not None else None
            if pool is None:
                continue
            price, node_cost = self._costs(sn)
            cost[pool] = cost.get(pool, 0.0) + price
            c = by_name.get(sn.name)
            disruption[pool] = disruption.get(pool, 0.0) + (c.reschedule_cost if c is not None else node_cost)
        return {p: Totals(cost.get(p, 0.0), disruption[p]) for p in disruption}

    def reconcile(self) -> tuple[list[m.Command], list[StateNode]] | None:
        cluster = self.world.cluster()
        state = self.world.state(cluster)
        by_class: dict[str, tuple[list[Candidate], m.Env]] = {}
        counts: tuple[dict[str, int], dict[str, int]] | None = None
        # the consolidation methods' filter is one function: its list (and notes) once a reconcile
        filtered: dict[tuple[str, str], list[Candidate]] = {}
        drifted: bool | None = None
        for method in self.methods:
            cls = m.CLASS[method]
            if method in m.DRIFT_ONLY and not self.notes.record_blocked:
                if drifted is None:
                    drifted = self._any_drifted()
                if not drifted:
                    continue  # its filter keeps only drifted nodes: nothing to find, nothing to note
            if cls not in by_class:
                found = self.candidates(state, method)
                by_class[cls] = (found, self.env(cluster, found, state, cls))
            all_cands, env = by_class[cls]
            fkey = (cls, m.FILTER.get(method, method))
            cands = filtered.get(fkey)
            if cands is None:
                cands = filtered[fkey] = self._filter(method, all_cands, env)
            if not cands:
                continue
            reason = m.REASON[method]
            if counts is None:
                counts = pool_node_counts(state, self._counted)
            mapping = budget_mapping(state, self.pools, reason, self.at, counts, self._budgets)
            for b in mapping.values():
                if b.nodes and b.remaining == 0 and (b.pool, reason) not in self.notes.pools:
                    self.notes.pools[(b.pool, reason)] = BlockedPool(
                        node_pool=b.pool, reason=reason, allowed=b.allowed, disrupting=b.disrupting
                    )
            budgets = {name: b.remaining for name, b in mapping.items()}
            cmds = self._compute(method, cands, budgets, env, state)
            if cmds:
                return cmds, state
        return None

    def _filter(self, method: str, cands: Sequence[Candidate], env: m.Env) -> list[Candidate]:
        """The candidates the method's filter keeps, with its notes (each decided once, see _should)."""
        if self.drift_only and method == "emptiness":
            return [c for c in cands if self._should(method, c, env)]
        memo = self._should_memo.setdefault(method, {})

        def verdict(c: Candidate) -> tuple[bool, str | None]:
            got = memo.get(id(c))
            if got is None or got[0] is not c:
                self._should(method, c, env)  # says its note
                got = memo[id(c)]
            elif got[2] is not None:
                env.unconsolidatable(c, got[2])
            return got[1], got[2]

        return self._filtered.setdefault(method, Filtered()).run(cands, verdict, env.unconsolidatable)

    def _any_drifted(self) -> bool:
        """Whether a NodeClaim of the world is ``Drifted=True`` (per NodeClaim object). Once none is,
        none becomes so: marks are made before the first reconcile, never on claims made later."""
        if self._none_drifted:
            return False
        got = bool(self._drifted.facts(self.world.claims))
        self._none_drifted = not got
        return got

    def _should(self, method: str, c: Candidate, env: m.Env) -> bool:
        """The method's filter, once per candidate and method (its note replayed)."""
        if self.drift_only and method == "emptiness" and not c.condition_true(m.DRIFTED):
            return False
        memo = self._should_memo.setdefault(method, {})
        got = memo.get(id(c))
        if got is None or got[0] is not c:
            said: list[str] = []
            mine = dataclasses.replace(env, unconsolidatable=lambda _c, msg: said.append(msg))
            ok = self._should_now(method, c, mine)
            got = memo[id(c)] = (c, ok, said[0] if said else None)
        if got[2] is not None:
            env.unconsolidatable(c, got[2])
        return got[1]

    def _should_now(self, method: str, c: Candidate, env: m.Env) -> bool:
        if method == "emptiness":
            return m.emptiness_should(c, env, self._is_consolidatable(c))
        if method == "static-drift":
            return m.static_drift_should(c)
        if method == "drift":
            return m.drift_should(c)
        return m.consolidation_should(c, env, self._is_consolidatable(c))

    def _is_consolidatable(self, c: Candidate) -> bool:
        """``consolidatable`` at the forecast's clock, once per candidate (candidates are kept
        while their node is unchanged)."""
        got = self._consolidatable.get(id(c))
        if got is None or got[0] is not c:
            got = self._consolidatable[id(c)] = (c, consolidatable(c.state, c.pool, self.at))
        return got[1]

    def _compute(
        self,
        method: str,
        cands: list[Candidate],
        budgets: dict[str, int],
        env: m.Env,
        state: Sequence[StateNode],
    ) -> list[m.Command]:
        if method == "emptiness":
            return m.emptiness(cands, budgets)
        if method == "drift":
            return m.drift(cands, budgets, env)
        if method == "multi-node-consolidation":
            return m.multi_node(cands, budgets, env)
        if method == "single-node-consolidation":
            return m.single_node(cands, budgets, env)
        cmds = m.static_drift(cands, budgets, lambda pool: self._pool_counts(state, pool))
        for cmd in cmds:
            cmd.replacements = [self._static_replacement(cmd.candidates[0].pool)]
        return cmds

    def _pool_counts(self, state: Sequence[StateNode], pool: str) -> tuple[int, int]:
        mine = [sn for sn in state if sn.nodeclaim is not None and sn.labels().get(labels.NODEPOOL) == pool]
        pending = sum(1 for sn in mine if sn.marked_for_deletion())
        return len(mine) - pending, pending

    def _static_replacement(self, pool: NodePool) -> Replacement:
        reqs = template_requirements(pool)
        rep = Replacement(
            pool=pool.name, requirements=reqs, types=list(self.types.get(pool.name, {}).values()), pods=[]
        )
        rep.compatible()
        rep.order_by_price()
        return rep

    # -- applying a command -------------------------------------------------------------------------
    def apply(self, cmd: m.Command) -> None:
        names = {c.name for c in cmd.candidates}
        new_nodes: list[str] = []
        for rep in cmd.replacements:
            new_nodes.append(self._launch(rep))
        if not self.until_quiet:
            self.world.nodes = [mark_deleting(n) if n.metadata.name in names else n for n in self.world.nodes]
            self.world.forget()
            if self.waves:
                self.in_flight.append((cmd, new_nodes))
            return
        self._complete(cmd, new_nodes)

    def complete_wave(self) -> None:
        """Every command in flight completes: its replacements come up, its candidates leave."""
        self.world.forget()  # in-flight claims are re-made initialized: the state is rebuilt
        reps = {n: r for cmd, names in self.in_flight for n, r in zip(names, cmd.replacements, strict=True)}
        self.world.claims = [c for c in self.world.claims if c.metadata.name not in reps]
        for name, rep in reps.items():
            self._make(name, rep, up=True)
        for cmd, names in self.in_flight:
            self._complete(cmd, names)
        self.in_flight = []

    def _complete(self, cmd: m.Command, new_nodes: list[str]) -> None:
        names = {c.name for c in cmd.candidates}
        claims = {c.claim_name for c in cmd.candidates}
        placements = cmd.sim.placements if cmd.sim is not None else {}
        target_of = {
            key: (new_nodes[int(t[4:])] if t.startswith("new:") else t) for key, t in placements.items()
        }
        origins = cmd.sim.origins if cmd.sim is not None else set()
        self.world.complete(names, claims, target_of, origins, new_nodes)
        carry_entries(self.sim_cache.pod_entries, self.world.rebound)

    def _launch(self, rep: Replacement) -> str:
        self.world.made += 1
        name = f"{rep.pool}-forecast-{self.world.made:04d}"
        self._make(name, rep, up=self.until_quiet)
        return name

    def _make(self, name: str, rep: Replacement, *, up: bool) -> None:
        """The NodeClaim ``name`` launched for ``rep``; ``up``: initialized, with its Ready Node."""
        claim, node = replacement_objects(name, rep, up=up, at=self.at_text)
        self.world.claims.append(claim)
        if node is not None:
            self.world.nodes.append(node)


def _drifted_or_none(claim: NodeClaim) -> bool | None:
    cond = claim.condition(m.DRIFTED)
    return True if cond is not None and cond.status == "True" else None


def forecast(
    *,
    nodepools: Sequence[NodePool],
    cluster: ClusterState,
    catalog_for: CatalogFor,
    settings: KarpenterSettings,
    at: datetime,
    until_quiet: bool = False,
    drifted: Collection[str] = (),
    max_rounds: int = MAX_ROUNDS,
    scope: Literal["all", "drift"] = "all",
    waves: bool = False,
) -> DisruptionForecast:
    """Forecast Karpenter v1.14.1's disruption decisions for ``cluster`` under ``nodepools``.

    ``drifted``: NodeClaim names to mark ``Drifted=True`` first (e.g. from
    :func:`nodewright.drift.drift_impact`). ``at`` is the controller's clock: budgets' schedules,
    ``consolidateAfter`` and do-not-disrupt durations are evaluated at it.

    ``scope="drift"``: only the methods that roll drifted nodes (:data:`DRIFT_METHODS`; emptiness
    takes drifted nodes only). ``waves`` (without ``until_quiet``): commands run without completing
    until a reconcile yields nothing (the budgets or the scheduling block), then all of them
    complete together (replacements up, candidates gone) and the next wave starts; each command
    says its wave.
    """
    if drifted:
        stamp = at.strftime("%Y-%m-%dT%H:%M:%SZ")
        wanted = set(drifted)
        cluster = dataclasses.replace(
            cluster,
            nodeclaims=tuple(
                drifted_claim(c, stamp) if c.metadata.name in wanted else c for c in cluster.nodeclaims
            ),
            _node_index={},
        )
    f = _Forecast(
        nodepools=nodepools,
        cluster=cluster,
        catalog_for=catalog_for,
        settings=settings,
        at=at,
        until_quiet=until_quiet,
    )
    if scope == "drift":
        f.methods, f.drift_only = DRIFT_METHODS, True
    f.waves = waves and not until_quiet
    wave = 1
    start_state = build_state_nodes(cluster.nodes, cluster.nodeclaims, cluster.pods)
    cost = before = f.cluster_cost(start_state)
    commands: list[CommandResult] = []
    rounds = 0
    stopped = "quiet"
    while True:
        if rounds >= max_rounds:
            stopped = "round limit"
            break
        got = f.reconcile()
        f.notes.record_blocked = False
        if got is None:
            if f.in_flight:
                f.complete_wave()
                f.notes.record_blocked = True  # why a node is no candidate now, in the new wave
                wave += 1
                continue
            break
        rounds += 1
        cmds, _ = got
        for cmd in cmds:
            after = cost - cmd.source_cost() + sum(r.price() for r in cmd.replacements)
            score = None
            if cmd.scores:
                worst = min(cmd.scores.values(), key=lambda s: s.score)
                score = worst
            commands.append(
                CommandResult(
                    round=rounds,
                    method=cmd.method,
                    reason=cmd.reason,
                    decision=cmd.decision,
                    candidates=tuple(c.as_dict() for c in cmd.candidates),
                    replacements=tuple(r.as_dict() for r in cmd.replacements),
                    pods_moved=sum(len(c.reschedulable) for c in cmd.candidates),
                    hourly_cost_before=cost,
                    hourly_cost_after=after,
                    score=score.score if score is not None else None,
                    savings_fraction=score.savings_fraction if score is not None else None,
                    disruption_fraction=score.disruption_fraction if score is not None else None,
                    wave=wave if f.waves else None,
                )
            )
            cost = after
            f.apply(cmd)
    disrupted = {c["nodeClaim"] for cmd in commands for c in cmd.candidates}
    return DisruptionForecast(
        at=f.at_text,
        until_quiet=until_quiet,
        commands=tuple(commands),
        blocked=tuple(
            sorted(
                (b for b in f.notes.blocked.values() if b.node_claim not in disrupted), key=lambda b: b.node
            )
        ),
        blocked_pools=tuple(sorted(f.notes.pools.values(), key=lambda b: (b.node_pool, b.reason))),
        unconsolidatable=tuple(
            Unconsolidatable(node_claim=k, message=v)
            for k, v in sorted(f.notes.unconsolidatable.items())
            if k not in disrupted
        ),
        hourly_cost_before=before,
        hourly_cost_after=cost,
        rounds=rounds,
        stopped=stopped,
        notes=tuple(state_notes(cluster)),
    )
