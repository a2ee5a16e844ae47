"""Shared helpers for tests/userdata (a uniquely named module: `from conftest import` breaks when the whole suite runs)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from nodewright.userdata import ClusterInfo, KubeletConfig, Options, resolve_options
from nodewright.userdata.options import taints_from

GOLDEN = Path(__file__).resolve().parent.parent / "data" / "userdata"
VALIDATOR = Path(__file__).resolve().parents[2] / "tools" / "validate_userdata.py"
SYSTEM_PYTHON = "/usr/bin/python3"

UPSTREAM_BASE: dict[str, Any] = {
    "cluster": {
        "clusterName": "test-cluster",
        "clusterEndpoint": "https://test-cluster",
        "caBundle": "Y2EtYnVuZGxlCg==",
        "clusterCIDR": "10.100.0.0/16",
        "clusterDNS": "10.0.100.10",
    },
    "labels": {
        "karpenter.k8s.aws/ec2nodeclass": "default",
        "karpenter.sh/nodepool": "default",
        "testing/cluster": "unspecified",
    },
    "capacityType": "on-demand",
    "kubelet": {"maxPods": 110},
}


def load_case(path: Path) -> dict[str, Any]:
    raw = yaml.safe_load(path.read_text()) or {}
    if raw.pop("base", None) == "upstream":
        raw = {**UPSTREAM_BASE, **raw}
    return dict(raw)


def options_from_case(case: dict[str, Any]) -> tuple[str, Options]:
    cluster = case["cluster"]
    dns = cluster.get("clusterDNS")
    info = ClusterInfo(
        name=cluster["clusterName"],
        endpoint=cluster["clusterEndpoint"],
        ca_bundle=cluster.get("caBundle"),
        cidr=cluster.get("clusterCIDR"),
        dns=tuple([dns] if isinstance(dns, str) else dns or []),
    )
    family = case["family"]
    options = resolve_options(
        family=family,
        info=info,
        labels=case.get("labels", {}),
        capacity_type=case.get("capacityType", "on-demand"),
        taints=taints_from(case.get("taints")),
        startup_taints=taints_from(case.get("startupTaints")),
        kubelet=KubeletConfig.from_mapping(case.get("kubelet")),
        instance_type_pods=case.get("instanceTypePods"),
        instance_store_policy=case.get("instanceStorePolicy"),
        user_data=case.get("userData"),
        bottlerocket_default_mount_paths=bool(case.get("bottlerocketDefaultMountPaths", False)),
    )
    return family, options


def golden_cases() -> list[Path]:
    return sorted(GOLDEN.glob("*/*.input.yaml"))


def validator_available() -> bool:
    if not Path(SYSTEM_PYTHON).exists() or not VALIDATOR.exists():
        return False
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import cloudinit"], capture_output=True, check=False)
    return probe.returncode == 0


def require_validator() -> None:
    if not validator_available():
        pytest.skip(
            "cloud-init is not importable by /usr/bin/python3 (apt-get install -y cloud-init; "
            "make system-deps does it): cannot run tools/validate_userdata.py"
        )


def require_bash() -> str:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed: cannot run bash -n")
    return bash


# The environment of aws/karpenter-provider-aws v1.14.1 pkg/providers/launchtemplate/suite_test.go.
SUITE_CLUSTER = ClusterInfo(
    name="test-cluster",
    endpoint="https://test-cluster",
    ca_bundle="Y2EtYnVuZGxlCg==",
    cidr="10.100.0.0/16",
    dns=("10.0.100.10",),
)


def suite_nodeclass(**spec: Any) -> Any:
    """An EC2NodeClass model named ``default`` (al2023@latest unless ``amiSelectorTerms`` is given)."""
    from nodewright.api import EC2NodeClass

    base: dict[str, Any] = {
        "role": "role",
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "subnetSelectorTerms": [{"id": "subnet-1"}],
        "securityGroupSelectorTerms": [{"id": "sg-1"}],
    }
    base.update(spec)
    return EC2NodeClass.model_validate({"metadata": {"name": "default"}, "spec": base})


def suite_nodepool(labels: dict[str, str] | None = None, **template_spec: Any) -> Any:
    """A NodePool model named ``default`` referencing the ``default`` EC2NodeClass."""
    from nodewright.api import NodePool

    spec: dict[str, Any] = {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
        "requirements": [],
    }
    spec.update(template_spec)
    template: dict[str, Any] = {"spec": spec}
    if labels:
        template["metadata"] = {"labels": labels}
    return NodePool.model_validate({"metadata": {"name": "default"}, "spec": {"template": template}})
