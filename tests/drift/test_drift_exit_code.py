"""``nodewright drift --exit-code``: 0 when no node would roll, 3 when some would, as real
processes. 3, not kubectl diff's 1 (an error here) nor terraform's 2 (a usage error here)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml
from drift_support import live, make_claim, make_nodepool, write_cluster

ROOT = Path(__file__).resolve().parents[2]


def _drift(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "nodewright.cli", "drift", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )


def _case(tmp_path: Path, branch_pool: dict[str, object]) -> list[str]:
    pool = make_nodepool()
    cluster = write_cluster(tmp_path / "cluster.json", [live(pool), make_claim("default-a", pool)])
    branch = tmp_path / "branch.yaml"
    branch.write_text(yaml.safe_dump(branch_pool))
    return ["-f", str(branch), "--cluster", str(cluster)]


def test_exit_0_when_nothing_would_roll(tmp_path: Path) -> None:
    args = _case(tmp_path, make_nodepool())
    res = _drift(*args, "--exit-code", "-o", "json")
    assert res.returncode == 0, res.stderr
    assert yaml.safe_load(res.stdout)["drifted"] == []


def test_exit_3_when_nodes_would_roll_and_the_report_is_still_printed(tmp_path: Path) -> None:
    args = _case(tmp_path, make_nodepool(labels={"team": "a"}))
    res = _drift(*args, "--exit-code", "-o", "json")
    assert res.returncode == 3, res.stderr
    assert [d["nodeClaim"] for d in yaml.safe_load(res.stdout)["drifted"]] == ["default-a"]
    # without the flag the exit code does not depend on the answer
    assert _drift(*args, "-o", "json").returncode == 0


def test_errors_keep_exit_1_with_the_flag(tmp_path: Path) -> None:
    res = _drift("-f", str(tmp_path / "missing.yaml"), "--cluster", str(tmp_path / "c.json"), "--exit-code")
    assert res.returncode == 1 and res.stderr.startswith("error: ")
