"""The README's example stack (`make preview` = `nodewright preview --stack dev`): applied as the docs
advise for karpenter mode (no launch templates of nodewright's); with them on (preview only, the
tests/data copy) real user data per max-pods group, zero mandatory violations, the CA bundle only
ever as [secret]."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from nodewright.api.loading import load_objects
from nodewright.cli import main
from nodewright.userdata import cluster_info_from_mapping, nodeclass_catalog, render_user_data

ROOT = Path(__file__).resolve().parent.parent.parent
DEV = ROOT / "tests" / "data" / "pulumi" / "stacks" / "Pulumi.dev-userdata.yaml"
APPLIED = ROOT / "stacks" / "Pulumi.dev.yaml"


def _preview(output: str) -> str:
    result = CliRunner().invoke(main, ["preview", "--stack-file", str(DEV), "-o", output])
    assert result.exit_code == 0, result.output
    return result.output


def test_dev_stack_launch_templates_are_the_core_render_per_max_pods_group() -> None:
    doc = json.loads(_preview("json"))
    assert doc["summary"]["mandatoryViolations"] == 0
    ca = yaml.safe_load(DEV.read_text())["config"]["nodewright:cluster"]["caBundle"]
    assert ca not in json.dumps(doc)
    objs = load_objects([ROOT / "stacks" / "nodepools.yaml", ROOT / "stacks" / "nodeclasses.yaml"])
    info = cluster_info_from_mapping(
        yaml.safe_load(DEV.read_text())["config"]["nodewright:cluster"], file="dev"
    )
    pools = {p.name: p for p in objs.nodepools}
    lts = [r for r in doc["resources"] if r["type"] == "aws:ec2/launchTemplate:LaunchTemplate"]
    assert all(r["inputs"]["userData"] == "[secret]" for r in lts)
    shown = {u["launchTemplate"]: u["content"] for u in doc["userData"]}
    groups: dict[str, set[int]] = {}
    for name, content in shown.items():
        nc_name, pool, pods = name.split("-", 2)
        groups.setdefault(pool, set()).add(int(pods.removeprefix("pods")))
        nc = objs.nodeclass(nc_name)
        assert nc is not None
        expected = render_user_data(nc, pools[pool], info, max_pods=int(pods.removeprefix("pods")))
        assert content == expected.replace(ca, "[secret]"), name
        assert base64.b64encode(ca.encode()).decode() not in content
    # one launch template per distinct max-pods value of the pool's compatible catalog types
    gpu_nc = objs.nodeclass("gpu")
    gpu_types = {"g5", "g6"}
    catalog = nodeclass_catalog("aws:us-east-1", gpu_nc)
    expected_gpu = {
        int(it.max_pods)
        for it in catalog
        if it.name.split(".")[0] in gpu_types and any(o.available for o in it.offerings)
    }
    assert groups["gpu"] == expected_gpu
    assert len(groups["default"]) > 1


def test_dev_stack_markdown_shows_rendered_user_data_with_ca_as_secret() -> None:
    md = _preview("markdown")
    ca = yaml.safe_load(DEV.read_text())["config"]["nodewright:cluster"]["caBundle"]
    assert ca not in md
    assert "certificateAuthority: [secret]" in md  # AL2023 NodeConfig
    assert "cluster-certificate = '[secret]'" in md  # Bottlerocket TOML
    assert "no mandatory violations" in md


def test_applied_dev_stack_follows_the_karpenter_mode_advice() -> None:
    """docs/pulumi.md: in karpenter mode keep `launchTemplates: false` on a stack that is applied
    (`up` applies `dev`); the preview-only copy differs from it in that key alone."""
    applied = yaml.safe_load(APPLIED.read_text())["config"]
    preview_only = yaml.safe_load(DEV.read_text())["config"]
    assert applied["nodewright:mode"] == "karpenter" and applied["nodewright:launchTemplates"] is False
    assert {**applied, "nodewright:launchTemplates": True} == preview_only
    result = CliRunner().invoke(main, ["preview", "--stack-file", str(APPLIED), "-o", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert not [r for r in doc["resources"] if r["type"] == "aws:ec2/launchTemplate:LaunchTemplate"]
    assert doc["summary"]["mandatoryViolations"] == 0
