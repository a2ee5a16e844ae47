"""`nodewright hash` and `nodewright drift` through the command line contract."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml
from click.testing import CliRunner
from drift_support import live, make_claim, make_nodepool, write_cluster

from nodewright.cli import main


def _write(path: Path, *docs: object) -> str:
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def test_hash_json_matches_contract(tmp_path: Path) -> None:
    f = _write(tmp_path / "np.yaml", make_nodepool("default"), make_nodepool("gpu", labels={"team": "a"}))
    res = CliRunner().invoke(main, ["hash", "-f", f, "-o", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data[0] == {"name": "default", "hash": "6821555240594823858", "version": "v3"}
    assert data[1]["name"] == "gpu" and data[1]["hash"] == "1617844334411263980"


def test_hash_table(tmp_path: Path) -> None:
    f = _write(tmp_path / "np.yaml", make_nodepool())
    res = CliRunner().invoke(main, ["hash", "-f", f])
    assert res.exit_code == 0
    assert "6821555240594823858" in res.output and "v3" in res.output


def test_bad_duration_is_one_line_naming_file_and_field(tmp_path: Path) -> None:
    f = _write(tmp_path / "np.yaml", make_nodepool(expireAfter="30x"))
    res = CliRunner().invoke(main, ["hash", "-f", f, "-o", "json"])
    assert res.exit_code == 1
    lines = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1
    assert f"{f}:spec.template.spec.expireAfter" in lines[0] and "30x" in lines[0]
    assert "Traceback" not in res.output + res.stderr


def test_bad_termination_grace_period(tmp_path: Path) -> None:
    f = _write(tmp_path / "np.yaml", make_nodepool(terminationGracePeriod="1.5h"))
    res = CliRunner().invoke(main, ["hash", "-f", f])
    assert res.exit_code == 1
    assert "spec.template.spec.terminationGracePeriod" in res.stderr


def test_nodepool_without_template(tmp_path: Path) -> None:
    np = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "x"},
        "spec": {"weight": 1},
    }
    f = _write(tmp_path / "np.yaml", np)
    res = CliRunner().invoke(main, ["hash", "-f", f])
    assert res.exit_code == 1
    lines = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "spec.template" in lines[0] and f in lines[0]


def test_every_bad_nodepool_is_reported(tmp_path: Path) -> None:
    bad1 = make_nodepool("a", expireAfter="30x")
    bad2 = make_nodepool("b", taints=[{"key": "k", "effect": "Sometimes"}])
    f = _write(tmp_path / "np.yaml", bad1, bad2)
    res = CliRunner().invoke(main, ["hash", "-f", f])
    assert res.exit_code == 1
    assert len([line for line in res.stderr.splitlines() if line.startswith("error:")]) == 2


def test_drift_json(tmp_path: Path) -> None:
    pool = make_nodepool()
    cluster = write_cluster(
        tmp_path / "cluster.json", [live(pool), make_claim("default-a", pool), make_claim("default-b", pool)]
    )
    branch = _write(tmp_path / "branch.yaml", make_nodepool(labels={"team": "a"}))
    res = CliRunner().invoke(main, ["drift", "-f", branch, "--cluster", str(cluster), "-o", "json"])
    assert res.exit_code == 0, res.output + res.stderr
    data = json.loads(res.stdout)
    assert data["drifted"] == [
        {"nodeClaim": "default-a", "nodePool": "default", "reason": "NodePoolDrifted"},
        {"nodeClaim": "default-b", "nodePool": "default", "reason": "NodePoolDrifted"},
    ]
    assert data["summary"]["replacedByNodePool"] == {"default": 2}
    assert data["nodePools"][0]["replaced"] == 2


def test_drift_table_and_markdown(tmp_path: Path) -> None:
    pool = make_nodepool()
    cluster = write_cluster(tmp_path / "cluster.json", [live(pool), make_claim("default-a", pool)])
    branch = _write(tmp_path / "branch.yaml", pool)
    res = CliRunner().invoke(main, ["drift", "-f", branch, "--cluster", str(cluster)])
    assert res.exit_code == 0 and "No NodeClaim would drift" in res.output
    res = CliRunner().invoke(main, ["drift", "-f", branch, "--cluster", str(cluster), "-o", "markdown"])
    assert res.exit_code == 0 and "| default | 1 | 0 |" in res.output


def test_drift_bad_now(tmp_path: Path) -> None:
    pool = make_nodepool()
    cluster = write_cluster(tmp_path / "cluster.json", [live(pool)])
    branch = _write(tmp_path / "branch.yaml", pool)
    res = CliRunner().invoke(main, ["drift", "-f", branch, "--cluster", str(cluster), "--now", "yesterday"])
    assert res.exit_code == 1 and "--now" in res.stderr


def test_hash_without_any_nodepool_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text("apiVersion: karpenter.sh/v1\nkind: NodePol\nmetadata: {name: x}\n")
    result = CliRunner().invoke(main, ["hash", "-f", str(path), "-o", "json"])
    assert result.exit_code == 1
    assert f"error: {path}: no NodePool" in result.stderr
    assert "Traceback" not in result.output


def _nw(*args: str) -> subprocess.CompletedProcess[str]:
    root = Path(__file__).resolve().parents[2]
    return subprocess.run([sys.executable, "-m", "nodewright.cli", *args], capture_output=True, text=True,
                          cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, check=False, timeout=300)  # fmt: skip


def test_one_clock_scheduled_budget_blocks_in_its_window(tmp_path: Path) -> None:
    """`--at` drives every judgement of time; a 09:00-17:00 budget of 0 is evaluated, never left out."""
    pool = make_nodepool()
    pool["spec"]["disruption"] = {
        "consolidateAfter": "0s",
        "budgets": [{"nodes": "0", "schedule": "0 9 * * *", "duration": "8h"}, {"nodes": "5"}],
    }
    claims = [make_claim(f"default-{c}", pool) for c in "abc"]
    cluster = write_cluster(tmp_path / "cluster.json", [live(pool), *claims])
    branch = _write(tmp_path / "branch.yaml", {**pool, "spec": {**pool["spec"], "template": {
        **pool["spec"]["template"], "metadata": {"labels": {"team": "a"}}}}})  # fmt: skip
    res = _nw("drift", "-f", branch, "--cluster", str(cluster), "--at", "2026-03-02T10:00:00Z", "-o", "json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["at"] == "2026-03-02T10:00:00Z"
    r = data["nodePools"][0]["rollout"]
    assert (r["drifted"], r["allowedPerWave"], r["waves"], r["blocked"]) == (3, 0, None, True)
    assert r["notes"] == [] and r["nextChange"] == "2026-03-02T17:00:00Z"
    assert r["windows"][0]["active"] is True and r["windows"][0]["closesAt"] == "2026-03-02T17:00:00Z"
    later = yaml.safe_load(
        _nw(
            "drift",
            "-f",
            branch,
            "--cluster",
            str(cluster),
            "--at",
            "2026-03-02T18:00:00+01:00",
            "-o",
            "yaml",
        ).stdout
    )
    assert later["at"] == "2026-03-02T17:00:00Z"
    r = later["nodePools"][0]["rollout"]
    assert (r["allowedPerWave"], r["waves"], r["blocked"]) == (5, 1, False)
    assert r["windows"][0]["opensAt"] == "2026-03-03T09:00:00Z"
    table = _nw("drift", "-f", branch, "--cluster", str(cluster), "--now", "2026-03-02T10:00:00Z")
    assert table.returncode == 0, table.stderr
    assert "at: 2026-03-02T10:00:00Z" in table.stdout.splitlines()
    assert (
        "window: default: budgets[0] (nodes 0, schedule '0 9 * * *' for 8h) active until 2026-03-02T17:00:00Z"
        in table.stdout
    )
    md = _nw(
        "drift", "-f", branch, "--cluster", str(cluster), "--at", "2026-03-02T10:00:00Z", "-o", "markdown"
    )
    assert "Evaluated at 2026-03-02T10:00:00Z." in md.stdout and "| blocked |" in md.stdout
    both = _nw(
        "drift",
        "-f",
        branch,
        "--cluster",
        str(cluster),
        "--at",
        "2026-03-02T10:00:00Z",
        "--now",
        "2026-03-01T10:00:00Z",
    )
    assert both.returncode == 2 and "--now is the former name of --at" in both.stderr


def test_default_time_is_now_and_stated(tmp_path: Path) -> None:
    pool = make_nodepool()
    cluster = write_cluster(tmp_path / "cluster.json", [live(pool), make_claim("default-a", pool)])
    branch = _write(tmp_path / "branch.yaml", pool)
    res = CliRunner().invoke(main, ["drift", "-f", branch, "--cluster", str(cluster), "-o", "json"])
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["at"].endswith("Z")
