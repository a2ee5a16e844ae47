"""More of static drift, ported from kubernetes-sigs/karpenter v1.14.1
``pkg/controllers/disruption/staticdrift_test.go``; each test names its Context and ``It``."""

from __future__ import annotations

from collections import Counter
from typing import Any

from disrupt_support import disrupted, itype, managed, nodepool, run

from nodewright.api.karpenter import NodePool

IT = itype("big", 1.0, cpu="32", memory="64Gi")
D = "2026-11-19T00:00:00Z"


def _static(
    replicas: int, *, name: str = "default", budget: str = "100%", node_limit: str | None = None
) -> NodePool:
    pool = nodepool(name, replicas=replicas, budgets=[{"nodes": budget}], capacity_types=("on-demand",))
    if node_limit is None:
        return pool
    body = pool.model_dump(by_alias=True, exclude_none=True)
    body["spec"]["limits"] = {"nodes": node_limit}
    return NodePool.model_validate(body)


def _nodes(n: int, *, pool: str = "default", prefix: str = "n") -> list[dict[str, Any]]:
    return [x for i in range(n) for x in managed(f"{prefix}{i}", IT, pool=pool, drifted_at=D)]


def test_budgets_for_multiple_static_nodepools() -> None:
    """Context("Budgets") It("should respect budgets for multiple static nodepools"): pools of 4, 3
    and 2 replicas with budgets 1, 2 and 100%, two drifted nodes each: 1 + 2 + 2 commands."""
    pools = [
        _static(4, name="pool-1", budget="1"),
        _static(3, name="pool-2", budget="2"),
        _static(2, name="pool-3", budget="100%"),
    ]
    items = [x for p in (1, 2, 3) for x in _nodes(2, pool=f"pool-{p}", prefix=f"p{p}-n")]
    r = run(pools, items, [IT])
    assert len(r.commands) == 5 and {c.method for c in r.commands} == {"static-drift"}
    per_pool = Counter(c.candidates[0]["nodePool"] for c in r.commands)
    assert per_pool == {"pool-1": 1, "pool-2": 2, "pool-3": 2}


def test_drift_partially_when_some_limits_can_be_acquired() -> None:
    """Context("Limits and Scaling") It("should drift partially when we can acquire some limits"):
    five nodes of five replicas under a node limit of 7: two replacements fit."""
    r = run([_static(5, node_limit="7")], _nodes(5), [IT])
    assert len(r.commands) == 2


def test_keep_drifting_partially_each_reconcile() -> None:
    """Context("Limits and Scaling") It("should keep drifting partially when we can acquire some
    limits for each reconcile"): limit 6 leaves room for one replacement at a time; as each command
    completes the next reconcile drifts one more, five in all, one per reconcile."""
    r = run([_static(5, node_limit="6")], _nodes(5), [IT], until_quiet=True)
    assert [c.round for c in r.commands] == [1, 2, 3, 4, 5]
    assert sorted(n for c in disrupted(r) for n in c) == [f"n{i}" for i in range(5)]


def test_zero_replicas() -> None:
    """Context("Edge Cases") It("should handle zero replicas"): a drifted node of a pool scaled to 0
    is not replaced."""
    assert run([_static(0)], _nodes(1), [IT]).commands == ()


def test_missing_node_limits() -> None:
    """Context("Edge Cases") It("should handle missing node limits gracefully"): no limit, five
    drifted nodes of five replicas: five commands."""
    r = run([_static(5)], _nodes(5), [IT])
    assert len(r.commands) == 5


def test_ignores_drifted_condition_false() -> None:
    """Context("Edge Cases") It("should ignore nodes with the drifted status condition set to
    false")."""
    items = _nodes(1)
    for cond in items[1]["status"]["conditions"]:
        if cond["type"] == "Drifted":
            cond["status"] = "False"
    assert run([_static(1)], items, [IT]).commands == ()
