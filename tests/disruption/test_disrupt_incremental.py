"""The incremental ``SimulateScheduling`` (:mod:`nodewright.disruption.simbase`: one round prepared
per reconcile, the candidates left out of it) against a round prepared from scratch for every
simulation, on seeded random cluster states: NodePools with taints and zone requirements,
deleting and uninitialized nodes, daemonsets, topology spread, pod (anti-)affinity, host ports,
PDBs, pending pods. Every simulation and every forecast must be identical."""

from __future__ import annotations

import dataclasses
import functools
import random
from typing import Any

import builders
import pytest
from disrupt_support import AT, CT, IT, ZONE, cluster, itype, managed, nodepool, pod

from nodewright.api.core import DaemonSet
from nodewright.catalog.model import InstanceType
from nodewright.cluster.state import ClusterState
from nodewright.disruption import forecast, loop
from nodewright.disruption.candidates import GRACEFUL, CandidateMemo, get_candidates
from nodewright.disruption.pods import PdbLimits
from nodewright.disruption.result import DisruptionForecast
from nodewright.disruption.simbase import SimBase
from nodewright.disruption.simulate import SimContext, Simulation, simulate
from nodewright.disruption.world import World
from nodewright.scheduling.existingnode import build_state_nodes
from nodewright.scheduling.identity import Successor, same_objects
from nodewright.scheduling.plan import PlanOptions
from nodewright.settings import resolve

ZONES = ("test-zone-1", "test-zone-2", "test-zone-3")
HOST = "kubernetes.io/hostname"


def _types() -> list[InstanceType]:
    return [
        itype("small", 0.1, cpu="2", memory="4Gi", spot_price=0.05, zones=ZONES),
        itype("medium", 0.2, cpu="4", memory="8Gi", spot_price=0.1, zones=ZONES),
        itype("large", 0.4, cpu="8", memory="16Gi", zones=ZONES[:2]),
    ]


def _pools(rng: random.Random) -> list[Any]:
    pools = [
        nodepool("default"),
        nodepool("zonal", requirements=[{"key": ZONE, "operator": "In", "values": list(ZONES[:2])}]),
    ]
    if rng.random() < 0.5:
        body = builders.nodepool(
            "tainted",
            requirements=[{"key": CT, "operator": "In", "values": ["on-demand"]}],
            taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}],
        )
        body["spec"]["disruption"] = {
            "consolidationPolicy": "WhenEmptyOrUnderutilized",
            "consolidateAfter": "0s",
        }
        from nodewright.api.karpenter import NodePool

        pools.append(NodePool.model_validate(body))
    return pools


def _pod(rng: random.Random, name: str, node: str | None) -> dict[str, Any]:
    app = rng.choice(("a", "b", "c"))
    kw: dict[str, Any] = {"labels": {"app": app}, "cpu": rng.choice(("100m", "500m", "1", "1500m"))}
    roll = rng.random()
    if roll < 0.15:
        kw["tsc"] = [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": rng.choice(("DoNotSchedule", "ScheduleAnyway")),
                "nodeTaintsPolicy": rng.choice(("Honor", "Ignore")),
                "labelSelector": {"matchLabels": {"app": app}},
            }
        ]
    elif roll < 0.25:
        kw["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": HOST, "labelSelector": {"matchLabels": {"app": app}}}
                ]
            }
        }
    elif roll < 0.32:
        kw["node_selector"] = {ZONE: rng.choice(ZONES)}
    elif roll < 0.37:
        kw["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    elif roll < 0.42:
        kw["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    elif roll < 0.47:
        kw["annotations"] = {"karpenter.sh/do-not-disrupt": "true"}
    return pod(name, node, **kw)


def random_state(seed: int) -> tuple[list[Any], ClusterState, list[InstanceType]]:
    rng = random.Random(seed)
    types = _types()
    pools = _pools(rng)
    items: list[dict[str, Any]] = []
    names: list[str] = []
    for n in range(rng.randint(4, 12)):
        pool = rng.choice(pools)
        it = rng.choice(types)
        name = f"node-{n:02d}"
        zone = rng.choice(ZONES[:2] if it.name == "large" else ZONES)
        roll = rng.random()
        made = managed(
            name,
            it,
            pool=pool.name,
            zone=zone,
            ct=rng.choice(("on-demand", "spot")) if pool.name != "tainted" else "on-demand",
            deleting=roll < 0.08,
            initialized=roll > 0.12,
        )
        made[0]["metadata"]["labels"][HOST] = name
        if pool.name == "tainted":
            made[0]["spec"]["taints"] = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
        items.extend(made)
        names.append(name)
    count = 0
    for name in names:
        for _ in range(rng.randint(0, 4)):
            count += 1
            items.append(_pod(rng, f"p{count:03d}", name))
    for _ in range(rng.randint(0, 3)):
        count += 1
        items.append(_pod(rng, f"pending{count:03d}", None))
    if rng.random() < 0.4:
        items.append(builders.pdb("pdb-a", match_labels={"app": "a"}, disruptions_allowed=rng.choice((0, 1))))
    state = cluster(items)
    if rng.random() < 0.4:
        ds = DaemonSet.model_validate(builders.daemonset("agent", cpu="100m"))
        owner = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "ds-uid"}
        from nodewright.api.core import Pod

        ds_pods = tuple(
            Pod.model_validate(pod(f"agent-{n}", n, cpu="100m", owner=owner, labels={"app": "a"}))
            for n in names[::2]
        )
        state = dataclasses.replace(state, daemonsets=(ds,), pods=state.pods + ds_pods, _node_index={})
    return pools, state, types


def _view(sim: Simulation) -> tuple[object, ...]:
    return (
        sorted(sim.errors.items()),
        sorted(sim.placements.items()),
        [
            (r.as_dict(), [p.key for p in r.pods], [t.key for t in r.taints], str(r.requirements))
            for r in sim.new
        ],
    )


def _seeded(seed: int) -> tuple[ClusterState, dict[str, Any], list[Any], list[Any]]:
    """The seeded random state, the keyword arguments of its SimContext, its state nodes and its
    graceful candidates."""
    pools, state, types = random_state(seed)
    pdbs = PdbLimits(state.pdbs)
    common: dict[str, Any] = {
        "nodepools": pools,
        "catalog_for": lambda _np: list(types),
        "options": PlanOptions.of(resolve(flags={})),
        "pdbs": pdbs,
        "now": AT,
    }
    sns = build_state_nodes(state.nodes, state.nodeclaims, state.pods)
    found, _ = get_candidates(
        sns,
        pools={p.name: p for p in pools},
        types={p.name: {it.name: it for it in types} for p in pools},
        pdbs=pdbs,
        now=AT,
        disruption_class=GRACEFUL,
        memo=CandidateMemo(),
    )
    return state, common, sns, found


@pytest.mark.parametrize("seed", range(40))
def test_an_incremental_simulation_equals_one_from_scratch(seed: int) -> None:
    state, common, sns, found = _seeded(seed)
    rng = random.Random(1000 + seed)
    incremental = SimContext(**common)
    scratch = SimContext(**common, incremental=False)
    batches = [[c] for c in found]
    for _ in range(6):
        if found:
            batches.append(rng.sample(found, rng.randint(1, len(found))))
    for batch in batches:
        want = simulate(state, batch, scratch)
        got = simulate(state, batch, incremental, state_nodes=sns)
        assert _view(got) == _view(want), [c.name for c in batch]


def _forecast(seed: int, *, until_quiet: bool, waves: bool = False) -> DisruptionForecast:
    """The whole forecast of the seeded random state (30 reconciles at most)."""
    pools, state, types = random_state(seed)
    return forecast(
        nodepools=pools,
        cluster=state,
        catalog_for=lambda _np: list(types),
        settings=resolve(flags={}),
        at=AT,
        until_quiet=until_quiet,
        waves=waves,
        max_rounds=30,
    )


@pytest.mark.parametrize("until_quiet", [False, True])
@pytest.mark.parametrize("seed", range(25))
def test_a_forecast_is_the_same_with_incremental_simulations(
    seed: int, until_quiet: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    def run() -> object:
        return _forecast(seed, until_quiet=until_quiet)

    got = run()
    monkeypatch.setattr(loop, "SimContext", functools.partial(SimContext, incremental=False))
    assert got == run()


def test_the_random_states_exercise_the_interesting_cases() -> None:
    """The generator above does produce what the comparison is about (guards against a generator
    that silently stopped making topology, deleting nodes or daemonsets)."""
    seen = {"tsc": 0, "anti": 0, "deleting": 0, "daemonset": 0, "pending": 0}
    for seed in range(40):
        _, state, _ = random_state(seed)
        seen["tsc"] += any(p.spec.topology_spread_constraints for p in state.pods)
        seen["anti"] += any(p.spec.affinity is not None for p in state.pods)
        seen["deleting"] += any(n.metadata.deletion_timestamp is not None for n in state.nodes)
        seen["daemonset"] += bool(state.daemonsets)
        seen["pending"] += any(not p.spec.node_name for p in state.pods)
    assert all(v >= 3 for v in seen.values()), seen
    assert IT  # the shared helpers' label keys are the ones the states use


@pytest.mark.parametrize("seed", range(25))
def test_the_state_kept_between_reconciles_equals_a_rebuilt_one(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The state nodes :class:`nodewright.disruption.world.World` carries over from a completed
    command are the ones ``build_state_nodes`` makes of the changed cluster, and what it says left
    and came since the previous state (a ``Successor``) is exactly the difference."""
    kept = 0
    real = World.state

    def checked(self: World, cluster: ClusterState) -> list[Any]:
        nonlocal kept
        carried = self._state is not None
        got = real(self, cluster)
        if carried:
            kept += 1
            assert got == build_state_nodes(cluster.nodes, cluster.nodeclaims, cluster.pods)
        if isinstance(got, Successor) and got.before is not None:
            before, gone, came = {*map(id, got.before)}, [*map(id, got.gone)], [*map(id, got.came)]
            assert len({*gone}) == len(gone) and len({*came}) == len(came)
            assert {*gone} <= before and not {*came} & (before - {*gone})
            assert {*map(id, got)} == (before - {*gone}) | {*came} and len(got) == len({*map(id, got)})
        return got

    monkeypatch.setattr(World, "state", checked)
    _forecast(seed, until_quiet=True)
    assert kept >= 0


def test_some_states_are_carried_over() -> None:
    kept = 0
    for seed in range(25):
        kept += _forecast(seed, until_quiet=True).rounds > 1
    assert kept >= 5


@pytest.mark.parametrize("seed", range(25))
def test_a_forecast_is_the_same_when_simulations_do_not_stop_early(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Multi-node simulations stop once they need a second NodeClaim (``claim_limit``); a forecast
    whose simulations always run to the end decides the same."""

    def run() -> object:
        return _forecast(seed, until_quiet=True)

    got = run()
    real = loop.simulate

    def to_the_end(*args: Any, claim_limit: int | None = None, **kw: Any) -> Simulation:
        del claim_limit
        return real(*args, **kw)

    monkeypatch.setattr(loop, "simulate", to_the_end)
    assert got == run()


def _bound_cases() -> list[tuple[bool, Simulation]]:
    """Per seeded state and random batch of two or more candidates: whether
    :meth:`SimBase.needs_more_claims` answers for one NodeClaim, and the full simulation from
    scratch (no limit)."""
    out: list[tuple[bool, Simulation]] = []
    for seed in range(40):
        state, common, sns, found = _seeded(seed)
        rng = random.Random(2000 + seed)
        if len(found) < 2:
            continue
        base = SimBase(state, SimContext(**common), sns)
        scratch = SimContext(**common, incremental=False)
        for _ in range(8):
            batch = rng.sample(found, rng.randint(2, len(found)))
            out.append((base.needs_more_claims(batch, 1), simulate(state, batch, scratch)))
    return out


def test_a_simulation_the_claim_bound_skips_needs_two_claims_or_leaves_a_pod() -> None:
    """Soundness of the resource arithmetic that skips multi-node simulations: whenever it says a
    batch needs more than one new NodeClaim, the full solve does need them or leaves a bound pod
    unscheduled; and it does say so on these states (the comparison is not vacuous)."""
    cases = _bound_cases()
    skipped = [sim for said, sim in cases if said]
    assert len(skipped) >= 10, len(skipped)
    for sim in skipped:
        assert sim.errors or len(sim.new) > 1, sim


@pytest.mark.parametrize("mode", ["until-quiet", "waves"])
@pytest.mark.parametrize("seed", range(25))
def test_the_pod_index_carried_between_commands_equals_a_fresh_one(
    seed: int, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """:class:`World` keeps its pods' positions (per node, pending, with affinity) from one
    completed command to the next; a forecast that re-indexes the pods before every command
    decides the same (to quiet, and in drift-rollout waves where several commands complete at
    once)."""

    def run() -> object:
        return _forecast(seed, until_quiet=mode == "until-quiet", waves=mode == "waves")

    got = run()
    real = World.complete

    def fresh(self: World, *args: Any, **kw: Any) -> None:
        self._index = None
        real(self, *args, **kw)

    monkeypatch.setattr(World, "complete", fresh)
    assert got == run()


@pytest.mark.parametrize("seed", range(25))
def test_a_completed_command_drops_the_very_nodes_and_claims_named(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """:meth:`World.complete` finds the leaving Nodes and NodeClaims by the carried state's
    positions and identities; the lists left are those a filter by name leaves."""
    real = World.complete
    by_identity = 0

    def checked(self: World, names: Any, claim_names: Any, *args: Any) -> None:
        nonlocal by_identity
        launched = args[-1]
        nodes = [n for n in self.nodes if n.metadata.name not in names]
        claims = [c for c in self.claims if c.metadata.name not in claim_names]
        by_identity += self._positions(self._state, launched) is not None
        real(self, names, claim_names, *args)
        assert same_objects(self.nodes, nodes)
        assert same_objects(self.claims, claims)

    monkeypatch.setattr(World, "complete", checked)
    _forecast(seed, until_quiet=True)
    if seed == 0:
        assert by_identity >= 1


@pytest.mark.parametrize("seed", range(25))
def test_the_views_the_world_hands_in_are_the_scans(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pending, affinity and DaemonSet-owned pods :meth:`World.cluster` takes from its pod index
    (holes where pods left) are what scanning the cluster's pods finds, in order."""
    real = World.cluster
    handed = 0

    def checked(self: World) -> ClusterState:
        nonlocal handed
        got = real(self)
        assert None not in got.pods
        handed += bool(got._views)
        fresh = dataclasses.replace(got, _views={})
        assert got.unbound_pods() == fresh.unbound_pods()
        assert got.affinity_pods() == fresh.affinity_pods()
        assert got.daemon_pods() == fresh.daemon_pods()
        return got

    monkeypatch.setattr(World, "cluster", checked)
    _forecast(seed, until_quiet=True)
    if seed == 0:
        assert handed >= 1


@pytest.mark.parametrize("seed", range(40))
def test_simulations_leave_the_pods_they_share_as_they_were(seed: int) -> None:
    """A reconcile's simulations share each moving pod's scheduling data (one object per pod, kept
    between reconciles): a solve copies a pod before it relaxes or memoises on it. Run in the
    reverse order, every simulation decides the same, and the shared data is untouched."""
    state, common, sns, found = _seeded(seed)
    rng = random.Random(3000 + seed)
    ctx = SimContext(**common)
    batches = [[c] for c in found]
    for _ in range(6):
        if found:
            batches.append(rng.sample(found, rng.randint(1, len(found))))
    first = [_view(simulate(state, batch, ctx, state_nodes=sns)) for batch in batches]
    again = [_view(simulate(state, batch, ctx, state_nodes=sns)) for batch in reversed(batches)]
    assert again[::-1] == first
    shared = [e[1][0] for e in ctx.cache.pod_entries.values() if isinstance(e[1], tuple)]
    base = ctx.cache.base
    assert base is not None
    shared += base.prefix + [d for datas in base.moving.values() for d in datas]
    assert shared or not found
    for d in shared:
        assert d.current is d.pod and not d.tolerates, d.key


@pytest.mark.parametrize("seed", range(25))
def test_a_moved_pod_keeps_the_entry_a_fresh_derivation_gives(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pod that moves keeps its scheduling entry (a completed command re-binds it): its new object
    differs from the old one only in the node name, and the carried entry holds what deriving it
    afresh gives. The forecast carries some (the check is not vacuous)."""
    _, state, _ = random_state(seed)
    pdbs = PdbLimits(state.pdbs)
    real = loop.carry_entries
    carried: list[int] = []

    def checked(cache: Any, rebound: Any) -> None:
        real(cache, rebound)
        for p, q in rebound:
            assert q.spec.node_name != p.spec.node_name
            assert (
                p.model_copy(update={"spec": p.spec.model_copy(update={"node_name": q.spec.node_name})}) == q
            )
            got = cache.get(id(q))
            if got is None:
                continue
            assert got[0] is q
            entry = got[1]
            if isinstance(entry, tuple):
                d, ok = entry
                assert d.pod is q and d.current is q and d.key == q.key
                assert ok == pdbs.is_currently_reschedulable(q, AT)
                carried.append(1)

    monkeypatch.setattr(loop, "carry_entries", checked)
    want = _forecast(seed, until_quiet=True)
    monkeypatch.setattr(loop, "carry_entries", lambda cache, rebound: None)
    assert _forecast(seed, until_quiet=True) == want
    if seed == 0:
        assert carried


def test_a_run_of_twins_onto_a_new_claim_leaves_the_shared_pods_as_they_were() -> None:
    """Twins moving together to a new NodeClaim are placed as a run (tried once, on a copy of the
    first): the pods shared with the reconcile's other simulations keep no memo of it, and the
    same simulation again decides the same."""
    big, small = itype("big", 2.0, cpu="16", memory="64Gi"), itype("small", 0.4, cpu="8", memory="32Gi")
    items = [*managed("n1", big), *(pod(f"w{i}", "n1", labels={"app": "w"}) for i in range(6))]
    state = cluster(items)
    pools = [nodepool()]
    pdbs = PdbLimits(state.pdbs)
    ctx = SimContext(
        nodepools=pools,
        catalog_for=lambda _np: [big, small],
        options=PlanOptions.of(resolve(flags={})),
        pdbs=pdbs,
        now=AT,
    )
    sns = build_state_nodes(state.nodes, state.nodeclaims, state.pods)
    found, _ = get_candidates(
        sns,
        pools={p.name: p for p in pools},
        types={p.name: {"big": big, "small": small} for p in pools},
        pdbs=pdbs,
        now=AT,
        disruption_class=GRACEFUL,
        memo=CandidateMemo(),
    )
    assert [c.name for c in found] == ["n1"]
    first = _view(simulate(state, found, ctx, state_nodes=sns))
    assert [len(r.pods) for r in simulate(state, found, ctx, state_nodes=sns).new] == [6]
    assert _view(simulate(state, found, ctx, state_nodes=sns)) == first
    shared = [e[1][0] for e in ctx.cache.pod_entries.values() if isinstance(e[1], tuple)]
    assert len(shared) == 6
    for d in shared:
        assert d.current is d.pod and not d.tolerates, d.key


@pytest.mark.parametrize("seed", range(40))
def test_the_claim_bound_over_prefixes_of_one_list_answers_as_asked_alone(seed: int) -> None:
    """Multi-node consolidation asks the claim bound about prefixes of one candidate list (its
    binary search): the sums kept and extended between the questions answer what a base asked
    about that prefix alone answers, in any order of questions and for any limit."""
    state, common, sns, found = _seeded(seed)
    rng = random.Random(4000 + seed)
    if len(found) < 2:
        return
    base = SimBase(state, SimContext(**common), sns)
    order = list(found)
    rng.shuffle(order)
    for _ in range(12):
        k = rng.randint(1, len(order))
        limit = rng.randint(0, 2)
        alone = SimBase(state, SimContext(**common), sns)
        assert base.needs_more_claims(order[:k], limit) == alone.needs_more_claims(order[:k], limit)
        if rng.random() < 0.2:
            rng.shuffle(order)  # another list: the kept sums start again
