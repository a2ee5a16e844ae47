"""``nodewright validate -f NEW --base OLD`` as a user runs it (real subprocesses, real stdout/stderr):
exit codes, one located ``error:`` line per problem, the create/update/delete listing. Also
``nodewright preview --base`` naming the file and field of a CR update the API server refuses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from nodewright import crd

ROOT = Path(__file__).resolve().parents[2]


def nodewright(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "nodewright.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )


def pool(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            **spec,
            "template": {
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                    "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
                }
            },
        },
    }


def write(path: Path, *docs: dict[str, Any]) -> str:
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def test_a_valid_update_exits_0_and_lists_the_changes(tmp_path: Path) -> None:
    old = write(tmp_path / "old.yaml", pool("a"), pool("gone"))
    new = write(tmp_path / "new.yaml", pool("a", weight=5), pool("fresh"))
    result = nodewright("validate", "-f", new, "--base", old, "-o", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["changes"] == {
        "create": ["NodePool/fresh"],
        "update": ["NodePool/a"],
        "delete": ["NodePool/gone"],
    }
    assert data["base"] == [old]


def test_a_static_to_dynamic_switch_is_one_located_error(tmp_path: Path) -> None:
    old = write(tmp_path / "old.yaml", pool("a", replicas=3))
    new = write(tmp_path / "new.yaml", pool("b"), pool("a"))
    result = nodewright("validate", "-f", new, "--base", old)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert lines[0].startswith(f"error: {new}:documents[1].spec: Cannot transition NodePool between static")


def test_a_changed_nodeclassref_group_names_the_field(tmp_path: Path) -> None:
    old = write(tmp_path / "old.yaml", pool("a"))
    changed = pool("a")
    changed["spec"]["template"]["spec"]["nodeClassRef"]["group"] = "example.com"
    new = write(tmp_path / "new.yaml", changed)
    result = nodewright("validate", "-f", new, "--base", old)
    assert result.returncode == 1
    assert result.stderr.startswith(
        f"error: {new}:spec.template.spec.nodeClassRef: nodeClassRef.group is immutable"
    )


def test_an_unchanged_invalid_field_passes_as_an_update_only(tmp_path: Path) -> None:
    """Ratcheting: the cluster keeps accepting an object whose old invalid field is left alone."""
    stored = pool("a")
    stored["spec"]["template"]["spec"]["expireAfter"] = "720h\n"
    old = write(tmp_path / "old.yaml", stored)
    changed = pool("a", weight=5)
    changed["spec"]["template"]["spec"]["expireAfter"] = "720h\n"
    new = write(tmp_path / "new.yaml", changed)
    assert nodewright("validate", "-f", new, "--base", old).returncode == 0
    alone = nodewright("validate", "-f", new)
    assert alone.returncode == 1
    assert alone.stderr.startswith(f"error: {new}:spec.template.spec.expireAfter: invalid value")


def test_without_base_the_same_file_is_a_create(tmp_path: Path) -> None:
    new = write(tmp_path / "new.yaml", pool("a", replicas=3))
    assert nodewright("validate", "-f", new).returncode == 0


def test_an_unreadable_base_is_one_error_line(tmp_path: Path) -> None:
    new = write(tmp_path / "new.yaml", pool("a"))
    missing = str(tmp_path / "nope.yaml")
    result = nodewright("validate", "-f", new, "--base", missing)
    assert result.returncode == 1
    assert result.stderr.strip() == f"error: {missing}: no such file; check the path"


def test_base_without_files_is_a_usage_error() -> None:
    result = nodewright("validate", "--base", "x.yaml")
    assert result.returncode == 2


def test_preview_base_reports_the_refused_update_at_the_file_and_field(tmp_path: Path) -> None:
    base = nodewright("preview", "--stack", "dev", "-o", "json")
    assert base.returncode == 0, base.stderr
    doc = json.loads(base.stdout)
    pool_cr = next(r for r in doc["resources"] if r["type"] == "kubernetes:karpenter.sh/v1:NodePool")
    pool_cr["inputs"]["spec"]["template"]["spec"]["nodeClassRef"]["kind"] = "OtherClass"
    (tmp_path / "base.json").write_text(json.dumps(doc))
    result = nodewright("preview", "--stack", "dev", "--base", str(tmp_path / "base.json"), "-o", "json")
    assert result.returncode == 1
    found = [f for f in json.loads(result.stdout)["findings"] if f["policy"] == "karpenter-crd-update-valid"]
    assert [(f["enforcement"], f["file"], f["path"]) for f in found] == [
        ("mandatory", "stacks/nodepools.yaml", "documents[0].spec.template.spec.nodeClassRef")
    ]
    assert found[0]["message"].startswith("nodeClassRef.kind is immutable")
    (tmp_path / "same.json").write_text(base.stdout)
    unchanged = nodewright("preview", "--stack", "dev", "--base", str(tmp_path / "same.json"), "-o", "json")
    assert unchanged.returncode == 0, unchanged.stdout[-2000:]
    missing = nodewright("preview", "--stack", "dev", "--base", str(tmp_path / "x.json"), "-o", "json")
    assert missing.returncode == 1 and missing.stderr.startswith("error: ")  # never a silent pass


def test_the_pack_reports_it_from_its_config(tmp_path: Path) -> None:
    """policies/ (CrossGuard) runs the same rule: its config ``base`` names the base preview."""
    from nodewright.policy.crd_rules import check_crd_update
    from nodewright.policy.resources import NODEPOOL_CR, ResourceView

    base = {"resources": [{"type": NODEPOOL_CR, "name": "a-nodepool", "inputs": pool("a", replicas=2)}]}
    (tmp_path / "base.json").write_text(json.dumps(base))
    view = ResourceView(type=NODEPOOL_CR, name="a-nodepool", props=pool("a"))
    assert check_crd_update(view, {"base": ""}, release=crd.default_release()) == []
    msgs = check_crd_update(view, {"base": str(tmp_path / "base.json")}, release=crd.default_release())
    assert len(msgs) == 1 and msgs[0].startswith("a-nodepool: spec: Cannot transition NodePool")
    fresh = ResourceView(type=NODEPOOL_CR, name="b-nodepool", props=pool("b"))
    assert check_crd_update(fresh, {"base": str(tmp_path / "base.json")}, release=crd.default_release()) == []
