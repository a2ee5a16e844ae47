"""``health`` takes the ``NodeRepair`` gate the running controller has, as a ``cluster snapshot``
recorded it (beneath flags and the environment)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _states(tmp_path: Path, gates: str | None, *extra: str) -> list[str]:
    state = json.loads((ROOT / "stacks/examples/unhealthy-nodes.json").read_text())
    if gates is not None:
        state["items"].append(
            {
                "apiVersion": "nodewright.dev/v1alpha1",
                "kind": "ClusterSnapshot",
                "metadata": {"name": "snapshot"},
                "skippedKinds": [],
                "karpenter": {"controller": "kube-system/karpenter", "settings": {"featureGates": gates}},
            }
        )
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(state))
    env = {k: v for k, v in os.environ.items() if k != "FEATURE_GATES"}
    proc = subprocess.run(
        [sys.executable, "-m", "nodewright.cli", "health", "--cluster", str(path), "-o", "json",
         "--at", "2026-11-26T12:00:00Z", *extra],
        capture_output=True, text=True, cwd=ROOT, check=False, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return sorted({r["state"] for r in json.loads(proc.stdout)["nodeRepairs"]})


def test_node_repair_follows_the_snapshot_record(tmp_path: Path) -> None:
    off = _states(tmp_path, None)
    on = _states(tmp_path, "NodeRepair=true")
    assert off == ["NotRepaired"] and on != off


def test_a_flag_overrides_the_record(tmp_path: Path) -> None:
    assert _states(tmp_path, "NodeRepair=true", "--feature-gates", "NodeRepair=false") == ["NotRepaired"]
