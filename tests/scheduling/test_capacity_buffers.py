"""CapacityBuffers: replica arithmetic, virtual pods and their effect on ``nodewright plan``.

Ported from kubernetes-sigs/karpenter v1.14.1: ``pkg/controllers/capacitybuffer/helpers_test.go``
(Describe "Helpers"), ``pkg/controllers/capacitybuffer/suite_test.go`` (Describe "CapacityBuffer
Controller"), ``pkg/state/virtualpods/utilities_test.go`` (Describe "buildVirtualPods",
"sanitizeVirtualPodSpec"); each test names its It/Entry.
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

from nodewright.api.core import PodSpec
from nodewright.api.workloads import CapacityBuffer, Deployment, PodTemplate
from nodewright.scheduling.workloads import (
    VIRTUAL_POD_PRIORITY,
    Inputs,
    buffer_pods,
    limit_replicas,
    percentage_replicas,
)

ROOT = Path(__file__).resolve().parents[2]
FAKE = ROOT / "tests" / "data" / "catalogs" / "fake.yaml"


def _spec(*containers: dict[str, str], init: tuple[dict[str, str], ...] = ()) -> PodSpec:
    return PodSpec.model_validate(
        {
            "containers": [{"name": f"c{i}", "resources": {"requests": r}} for i, r in enumerate(containers)],
            "initContainers": [{"name": f"i{i}", "resources": {"requests": r}} for i, r in enumerate(init)],
        }
    )


@pytest.mark.parametrize(
    ("limits", "spec", "want"),
    [
        ({"cpu": "4"}, _spec({"cpu": "1"}), (4, True)),  # It "should calculate replicas based on CPU limits"
        ({"memory": "2Gi"}, _spec({"memory": "512Mi"}), (4, True)),  # It "... based on memory limits"
        ({"cpu": "8", "memory": "4Gi"}, _spec({"cpu": "1", "memory": "1Gi"}), (4, True)),  # "minimum across"
        (
            {"cpu": "3"},
            _spec({"cpu": "500m"}, {"cpu": "500m"}),
            (3, True),
        ),  # "sum requests across containers"
        (
            {"cpu": "4"},
            _spec({"cpu": "1"}, init=({"cpu": "2"},)),
            (2, True),
        ),  # "init container max if larger"
        ({"cpu": "4"}, _spec({"cpu": "2"}, init=({"cpu": "1"},)), (2, True)),  # "container sum if larger"
        (
            {"cpu": "4"},
            PodSpec.model_validate({"containers": [{"name": "app"}]}),
            (0, False),
        ),  # "no resource requests"
        ({"memory": "4Gi"}, _spec({"cpu": "1"}), (0, False)),  # "no limit resources match pod requests"
        ({"cpu": "10"}, _spec({"cpu": "3"}), (3, True)),  # "should floor divide (no rounding up)"
        ({"cpu": "1"}, _spec({"cpu": "250m"}), (4, True)),  # "should handle millicore-level precision"
        ({"cpu": "1"}, _spec({"cpu": "2"}), (0, True)),  # "limit is smaller than a single pod request"
    ],
)
def test_limit_replicas(limits: dict[str, object], spec: PodSpec, want: tuple[int, bool]) -> None:
    """Context "calculateLimitReplicas" (the It named on each case)."""
    assert limit_replicas(limits, spec) == want


@pytest.mark.parametrize(
    ("replicas", "percentage", "want"),
    [
        (10, 20, 2),  # It "should calculate percentage and ceil"
        (3, 10, 1),  # It "should ceil fractional results"
        (3, 50, 2),  # nodewright's own: ceil(1.5) = 2, where rounding down would give a positive 1
        (1, 1, 1),  # It "should return at least 1 when percentage > 0 and replicas > 0"
        (0, 50, 0),  # It "should return 0 when scalable has 0 replicas"
        (10, 0, 0),  # It "should return 0 when percentage is 0"
        (5, 100, 5),  # It "should handle 100 percent"
        (5, 200, 10),  # It "should handle large percentages (>100)"
        (1000, 10, 100),  # It "should handle large replica counts"
    ],
)
def test_percentage_replicas(replicas: int, percentage: int, want: int) -> None:
    """Context "calculatePercentageReplicas"."""
    assert percentage_replicas(replicas, percentage) == want


CPU_TEMPLATE = {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}


def _buffer(name: str, **spec: Any) -> CapacityBuffer:
    return CapacityBuffer.model_validate({"metadata": {"name": name, "namespace": "default"}, "spec": spec})


def _template(name: str) -> PodTemplate:
    return PodTemplate.model_validate(
        {
            "metadata": {"name": name, "namespace": "default"},
            "template": {**CPU_TEMPLATE, "metadata": {"labels": {"app": "x"}}},
        }
    )


def _deployment(name: str, replicas: int | None) -> Deployment:
    spec: dict[str, Any] = {"selector": {"matchLabels": {"app": name}}, "template": CPU_TEMPLATE}
    if replicas is not None:
        spec["replicas"] = replicas
    return Deployment.model_validate({"metadata": {"name": name, "namespace": "default"}, "spec": spec})


def _count(cluster: Inputs) -> int:
    return len(buffer_pods(cluster).pods)


DEPLOY = {"apiGroup": "apps", "kind": "Deployment"}


@pytest.mark.parametrize(
    ("buffer", "want"),
    [
        (_buffer("b", podTemplateRef={"name": "pt"}, replicas=7), 7),  # Entry "fixed replicas only"
        (
            _buffer("b", podTemplateRef={"name": "pt"}, replicas=10, limits={"cpu": "3"}),
            3,
        ),  # "capped by binding limit"
        (
            _buffer("b", podTemplateRef={"name": "pt"}, replicas=3, limits={"cpu": "10"}),
            3,
        ),  # "non-binding limit"
        (_buffer("b", podTemplateRef={"name": "pt"}, limits={"cpu": "5"}), 5),  # Entry "limits only"
        (_buffer("b", scalableRef={**DEPLOY, "name": "d10"}, percentage=20), 2),  # Entry "percentage only"
        (
            _buffer("b", scalableRef={**DEPLOY, "name": "d10"}, replicas=5, percentage=20),
            5,
        ),  # "replicas > percentage"
        (
            _buffer("b", scalableRef={**DEPLOY, "name": "d10"}, replicas=5, percentage=80),
            8,
        ),  # "percentage > replicas"
        (
            _buffer(
                "b", scalableRef={**DEPLOY, "name": "d10"}, replicas=5, percentage=80, limits={"cpu": "4"}
            ),
            4,
        ),
        (
            _buffer("b", scalableRef={**DEPLOY, "name": "d1"}, percentage=10),
            1,
        ),  # "rounds up to a minimum of 1"
        (_buffer("b", scalableRef={**DEPLOY, "name": "dnil"}, percentage=100), 1),  # "nil Spec.Replicas" -> 1
    ],
)
def test_replica_calculation(buffer: CapacityBuffer, want: int) -> None:
    """Context "Replica calculation" DescribeTable entries (named on each case; the 8th is "max of
    replicas and percentage capped by limit") and It "should default to 1 replica when workload has
    nil Spec.Replicas"."""
    cluster = Inputs(
        capacitybuffers=(buffer,),
        podtemplates=(_template("pt"),),
        deployments=(_deployment("d10", 10), _deployment("d1", 1), _deployment("dnil", None)),
    )
    assert _count(cluster) == want


@pytest.mark.parametrize(
    ("buffer", "why"),
    [
        (
            _buffer("b", podTemplateRef={"name": "missing"}, replicas=1),
            "not found",
        ),  # "PodTemplate is not found"
        (
            _buffer("b", scalableRef={**DEPLOY, "name": "missing"}, replicas=1),
            "not found",
        ),  # "scalable ref is not found"
        (
            _buffer("b", scalableRef={"apiGroup": "apps", "kind": "CronJob", "name": "x"}, replicas=1),
            "unsupported kind",
        ),
        (
            _buffer("b", scalableRef={"apiGroup": "batch", "kind": "Job", "name": "x"}, replicas=1),
            "API group",
        ),
    ],
)
def test_unresolved_buffers_hold_nothing(buffer: CapacityBuffer, why: str) -> None:
    """Its "should set ReadyForProvisioning=False when PodTemplate is not found", "... when scalable ref
    is not found", "should return error for unsupported kind", "... for unsupported API group"."""
    got = buffer_pods(Inputs(capacitybuffers=(buffer,)))
    assert got.pods == () and why in got.notes[0]


def test_virtual_pods_metadata() -> None:
    """Describe "buildVirtualPods" It "should create the correct number of pods with expected metadata"
    and "sanitizeVirtualPodSpec" It "should drop PVC volumes and their mounts" / "should preserve
    tolerations, nodeSelector, and affinity"."""
    template = PodTemplate.model_validate(
        {
            "metadata": {"name": "pt", "namespace": "default"},
            "template": {
                "metadata": {"labels": {"app": "x"}},
                "spec": {
                    **CPU_TEMPLATE["spec"],
                    "nodeSelector": {"disk": "ssd"},
                    "tolerations": [{"key": "k", "operator": "Exists"}],
                    "volumes": [
                        {"name": "data", "persistentVolumeClaim": {"claimName": "c"}},
                        {"name": "cfg"},
                    ],
                },
            },
        }
    )
    got = buffer_pods(
        Inputs(
            capacitybuffers=(_buffer("web", podTemplateRef={"name": "pt"}, replicas=3),),
            podtemplates=(template,),
        )
    )
    assert [p.metadata.name for p in got.pods] == [f"capacity-buffer-web-{i}" for i in (1, 2, 3)]
    p = got.pods[0]
    assert p.metadata.labels == {"app": "x"}
    assert p.metadata.annotations["karpenter.sh/capacity-buffer-fake-pod"] == "true"
    assert p.metadata.annotations["karpenter.sh/capacity-buffer-name"] == "web"
    assert p.spec.priority == VIRTUAL_POD_PRIORITY
    assert [v.name for v in p.spec.volumes] == ["cfg"]
    assert p.spec.node_selector == {"disk": "ssd"} and p.spec.tolerations[0].key == "k"
    assert got.buffer_keys == {f"default/capacity-buffer-web-{i}" for i in (1, 2, 3)}


def test_zero_replicas_no_pods() -> None:
    """Describe "buildVirtualPods" It "should return nil for zero replicas"."""
    cluster = Inputs(
        capacitybuffers=(_buffer("b", podTemplateRef={"name": "pt"}, replicas=0),),
        podtemplates=(_template("pt"),),
    )
    assert _count(cluster) == 0


# -- through the CLI -------------------------------------------------------------------------


def _plan(tmp_path: Path, items: list[dict[str, Any]], *extra: str) -> dict[str, Any]:
    f = tmp_path / "np.yaml"
    f.write_text(yaml.safe_dump(builders.nodepool("default")))
    cluster = builders.write_cluster(tmp_path / "cluster.json", items)
    proc = subprocess.run(
        [sys.executable, "-m", "nodewright.cli", "plan", "-f", str(f), "--cluster", str(cluster),
         "--catalog", str(FAKE), "-o", "json", *extra],
        capture_output=True, text=True, check=False, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


BUFFER_ITEMS = [
    {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "pt", "namespace": "default"}, "template": CPU_TEMPLATE},
    {"apiVersion": "autoscaling.x-k8s.io/v1beta1", "kind": "CapacityBuffer",
     "metadata": {"name": "spare", "namespace": "default"}, "spec": {"podTemplateRef": {"name": "pt"}, "replicas": 2}},
]  # fmt: skip


def test_buffer_headroom_in_plan(tmp_path: Path) -> None:
    """provisioner.go GetPendingPods: with CapacityBuffer the buffers' virtual pods join the round."""
    doc = _plan(tmp_path, BUFFER_ITEMS, "--feature-gates", "CapacityBuffer=true")
    pods = [p for c in doc["nodeClaims"] for p in c["pods"]]
    assert sorted(pods) == ["default/capacity-buffer-spare-1", "default/capacity-buffer-spare-2"]
    assert doc["summary"]["bufferPods"] == 2
    assert doc["generatedPods"]["default/capacity-buffer-spare-1"] == "CapacityBuffer default/spare"


def test_buffer_gate_off(tmp_path: Path) -> None:
    """controllers.go: without the gate no buffer controller runs; the plan says so."""
    doc = _plan(tmp_path, BUFFER_ITEMS)
    assert doc["nodeClaims"] == [] and any("CapacityBuffer is off" in n for n in doc["notes"])


def test_buffer_without_a_ref_holds_nothing() -> None:
    """pkg/state/virtualpods/utilities_test.go It "should exclude buffers with neither PodTemplateRef
    nor ScalableRef" (the controller's ReadyForProvisioning=False "Neither podTemplateRef nor
    scalableRef is set")."""
    got = buffer_pods(Inputs(capacitybuffers=(_buffer("b", replicas=3),)))
    assert got.pods == () and "Neither podTemplateRef nor scalableRef is set" in got.notes[0]
