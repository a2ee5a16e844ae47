"""Drift rollouts in waves: ``forecast(scope="drift", waves=True)``, what ``nodewright drift`` runs.

Ported from kubernetes-sigs/karpenter v1.14.1 ``pkg/controllers/disruption/drift_test.go`` (each test
names its ``It``), read as waves: commands run without completing until the budgets (or the
scheduling) block, then they all complete and the next wave starts.
"""

from __future__ import annotations

from typing import Any

from disrupt_support import AT, cluster, itype, managed, nodepool, pod

from nodewright.disruption import DisruptionForecast, forecast
from nodewright.settings import resolve

BIG = itype("big", 1.0, cpu="8", memory="16Gi")
SMALL = itype("small", 0.25, cpu="2", memory="4Gi")
TYPES = [BIG, SMALL]
D1, D2, D3 = "2026-11-19T01:00:00Z", "2026-11-19T02:00:00Z", "2026-11-19T03:00:00Z"


def _pool(**kw: Any) -> Any:
    kw.setdefault("after", "Never")
    kw.setdefault("budgets", [{"nodes": "100%"}])
    kw.setdefault("capacity_types", ("on-demand",))
    return nodepool(**kw)


def _roll(pools: list[Any], items: list[dict[str, Any]], types: list[Any] = TYPES) -> DisruptionForecast:
    return forecast(
        nodepools=pools,
        cluster=cluster(items),
        catalog_for=lambda _np: list(types),
        settings=resolve(flags={}),
        at=AT,
        scope="drift",
        waves=True,
    )


def _waves(r: DisruptionForecast) -> list[list[str]]:
    out: dict[int, list[str]] = {}
    for cmd in r.commands:
        out.setdefault(cmd.wave or 0, []).extend(str(c["node"]) for c in cmd.candidates)
    return [sorted(v) for _, v in sorted(out.items())]


def test_empty_nodes_roll_first() -> None:
    """It("should drift empty nodes before non-empty nodes"): n1 drifted first but has a pod; with a
    budget of 1 the empty n2 takes the first wave."""
    items = [*managed("n1", BIG, drifted_at=D1), *managed("n2", BIG, drifted_at=D2), pod("p1", "n1", cpu="3")]
    r = _roll([_pool(budgets=[{"nodes": "1"}])], items)
    assert _waves(r) == [["n2"], ["n1"]]
    assert [c.as_dict()["wave"] for c in r.commands] == [1, 2]


def test_a_wave_holds_what_the_budget_allows_at_once() -> None:
    """It("should disrupt 3 nodes, taking into account commands in progress"): 10 nodes, budget 30%,
    5 drifted with a pod each: 3 commands in flight together, then the other 2."""
    items: list[dict[str, Any]] = []
    for i in range(10):
        items += managed(f"n{i}", BIG, drifted_at=D1 if i < 5 else None)
    items += [pod(f"p{i}", f"n{i}", cpu="1") for i in range(5)]
    r = _roll([_pool(budgets=[{"nodes": "30%"}])], items)
    assert [len(w) for w in _waves(r)] == [3, 2]
    assert all(cmd.method == "drift" for cmd in r.commands)


def test_oldest_drift_first_one_at_a_time() -> None:
    """It("should drift one non-empty node at a time, starting with the earliest drift")."""
    items = [
        *managed("n1", BIG, drifted_at=D3),
        *managed("n2", BIG, drifted_at=D1),
        *managed("n3", BIG, drifted_at=D2),
        *[pod(f"p{i}", f"n{i}", cpu="5") for i in (1, 2, 3)],
    ]
    r = _roll([_pool(budgets=[{"nodes": "1"}])], items)
    assert _waves(r) == [["n2"], ["n3"], ["n1"]]


def test_a_replacement_that_does_not_schedule_blocks_that_node() -> None:
    """It("should continue to the next drifted node if the first cannot reschedule all pods"): n1's
    pod fits no instance type, so n1 never rolls (with upstream's message); n2 rolls."""
    tiny = itype("tiny", 0.1, cpu="1", memory="1Gi")
    items = [
        *managed("n1", BIG, drifted_at=D1),
        *managed("n2", BIG, drifted_at=D2),
        pod("huge", "n1", cpu="150"),
        pod("p2", "n2", cpu="1"),
    ]
    r = _roll([_pool()], items, [BIG, tiny])
    assert _waves(r) == [["n2"]]
    assert r.blocked[0].node == "n1" and r.blocked[0].reason.startswith("Not all pods would schedule")


def test_budgets_by_reason_empty_drifted_nodes_go_through_emptiness() -> None:
    """Production order (controller.go: emptiness before drift) with budgets per reason
    (It("should only consider 3 nodes allowed to be disrupted because of budgets") per reason): a
    Drifted budget of 0 blocks drift, but the empty drifted nodes leave under the Empty budget."""
    pool = _pool(
        after="0s",
        budgets=[{"nodes": "0", "reasons": ["Drifted"]}, {"nodes": "100%"}],
    )
    items = [
        *managed("n1", BIG, drifted_at=D1),
        *managed("n2", BIG, drifted_at=D2),
        *managed("n3", BIG, drifted_at=D3),
        pod("p3", "n3", cpu="3"),
    ]
    r = _roll([pool], items)
    assert [(c.method, c.reason) for c in r.commands] == [("emptiness", "Empty")]
    assert _waves(r) == [["n1", "n2"]]


def test_drift_scope_leaves_empty_undrifted_nodes_alone() -> None:
    """Emptiness takes drifted nodes only: an empty, consolidatable node that did not drift stays
    (consolidation is not the branch's rollout)."""
    items = [*managed("n1", BIG, drifted_at=D1), *managed("idle", BIG), pod("p1", "n1", cpu="3")]
    r = _roll([_pool(after="0s")], items)
    assert _waves(r) == [["n1"]]


def test_a_not_ready_node_consumes_the_budget() -> None:
    """``BuildDisruptionBudgetMapping``: a NotReady node is disrupting (once, NotReady or marked).
    Budget 2 with the NotReady n1 drifted too: n1 itself rolls within what it already consumes, so
    the first wave holds n1 and n2 (budget arithmetic says 1 per wave, 3 waves)."""
    items = [
        *managed("n1", BIG, drifted_at=D1, ready=False),
        *managed("n2", BIG, drifted_at=D2),
        *managed("n3", BIG, drifted_at=D3),
        *[pod(f"p{i}", f"n{i}", cpu="3") for i in (1, 2, 3)],
    ]
    r = _roll([_pool(budgets=[{"nodes": "2"}])], items)
    assert _waves(r) == [["n1", "n2"], ["n3"]]
