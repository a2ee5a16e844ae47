"""``plan`` forecasts with the Karpenter settings the cluster runs: a ``cluster snapshot`` records
the controller's settings (its Deployment's environment), and they apply beneath the flags and the
environment (flag > environment > snapshot > the release's default)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _snapshot(tmp_path: Path, settings: dict[str, str]) -> Path:
    state = json.loads((ROOT / "stacks/examples/cluster.json").read_text())
    state["items"].append(
        {
            "apiVersion": "nodewright.dev/v1alpha1",
            "kind": "ClusterSnapshot",
            "metadata": {"name": "snapshot"},
            "skippedKinds": [],
            "karpenter": {"controller": "kube-system/karpenter", "settings": settings},
        }
    )
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(state))
    return path


def _plan(path: Path, *extra: str, env: dict[str, str] | None = None) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-m", "nodewright.cli", "plan", "-f", "stacks/nodepools.yaml", "-f",
         "stacks/nodeclasses.yaml", "--cluster", str(path), "-o", "json", *extra],
        capture_output=True, text=True, cwd=ROOT, check=False,
        env={k: v for k, v in {**os.environ, **(env or {})}.items() if k not in ("MIN_VALUES_POLICY",) or env},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, object] = json.loads(proc.stdout)
    return doc


def test_the_snapshot_settings_apply_by_default(tmp_path: Path) -> None:
    path = _snapshot(tmp_path, {"minValuesPolicy": "BestEffort", "featureGates": "NodeOverlay=true"})
    karpenter = _plan(path)["karpenter"]
    assert karpenter["minValuesPolicy"] == "BestEffort"  # type: ignore[index]
    assert "NodeOverlay=true" in karpenter["featureGates"]  # type: ignore[index]


def test_a_flag_and_the_environment_win_over_the_snapshot(tmp_path: Path) -> None:
    path = _snapshot(tmp_path, {"minValuesPolicy": "BestEffort", "preferencePolicy": "Ignore"})
    karpenter = _plan(path, "--min-values-policy", "Strict", env={"PREFERENCE_POLICY": "Respect"})[
        "karpenter"
    ]
    assert karpenter["minValuesPolicy"] == "Strict"  # type: ignore[index]
    assert karpenter["preferencePolicy"] == "Respect"  # type: ignore[index]


def test_a_bad_snapshot_setting_is_a_located_error(tmp_path: Path) -> None:
    path = _snapshot(tmp_path, {"minValuesPolicy": "Sometimes"})
    proc = subprocess.run(
        [sys.executable, "-m", "nodewright.cli", "plan", "-f", "stacks/nodepools.yaml", "--cluster", str(path)],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"error: {path}:ClusterSnapshot.karpenter.settings: ")
    assert "minValuesPolicy 'Sometimes'" in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert "Traceback" not in proc.stderr
