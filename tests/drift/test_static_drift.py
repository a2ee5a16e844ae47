"""Static drift: how drifted NodeClaims of a static NodePool (``spec.replicas``) roll.

Ported from kubernetes-sigs/karpenter v1.14.1 ``pkg/controllers/disruption/staticdrift_test.go``
(Describe "StaticDrift"); each test names the It it comes from. The upstream suite drives the
disruption controller one loop at a time; here :func:`static_drift_allowance` is that loop's
``ComputeCommands`` count and the CLI tests check the rollout `nodewright drift` reports.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import builders
import yaml
from drift_support import live, make_claim, make_nodepool, write_cluster

from nodewright.scheduling.staticcapacity import PoolCounts, static_drift_allowance


def _counts(running: int, deleting: int = 0, pending: int = 0) -> PoolCounts:
    return PoolCounts(running=running, deleting=deleting, pending_disruption=pending)


def test_budget_node_count_caps_the_drifts() -> None:
    """Context "Budgets" It "should respect disruption budgets (Nodes Count) for static drift":
    10 drifted of replicas 10, budget nodes "2", no limit: 2 commands."""
    got, why = static_drift_allowance(replicas=10, node_limit=None, counts=_counts(10), budget=2, drifted=10)
    assert (got, why) == (2, None)


def test_budget_percentage_caps_the_drifts() -> None:
    """Context "Budgets" It "should respect disruption budgets (Nodes Percentage) for static drift":
    10 drifted, budget 10% of 10 = 1: 1 command."""
    assert (
        static_drift_allowance(replicas=10, node_limit=None, counts=_counts(10), budget=1, drifted=10)[0] == 1
    )


def test_no_drift_without_limit_headroom() -> None:
    """Context "Limits and Scaling" It "should not drift nodes when we cannot acquire limits":
    replicas 5, limits.nodes 5, 5 drifted running: 0 commands."""
    got, why = static_drift_allowance(replicas=5, node_limit=5, counts=_counts(5), budget=5, drifted=5)
    assert got == 0 and why is not None and "limits.nodes 5" in why


def test_drift_when_limits_can_be_acquired() -> None:
    """It "should drift nodes when we can acquire limits": replicas 5, limit 5, 2 running drifted: 2."""
    assert static_drift_allowance(replicas=5, node_limit=5, counts=_counts(2), budget=2, drifted=2) == (
        2,
        None,
    )


def test_partial_drift_within_the_limit() -> None:
    """It "should drift partially when we can acquire some limits": replicas 5, limit 7, 5 drifted: 2."""
    assert static_drift_allowance(replicas=5, node_limit=7, counts=_counts(5), budget=5, drifted=5) == (
        2,
        None,
    )


def test_one_at_a_time_with_one_spare() -> None:
    """It "should keep drifting partially when we can acquire some limits for each reconcile":
    replicas 5, limit 6: one per reconcile; while the replacement runs next to the old one
    (running 5 + pending 1 > 5) nothing more starts."""
    assert static_drift_allowance(replicas=5, node_limit=6, counts=_counts(5), budget=5, drifted=5) == (
        1,
        None,
    )
    got, why = static_drift_allowance(
        replicas=5, node_limit=6, counts=_counts(5, pending=1), budget=5, drifted=4
    )
    assert got == 0 and why is not None and "replicas 5" in why


def test_waits_while_overscaled() -> None:
    """It "should wait until nodes are deprovisioned when we are overscaled": replicas 1, 2 running: 0;
    once back at 1: 1."""
    assert static_drift_allowance(replicas=1, node_limit=None, counts=_counts(2), budget=2, drifted=2)[0] == 0
    assert static_drift_allowance(replicas=1, node_limit=None, counts=_counts(1), budget=1, drifted=1) == (
        1,
        None,
    )


def test_zero_replicas() -> None:
    """Context "Edge Cases" It "should handle zero replicas": nothing to drift, 0 commands."""
    assert static_drift_allowance(replicas=0, node_limit=None, counts=_counts(0), budget=0, drifted=0)[0] == 0


def test_missing_node_limit() -> None:
    """It "should handle missing node limits gracefully": replicas 5, no limits, 5 drifted, budget 100%: 5."""
    assert static_drift_allowance(replicas=5, node_limit=None, counts=_counts(5), budget=5, drifted=5) == (
        5,
        None,
    )


def test_multiple_pools_independently() -> None:
    """Context "Multiple NodePools" It "should handle drift for multiple static NodePools independently":
    pool 1 (3 replicas, 100%) replaces 2 drifted, pool 2 (2 replicas, limit 2) none, pool 3 2."""
    assert static_drift_allowance(replicas=3, node_limit=None, counts=_counts(3), budget=3, drifted=2)[0] == 2
    assert static_drift_allowance(replicas=2, node_limit=2, counts=_counts(2), budget=2, drifted=2)[0] == 0
    assert static_drift_allowance(replicas=2, node_limit=None, counts=_counts(2), budget=2, drifted=2)[0] == 2


# -- through the CLI -------------------------------------------------------------------------


def _static_pool(replicas: int, node_limit: int | None, budget: str = "100%") -> dict[str, Any]:
    pool = make_nodepool("static", labels={"team": "a"})
    pool["spec"]["replicas"] = replicas
    pool["spec"]["disruption"] = {"consolidateAfter": "0s", "budgets": [{"nodes": budget}]}
    if node_limit is not None:
        pool["spec"]["limits"] = {"nodes": str(node_limit)}
    return pool


def _drift(tmp_path: Path, replicas: int, node_limit: int | None) -> dict[str, Any]:
    before = _static_pool(replicas, node_limit)
    before["spec"]["template"]["metadata"] = {"labels": {"team": "old"}}
    claims: list[dict[str, Any]] = []
    for i in range(replicas):
        c = make_claim(f"static-{i}", before)
        c["status"]["conditions"].append({"type": "Initialized", "status": "True"})
        c["status"]["nodeName"] = f"node-{i}"
        # a Node as Karpenter leaves it (its pool's label, initialized): the rollout is simulated
        node_labels = {**c["metadata"]["labels"], "karpenter.sh/initialized": "true"}
        n = builders.node(f"node-{i}", labels=node_labels, capacity={"cpu": "2"})
        n["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
        claims += [c, n]
    cluster = write_cluster(tmp_path / "cluster.json", [live(before), *claims])
    branch = tmp_path / "np.yaml"
    branch.write_text(yaml.safe_dump(_static_pool(replicas, node_limit)))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "nodewright.cli",
            "drift",
            "-f",
            str(branch),
            "--cluster",
            str(cluster),
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return next(p for p in doc["nodePools"] if p["name"] == "static")


def test_cli_replicas_equal_to_the_node_limit_never_roll(tmp_path: Path) -> None:
    """Replicas 5 with limits.nodes 5 rolls none ("should not drift nodes when we cannot acquire limits")."""
    pool = _drift(tmp_path, 5, 5)
    assert pool["replaced"] == 5
    ro = pool["rollout"]
    assert ro["blocked"] is True and ro["waves"] is None and ro["static"] is True and ro["headroom"] == 0
    assert any("limits.nodes 5" in n for n in ro["notes"])


def test_cli_one_spare_node_rolls_one_at_a_time(tmp_path: Path) -> None:
    """With one spare node (limit 6) Karpenter replaces one node at a time."""
    ro = _drift(tmp_path, 5, 6)["rollout"]
    assert ro["allowedPerWave"] == 1 and ro["waves"] == 5 and not ro["blocked"]


def test_cli_no_node_limit_rolls_within_the_budget(tmp_path: Path) -> None:
    """It "should handle missing node limits gracefully": budget 100%, all in one wave."""
    ro = _drift(tmp_path, 5, None)["rollout"]
    assert ro["waves"] == 1 and ro["headroom"] is None


def test_budgets_of_several_static_pools() -> None:
    """Context "Budgets" It "should respect budgets for multiple static nodepools": pools of 4
    (budget "1"), 3 (budget "2") and 2 (budget "100%") replicas, all drifted: 1, 2 and 2 commands."""
    got = [
        static_drift_allowance(replicas=r, node_limit=None, counts=_counts(r), budget=b, drifted=r)[0]
        for r, b in ((4, 1), (3, 2), (2, 2))
    ]
    assert got == [1, 2, 2]
