"""One loading path: every command that reads Karpenter objects rejects what validate rejects,
with the same `error: <file>:<field>:` line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from nodewright.cli import main

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = ROOT / "stacks" / "examples" / "cluster.json"
INFO = ROOT / "stacks" / "cluster-info.yaml"
FAKE = ROOT / "tests" / "data" / "catalogs" / "fake.yaml"

BAD_POOL = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "default"},
    "spec": {
        "weight": "10",
        "template": {
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
            }
        },
    },
}
BAD_CLASS = {
    "apiVersion": "karpenter.k8s.aws/v1",
    "kind": "EC2NodeClass",
    "metadata": {"name": "default"},
    "spec": {
        "amiFamily": "AL2",
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "role": "R",
        "subnetSelectorTerms": [{"tags": {"a": "b"}}],
        "securityGroupSelectorTerms": [{"tags": {"a": "b"}}],
    },
}
GOOD_CLASS = {**BAD_CLASS, "spec": {k: v for k, v in BAD_CLASS["spec"].items() if k != "amiFamily"}}
GOOD_POOL = {**BAD_POOL, "spec": {k: v for k, v in BAD_POOL["spec"].items() if k != "weight"}}


def write(tmp_path: Path, name: str, body: dict[str, object]) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(body))
    return str(path)


def commands(pool: str, nodeclass: str) -> dict[str, list[str]]:
    return {
        "validate": ["validate", "-f", pool, "-f", nodeclass],
        "hash": ["hash", "-f", pool],
        "drift": ["drift", "-f", pool, "-f", nodeclass, "--cluster", str(CLUSTER)],
        "plan": ["plan", "-f", pool, "--cluster", str(CLUSTER), "--catalog", str(FAKE)],
        "health": ["health", "--cluster", str(CLUSTER), "-f", nodeclass],
        "catalog": ["catalog", "list", "--catalog", str(FAKE), "--nodeclass", nodeclass],
        "render": ["render", "userdata", "-f", nodeclass, "--nodepool", pool, "--cluster-info", str(INFO)],
    }


@pytest.mark.parametrize("command", ["validate", "hash", "drift", "plan", "render"])
def test_a_bad_nodepool_is_rejected_by_every_command(tmp_path: Path, command: str) -> None:
    pool = write(tmp_path, "np.yaml", BAD_POOL)
    nodeclass = write(tmp_path, "nc.yaml", GOOD_CLASS)
    result = CliRunner().invoke(main, commands(pool, nodeclass)[command])
    assert result.exit_code == 1, result.output
    assert f"error: {pool}:spec.weight: must be of type integer" in result.stderr


@pytest.mark.parametrize("command", ["validate", "drift", "health", "catalog", "render"])
def test_a_bad_nodeclass_is_rejected_by_every_command(tmp_path: Path, command: str) -> None:
    pool = write(tmp_path, "np.yaml", GOOD_POOL)
    nodeclass = write(tmp_path, "nc.yaml", BAD_CLASS)
    result = CliRunner().invoke(main, commands(pool, nodeclass)[command])
    assert result.exit_code == 1, result.output
    assert f"error: {nodeclass}:spec: if set, amiFamily must be 'AL2' or 'Custom'" not in result.stderr
    assert (
        f"error: {nodeclass}:spec: if set, amiFamily must be 'AL2023' or 'Custom' when using an AL2023 alias"
        in result.stderr
    )
