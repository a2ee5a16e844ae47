"""Objects the v1.14.1 cluster rejects are rejected with file and field; objects
it accepts (which older hand-written rules refused) load. Each goes through the one loading path
(``load_objects`` on a file, as every command does)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from crd_helpers import set_path

from nodewright.api import load_objects
from nodewright.cli import main
from nodewright.errors import NodewrightError

POOL: dict[str, Any] = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "default"},
    "spec": {
        "template": {
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
            }
        }
    },
}
CLASS: dict[str, Any] = {
    "apiVersion": "karpenter.k8s.aws/v1",
    "kind": "EC2NodeClass",
    "metadata": {"name": "default"},
    "spec": {
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "role": "KarpenterNodeRole",
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
    },
}


def pool(**changes: Any) -> dict[str, Any]:
    body = POOL
    for path, value in changes.items():
        body = set_path(body, path.replace("__", "."), value)
    return body


def nodeclass(**changes: Any) -> dict[str, Any]:
    body = CLASS
    for path, value in changes.items():
        body = set_path(body, path.replace("__", "."), value)
    return body


def problems(tmp_path: Path, body: dict[str, Any]) -> list[str]:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump(body))
    with pytest.raises(NodewrightError) as info:
        load_objects([path])
    prefix = f"{path}:"
    lines = info.value.lines()
    assert all(line.startswith(prefix) for line in lines), lines
    return [line[len(prefix) :] for line in lines]


def loads(tmp_path: Path, body: dict[str, Any]) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump(body))
    load_objects([path])


LONG_NAME = "a" * 64
INVALID: list[tuple[str, dict[str, Any], str, str]] = [
    (
        "disruption without consolidateAfter",
        pool(spec__disruption={"consolidationPolicy": "WhenEmpty"}),
        "spec.disruption.consolidateAfter",
        "required",
    ),
    ("quoted weight", pool(spec__weight="10"), "spec.weight", "must be of type integer"),
    (
        "quoted boolean",
        nodeclass(
            spec__blockDeviceMappings=[
                {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "20Gi", "encrypted": "true"}}
            ]
        ),
        "spec.blockDeviceMappings[0].ebs.encrypted",
        "must be of type boolean",
    ),
    (
        "budget schedule pattern",
        pool(
            spec__disruption={
                "consolidateAfter": "0s",
                "budgets": [{"nodes": "1", "schedule": "daily", "duration": "1h"}],
            }
        ),
        "spec.disruption.budgets[0].schedule",
        "CRD pattern",
    ),
    (
        "budget duration pattern",
        pool(
            spec__disruption={
                "consolidateAfter": "0s",
                "budgets": [{"nodes": "1", "schedule": "@daily", "duration": "1d"}],
            }
        ),
        "spec.disruption.budgets[0].duration",
        "hours and/or minutes",
    ),
    (
        "duplicate budget reasons",
        pool(
            spec__disruption={
                "consolidateAfter": "0s",
                "budgets": [{"nodes": "1", "reasons": ["Empty", "Empty"]}],
            }
        ),
        "spec.disruption.budgets[0].reasons[1]",
        "duplicate value",
    ),
    (
        "static pool with weight",
        pool(spec__replicas=3, spec__weight=10),
        "spec",
        "'weight' is not supported on static NodePools",
    ),
    (
        "static pool with cpu limit",
        pool(spec__replicas=3, spec__limits={"cpu": "10"}),
        "spec",
        "only 'limits.nodes' is supported",
    ),
    ("name over 63 characters", pool(metadata={"name": LONG_NAME}), "metadata.name", "at most 63 characters"),
    ("name with underscore", pool(metadata={"name": "my_pool"}), "metadata.name", "RFC 1123"),
    ("name with uppercase", pool(metadata={"name": "MyPool"}), "metadata.name", "RFC 1123"),
    ("AL2 with an al2023 alias", nodeclass(spec__amiFamily="AL2"), "spec", "amiFamily"),
    (
        "nodeClassRef.group with a version",
        pool(
            spec__template__spec__nodeClassRef={
                "group": "karpenter.k8s.aws/v1",
                "kind": "EC2NodeClass",
                "name": "d",
            }
        ),
        "spec.template.spec.nodeClassRef.group",
        "without a version",
    ),
    (
        "60 block devices",
        nodeclass(spec__blockDeviceMappings=[{"deviceName": f"/dev/xvd{i}"} for i in range(60)]),
        "spec.blockDeviceMappings",
        "at most 50",
    ),
    (
        "negative systemReserved",
        nodeclass(spec__kubelet={"systemReserved": {"cpu": "-1"}}),
        "spec.kubelet.systemReserved[cpu]",
        "negative",
    ),
    (
        "evictionHard: abc",
        nodeclass(spec__kubelet={"evictionHard": "abc"}),
        "spec.kubelet.evictionHard",
        "must be of type object",
    ),
    (
        "volumeSize: -1",
        nodeclass(spec__blockDeviceMappings=[{"deviceName": "/dev/xvda", "ebs": {"volumeSize": -1}}]),
        "spec.blockDeviceMappings[0].ebs.volumeSize",
        "must be of type string",
    ),
    (
        "Lt outside int64",
        pool(
            spec__template__spec__requirements=[
                {"key": "example.com/n", "operator": "Lt", "values": ["9223372036854775808"]}
            ]
        ),
        "spec.template.spec.requirements[0]",
        "single positive integer",
    ),
    ("empty role", nodeclass(spec__role=""), "spec.role", "role cannot be empty"),
    (
        "alias in upper case",
        nodeclass(spec__amiSelectorTerms=[{"alias": "AL2023@latest"}]),
        "spec.amiSelectorTerms[0].alias",
        "family is not supported",
    ),
    (
        "windows alias pinned",
        nodeclass(spec__amiSelectorTerms=[{"alias": "windows2022@v1"}]),
        "spec.amiSelectorTerms[0].alias",
        "latest",
    ),
    (
        "subnet id pattern",
        nodeclass(spec__subnetSelectorTerms=[{"id": "sub-123"}]),
        "spec.subnetSelectorTerms[0].id",
        "CRD pattern",
    ),
    ("integer out of int64", pool(spec__replicas=2**64), "spec.replicas", "int64"),
    (
        "unknown field",
        pool(spec__template__spec__nodeClassReff={"name": "x"}),
        "spec.template.spec.nodeClassReff",
        'typo of "nodeClassRef"',
    ),
]


@pytest.mark.parametrize(("name", "body", "path", "words"), INVALID, ids=[c[0] for c in INVALID])
def test_invalid_objects_are_rejected_with_file_and_field(
    tmp_path: Path, name: str, body: dict[str, Any], path: str, words: str
) -> None:
    lines = problems(tmp_path, body)
    assert any(line.startswith(f"{path}: ") and words in line for line in lines), (name, lines)


VALID: list[tuple[str, dict[str, Any]]] = [
    (
        "node-role.kubernetes.io/worker label",
        pool(spec__template__metadata={"labels": {"node-role.kubernetes.io/worker": ""}}),
    ),
    (
        "other kubernetes.io / k8s.io labels",
        pool(spec__template__metadata={"labels": {"example.kubernetes.io/a": "b", "k8s.io/c": "d"}}),
    ),
    (
        "consolidationPolicy Balanced",
        pool(spec__disruption={"consolidateAfter": "5m", "consolidationPolicy": "Balanced"}),
    ),
    (
        "v1.14 requirement keys",
        pool(
            spec__template__spec__requirements=[
                {"key": "karpenter.k8s.aws/placement-group-id", "operator": "In", "values": ["pg-0123"]},
                {"key": "karpenter.k8s.aws/placement-group-partition", "operator": "In", "values": ["1"]},
                {
                    "key": "karpenter.k8s.aws/capacity-reservation-interruptible",
                    "operator": "In",
                    "values": ["true"],
                },
            ]
        ),
    ),
    (
        "domain-prefixed taint value",
        pool(
            spec__template__spec__taints=[
                {"key": "dedicated", "value": "example.com/gpu", "effect": "NoSchedule"}
            ]
        ),
    ),
    ("explicit nulls", pool(spec__weight=None, spec__limits=None, spec__template__spec__expireAfter=None)),
    (
        "Exists with values",
        pool(
            spec__template__spec__requirements=[
                {"key": "example.com/x", "operator": "Exists", "values": ["a"]}
            ]
        ),
    ),
    ("placement group selector", nodeclass(spec__placementGroupSelector={"id": "pg-0123456789abcdef0"})),
]


@pytest.mark.parametrize(("name", "body"), VALID, ids=[c[0] for c in VALID])
def test_objects_the_cluster_accepts_load(tmp_path: Path, name: str, body: dict[str, Any]) -> None:
    loads(tmp_path, body)


def test_every_problem_of_every_object_at_once(tmp_path: Path) -> None:
    docs = [pool(spec__weight="10", spec__disruption={}), nodeclass(spec__role="", spec__amiFamily="AL2")]
    path = tmp_path / "many.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    result = CliRunner().invoke(main, ["validate", "-f", str(path)])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert all(line.startswith(f"error: {path}:documents[") for line in lines), lines
    wanted = [
        "documents[0].spec.weight: must be of type integer",
        "documents[0].spec.disruption.consolidateAfter: required",
        "documents[1].spec.role: role cannot be empty",
        "documents[1].spec: ",
    ]
    for w in wanted:
        assert any(w in line for line in lines), (w, lines)
    assert "Traceback" not in result.output


def test_a_cel_failure_carries_upstreams_message(tmp_path: Path) -> None:
    lines = problems(tmp_path, nodeclass(spec__instanceProfile="p"))
    assert lines == [
        "spec: must specify exactly one of ['role', 'instanceProfile']; the CRD rule is: "
        "(has(self.role) && !has(self.instanceProfile)) || (!has(self.role) && has(self.instanceProfile))"
    ]
