"""NodePools this Karpenter does not own, EKS Auto Mode's NodeClass, and retired API versions.

kubernetes-sigs/karpenter v1.14.1 ``pkg/utils/nodepool/nodepool.go`` ``IsManaged``/``ListManaged``:
the provisioner, the static controllers and disruption only see NodePools whose nodeClassRef
GroupKind is one of ``CloudProvider.GetSupportedNodeClasses()`` (the AWS provider:
karpenter.k8s.aws/EC2NodeClass). Ported case: pkg/controllers/static/provisioning/suite_test.go It
"should return early if nodepool is not managed by cloud provider" (tests/static), and here the
user-facing effect on plan and drift, run as subprocesses.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import builders
import yaml

ROOT = Path(__file__).resolve().parents[2]
FAKE = ROOT / "tests" / "data" / "catalogs" / "fake.yaml"
AUTO_REF = {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "default"}
AUTO_CLASS = {
    "apiVersion": "eks.amazonaws.com/v1",
    "kind": "NodeClass",
    "metadata": {"name": "default"},
    "spec": {},
}


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nodewright.cli", *args], capture_output=True, text=True, check=False, cwd=ROOT
    )


def _write(path: Path, *docs: Any) -> str:
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def _pending_pod() -> dict[str, Any]:
    return builders.pod("p", cpu="1")


def test_auto_mode_pool_is_left_out_of_plan_with_the_reason(tmp_path: Path) -> None:
    f = _write(tmp_path / "np.yaml", builders.nodepool("auto", node_class_ref=AUTO_REF), AUTO_CLASS)
    cluster = builders.write_cluster(tmp_path / "c.json", [_pending_pod()])
    proc = _run("plan", "-f", f, "--cluster", str(cluster), "--catalog", str(FAKE), "-o", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["nodeClaims"] == []
    assert doc["skippedNodePools"][0]["name"] == "auto"
    assert "EKS Auto Mode" in doc["skippedNodePools"][0]["why"]
    assert doc["podErrors"]["default/p"] == "no dynamic nodepools found"
    # the Auto Mode NodeClass is not a misspelt EC2NodeClass
    assert "typo" not in proc.stderr and "NodeClass" not in proc.stderr


def test_managed_pool_still_planned_next_to_an_auto_mode_pool(tmp_path: Path) -> None:
    f = _write(
        tmp_path / "np.yaml", builders.nodepool("auto", node_class_ref=AUTO_REF), builders.nodepool("default")
    )
    cluster = builders.write_cluster(tmp_path / "c.json", [_pending_pod()])
    proc = _run("plan", "-f", f, "--cluster", str(cluster), "--catalog", str(FAKE), "-o", "json")
    doc = json.loads(proc.stdout)
    assert [c["nodePool"] for c in doc["nodeClaims"]] == ["default"]


def test_auto_mode_pool_is_left_out_of_drift(tmp_path: Path) -> None:
    pool = builders.nodepool("auto", node_class_ref=AUTO_REF, expire_after="720h")
    claim = builders.nodeclaim("auto-1", nodepool_name="auto", node_class_ref=AUTO_REF)
    claim["status"]["conditions"] = [{"type": "Launched", "status": "True"}]
    cluster = builders.write_cluster(tmp_path / "c.json", [pool, claim])
    changed = builders.nodepool("auto", node_class_ref=AUTO_REF, expire_after="24h")
    f = _write(tmp_path / "np.yaml", changed)
    proc = _run("drift", "-f", f, "--cluster", str(cluster), "-o", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["drifted"] == [] and doc["nodePools"] == []
    assert any("NodePool auto left out" in n and "EKS Auto Mode" in n for n in doc["notes"])
    assert doc["skipped"] == [{"nodeClaim": "auto-1", "why": "NodePool auto is not this Karpenter's"}]


def test_v1beta1_names_the_served_version(tmp_path: Path) -> None:
    for api, kind in (("karpenter.sh/v1beta1", "NodePool"), ("karpenter.k8s.aws/v1beta1", "EC2NodeClass")):
        f = _write(
            tmp_path / "old.yaml", {"apiVersion": api, "kind": kind, "metadata": {"name": "x"}, "spec": {}}
        )
        proc = _run("validate", "-f", f)
        assert proc.returncode == 1
        line = proc.stderr.strip().splitlines()[-1]
        assert line.startswith("error: ") and f"{f}:apiVersion" in line
        served = api.replace("v1beta1", "v1")
        assert f"serves only {served}" in line and "v1.14.1" in line


def test_auto_mode_pool_and_nodes_are_left_out_of_health(tmp_path: Path) -> None:
    """registrationhealth and node health watch managed NodePools/NodeClaims only
    (nodepool.IsManagedPredicateFuncs, nodeclaim.IsManagedPredicateFuncs)."""
    pool = builders.nodepool("auto", node_class_ref=AUTO_REF)
    claim = builders.nodeclaim(
        "auto-1", nodepool_name="auto", node_class_ref=AUTO_REF, provider_id="fake://n1"
    )
    node = builders.node("n1", labels={"karpenter.sh/nodepool": "auto"}, capacity={"cpu": "2"})
    node["status"]["conditions"] = [
        {"type": "Ready", "status": "False", "lastTransitionTime": "2026-01-01T00:00:00Z"}
    ]
    cluster = builders.write_cluster(tmp_path / "c.json", [pool, claim, node])
    proc = _run(
        "health",
        "--cluster",
        str(cluster),
        "--now",
        "2026-01-02T00:00:00Z",
        "--feature-gates",
        "NodeRepair=true",
        "-o",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["nodePools"] == [] and doc["nodeRepairs"] == []
    assert (
        doc["skippedNodePools"][0]["name"] == "auto" and "EKS Auto Mode" in doc["skippedNodePools"][0]["why"]
    )
