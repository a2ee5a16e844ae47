"""Static drift, ported from kubernetes-sigs/karpenter v1.14.1
``pkg/controllers/disruption/staticdrift_test.go``; each test names its Context and ``It``."""

from __future__ import annotations

from typing import Any

from disrupt_support import itype, managed, methods, nodepool, run

from nodewright.api.karpenter import NodePool

IT = itype("big", 1.0, cpu="32", memory="64Gi")
D = "2026-11-19T00:00:00Z"


def _static(
    replicas: int, *, budgets: list[dict[str, Any]] | None = None, node_limit: str | None = None
) -> NodePool:
    pool = nodepool(replicas=replicas, budgets=budgets or [{"nodes": "100%"}], capacity_types=("on-demand",))
    if node_limit is None:
        return pool
    body = pool.model_dump(by_alias=True, exclude_none=True)
    body["spec"]["limits"] = {"nodes": node_limit}
    return NodePool.model_validate(body)


def _nodes(n: int, drifted: bool = True) -> list[dict[str, Any]]:
    return [x for i in range(n) for x in managed(f"n{i}", IT, drifted_at=D if drifted else None)]


def test_budget_node_count() -> None:
    """Context("Budgets") It("should respect disruption budgets (Nodes Count) for static drift"):
    10 drifted nodes of a 10-replica pool, Drifted budget 2: two commands in one reconcile."""
    r = run([_static(10, budgets=[{"nodes": "2", "reasons": ["Drifted"]}])], _nodes(10), [IT])
    assert methods(r) == ["static-drift", "static-drift"]
    assert {c.round for c in r.commands} == {1}
    assert all(c.decision == "replace" for c in r.commands)


def test_budget_percentage() -> None:
    """Context("Budgets") It("should respect disruption budgets (Nodes Percentage) for static drift"):
    30% of 10 nodes is 3."""
    r = run([_static(10, budgets=[{"nodes": "30%"}])], _nodes(10), [IT])
    assert len(r.commands) == 3


def test_cannot_acquire_limits() -> None:
    """Context("Limits and Scaling") It("should not drift nodes when we cannot acquire limits"): five
    nodes at a node limit of 5 leave no room for a replacement."""
    assert run([_static(5, node_limit="5")], _nodes(5), [IT]).commands == ()


def test_can_acquire_limits() -> None:
    """Context("Limits and Scaling") It("should drift nodes when we can acquire limits"): two nodes,
    limit 5: both drift."""
    r = run([_static(5, node_limit="5")], _nodes(2), [IT])
    assert len(r.commands) == 2


def test_waits_while_overscaled() -> None:
    """Context("Limits and Scaling") It("should wait until nodes are deprovisioned when we are
    overscaled"): more nodes than replicas, no static drift."""
    assert run([_static(2)], _nodes(3), [IT]).commands == ()


def test_ignores_undrifted_and_do_not_disrupt() -> None:
    """Context("Edge Cases") It("should ignore nodes without the drifted status condition") and
    It("should ignore nodes with the karpenter.sh/do-not-disrupt annotation")."""
    assert run([_static(1)], _nodes(1, drifted=False), [IT]).commands == ()
    dnd = managed("n0", IT, drifted_at=D, node_annotations={"karpenter.sh/do-not-disrupt": "true"})
    assert run([_static(1)], dnd, [IT]).commands == ()
