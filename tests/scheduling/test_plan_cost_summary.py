"""``nodewright plan`` prices its NodeClaims per NodePool and per month, as a real process:
``summary.monthlyCost`` (730 h, infracost's month) and ``summary.byNodePool`` in JSON, and the same
figures in the table and markdown, the existing fields and lines unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "tests" / "data" / "scheduling" / "basic"
FAKE = ROOT / "tests" / "data" / "catalogs" / "fake.yaml"


def _plan(*extra: str) -> str:
    res = subprocess.run(
        [sys.executable, "-m", "nodewright.cli", "plan", "-f", str(CASE / "nodepools.yaml"), "--cluster",
         str(CASE / "cluster.json"), "--catalog", str(FAKE), *extra],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT, check=False,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_json_summary_by_nodepool_and_monthly() -> None:
    doc = json.loads(_plan("-o", "json"))
    s = doc["summary"]
    assert list(s)[:4] == ["pendingPods", "scheduled", "newNodeClaims", "hourlyCost"]  # unchanged, first
    assert abs(s["monthlyCost"] - s["hourlyCost"] * 730) < 0.05
    by_pool: dict[str, list[float]] = {}
    for c in doc["nodeClaims"]:
        t = by_pool.setdefault(c["nodePool"], [0, 0.0])
        t[0] += 1
        t[1] += c["launch"]["price"]
    assert set(s["byNodePool"]) == set(by_pool) == {"arm", "default"}
    for pool, (n, hourly) in by_pool.items():
        got = s["byNodePool"][pool]
        assert got["newNodeClaims"] == n and abs(got["hourlyCost"] - hourly) < 1e-3
        assert abs(got["monthlyCost"] - got["hourlyCost"] * 730) < 0.05
    assert sum(p["newNodeClaims"] for p in s["byNodePool"].values()) == s["newNodeClaims"]


def test_table_and_markdown_lines() -> None:
    s = json.loads(_plan("-o", "json"))["summary"]
    table = _plan()
    assert f"hourly cost: {s['hourlyCost']:.4f}\nmonthly cost: {s['monthlyCost']:,.2f} (730 h)" in table
    assert "NODEPOOL   NEW NODECLAIMS   HOURLY" in table
    md = _plan("-o", "markdown")
    assert "| NODEPOOL | NEW NODECLAIMS | HOURLY | MONTHLY |" in md
    assert f"| arm | 1 | {s['byNodePool']['arm']['hourlyCost']:.4f} |" in md
