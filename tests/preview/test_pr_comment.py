"""The PR comment people read: size at 100 NodePools, grouped launch templates, one
finding per user mistake, a per-resource diff against the base, rollout waves."""

from __future__ import annotations

import copy
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from pulumi_helpers import STACKS

from nodewright.preview import preview
from nodewright.preview.comment import GITHUB_COMMENT_LIMIT, render_markdown
from nodewright.preview.diff import counts, diff_documents
from nodewright.preview.findings import findings
from nodewright.preview.userdata_groups import group_user_data

ROOT = Path(__file__).resolve().parents[2]
DEV = ROOT / "tests" / "data" / "pulumi" / "stacks" / "Pulumi.dev-userdata.yaml"
"""The dev stack with its launch templates on (preview only): the comment's user-data sections."""


@cache
def _dev() -> dict[str, Any]:
    return preview(stack_file=DEV).document


def _hundred_pools() -> dict[str, Any]:
    """The dev stack's document scaled to 100 NodePools (50 copies of `default` and `gpu`), each with
    its launch templates, user data and a repeated EBS violation on every generated template."""
    dev = _dev()
    doc = copy.deepcopy(dev)
    doc["resources"], doc["userData"], doc["policyViolations"] = [], [], []
    for i in range(50):
        for r in dev["resources"]:
            r2 = copy.deepcopy(r)
            text = json.dumps(r2)
            for pool in ("default", "gpu"):
                text = text.replace(f'"{pool}-', f'"{pool}{i:02d}-').replace(f'"{pool}"', f'"{pool}{i:02d}"')
            doc["resources"].append(json.loads(text))
        for u in dev["userData"]:
            pool = f"{u['nodePool']}{i:02d}"
            doc["userData"].append(
                {
                    "launchTemplate": u["launchTemplate"].replace(u["nodePool"], pool, 1),
                    "nodePool": pool,
                    "content": u["content"].replace(
                        f"karpenter.sh/nodepool={u['nodePool']}", f"karpenter.sh/nodepool={pool}"
                    ),
                }
            )
    for r in doc["resources"]:
        if r["type"] == "aws:ec2/launchTemplate:LaunchTemplate":
            doc["policyViolations"].append(
                {
                    "policy": "ebs-encrypted",
                    "enforcement": "mandatory",
                    "resource": r["name"],
                    "type": r["type"],
                    "message": f"{r['name']}: blockDeviceMappings[0] (/dev/xvda) is not encrypted; set encrypted: true",
                }
            )
    sources = {
        f"EC2NodeClass/{n}": {"file": "stacks/nodeclasses.yaml", "path": f"documents[{k}]"}
        for k, n in enumerate(
            sorted(
                {
                    str(r["inputs"].get("nodeClass"))
                    for r in doc["resources"]
                    if r["type"] == "nodewright:index:NodeClass"
                }
            )
        )
    }
    doc["findings"] = findings(doc["policyViolations"], doc["resources"], sources)
    doc["summary"]["resources"] = len(doc["resources"])
    doc["summary"]["mandatoryViolations"] = len(doc["policyViolations"])
    return doc


def test_hundred_nodepools_fit_a_comment_and_none_is_lost() -> None:
    doc = _hundred_pools()
    pools = sorted(
        {r["inputs"]["nodePool"] for r in doc["resources"] if r["type"] == "nodewright:index:NodePool"}
    )
    assert len(pools) == 100
    base = copy.deepcopy(doc)
    for u in base["userData"]:
        u["content"] = u["content"].replace("clusterDNS", "clusterDns")
    for md in (render_markdown(doc), render_markdown(doc, base=base)):
        assert len(md) < GITHUB_COMMENT_LIMIT == 65_536
        table = md.split("#### NodePools", 1)[1].split("####", 1)[0]
        assert all(f"| `{p}` |" in table for p in pools)
        # 1,050 generated launch templates, 50 NodeClasses: one finding per NodeClass, not per template.
        violations = md.split("#### Policy violations", 1)[1].split("####", 1)[0]
        lines = [x for x in violations.splitlines() if x.startswith("- ")]
        assert len(lines) == 100, len(lines)
        assert all("spec.blockDeviceMappings[0].ebs.encrypted" in x and "affects **" in x for x in lines)


def test_launch_templates_differing_only_in_max_pods_are_shown_once() -> None:
    doc = _dev()
    groups = group_user_data(doc["userData"])
    by_pool = {g.node_pool: g for g in groups}
    assert len(groups) == 2  # default (17 templates) and gpu (4 templates)
    assert len(by_pool["default"].members) == 17 and len(by_pool["default"].max_pods) == 17
    assert "<max-pods>" in by_pool["default"].content and "<capacity-type>" not in by_pool["default"].content
    md = render_markdown(doc)
    assert md.count("```") == 2 * 2 + 2  # one render per group + the outputs fence
    assert "identical but for max-pods 8, 11, 29" in md


def test_templates_that_differ_elsewhere_stay_apart() -> None:
    a = {"launchTemplate": "a-pods8", "nodePool": "a", "content": "maxPods: 8\nlabels: x\n"}
    b = {"launchTemplate": "a-pods29", "nodePool": "a", "content": "maxPods: 29\nlabels: x\n"}
    c = {"launchTemplate": "a-pods58", "nodePool": "a", "content": "maxPods: 58\nlabels: y\n"}
    spot = {
        "launchTemplate": "a-spot-pods8",
        "nodePool": "a",
        "content": "--max-pods=8 karpenter.sh/capacity-type=spot\n",
    }
    od = {
        "launchTemplate": "a-od-pods29",
        "nodePool": "a",
        "content": "--max-pods=29 karpenter.sh/capacity-type=on-demand\n",
    }
    groups = group_user_data([a, b, c, spot, od])
    assert [g.members for g in groups] == [
        ["a-pods8", "a-pods29"],
        ["a-pods58"],
        ["a-spot-pods8", "a-od-pods29"],
    ]
    assert groups[2].varying == "max-pods 8, 29; capacity type on-demand, spot"


def test_one_mistake_is_one_finding_naming_file_object_field() -> None:
    doc = preview(stack_file=STACKS / "Pulumi.bad-imds.yaml").document
    assert len(doc["policyViolations"]) == 3  # two launch templates and the EC2NodeClass CR
    (f,) = doc["findings"]
    assert (f["file"], f["kind"], f["name"]) == ("tests/data/pulumi/bad-imds.yaml", "EC2NodeClass", "default")
    assert f["path"].endswith(".spec.metadataOptions.httpTokens") and f["count"] == 3
    md = render_markdown(doc)
    assert (
        "`tests/data/pulumi/bad-imds.yaml:documents[1].spec.metadataOptions.httpTokens` (EC2NodeClass `default`)"
        in md
    )
    assert "affects **3** generated resources" in md


def test_resource_diff_create_update_replace_delete() -> None:
    head = _dev()
    base = copy.deepcopy(head)
    lts = [r for r in base["resources"] if r["type"] == "aws:ec2/launchTemplate:LaunchTemplate"]
    lts[0]["inputs"]["name"] += "-v1"  # name is replace-on-change for a launch template
    lts[1]["inputs"]["tags"]["team"] = "other"  # tags update in place
    base["userData"][2]["content"] += "\n# old"  # user data: update in place
    gone = lts[3]["name"]
    base["resources"].remove(lts[3])  # -> create
    base["resources"].append(
        {"type": "aws:ec2/launchTemplate:LaunchTemplate", "name": "old", "custom": True, "inputs": {}}
    )
    cr = next(r for r in base["resources"] if r["type"] == "kubernetes:karpenter.sh/v1:NodePool")
    cr["inputs"]["metadata"]["name"] = "renamed"  # Kubernetes identity -> replace
    changes = {c.name: c for c in diff_documents(base, head)}
    assert changes[lts[0]["name"]].op == "replace" and changes[lts[0]["name"]].replace_because == ("name",)
    assert changes[lts[1]["name"]].op == "update" and "tags.team" in changes[lts[1]["name"]].fields
    assert changes[base["userData"][2]["launchTemplate"]].fields == ("userData",)
    assert changes[gone].op == "create" and changes["old"].op == "delete"
    assert changes[cr["name"]].op == "replace" and changes[cr["name"]].replace_because == ("metadata.name",)
    c = counts(list(changes.values()))
    assert (c["create"], c["replace"], c["delete"]) == (1, 2, 1) and c["update"] == 2
    md = render_markdown(head, base=base)
    assert "**1** to create, **2** to update, **2** to replace, **1** to delete" in md
    assert re.search(
        r"\| \+- replace \| `aws:ec2/launchTemplate:LaunchTemplate` \| `[^`]+` \| "
        r"name: …[^ ]+-v1 → …[^ ]+ \(replace: name\) \|",
        md,
    )
    assert render_markdown(head, base=head).count("unchanged") >= 2


def test_rollout_waves_in_the_comment() -> None:
    doc = preview(stack_file=DEV, cluster_state="stacks/examples/cluster.json").document
    pool = next(p for p in doc["drift"]["nodePools"] if p["name"] == "default")
    budget = {
        "drifted": 2, "nodes": 2, "disrupting": 0, "allowedPerWave": 1, "waves": 2, "blocked": False, "notes": [],
        "windows": [], "nextChange": None,
    }  # fmt: skip
    assert {k: pool["rollout"][k] for k in budget} == budget
    # the waves come from the disruption simulation, as `nodewright drift` prints them
    assert pool["rollout"]["simulated"] is True and pool["rollout"]["notRolled"] == []
    assert [s["wave"] for s in pool["rollout"]["order"]] == [1, 2]
    assert doc["drift"]["at"].endswith("Z")  # one clock: the time the rollout was judged at
    md = render_markdown(doc)
    assert "| `default` | `default` | 17 |" in md and "2 of 2, 1 at a time, 2 wave(s)" in md


def test_fleet_instances_count_in_their_pool_row() -> None:
    head = preview(stack_file=STACKS / "Pulumi.fleet.yaml").document
    base = copy.deepcopy(head)
    instances = [r for r in base["resources"] if r["type"] == "aws:ec2/instance:Instance"]
    instances[0]["inputs"]["subnetId"] = "subnet-0old"  # replace-on-change for an instance
    instances[1]["inputs"]["instanceType"] = "m5.xlarge"  # resized in place
    md = render_markdown(head, base=base)
    row = next(line for line in md.splitlines() if line.startswith("| `default` |"))
    assert "1 instance replace" in row and "1 instance update" in row, row
    assert "subnetId: subnet-0old → " in md and "(replace: subnetId)" in md
    assert "instanceType: m5.xlarge → " in md


def test_findings_tell_same_named_resources_apart() -> None:
    resources = [
        {"type": "nodewright:index:NodePool", "name": "default", "inputs": {"nodePool": "default"}},
        {"type": "nodewright:index:NodeClass", "name": "default", "inputs": {"nodeClass": "shared"}},
    ]
    violations = [
        {
            "policy": "nodepool-pair-health",
            "enforcement": "advisory",
            "resource": "default",
            "type": "nodewright:index:NodePool",
            "message": "default: this change targets NodePool 'default' whose NodeClass 'shared' is Unhealthy",
        }
    ]
    sources = {"NodePool/default": {"file": "stacks/nodepools.yaml", "path": "documents[0]"}}
    (f,) = findings(violations, resources, sources)
    assert (f["kind"], f["name"], f["file"]) == ("NodePool", "default", "stacks/nodepools.yaml")
    assert f["path"] == "documents[0].spec.template.spec.nodeClassRef"
