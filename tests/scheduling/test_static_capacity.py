"""Static NodePools (``spec.replicas``) in ``nodewright plan`` (feature gate StaticCapacity).

Ported from kubernetes-sigs/karpenter v1.14.1 ``pkg/controllers/static/provisioning/suite_test.go``
(Describe "Static Provisioning Controller") and ``pkg/controllers/static/deprovisioning/suite_test.go``
(Describe "Static Deprovisioning Controller"); each test names its It. The counting functions are
tested directly; the user-facing behaviour through ``nodewright plan`` as a subprocess.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import builders
import pytest
import yaml

from nodewright.api.core import Pod
from nodewright.scheduling.staticcapacity import (
    PoolCounts,
    reserve_node_count,
    scale_down_candidates,
    static_launches,
)

ROOT = Path(__file__).resolve().parents[2]
FAKE = ROOT / "tests" / "data" / "catalogs" / "fake.yaml"


def _static(name: str = "fixed", replicas: int = 3, **kw: Any) -> dict[str, Any]:
    np = builders.nodepool(name, **kw)
    np["spec"]["replicas"] = replicas
    return np


def _plan(
    tmp_path: Path, pools: list[dict[str, Any]], items: list[dict[str, Any]], *extra: str
) -> dict[str, Any]:
    f = tmp_path / "np.yaml"
    f.write_text(yaml.safe_dump_all(pools))
    cluster = builders.write_cluster(tmp_path / "cluster.json", items)
    proc = subprocess.run(
        [sys.executable, "-m", "nodewright.cli", "plan", "-f", str(f), "--cluster", str(cluster),
         "--catalog", str(FAKE), "-o", "json", *extra],
        capture_output=True, text=True, check=False, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


GATE = ("--feature-gates", "StaticCapacity=true")


def _claims_of(doc: dict[str, Any], pool: str) -> list[dict[str, Any]]:
    return [c for c in doc["nodeClaims"] if c["nodePool"] == pool]


def _running(name: str, pool: str = "fixed", *, node: bool = True) -> list[dict[str, Any]]:
    nc = builders.nodeclaim(
        name, nodepool_name=pool, capacity={"cpu": "10", "memory": "1000Mi", "pods": "10"},
        node_name=name if node else None, provider_id=f"fake://{name}",
        node_class_ref=builders.TEST_NODECLASS_REF,
    )  # fmt: skip
    out = [nc]
    if node:
        out.append(
            builders.node(name, labels={"karpenter.sh/nodepool": pool}, capacity={"cpu": "10", "pods": "10"})
        )
    return out


# -- provisioning ------------------------------------------------------------------------------


def test_creates_nodeclaims_up_to_replicas(tmp_path: Path) -> None:
    """It "should create nodeclaims when current node count is less than desired replicas"."""
    doc = _plan(tmp_path, [_static(replicas=2)], [], *GATE)
    got = _claims_of(doc, "fixed")
    assert len(got) == 2 and all(c["static"] and c["pods"] == [] for c in got)
    assert doc["summary"]["staticNodeClaims"] == 2
    # the cloud provider launches the cheapest compatible offering
    assert all(c["launch"]["instanceType"] == got[0]["instanceTypes"][0] for c in got)


def test_creates_additional_nodeclaims(tmp_path: Path) -> None:
    """It "should create additional nodeclaims to reach desired replicas": 1 running of 3 -> 2 more."""
    doc = _plan(tmp_path, [_static(replicas=3)], _running("nc-1"), *GATE)
    assert len(_claims_of(doc, "fixed")) == 2


def test_not_more_when_replicas_are_met(tmp_path: Path) -> None:
    """It "should not create additional nodeclaims": 3 NodeClaims (with or without nodes) of 3."""
    items = [*_running("a", node=False), *_running("b"), *_running("c")]
    assert _claims_of(_plan(tmp_path, [_static(replicas=3)], items, *GATE), "fixed") == []


def test_node_limit_stops_provisioning(tmp_path: Path) -> None:
    """It "should not create additional nodeclaims when node limits are reached": replicas 3, limit 1, 1 running."""
    doc = _plan(tmp_path, [_static(replicas=3, limits={"nodes": "1"})], _running("nc-1"), *GATE)
    assert _claims_of(doc, "fixed") == []
    assert any("node limit reached" in n for n in doc["notes"])


def test_reserve_node_count() -> None:
    """It "should reserve nodepool nodecount during provisioning and release after": 3 running of limit
    10 leaves 7; replicas 15 with limit 10 launches 7 more (10 in all), then nothing is left."""
    assert reserve_node_count(10, PoolCounts(running=3), 10) == 7
    assert static_launches(replicas=15, node_limit=10, counts=PoolCounts(running=3)) == (7, None)
    assert reserve_node_count(10, PoolCounts(running=10), 100) == 0


def test_zero_replicas(tmp_path: Path) -> None:
    """It "should handle zero replicas"."""
    assert _claims_of(_plan(tmp_path, [_static(replicas=0)], [], *GATE), "fixed") == []


def test_overscaled_pool_does_not_provision() -> None:
    """It "should return early if current node count exceeds desired replicas"."""
    assert static_launches(replicas=1, node_limit=None, counts=PoolCounts(running=2)) == (0, None)


def test_unmanaged_pool_is_not_provisioned(tmp_path: Path) -> None:
    """It "should return early if nodepool is not managed by cloud provider"."""
    pool = _static(
        replicas=1, node_class_ref={"group": "test.group", "kind": "UnmanagedNodeClass", "name": "test"}
    )
    doc = _plan(tmp_path, [pool], [], *GATE)
    assert doc["nodeClaims"] == [] and doc["skippedNodePools"][0]["name"] == "fixed"


def test_not_ready_pool_is_not_provisioned(tmp_path: Path) -> None:
    """It "should return early if nodepool root condition is not true"."""
    pool = _static(replicas=1, status={"conditions": [{"type": "Ready", "status": "False"}]})
    assert _claims_of(_plan(tmp_path, [pool], [], *GATE), "fixed") == []


def test_dynamic_pool_is_not_static(tmp_path: Path) -> None:
    """It "should return early if nodepool replicas is nil": no static NodeClaims for a dynamic pool."""
    doc = _plan(tmp_path, [builders.nodepool("fixed")], [], *GATE)
    assert doc["nodeClaims"] == [] and "staticNodeClaims" in doc["summary"]


def test_template_is_respected(tmp_path: Path) -> None:
    """It "should respect nodepool template specifications": labels, taints and requirements of the template."""
    pool = _static(
        replicas=4,
        labels={"team": "a"},
        taints=[{"key": "dedicated", "value": "a", "effect": "NoSchedule"}],
        requirements=[{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}],
    )
    got = _claims_of(_plan(tmp_path, [pool], [], *GATE), "fixed")
    assert len(got) == 4
    for c in got:
        assert c["labels"]["team"] == "a" and c["labels"]["karpenter.sh/capacity-type"] == "on-demand"
        assert c["taints"] == [{"key": "dedicated", "value": "a", "effect": "NoSchedule"}]


def test_gate_off_plans_no_static_nodeclaims(tmp_path: Path) -> None:
    """controllers.go registers the static controllers only with StaticCapacity; the plan says so."""
    doc = _plan(tmp_path, [_static(replicas=2)], [])
    assert doc["nodeClaims"] == [] and any("StaticCapacity" in n for n in doc["notes"])


def test_static_claims_go_to_the_claims_file(tmp_path: Path) -> None:
    """The fleet mode launches what plan --write records, static NodeClaims included."""
    out = tmp_path / "claims.yaml"
    _plan(tmp_path, [_static(replicas=2)], [], *GATE, "--write", str(out))
    claims = yaml.safe_load(out.read_text())["nodeClaims"]
    assert len(claims) == 2 and all(c["static"] for c in claims)


# -- deprovisioning ----------------------------------------------------------------------------


def _pods(by_node: dict[str, list[dict[str, Any]]]) -> dict[str, list[Pod]]:
    return {n: [Pod.model_validate(p) for p in pods] for n, pods in by_node.items()}


def test_terminates_excess(tmp_path: Path) -> None:
    """It "should terminate excess nodeclaims when current count exceeds desired replicas": 4 of 2."""
    items = [i for n in ("a", "b", "c", "d") for i in _running(n)]
    doc = _plan(tmp_path, [_static(replicas=2)], items, *GATE)
    assert len(doc["staticScaleDown"][0]["nodeClaims"]) == 2


def test_zero_replicas_terminates_all(tmp_path: Path) -> None:
    """It "should handle zero replicas by terminating all nodeclaims"."""
    items = [i for n in ("a", "b", "c") for i in _running(n)]
    doc = _plan(tmp_path, [_static(replicas=0)], items, *GATE)
    assert sorted(doc["staticScaleDown"][0]["nodeClaims"]) == ["a", "b", "c"]


def test_deleting_nodeclaims_do_not_count(tmp_path: Path) -> None:
    """It "should only consider running nodeclaims and not deleting nodeclaims": 1 running + 3 deleting of 1."""
    items = [i for n in ("a", "b", "c", "d") for i in _running(n)]
    for it in items:
        if it["kind"] == "Node" and it["metadata"]["name"] != "d":
            it["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
            it["metadata"]["finalizers"] = ["karpenter.sh/termination"]
    doc = _plan(tmp_path, [_static(replicas=1)], items, *GATE)
    assert "staticScaleDown" not in doc


def test_unresolved_nodeclaims_go_first() -> None:
    """Context "Deprovision Candidate Selection" It "should prioritize nodeclaims that have unresolved providerID"."""
    claims = [
        {"metadata": {"name": "resolved"}, "status": {"providerID": "fake://r", "nodeName": "r"}},
        {"metadata": {"name": "unresolved"}, "status": {}},
    ]
    nodes = {"r": {"metadata": {"name": "r"}}}
    assert scale_down_candidates(claims, count=1, nodes_by_name=nodes, pods_by_node={}) == ["unresolved"]


def test_empty_nodes_go_first() -> None:
    """It "should prioritize empty nodes (with only daemonset pods) for termination"."""
    claims = [
        {"metadata": {"name": n}, "status": {"providerID": f"fake://{n}", "nodeName": n}}
        for n in ("busy", "ds")
    ]
    nodes = {n: {"metadata": {"name": n}} for n in ("busy", "ds")}
    pods = {
        "busy": [{"metadata": {"name": "app"}}],
        "ds": [
            {
                "metadata": {
                    "name": "d",
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "x"}],
                }
            }
        ],
    }
    assert scale_down_candidates(claims, count=1, nodes_by_name=nodes, pods_by_node=_pods(pods)) == ["ds"]
    # It "should terminate non-empty nodes when empty nodes are insufficient"
    assert scale_down_candidates(claims, count=2, nodes_by_name=nodes, pods_by_node=_pods(pods)) == [
        "ds",
        "busy",
    ]


@pytest.mark.parametrize(
    ("replicas", "remaining"),
    [
        (6, [0, 1, 2, 4, 5, 6]),  # Entry "to 6 (drops DS-only first)"
        (4, [1, 2, 5, 6]),  # Entry "to 4 (drops low next)"
        (2, [2, 6]),  # Entry "to 2 (drops high next)"
        (0, []),  # Entry "to 0 (drops do-not-disrupt last)"
    ],
)
def test_disruption_cost_order(replicas: int, remaining: list[int]) -> None:
    """Describe "disruption cost ordering" DescribeTable "scales down in disruption cost order":
    two each of low (1 pod), high (2 pods), do-not-disrupt and DaemonSet-only nodes, 8 -> replicas."""
    kinds = ["low", "high", "dnd", "ds"] * 2
    claims, nodes, pods = [], {}, {}
    for i, kind in enumerate(kinds):
        n = f"n{i}"
        claims.append({"metadata": {"name": n}, "status": {"providerID": f"fake://{n}", "nodeName": n}})
        nodes[n] = {"metadata": {"name": n}}
        if kind == "low":
            pods[n] = [{"metadata": {"name": f"low-{i}"}}]
        elif kind == "high":
            pods[n] = [{"metadata": {"name": f"s-{i}"}}, {"metadata": {"name": f"a-{i}"}}]
        elif kind == "dnd":
            pods[n] = [
                {"metadata": {"name": f"d-{i}", "annotations": {"karpenter.sh/do-not-disrupt": "true"}}}
            ]
        else:
            pods[n] = [
                {
                    "metadata": {
                        "name": f"ds-{i}",
                        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "x"}],
                    }
                }
            ]
    gone = scale_down_candidates(claims, count=8 - replicas, nodes_by_name=nodes, pods_by_node=_pods(pods))
    assert sorted(set(range(8)) - {int(g[1:]) for g in gone}) == sorted(remaining)


def test_large_replica_counts(tmp_path: Path) -> None:
    """It "should handle large replica counts": 1000 replicas, 1000 static NodeClaims."""
    doc = _plan(tmp_path, [_static(replicas=1000)], [], *GATE)
    assert len(_claims_of(doc, "fixed")) == 1000 == doc["summary"]["staticNodeClaims"]
    assert len({c["name"] for c in doc["nodeClaims"]}) == 1000


def test_concurrent_reconciles_stay_within_the_limit() -> None:
    """It "handles concurrent reconciliation without exceeding NodePool limits": the reservation
    never grants past limits.nodes, whatever is already reserved."""
    assert reserve_node_count(10, PoolCounts(running=0), 5) == 5
    assert reserve_node_count(10, PoolCounts(running=0), 5, reserved=5) == 5
    assert reserve_node_count(10, PoolCounts(running=0), 5, reserved=10) == 0


def test_deleting_pool_is_not_scaled_down(tmp_path: Path) -> None:
    """Describe "Static Deprovisioning Controller" It "should return early if nodepool is being deleted"."""
    pool = _static(replicas=1)
    pool["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    pool["metadata"]["finalizers"] = ["karpenter.sh/termination"]
    items = [i for n in ("a", "b") for i in _running(n)]
    assert "staticScaleDown" not in _plan(tmp_path, [pool], items, *GATE)


def test_no_scale_down_at_or_below_replicas(tmp_path: Path) -> None:
    """Its "should return early if current node count is less than or equal to desired replicas" and
    "should handle no active nodeclaims gracefully"."""
    items = [i for n in ("a", "b") for i in _running(n)]
    assert "staticScaleDown" not in _plan(tmp_path, [_static(replicas=2)], items, *GATE)
    assert "staticScaleDown" not in _plan(tmp_path, [_static(replicas=2)], [], *GATE)
