"""More of drift, emptiness and single-node consolidation, ported from kubernetes-sigs/karpenter
v1.14.1 ``pkg/controllers/disruption/drift_test.go``, ``emptiness_test.go`` and
``singlenodeconsolidation_test.go``; each test names its file, Context and ``It``.

Upstream's harness (``NewMethodsWithNopValidator``) runs StaticDrift and Drift before Emptiness;
production (``controller.go`` ``NewMethods``) runs Emptiness first. The forecast follows production;
a test whose upstream assertion depends on the order says so and asserts production's behaviour.
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

from disrupt_support import AT, cluster, disrupted, itype, managed, nodepool, pod, run
from hypothesis import given, settings
from hypothesis import strategies as st

from nodewright.api.karpenter import NodePool
from nodewright.catalog.fake import new_instance_type
from nodewright.catalog.model import Offering
from nodewright.disruption.candidates import GRACEFUL, Candidate, get_candidates
from nodewright.disruption.methods import interweave
from nodewright.disruption.pods import PdbLimits
from nodewright.scheduling.existingnode import build_state_nodes

BIG = itype("big", 1.0, cpu="8", memory="16Gi")
SMALL = itype("small", 0.25, cpu="2", memory="4Gi")
TYPES = [BIG, SMALL]
D1 = "2026-11-19T01:00:00Z"


def _stamp(delta: timedelta) -> str:
    return (AT + delta).strftime("%Y-%m-%dT%H:%M:%SZ")


def _drift_pool(
    name: str = "default", *, after: str = "Never", budgets: list[dict[str, str]] | None = None
) -> NodePool:
    return nodepool(name, after=after, budgets=budgets or [{"nodes": "100%"}], capacity_types=("on-demand",))


# -- drift_test.go ---------------------------------------------------------------------------------
def test_drift_budgets_for_multiple_nodepools() -> None:
    """drift_test.go Context("Budgets") It("should respect budgets for multiple nodepools"): ten
    pools of three drifted nodes (two with a pod), budget 1 each: ten commands, one per pool."""
    pools = [_drift_pool(name=f"pool-{p}", budgets=[{"nodes": "1"}]) for p in range(10)]
    items = [
        *[
            x
            for p in range(10)
            for i in range(3)
            for x in managed(f"p{p}-n{i}", BIG, pool=f"pool-{p}", drifted_at=D1)
        ],
        *[pod(f"p{p}-{i}", f"p{p}-n{i}", cpu="1") for p in range(10) for i in range(2)],
    ]
    r = run(pools, items, TYPES)
    assert len(r.commands) == 10 and {c.method for c in r.commands} == {"drift"}
    gone = [n for c in disrupted(r) for n in c]
    assert sorted(n.split("-")[0] for n in gone) == sorted(f"p{p}" for p in range(10))


def test_ignores_drifted_condition_false() -> None:
    """drift_test.go Context("Drift") It("should ignore nodes with the drifted status condition set
    to false")."""
    items = managed("n1", BIG, drifted_at=D1)
    for cond in items[1]["status"]["conditions"]:
        if cond["type"] == "Drifted":
            cond["status"] = "False"
    assert run([_drift_pool()], [*items, pod("p1", "n1")], TYPES).commands == ()


def test_duration_do_not_disrupt_blocks_drift_until_expired() -> None:
    """drift_test.go Context("Drift") It("should not drift nodes with pods that have a
    duration-based do-not-disrupt annotation that is still active"): blocked at start, drifted
    three minutes later."""
    items = [
        *managed("n1", BIG, drifted_at=D1),
        pod("p1", "n1", annotations={"karpenter.sh/do-not-disrupt": "2m"}, start_time=_stamp(timedelta())),
    ]
    assert run([_drift_pool()], items, TYPES).commands == ()
    r = run([_drift_pool()], items, TYPES, at=AT + timedelta(minutes=3))
    assert [(c.method, c.decision) for c in r.commands] == [("drift", "replace")]


def test_invalid_do_not_disrupt_does_not_block_drift() -> None:
    """drift_test.go Context("Drift") It("should drift nodes with pods that have an invalid
    do-not-disrupt annotation format"): the pod moves to the second node, the drifted one goes."""
    items = [
        *managed("n1", BIG, drifted_at=D1),
        *managed("n2", BIG),
        pod("p1", "n1", annotations={"karpenter.sh/do-not-disrupt": "invalid-format"}),
    ]
    r = run([_drift_pool()], items, TYPES)
    assert [(c.method, c.decision) for c in r.commands] == [("drift", "delete")]
    assert disrupted(r) == [["n1"]]


def test_longest_do_not_disrupt_duration_wins() -> None:
    """drift_test.go Context("Drift") It("should not drift nodes until the longest duration-based
    do-not-disrupt grace period expires across multiple pods"): 1m and 3m: blocked at +2m, drifted
    at +4m."""
    started = _stamp(timedelta())
    items = [
        *managed("n1", BIG, drifted_at=D1),
        pod("p1", "n1", annotations={"karpenter.sh/do-not-disrupt": "1m"}, start_time=started),
        pod("p2", "n1", annotations={"karpenter.sh/do-not-disrupt": "3m"}, start_time=started),
    ]
    pool = _drift_pool()
    assert run([pool], items, TYPES).commands == ()
    assert run([pool], items, TYPES, at=AT + timedelta(minutes=2)).commands == ()
    assert len(run([pool], items, TYPES, at=AT + timedelta(minutes=4)).commands) == 1


def test_empty_drifted_consolidatable_node_production_order() -> None:
    """drift_test.go Context("Drift") It("should delete drifted nodes when they are empty and
    consolidatable"): upstream's harness deletes it through Drift; production runs Emptiness first,
    so the forecast deletes it as Empty (the node goes either way)."""
    pool = _drift_pool(after="0s")
    r = run([pool], managed("n1", BIG, drifted_at=D1), TYPES)
    assert [(c.method, c.decision, c.reason) for c in r.commands] == [("emptiness", "delete", "Empty")]
    assert disrupted(r) == [["n1"]]


def test_replace_drifted_node_with_multiple_nodes() -> None:
    """drift_test.go Context("Drift") It("can replace drifted nodes with multiple nodes"): three 2-cpu
    pods on an 8-cpu node whose type is no longer offered; the only type holds one pod each, so
    drift launches three replacements (consolidation would refuse more than one)."""
    current = new_instance_type(
        "current-on-demand",
        resources={"cpu": "8", "memory": "16Gi", "pods": "110"},
        offerings=(Offering(zone="test-zone-1a", capacity_type="on-demand", price=0.5, available=False),),
    )
    replacement = new_instance_type(
        "replacement-on-demand",
        resources={"cpu": "3", "memory": "16Gi", "pods": "110"},
        offerings=(Offering(zone="test-zone-1a", capacity_type="on-demand", price=0.3),),
    )
    items = [
        *managed("n1", current, zone="test-zone-1a", drifted_at=D1),
        *[pod(f"p{i}", "n1", cpu="2") for i in range(3)],
    ]
    r = run([_drift_pool()], items, [current, replacement])
    assert [(c.method, c.decision) for c in r.commands] == [("drift", "replace")]
    assert len(r.commands[0].replacements) == 3


# -- emptiness_test.go -----------------------------------------------------------------------------
def test_emptiness_considers_pending_pods() -> None:
    """emptiness_test.go It("considers pending pods when consolidating"): a 64-cpu node with a 1-cpu
    pod, and a pending 62-cpu pod that needs that node: it is kept (no command, no new node)."""
    large = itype("large", 1.0, cpu="64", memory="128Gi")
    small = itype("small", 0.1, cpu="2", memory="4Gi")
    items = [*managed("n1", large), pod("p1", "n1", cpu="1"), pod("huge", None, cpu="62")]
    r = run([nodepool(budgets=[{"nodes": "100%"}], capacity_types=("on-demand",))], items, [large, small])
    assert r.commands == ()


# -- singlenodeconsolidation_test.go ---------------------------------------------------------------
def _three_pools_three_nodes() -> list[Candidate]:
    pools = {f"nodepool-{p}": nodepool(f"nodepool-{p}") for p in (1, 2, 3)}
    items = [
        *[
            x
            for p in (1, 2, 3)
            for i in range(3)
            for x in managed(f"np{p}-n{i}", SMALL, pool=f"nodepool-{p}")
        ],
        *[pod(f"np{p}-p{i}", f"np{p}-n{i}", cpu="100m") for p in (1, 2, 3) for i in range(3)],
    ]
    c = cluster(items)
    cands, _ = get_candidates(
        build_state_nodes(c.nodes, c.nodeclaims, c.pods),
        pools=pools,
        types={p: {SMALL.name: SMALL} for p in pools},
        pdbs=PdbLimits(c.pdbs),
        now=AT,
        disruption_class=GRACEFUL,
    )
    assert len(cands) == 9
    return cands


def test_single_node_sorts_by_savings_ratio_descending() -> None:
    """singlenodeconsolidation_test.go Context("Candidate Shuffling") It("should sort candidates by
    savings ratio descending"), interwoven one pool at a time."""
    got = list(interweave(_three_pools_three_nodes()))
    ratios = [c.savings_ratio() for c in got]
    assert ratios == sorted(ratios, reverse=True) and len(got) == 9
    assert [c.pool.name for c in got[:3]] == ["nodepool-1", "nodepool-2", "nodepool-3"]


def test_single_node_sorts_by_savings_ratio_with_different_costs() -> None:
    """singlenodeconsolidation_test.go Context("Candidate Shuffling") It("should sort candidates by
    savings ratio with different disruption costs"): one node per pool at cost 1, 5 and 20, given
    in reverse order: the cost-1 nodes come first, then cost 5, then cost 20."""
    cands = _three_pools_three_nodes()
    costs = {"n0": 20.0, "n1": 5.0, "n2": 1.0}
    cands = [dataclasses.replace(c, reschedule_cost=costs[c.name.split("-")[1]]) for c in cands]
    got = list(interweave(list(reversed(cands))))
    assert [c.reschedule_cost for c in got] == [1.0] * 3 + [5.0] * 3 + [20.0] * 3


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 9)), max_size=30, unique_by=lambda t: t[1]))
def test_interweave_is_one_per_pool_in_turn_over_the_savings_order(specs: list[tuple[int, int]]) -> None:
    """Single-node consolidation's order, yielded lazily (the first turn as the scan meets each
    pool): the savings order, then one candidate per pool in turn, pools in order of first
    appearance, as grouping them all first gives."""
    cands = [SimpleNamespace(pool_name=f"p{pool}", savings_key=(-key, f"n{key}")) for pool, key in specs]
    ordered = sorted(cands, key=lambda c: c.savings_key)
    groups: dict[str, list[Any]] = {}
    for c in ordered:
        groups.setdefault(c.pool_name, []).append(c)
    want = [
        g[i] for i in range(max(map(len, groups.values()), default=0)) for g in groups.values() if i < len(g)
    ]
    assert list(interweave(cands)) == want  # type: ignore[arg-type]
