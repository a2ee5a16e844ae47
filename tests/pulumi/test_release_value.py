"""The Karpenter release is one value: `hash`, `drift`, `preview` and the policy pack agree on it.

A fake second release (its own CRD folder, a copy of v1.11.3's outside the package, and its own hash
versions v9/v8) is registered by monkeypatching the release table; every consumer must then stamp, expect and report those
versions. Before the release was a value, ``preview --karpenter-version <other>`` stamped one
version and its own mandatory policy expected another. These run in-process (CliRunner): the
registered release exists only in this process.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import builders
import pytest
import yaml
from click.testing import CliRunner

from nodewright import crd
from nodewright.cli import main
from nodewright.crd import KarpenterChoice, Release
from nodewright.drift import nodepool_hash
from nodewright.policy.drift_rules import check_nodepool_hashes
from nodewright.policy.resources import NODEPOOL_COMPONENT, NODEPOOL_CR, ResourceView

REPO = Path(__file__).resolve().parents[2]
POOLS = REPO / "tests/data/pulumi/nodepools.yaml"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Release:
    folder = tmp_path_factory.mktemp("crds-9.9.0")
    for kind, name in crd.releases.CRD_FILES.items():
        if not crd.release("1.11.3").ships(kind):
            continue
        shutil.copy(REPO / "nodewright/data/crds/v1.11.3" / name, folder / name)
    release = Release(
        version="9.9.0",
        crd_folder=str(folder),
        nodepool_hash_version="v9",
        ec2nodeclass_hash_version="v8",
        ec2nodeclass_hash_ca_bundle=False,
        karpenter_commit="0" * 40,
        provider_commit="0" * 40,
        absent_kinds=crd.release("1.11.3").absent_kinds,
    )
    monkeypatch.setitem(crd.RELEASES, release.version, release)
    return release


def _cluster(path: Path) -> Path:
    """The stack's pool live at hash version v3 with one launched NodeClaim."""
    pool = next(d for d in yaml.safe_load_all(POOLS.read_text()) if d["kind"] == "NodePool")
    h = nodepool_hash(pool, crd_defaults=True)
    live = json.loads(json.dumps(pool))
    live["metadata"]["annotations"] = {
        "karpenter.sh/nodepool-hash": h,
        "karpenter.sh/nodepool-hash-version": "v3",
    }
    claim = builders.nodeclaim(
        "default-a",
        nodepool_name="default",
        labels={
            "kubernetes.io/arch": "amd64",
            "topology.kubernetes.io/zone": "us-east-1a",
            "karpenter.sh/capacity-type": "on-demand",
            "node.kubernetes.io/instance-type": "m5.large",
            "team": "web",
        },
        annotations={"karpenter.sh/nodepool-hash": h, "karpenter.sh/nodepool-hash-version": "v3"},
        conditions=[{"type": "Launched", "status": "True"}],
        node_class_ref=builders.AWS_NODECLASS_REF,
    )
    return builders.write_cluster(path, [live, claim])


def _project(tmp: Path, version: str | None) -> Path:
    """A copy of the repository's Pulumi project (links) with a stack naming ``version``."""
    for name in ("Pulumi.yaml", "__main__.py", "components", "policies", "tests"):
        (tmp / name).symlink_to(REPO / name)
    _cluster(tmp / "cluster.json")
    cfg = yaml.safe_load((REPO / "tests/data/pulumi/stacks/Pulumi.karpenter.yaml").read_text())
    cfg["config"]["nodewright:clusterState"] = "cluster.json"
    cfg["config"]["nodewright:launchTemplates"] = False
    if version:
        cfg["config"]["nodewright:karpenterVersion"] = version
    stack = tmp / "stacks" / "Pulumi.fake.yaml"
    stack.parent.mkdir()
    stack.write_text(yaml.safe_dump(cfg))
    return stack


def test_hash_stamps_the_release_versions(fake: Release) -> None:
    res = CliRunner().invoke(main, ["hash", "-f", str(POOLS), "--karpenter-version", "9.9.0", "-o", "json"])
    assert res.exit_code == 0, res.output
    versions = {(h.get("kind", "NodePool"), h["version"]) for h in json.loads(res.stdout)}
    assert versions == {("NodePool", "v9"), ("EC2NodeClass", "v8")}


def test_drift_compares_against_the_release(fake: Release, tmp_path: Path) -> None:
    cluster = _cluster(tmp_path / "cluster.json")
    args = [
        "drift",
        "-f",
        str(POOLS),
        "--cluster",
        str(cluster),
        "--karpenter-version",
        "9.9.0",
        "-o",
        "json",
    ]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert [p["hash"]["version"] for p in data["nodePools"]] == ["v9"]
    assert data["summary"]["drifted"] == 0 and data["nodePools"][0]["restamped"] == 1
    assert any("nodepool-hash-version v9 (live: v3)" in n for n in data["notes"])
    assert data["karpenter"]["version"] == "9.9.0"


@pytest.mark.parametrize(("stack_version", "flag"), [("9.9.0", None), (None, "9.9.0"), ("9.9.0", "9.9.0")])
def test_preview_program_policy_and_drift_agree(
    fake: Release, tmp_path: Path, stack_version: str | None, flag: str | None
) -> None:
    from nodewright.preview import preview

    stack = _project(tmp_path, stack_version)
    result = preview(stack_file=stack, karpenter=KarpenterChoice(version=flag))
    doc = result.document
    assert doc["karpenter"]["version"] == "9.9.0"
    crs = [r for r in doc["resources"] if r["type"] == NODEPOOL_CR]
    assert crs and all(
        r["inputs"]["metadata"]["annotations"]["karpenter.sh/nodepool-hash-version"] == "v9" for r in crs
    )
    hash_policies = [
        v for v in doc["policyViolations"] if v["policy"] in ("nodepool-hash-current", "karpenter-crd-valid")
    ]
    assert hash_policies == [] and not result.mandatory
    assert [p["hash"]["version"] for p in doc["drift"]["nodePools"]] == ["v9"]
    assert doc["outputs"]["karpenter"]["version"] == "9.9.0"
    # the bump v3 -> v9 is forecast as Karpenter's hash controller handles it, in json and markdown
    assert doc["drift"]["summary"]["drifted"] == 0
    assert any("rolls no node" in n for n in doc["drift"]["notes"])
    from nodewright.preview.report import render_markdown

    md = render_markdown(doc)
    assert "rolls no node" in md and "Karpenter `9.9.0`" in md


def test_preview_flag_and_stack_disagree_is_a_usage_error(fake: Release, tmp_path: Path) -> None:
    stack = _project(tmp_path, "9.9.0")
    res = CliRunner().invoke(main, ["preview", "--stack-file", str(stack), "--karpenter-version", "1.14.1"])
    assert res.exit_code == 2, res.output
    assert (
        "--karpenter-version 1.14.1" in res.stderr
        and "config.nodewright:karpenterVersion 9.9.0" in res.stderr
    )


def test_policy_expects_the_stack_release(fake: Release) -> None:
    """The NodePool component declares the stack's release; a CR stamped for another fails."""
    pool = next(d for d in yaml.safe_load_all(POOLS.read_text()) if d["kind"] == "NodePool")
    body: dict[str, Any] = json.loads(json.dumps(pool))
    body["metadata"]["annotations"] = {
        "karpenter.sh/nodepool-hash": nodepool_hash(pool, crd_defaults=True),
        "karpenter.sh/nodepool-hash-version": "v3",
    }
    cr = ResourceView(type=NODEPOOL_CR, name="default-nodepool", urn="urn:cr", props=body)
    component = ResourceView(type=NODEPOOL_COMPONENT, name="default", props={"karpenterVersion": "9.9.0"})
    found = check_nodepool_hashes([component, cr], {})
    assert [(urn, "expected v9" in msg) for urn, msg in found] == [("urn:cr", True)]
    assert check_nodepool_hashes([cr], {}) == []  # no component: the default release (v3)


def test_preview_hands_flags_and_environment_over_the_stack_to_the_program(tmp_path: Path) -> None:
    from nodewright.preview import preview

    stack = _project(tmp_path, None)
    cfg = yaml.safe_load(stack.read_text())
    cfg["config"]["nodewright:karpenter"] = {"reservedENIs": 3, "preferencePolicy": "Ignore"}
    stack.write_text(yaml.safe_dump(cfg))
    choice = KarpenterChoice(flags={"reserved_enis": "1"}, env={"FEATURE_GATES": "NodeRepair=true"})
    doc = preview(stack_file=stack, karpenter=choice).document
    used = doc["outputs"]["karpenter"]
    assert used == doc["karpenter"]
    assert (used["version"], used["reservedENIs"], used["preferencePolicy"]) == ("1.14.1", 1, "Ignore")
    assert "NodeRepair=true" in used["featureGates"]


def test_reserved_enis_reach_the_programs_launch_templates() -> None:
    """RESERVED_ENIS lowers the ENI-limited max pods, so the max-pods groups of the launch templates
    change: m5.large 29 -> 20, c5.xlarge 58 -> 44 (one ENI reserved)."""
    from nodewright.preview import preview

    stack = REPO / "tests/data/pulumi/stacks/Pulumi.karpenter.yaml"
    names = lambda doc: sorted(r["name"] for r in doc["resources"] if r["type"].endswith("LaunchTemplate"))  # noqa: E731
    default = names(preview(stack_file=stack).document)
    reserved = names(
        preview(stack_file=stack, karpenter=KarpenterChoice(env={"RESERVED_ENIS": "1"})).document
    )
    assert default == ["default-default-pods29", "default-default-pods58"]
    assert reserved == ["default-default-pods20", "default-default-pods44"]


def test_the_fake_release_validates_with_its_own_folder(fake: Release, tmp_path: Path) -> None:
    """Its folder holds v1.11.3's CRDs: v1.14's spec.cpuOptions is an unknown field there."""
    nc = next(d for d in yaml.safe_load_all(POOLS.read_text()) if d["kind"] == "EC2NodeClass")
    nc["spec"]["cpuOptions"] = {"nestedVirtualization": "enabled"}
    path = tmp_path / "nc.yaml"
    path.write_text(yaml.safe_dump(nc))
    assert CliRunner().invoke(main, ["validate", "-f", str(path)]).exit_code == 0
    res = CliRunner().invoke(main, ["validate", "-f", str(path), "--karpenter-version", "9.9.0"])
    assert res.exit_code == 1 and 'unknown field "cpuOptions"' in res.stderr
