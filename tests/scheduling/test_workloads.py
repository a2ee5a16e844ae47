"""Workloads as inputs of ``nodewright plan``: the pods their controllers would create.

A what-if of ``kubectl scale``: the Deployment/ReplicaSet/StatefulSet controllers create
``replicas`` minus the active pods matching the selector; the Job controller keeps
``min(parallelism, completions - succeeded)`` pods active (kubernetes/kubernetes
pkg/controller/job ``getNewActivePods`` arithmetic). The pods carry the template's scheduling
fields, so Karpenter's decisions for them are those for the real pods.
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
from nodewright.api.workloads import Deployment, Job, ReplicaSet, StatefulSet
from nodewright.scheduling.workloads import workload_pods

ROOT = Path(__file__).resolve().parents[2]
FAKE = ROOT / "tests" / "data" / "catalogs" / "fake.yaml"
TEMPLATE = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
}


def _deploy(replicas: int | None = 3, **extra: Any) -> Deployment:
    spec: dict[str, Any] = {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE, **extra}
    if replicas is not None:
        spec["replicas"] = replicas
    return Deployment.model_validate({"metadata": {"name": "web", "namespace": "shop"}, "spec": spec})


def _running(
    name: str, ns: str = "shop", labels: dict[str, str] | None = None, phase: str = "Running"
) -> Pod:
    return Pod.model_validate(
        {"metadata": {"name": name, "namespace": ns, "labels": labels or {"app": "web"}},
         "spec": {"nodeName": "n1", "containers": [{"name": "c"}]}, "status": {"phase": phase}}
    )  # fmt: skip


def test_deployment_creates_the_missing_pods() -> None:
    got = workload_pods([_deploy(3)], [_running("web-a")])
    assert len(got.pods) == 2
    p = got.pods[0]
    assert p.metadata.namespace == "shop" and p.metadata.labels == {"app": "web"}
    assert p.metadata.name.startswith("web-") and got.sources[p.key] == "Deployment shop/web"
    assert p.status.conditions[0].reason == "Unschedulable" and p.spec.node_name is None


def test_replicas_default_to_one_and_other_namespaces_do_not_count() -> None:
    got = workload_pods([_deploy(None)], [_running("web-a", ns="other"), _running("done", phase="Succeeded")])
    assert len(got.pods) == 1


def test_nothing_when_replicas_are_met() -> None:
    assert workload_pods([_deploy(2)], [_running("a"), _running("b"), _running("c")]).pods == ()


def test_replicaset_of_a_listed_deployment_is_not_counted_twice() -> None:
    rs = ReplicaSet.model_validate(
        {"metadata": {"name": "web-123", "namespace": "shop", "ownerReferences": [{"kind": "Deployment", "name": "web"}]},
         "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}}
    )  # fmt: skip
    assert len(workload_pods([_deploy(3), rs], []).pods) == 3


def test_statefulset_missing_ordinals() -> None:
    sts = StatefulSet.model_validate(
        {"metadata": {"name": "db", "namespace": "shop"},
         "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}}
    )  # fmt: skip
    got = workload_pods([sts], [_running("db-1")])
    assert [p.metadata.name for p in got.pods] == ["db-0", "db-2"]
    assert got.pods[0].metadata.owner_references[0].kind == "StatefulSet"


@pytest.mark.parametrize(
    ("spec", "status", "want"),
    [
        ({}, {}, 1),  # parallelism and completions unset: one pod
        ({"parallelism": 4, "completions": 10}, {"succeeded": 8}, 2),  # completions - succeeded caps it
        ({"parallelism": 4, "completions": 10}, {"active": 3}, 1),  # active pods count
        ({"parallelism": 4}, {"succeeded": 1}, 0),  # without completions, one success completes the Job
        ({"parallelism": 4, "suspend": True}, {}, 0),
        ({"parallelism": 2}, {"completionTime": "2024-01-01T00:00:00Z"}, 0),
    ],
)
def test_job_arithmetic(spec: dict[str, Any], status: dict[str, Any], want: int) -> None:
    job = Job.model_validate(
        {
            "metadata": {"name": "j", "namespace": "b"},
            "spec": {"template": TEMPLATE, **spec},
            "status": status,
        }
    )
    assert len(workload_pods([job], []).pods) == want


def test_bound_on_generated_pods() -> None:
    got = workload_pods([_deploy(1_000_000)], [], budget=10)
    assert len(got.pods) == 10 and "capped" in got.notes[0]


# -- through the CLI ---------------------------------------------------------------------------


def _plan(tmp_path: Path, files: list[Any], cluster: list[dict[str, Any]]) -> dict[str, Any]:
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump_all(files))
    c = builders.write_cluster(tmp_path / "cluster.json", cluster)
    proc = subprocess.run(
        [sys.executable, "-m", "nodewright.cli", "plan", "-f", str(f), "--cluster", str(c), "--catalog", str(FAKE), "-o", "json"],
        capture_output=True, text=True, check=False, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def _deploy_doc(replicas: int, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    tmpl = json.loads(json.dumps(TEMPLATE))
    tmpl["spec"].update(spec or {})
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "template": tmpl}}  # fmt: skip


def test_branch_deployment_replaces_the_clusters(tmp_path: Path) -> None:
    """-f's Deployment (replicas 4) overrides the cluster's (replicas 1, already running)."""
    running = builders.pod("web-a", cpu="1", labels={"app": "web"}, namespace="shop", node_name="n1")
    doc = _plan(tmp_path, [builders.nodepool("default"), _deploy_doc(4)], [_deploy_doc(1), running])
    assert doc["summary"]["workloadPods"] == 3
    assert sum(len(c["pods"]) for c in doc["nodeClaims"]) == 3


def test_template_scheduling_fields_are_respected(tmp_path: Path) -> None:
    """nodeSelector and tolerations of the template steer the pods to the tainted arm64 pool."""
    arm = builders.nodepool(
        "arm",
        labels={"pool": "arm"},
        requirements=[{"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}],
        taints=[{"key": "arch", "value": "arm64", "effect": "NoSchedule"}],
    )
    spec = {
        "nodeSelector": {"pool": "arm", "kubernetes.io/arch": "arm64"},
        "tolerations": [{"key": "arch", "operator": "Exists"}],
    }
    doc = _plan(tmp_path, [builders.nodepool("default"), arm, _deploy_doc(2, spec)], [])
    assert {c["nodePool"] for c in doc["nodeClaims"]} == {"arm"}
    assert all(c["labels"]["kubernetes.io/arch"] == "arm64" for c in doc["nodeClaims"])


def test_topology_spread_of_the_template(tmp_path: Path) -> None:
    spread = {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
              "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}]}  # fmt: skip
    doc = _plan(tmp_path, [builders.nodepool("default"), _deploy_doc(3, spread)], [])
    zones = {c["labels"]["topology.kubernetes.io/zone"] for c in doc["nodeClaims"]}
    assert len(zones) == 3


def test_statefulset_claims_follow_their_volumes(tmp_path: Path) -> None:
    """A StatefulSet's new pods carry their ``<template>-<pod>`` claims: an existing bound claim pins
    its pod to the volume's zone; a claim the controller will create follows the storage class's
    allowed topologies (as ``getVolumeTopologyRequirements`` reads them)."""
    zone = "topology.kubernetes.io/zone"
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "zonal"},
          "provisioner": "test-provisioner", "volumeBindingMode": "WaitForFirstConsumer",
          "allowedTopologies": [{"matchLabelExpressions": [{"key": zone, "values": ["test-zone-2"]}]}]}  # fmt: skip
    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-0"},
          "spec": {"storageClassName": "zonal", "csi": {"driver": "test.driver", "volumeHandle": "h"},
                   "nodeAffinity": {"required": {"nodeSelectorTerms": [
                       {"matchExpressions": [{"key": zone, "operator": "In", "values": ["test-zone-3"]}]}]}}}}  # fmt: skip
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": {"name": "data-db-0", "namespace": "shop", "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
           "spec": {"storageClassName": "zonal", "volumeName": "pv-0"}}  # fmt: skip
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "shop"},
           "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "db"}},
                    "template": {"metadata": {"labels": {"app": "db"}}, "spec": TEMPLATE["spec"]},
                    "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"storageClassName": "zonal"}}]}}  # fmt: skip
    doc = _plan(tmp_path, [builders.nodepool("default")], [sc, pv, pvc, sts])
    zones = {p: c["labels"][zone] for c in doc["nodeClaims"] for p in c["pods"]}
    assert zones == {"shop/db-0": "test-zone-3", "shop/db-1": "test-zone-2"}


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nodewright.cli", *args], capture_output=True, text=True, check=False, cwd=ROOT
    )


def test_scale_what_if_through_the_cli() -> None:
    """``--scale deployment/inflate=20``: kubectl scale's what-if on the getting-started Deployment."""
    base = ["plan", "-f", "stacks/nodepools.yaml", "-f", "stacks/nodeclasses.yaml", "--cluster", "stacks/examples/inflate.yaml", "-o", "json"]  # fmt: skip
    five = json.loads(_cli(*base).stdout)
    twenty = json.loads(_cli(*base, "--scale", "deployment/inflate=20").stdout)
    assert five["summary"]["workloadPods"] == 5 and twenty["summary"]["workloadPods"] == 20
    assert twenty["summary"]["scheduled"] == 20


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("deployment/nope=2", "no Deployment default/nope in the cluster state or the files to scale"),
        ("cronjob/x=2", "cannot scale 'cronjob'"),
        ("deployment/inflate", "is not [NAMESPACE/]KIND/NAME=N"),
        ("deployment/inflate=-1", "whole number >= 0"),
    ],
)
def test_scale_errors_are_one_line(value: str, message: str) -> None:
    proc = _cli(
        "plan", "-f", "stacks/nodepools.yaml", "--cluster", "stacks/examples/inflate.yaml", "--scale", value
    )
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --scale") and message in lines[0]
