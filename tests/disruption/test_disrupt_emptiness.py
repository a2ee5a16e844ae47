"""Emptiness, ported from kubernetes-sigs/karpenter v1.14.1
``pkg/controllers/disruption/emptiness_test.go`` (Describe "Emptiness"); each test names its ``It``.

Upstream's harness (``NewMethodsWithNopValidator``) runs StaticDrift and Drift before Emptiness;
the forecast runs production's order (``controller.go`` ``NewMethods``): where an assertion
depends on the order, the test says so and asserts production's behaviour.
"""

from __future__ import annotations

import builders
from disrupt_support import (
    DS_OWNER,
    disrupted,
    itype,
    managed,
    methods,
    nodepool,
    pod,
    run,
)

BIG = itype("big", 1.0, cpu="32", memory="64Gi")
SMALL = itype("small", 0.2, cpu="2", memory="4Gi")
TYPES = [BIG, SMALL]


def _pool(**kw: object) -> object:
    kw.setdefault("policy", "WhenEmpty")
    kw.setdefault("budgets", [{"nodes": "100%"}])
    return nodepool(**kw)  # type: ignore[arg-type]


def test_can_delete_empty_nodes() -> None:
    """It("can delete empty nodes")."""
    r = run([_pool()], [*managed("n1", BIG)], TYPES)
    assert methods(r) == ["emptiness"]
    assert r.commands[0].decision == "delete" and r.commands[0].reason == "Empty"
    assert disrupted(r) == [["n1"]]


def test_can_delete_empty_and_drifted_nodes_production_order() -> None:
    """It("can delete empty and drifted nodes"): upstream's harness lets Drift claim the node;
    in production Emptiness runs first, so the forecast deletes it as Empty."""
    r = run([_pool()], [*managed("n1", BIG, drifted_at="2026-11-19T00:00:00Z")], TYPES)
    assert [(c.method, c.reason) for c in r.commands] == [("emptiness", "Empty")]


def test_ignores_nodes_with_do_not_disrupt_annotation() -> None:
    """It("should ignore nodes with the karpenter.sh/do-not-disrupt annotation")."""
    r = run([_pool()], [*managed("n1", BIG, node_annotations={"karpenter.sh/do-not-disrupt": "true"})], TYPES)
    assert r.commands == ()
    assert [b.as_dict() for b in r.blocked] == [
        {
            "node": "n1",
            "nodeClaim": "n1-claim",
            "reason": 'Disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation',
        }
    ]


def test_deletes_nodes_with_do_not_disrupt_false() -> None:
    """It("should delete nodes with the karpenter.sh/do-not-disrupt annotation set to false")."""
    r = run(
        [_pool()], [*managed("n1", BIG, node_annotations={"karpenter.sh/do-not-disrupt": "false"})], TYPES
    )
    assert disrupted(r) == [["n1"]]


def test_ignores_nodes_that_have_pods() -> None:
    """It("should ignore nodes that have pods"): WhenEmpty leaves a busy node alone."""
    r = run([_pool()], [*managed("n1", BIG), pod("p1", "n1")], TYPES)
    assert r.commands == ()
    assert [u.as_dict() for u in r.unconsolidatable] == [
        {
            "nodeClaim": "n1-claim",
            "message": 'NodePool "default" has consolidation policy WhenEmpty, but node is not empty',
        }
    ]


def test_can_delete_multiple_empty_nodes() -> None:
    """It("can delete multiple empty nodes"): one command with both."""
    r = run([_pool()], [*managed("n1", BIG), *managed("n2", BIG)], TYPES)
    assert len(r.commands) == 1 and sorted(disrupted(r)[0]) == ["n1", "n2"]


def test_budgets_allow_all_none_or_three() -> None:
    """It("should allow all empty nodes to be disrupted"), It("should allow no empty nodes to be
    disrupted"), It("should only allow 3 empty nodes to be disrupted"): 10 empty nodes under
    budgets of 100%, 0% and 30%."""
    items = [x for i in range(10) for x in managed(f"n{i}", SMALL)]
    for nodes, expected in (("100%", 10), ("0%", 0), ("30%", 3)):
        r = run([_pool(budgets=[{"nodes": nodes}])], items, TYPES)
        assert sum(len(c) for c in disrupted(r)) == expected, nodes
        assert len(r.commands) == (1 if expected else 0)


def test_two_nodes_from_each_nodepool() -> None:
    """It("should allow 2 nodes from each nodePool to be deleted"): 10 pools of 3 empty nodes,
    budget 2 each (one command, 20 nodes)."""
    pools = [_pool(name=f"pool-{p}", budgets=[{"nodes": "2"}]) for p in range(10)]
    items = [x for p in range(10) for i in range(3) for x in managed(f"p{p}-n{i}", SMALL, pool=f"pool-{p}")]
    r = run(pools, items, TYPES)
    assert len(r.commands) == 1 and len(r.commands[0].candidates) == 20


def test_daemonset_pod_counts_as_empty() -> None:
    """It("will consider a node with a DaemonSet pod as empty")."""
    r = run([_pool()], [*managed("n1", BIG), pod("ds-1", "n1", owner=DS_OWNER)], TYPES)
    assert disrupted(r) == [["n1"]]


def test_terminating_deployment_pod_counts_as_empty() -> None:
    """It("will consider a node with terminating Deployment pods as empty")."""
    r = run([_pool()], [*managed("n1", BIG), pod("p1", "n1", deleting=True)], TYPES)
    assert disrupted(r) == [["n1"]]


def test_terminating_statefulset_pod_is_not_empty() -> None:
    """It("will not consider a node with a terminating StatefulSet pod as empty")."""
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": "db-uid"}
    r = run([_pool()], [*managed("n1", BIG), pod("db-0", "n1", owner=sts, deleting=True)], TYPES)
    assert r.commands == ()


def test_waits_for_consolidate_after() -> None:
    """It("should wait for the node TTL for empty nodes before consolidating"): the Consolidatable
    condition is recomputed at --at from consolidateAfter and the last pod event."""
    items = [*managed("n1", BIG, last_pod_event="2026-11-20T11:59:50Z")]
    from disrupt_support import AT

    assert run([_pool(after="30s")], items, TYPES, at=AT).commands == ()
    from datetime import timedelta

    assert disrupted(run([_pool(after="30s")], items, TYPES, at=AT + timedelta(seconds=30))) == [["n1"]]


def test_consolidation_disabled_is_reported() -> None:
    """ShouldDisrupt: consolidateAfter Never disables emptiness with Karpenter's text."""
    r = run([_pool(after="Never")], [*managed("n1", BIG)], TYPES)
    assert r.commands == ()
    assert r.unconsolidatable[0].message == 'NodePool "default" has consolidation disabled'


def test_static_nodepool_not_consolidated() -> None:
    """It("should not consolidate static NodePool nodes") (Context "Static NodePool")."""
    r = run([_pool(replicas=1)], [*managed("n1", BIG)], TYPES)
    assert r.commands == ()


def test_pdb_does_not_block_empty_node_without_pods() -> None:
    """A PDB selecting no pod of the node does not block it (pdb.Limits matches by labels)."""
    items = [*managed("n1", BIG), builders.pdb("x", match_labels={"app": "x"})]
    assert disrupted(run([_pool()], items, TYPES)) == [["n1"]]


def test_empty_by_eviction_cost() -> None:
    """types.go ``Candidate.IsEmpty`` (v1.14): a node is empty when its reschedulable pods add no
    eviction cost (negative costs count 0), so a node whose only pod has a very low priority is
    deleted by Emptiness; with --until-quiet that pod waits as pending afterwards."""
    low = pod("batch", "n1")
    low["spec"]["priority"] = -2_000_000_000
    r = run([_pool()], [*managed("n1", BIG), low], TYPES, until_quiet=True)
    assert [(c.method, c.reason) for c in r.commands] == [("emptiness", "Empty")]
    assert r.commands[0].pods_moved == 1
