"""`nodewright disrupt` as a user runs it: real subprocesses, their real stdout parsed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "docs" / "examples" / "disrupt"
BASE = [
    "-f",
    str(DATA / "nodepools.yaml"),
    "--cluster",
    str(DATA / "cluster.json"),
    "--at",
    "2026-11-20T12:00:00Z",
]


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    for var in ("FEATURE_GATES", "PREFERENCE_POLICY", "MIN_VALUES_POLICY"):
        if env is None or var not in env:
            full_env.pop(var, None)
    return subprocess.run(
        [sys.executable, "-m", "nodewright.cli", "disrupt", *args],
        cwd=ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def _json(*args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = _run(*args, "-o", "json", env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_json_contract() -> None:
    doc = _json(*BASE)
    assert [(c["round"], c["method"], c["reason"], c["decision"]) for c in doc["commands"]] == [
        (1, "emptiness", "Empty", "delete"),
        (2, "drift", "Drifted", "delete"),
    ]
    cand = doc["commands"][0]["candidates"][0]
    assert cand == {
        "nodeClaim": "ip-10-0-3-30-claim",
        "node": "ip-10-0-3-30",
        "nodePool": "general",
        "instanceType": "m5.xlarge",
        "capacityType": "on-demand",
        "zone": "us-east-1c",
        "price": cand["price"],
    }
    assert cand["price"] > 0
    assert set(doc) >= {"commands", "blocked", "blockedNodePools", "unconsolidatable", "summary"}
    s = doc["summary"]
    assert s["nodesDisrupted"] == 2 and s["stopped"] == "quiet"
    assert s["hourlyCostAfter"] < s["hourlyCostBefore"]


def test_until_quiet_goes_further() -> None:
    once, quiet = _json(*BASE), _json(*BASE, "--until-quiet")
    assert quiet["untilQuiet"] is True
    assert quiet["summary"]["nodesDisrupted"] > once["summary"]["nodesDisrupted"]
    assert quiet["summary"]["hourlyCostAfter"] < once["summary"]["hourlyCostAfter"]


def test_table_and_markdown() -> None:
    table = _run(*BASE)
    assert table.returncode == 0 and "emptiness" in table.stdout and "saves" in table.stdout
    md = _run(*BASE, "-o", "markdown")
    assert md.stdout.startswith("### nodewright disrupt") and "| emptiness |" in md.stdout.replace("  ", " ")


def test_yaml_parses() -> None:
    done = _run(*BASE, "-o", "yaml")
    assert yaml.safe_load(done.stdout)["summary"]["commands"] == 2


def test_drift_from_branch(tmp_path: Path) -> None:
    """--drift-from: the branch drops m5.2xlarge, so its nodes drift (RequirementsDrifted) and are
    rolled by the drift method, under the branch's NodePool."""
    docs = list(yaml.safe_load_all((DATA / "nodepools.yaml").read_text()))
    docs[0]["spec"]["template"]["spec"]["requirements"][1]["values"] = ["m5.large", "m5.xlarge"]
    branch = tmp_path / "branch.yaml"
    branch.write_text(yaml.safe_dump_all(docs))
    doc = _json(*BASE, "--drift-from", str(branch), "--until-quiet")
    drifted = [c for c in doc["commands"] if c["method"] == "drift"]
    assert {x["node"] for c in drifted for x in c["candidates"]} == {
        "ip-10-0-1-10",
        "ip-10-0-1-11",
        "ip-10-0-2-20",
    }
    for c in drifted:
        for r in c["replacements"]:
            assert "m5.2xlarge" not in r["instanceTypes"]


def test_feature_gates_from_environment_and_flag() -> None:
    assert _run(*BASE, "--feature-gates", "SpotToSpotConsolidation=true").returncode == 0
    bad = _run(*BASE, env={"FEATURE_GATES": "SpotToSpot=true"})
    assert bad.returncode == 2  # a usage error, as every invalid Karpenter setting
    assert bad.stderr.startswith("error: <environment>: unknown feature gate 'SpotToSpot'")


def test_bad_at_is_one_error_line() -> None:
    done = _run(*BASE[:-2], "--at", "tomorrow")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "error: <args>: --at 'tomorrow' is not an RFC 3339 timestamp such as 2024-05-01T12:00:00Z"
    ]


def test_missing_cluster_is_a_usage_error() -> None:
    done = _run("-f", str(DATA / "nodepools.yaml"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
