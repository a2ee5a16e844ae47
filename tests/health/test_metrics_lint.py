"""``nodewright health -o prometheus`` is promtool-clean and in nodewright's own namespace.

Two checks: the pure-Python promlint rules (tests/health/promlint.py, always run) and the real
``promtool check metrics`` when the binary is installed (Debian's ``prometheus`` package, see
.ci/system-deps.sh). The old output's problems are the regression vectors for the linter itself.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from prometheus_client.parser import text_string_to_metric_families
from promlint import lint

from nodewright.cli import main

ROOT = Path(__file__).resolve().parents[2]
NOW = ["--now", "2026-11-22T12:00:00Z"]


def _metrics() -> str:
    res = CliRunner().invoke(
        main, ["health", "--cluster", str(ROOT / "stacks/examples/cluster.json"), "-o", "prometheus", *NOW]
    )
    assert res.exit_code == 0, res.output
    return res.stdout


def test_health_metrics_pass_the_promlint_rules() -> None:
    text = _metrics()
    assert lint(text) == []
    names = {f.name for f in text_string_to_metric_families(text)}
    assert names and all(n.startswith("nodewright_") for n in names), names


def test_linter_catches_what_promtool_reported() -> None:
    """The two problems `promtool check metrics` reported on the old output."""
    old = (
        "# HELP operator_status_condition_count The current status condition.\n"
        "# TYPE operator_status_condition_count gauge\n"
        'operator_status_condition_count{kind="NodePool",name="a"} 1.0\n'
        "# HELP karpenter_nodepool_pending_pods Pending pods.\n"
        "# TYPE karpenter_nodepool_pending_pods gauge\n"
        'karpenter_nodepool_pending_pods{nodepool="a",nodePoolVerified="true"} 2.0\n'
        "# TYPE x_requests counter\n"
        "x_requests_total 1.0\n"
        "# HELP y_latency_ms Latency.\n"
        "# TYPE y_latency_ms gauge\n"
        "y_latency_ms 1.0\n"
    )
    problems = lint(old)
    assert (
        'operator_status_condition_count non-histogram and non-summary metrics should not have "_count" suffix'
        in problems
    )
    assert (
        "karpenter_nodepool_pending_pods label names should be written in 'snake_case' not 'camelCase'"
        in problems
    )
    assert any(p.startswith("x_requests") for p in problems)
    assert "y_latency_ms metric names should not contain abbreviated units" in problems


@pytest.mark.skipif(
    shutil.which("promtool") is None, reason="promtool not installed (Debian package prometheus)"
)
def test_promtool_check_metrics() -> None:
    proc = subprocess.run(
        ["promtool", "check", "metrics"], input=_metrics(), capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
