"""The preview forecasts with the Karpenter settings the cluster runs: a ``cluster snapshot``
records the controller's settings, and they apply beneath flags, environment and the stack's
``nodewright:karpenter`` (flag > environment > stack > snapshot > default)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _preview(tmp_path: Path, *extra: str) -> dict[str, object]:
    state = json.loads((ROOT / "stacks/examples/cluster.json").read_text())
    state["items"].append(
        {
            "apiVersion": "nodewright.dev/v1alpha1",
            "kind": "ClusterSnapshot",
            "metadata": {"name": "snapshot"},
            "skippedKinds": [],
            "karpenter": {
                "controller": "kube-system/karpenter",
                "settings": {"minValuesPolicy": "BestEffort", "reservedENIs": "1"},
            },
        }
    )
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(state))
    env = {k: v for k, v in os.environ.items() if k not in ("MIN_VALUES_POLICY", "RESERVED_ENIS")}
    proc = subprocess.run(
        [sys.executable, "-m", "nodewright.cli", "preview", "--stack", "dev", "--cluster-state", str(path),
         "-o", "json", *extra],
        capture_output=True, text=True, cwd=ROOT, check=False, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, object] = json.loads(proc.stdout)
    return doc


def test_the_snapshot_settings_reach_the_preview(tmp_path: Path) -> None:
    karpenter = _preview(tmp_path)["karpenter"]
    assert karpenter["minValuesPolicy"] == "BestEffort" and karpenter["reservedENIs"] == 1  # type: ignore[index]


def test_a_flag_wins_over_the_snapshot(tmp_path: Path) -> None:
    karpenter = _preview(tmp_path, "--min-values-policy", "Strict")["karpenter"]
    assert karpenter["minValuesPolicy"] == "Strict" and karpenter["reservedENIs"] == 1  # type: ignore[index]
