"""More of the disruption suite, ported from kubernetes-sigs/karpenter v1.14.1
``pkg/controllers/disruption/suite_test.go`` and ``consolidation_test.go`` (Context "MinValuesPolicy",
"Multi-NodeClaim"); each test names its file, Context and ``It``."""

from __future__ import annotations

import builders
from disrupt_support import IT, disrupted, itype, managed, nodepool, pod, run

from nodewright.settings import resolve

BIG = itype("big", 1.0, cpu="8", memory="16Gi", spot_price=0.5)
SMALL = itype("small", 0.25, cpu="2", memory="4Gi", spot_price=0.1)
D1 = "2026-11-19T01:00:00Z"


def test_multiple_replace_operations_happen_successively() -> None:
    """suite_test.go It("should allow multiple replace operations to happen successively"): ten
    drifted nodes, each with a pod pinned to its own ``test-partition``, budget 3: three drift
    replacements (one reconcile each, nothing completes), then the budget is spent."""
    pool = nodepool(
        budgets=[{"nodes": "3"}],
        after="Never",
        capacity_types=("on-demand",),
        requirements=[{"key": "test-partition", "operator": "Exists"}],
    )
    items = []
    for i in range(10):
        node, claim = managed(f"n{i}", BIG, drifted_at=D1)
        for obj in (node, claim):
            obj["metadata"]["labels"]["test-partition"] = str(i)
        items += [node, claim, pod(f"p{i}", f"n{i}", cpu="100m", node_selector={"test-partition": str(i)})]
    r = run([pool], items, [BIG])
    assert [(c.method, c.decision, len(c.replacements)) for c in r.commands] == [("drift", "replace", 1)] * 3
    assert [c.round for c in r.commands] == [1, 2, 3]
    assert r.blocked_pools[0].as_dict() == {
        "nodePool": "default",
        "reason": "Drifted",
        "allowed": 3,
        "disrupting": 3,
    }


def test_min_values_best_effort_does_not_relax_for_consolidation() -> None:
    """consolidation_test.go Context("MinValuesPolicy") It("should not consolidate a node by relaxing
    min values when policy is set to BestEffort"): the pool asks for 3 instance types of a catalog
    of 2. BestEffort relaxes minValues to the 2 the catalog has; once the dear type is filtered by
    price, one is left, so consolidation reports the unmet minValues and leaves the node. (Upstream's
    fake catalog is assorted; here both types are on-demand only, so the dear type cannot stay
    through a cheaper spot offering of its own.)"""
    pool = nodepool(
        budgets=[{"nodes": "100%"}],
        requirements=[{"key": IT, "operator": "In", "values": ["small", "big"], "minValues": 3}],
    )
    big, small = itype("big", 1.0, cpu="8", memory="16Gi"), itype("small", 0.25, cpu="2", memory="4Gi")
    items = [*managed("n1", big), pod("p1", "n1", cpu="100m")]
    r = run([pool], items, [small, big], settings=resolve(flags={"min_values_policy": "BestEffort"}))
    assert r.commands == ()
    assert any(
        "minValues requirement is not met for label(s) (label(s)=[node.kubernetes.io/instance-type])"
        in u.message
        for u in r.unconsolidatable
    ), r.unconsolidatable


def test_merge_three_spot_nodes_into_one() -> None:
    """consolidation_test.go Context("Multi-NodeClaim") DescribeTable("can merge 3 nodes into 1")
    Entry("if the candidate is spot node"): with SpotToSpotConsolidation on, three dear spot nodes
    become one cheaper spot node (multi-node spot-to-spot needs no 15 options)."""
    mid = itype("mid", 0.5, cpu="4", memory="8Gi", spot_price=0.2)
    items = [
        *[x for i in range(3) for x in managed(f"n{i}", BIG, ct="spot")],
        *[pod(f"p{i}", f"n{i}", cpu="1") for i in range(3)],
    ]
    pool = nodepool(budgets=[{"nodes": "100%"}])
    r = run([pool], items, [BIG, mid], gates="SpotToSpotConsolidation=true")
    cmd = r.commands[0]
    assert cmd.method == "multi-node-consolidation" and sorted(disrupted(r)[0]) == ["n0", "n1", "n2"]
    assert cmd.replacements[0]["capacityType"] == "spot" and cmd.replacements[0]["instanceTypes"] == ["mid"]


def test_replace_node_with_local_pv_ignoring_hostname_affinity() -> None:
    """suite_test.go It("can replace node with a local PV (ignoring hostname affinity)"): a
    StatefulSet pod's local volume is pinned to the node's hostname; the replacement ignores that
    affinity (the volume cannot follow anyway) and the node is replaced by a cheaper one."""
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": "db-uid"}
    host = [[{"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]]
    sc = builders.storage_class("local-path", provisioner="kubernetes.io/no-provisioner")
    items = [
        *managed("n1", BIG),
        {"kind": "StorageClass", "apiVersion": "storage.k8s.io/v1", **sc},
        {"kind": "PersistentVolume", "apiVersion": "v1", **builders.pv("pv", terms=host, source="local")},
        {
            "kind": "PersistentVolumeClaim",
            "apiVersion": "v1",
            **builders.pvc("claim", storage_class="local-path", volume="pv"),
        },
        pod("db-0", "n1", cpu="500m", owner=sts, claims=["claim"]),
    ]
    r = run([nodepool(budgets=[{"nodes": "100%"}], capacity_types=("on-demand",))], items, [BIG, SMALL])
    assert [(c.method, c.decision) for c in r.commands] == [("single-node-consolidation", "replace")]
    assert r.commands[0].replacements[0]["instanceTypes"] == ["small"]
