"""Cost in the preview: ``cost.before``/``cost.after`` per NodePool, hourly and monthly, the
PR comment's cost table, and each changed field's old → new value, through real processes.

The scenario: stacks/examples/cluster.json (two on-demand NodeClaims, 48 pending pods) and a branch
that switches the ``default`` NodePool to spot and doubles ``limits.cpu``, priced with a catalog
whose spot prices are 35% of on-demand (tests/data/catalogs/us-east-1-spot.yaml).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pulumi_helpers import STACKS

from nodewright import crd
from nodewright.catalog import load_catalog
from nodewright.cluster import load_cluster
from nodewright.drift.inputs import read_objects
from nodewright.preview import stack_settings
from nodewright.preview.cost_section import usd
from nodewright.stack.cost import converged_cost, price_nodeclaims

ROOT = Path(__file__).resolve().parents[2]
SPOT_CATALOG = ROOT / "tests" / "data" / "catalogs" / "us-east-1-spot.yaml"


def _preview(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nodewright.cli", "preview", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        check=False,
    )


@cache
def _json(stack: str) -> dict[str, Any]:
    res = _preview("--stack-file", str(STACKS / f"Pulumi.{stack}.yaml"), "-o", "json")
    assert res.returncode == 0, res.stderr
    doc: dict[str, Any] = json.loads(res.stdout)
    return doc


def _check_side(side: dict[str, Any]) -> None:
    # monthly is the unrounded hourly price times 730, so it can differ from the rounded one's by cents
    assert abs(side["monthly"] - side["hourly"] * 730) < 0.05
    pools = side["byNodePool"]
    assert sum(p["nodes"] for p in pools.values()) == side["nodes"]
    assert abs(sum(p["hourly"] for p in pools.values()) - side["hourly"]) < 1e-3
    for p in pools.values():
        assert abs(p["monthly"] - p["hourly"] * 730) < 0.05


def test_before_is_the_cluster_nodeclaims_at_their_exact_offering() -> None:
    cost = _json("cost-spot")["cost"]
    # m5.xlarge on-demand us-east-1a (0.192) + c5.2xlarge on-demand us-east-1b (0.34)
    assert cost["before"]["hourly"] == 0.532 and cost["before"]["monthly"] == 388.36
    assert cost["before"]["byNodePool"] == {"default": {"hourly": 0.532, "monthly": 388.36, "nodes": 2}}
    assert cost["hoursPerMonth"] == 730 and cost["catalog"] == "tests/data/catalogs/us-east-1-spot.yaml"
    for side in ("before", "after"):
        _check_side(cost[side])
    assert cost["change"]["hourly"] == round(cost["after"]["hourly"] - cost["before"]["hourly"], 4)


def test_spot_switch_is_cheaper_than_the_base_branch_after_convergence() -> None:
    base, head = _json("cost-base")["cost"], _json("cost-spot")["cost"]
    assert base["before"] == head["before"]  # the same cluster today
    # both branches drift the two on-demand nodes; the branch replaces them (and launches) on spot
    assert head["after"]["byNodePool"]["default"]["hourly"] < base["after"]["byNodePool"]["default"]["hourly"]
    assert head["after"]["byNodePool"]["gpu"] == base["after"]["byNodePool"]["gpu"]  # gpu pool unchanged
    assert any("disruption controller until quiet" in n for n in head["notes"])


def test_comment_shows_cost_table_and_old_to_new_values(tmp_path: Path) -> None:
    base = tmp_path / "base.json"
    base.write_text(json.dumps(_json("cost-base")))
    res = _preview(
        "--stack-file", str(STACKS / "Pulumi.cost-spot.yaml"), "--base", str(base), "-o", "markdown"
    )
    assert res.returncode == 0, res.stderr
    md = res.stdout
    assert len(md) < 65536
    table = md.split("#### Cost", 1)[1].split("####", 1)[0]
    assert "| NodePool | nodes | before | after | change | hourly | vs base branch |" in table
    row = next(line for line in table.splitlines() if line.startswith("| `default` |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "2 → " + str(_json("cost-spot")["cost"]["after"]["byNodePool"]["default"]["nodes"])
    assert cells[2] == "$388.36/mo"
    assert re.fullmatch(r"-\$[\d,]+\.\d\d/mo", cells[6]), cells  # cheaper than the base branch
    total = next(line for line in table.splitlines() if line.startswith("| **total** |"))
    assert re.search(r"\| \$[\d,]+\.\d\d/mo \| [+-]\$[\d,]+\.\d\d/mo \|", total)
    assert re.search(r"cost after merge \*\*\$[\d,]+\.\d\d/mo \([+-]\$[\d,]+\.\d\d\)\*\*", md)
    changes = md.split("#### Changes against base", 1)[1].split("####", 1)[0]
    assert "spec.limits.cpu: 1000 → 2000" in changes
    assert "spec.template.spec.requirements[2].values[0]: on-demand → spot" in changes


def test_without_cluster_state_before_is_zero_and_a_note_says_so() -> None:
    from nodewright.preview import preview

    cost = preview(stack_file=STACKS / "Pulumi.karpenter.yaml").document["cost"]
    assert cost["before"]["nodes"] == 0 and cost["after"]["nodes"] == 0
    assert any("no cluster state" in n for n in cost["notes"])


def test_fleet_after_is_the_reviewed_claims() -> None:
    from nodewright.preview import preview

    doc = preview(stack_file=STACKS / "Pulumi.fleet.yaml").document
    instances = [r for r in doc["resources"] if r["type"] == "aws:ec2/instance:Instance"]
    assert doc["cost"]["after"]["nodes"] == len(instances) > 0
    assert doc["cost"]["before"]["nodes"] == 0


def test_unknown_instance_type_is_counted_unpriced(tmp_path: Path) -> None:
    raw = json.loads((ROOT / "stacks" / "examples" / "cluster.json").read_text())
    for item in raw["items"]:
        if item["kind"] == "NodeClaim" and item["metadata"]["name"] == "default-x7k2p":
            item["metadata"]["labels"]["node.kubernetes.io/instance-type"] = "x9.imaginary"
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(raw))
    state = load_cluster(str(path))
    priced = {c.name: c.hourly for c in price_nodeclaims(state.nodeclaims, load_catalog(str(SPOT_CATALOG)))}
    assert priced == {"default-x7k2p": None, "default-q9m4t": 0.34}
    objs = read_objects(
        [ROOT / "stacks" / "nodeclasses.yaml", ROOT / "stacks" / "nodepools.yaml"],
        release=crd.default_release(),
    )
    report = converged_cost(
        state=state, nodepools=objs.nodepools, nodeclasses=objs.nodeclasses, catalog=str(SPOT_CATALOG)
    ).as_dict()
    assert report["before"]["unpriced"] == ["default-x7k2p"]
    assert report["before"]["nodes"] == 2 and report["before"]["hourly"] == 0.34
    assert any("no price" in n for n in report["notes"])


@pytest.mark.parametrize(
    ("config", "catalog"),
    [
        ({"aws:region": "eu-west-1"}, "aws:eu-west-1"),
        ({"aws:region": "eu-west-1", "nodewright:catalog": "aws:us-west-2"}, "aws:us-west-2"),
        ({}, "aws:us-east-1"),
    ],
)
def test_stack_catalog_follows_aws_region(config: dict[str, str], catalog: str) -> None:
    import yaml

    dev = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())["config"]
    base = {
        "nodewright:files": '["stacks/nodepools.yaml"]',
        "nodewright:cluster": json.dumps(dev["nodewright:cluster"]),
    }
    assert stack_settings({**base, **config}, "nodewright", "dev").catalog == catalog


@given(st.floats(min_value=-1e7, max_value=1e7, allow_nan=False))
def test_money_text_reads_back(amount: float) -> None:
    """``$1,234.56`` / ``-$1.00`` / ``+$0.50``: the text is the amount rounded to cents."""
    for sign in (False, True):
        text = usd(amount, sign=sign)
        assert re.fullmatch(r"[+-]?\$\d{1,3}(,\d{3})*\.\d\d", text), text
        value = float(text.replace("$", "").replace(",", ""))
        assert abs(value - round(amount, 2)) < 0.0051
        assert text.startswith("-") == (round(amount, 2) < 0 and round(abs(amount), 2) != 0)
