"""Degenerate stacks preview with exit 0 and a note, under the mock runtime.

Stacks under tests/data/pulumi/stacks/Pulumi.<case>.yaml, inputs under tests/data/pulumi/degenerate/.
Before the fix, ``pulumi.Output.all(**{})`` resolved to a list and ``.items()`` crashed the program
whenever an EC2NodeClass had no launch template or the fleet claims file was empty.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from pulumi_helpers import STACKS

from nodewright.cli import main

CASES = {
    "no-nodepools": "no NodePool in the stack's files",
    # an EKS Auto Mode NodePool is not this Karpenter's (nodepool.IsManaged): left out with the reason
    "auto-mode": "NodePool 'auto' left out: nodeClassRef eks.amazonaws.com/NodeClass",
    "nodeclass-only": "EC2NodeClass 'spare' is referenced by no NodePool",
    "orphan-nodeclass": "tests/data/pulumi/degenerate/nodeclass-only.yaml: EC2NodeClass 'spare' is referenced by no NodePool",
    "no-osc": "no OperatingSystemConfig in the stack's files",
    "empty-claims": "tests/data/pulumi/degenerate/claims-empty.yaml: no NodeClaims",
    "empty-cluster": "tests/data/pulumi/degenerate/cluster-empty.json: the cluster state has no nodes and no pods",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_degenerate_stack_previews_with_a_note(case: str) -> None:
    res = CliRunner().invoke(
        main, ["preview", "--stack-file", str(STACKS / f"Pulumi.{case}.yaml"), "-o", "json"]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert any(CASES[case] in n for n in doc["notes"]), doc.get("notes")
    md = CliRunner().invoke(
        main, ["preview", "--stack-file", str(STACKS / f"Pulumi.{case}.yaml"), "-o", "markdown"]
    )
    assert md.exit_code == 0 and "> note: " in md.stdout


def test_empty_outputs_are_empty_maps() -> None:
    res = CliRunner().invoke(
        main, ["preview", "--stack-file", str(STACKS / "Pulumi.nodeclass-only.yaml"), "-o", "json"]
    )
    doc = json.loads(res.stdout)
    assert doc["outputs"]["launchTemplateIds"] == {"spare": {}}
    assert doc["outputs"]["nodePoolHashes"] == {}
    fleet = json.loads(
        CliRunner()
        .invoke(main, ["preview", "--stack-file", str(STACKS / "Pulumi.empty-claims.yaml"), "-o", "json"])
        .stdout
    )
    assert fleet["outputs"]["instanceIds"] == {}
