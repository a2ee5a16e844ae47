"""Invariants of ``plan --strategy cost`` that no price may buy."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest

from nodewright.api.core import Pod
from nodewright.api.karpenter import NodePool
from nodewright.catalog import fake_instance_types
from nodewright.cluster.state import ClusterState
from nodewright.costplan import guided as guided_mod
from nodewright.costplan.strategy import plan_cost
from nodewright.scheduling.plan import plan
from nodewright.scheduling.scheduler import SolveResult

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _generic(n: int) -> tuple[list[NodePool], ClusterState]:
    sys.path.insert(0, str(BENCH))
    try:
        bench = importlib.import_module("scheduling")
    finally:
        sys.path.remove(str(BENCH))
    state = ClusterState(pods=tuple(Pod.model_validate(p) for p in bench.generic_pods(n)))
    return [NodePool.model_validate(bench.NODEPOOL)], state


def test_cost_strategy_never_trades_a_scheduled_pod_for_price(monkeypatch: pytest.MonkeyPatch) -> None:
    """A guided plan that is cheaper because it leaves a pod unscheduled is refused: the plan falls
    back to Karpenter's, which schedules every pod."""
    pools, state = _generic(600)
    types = fake_instance_types(400)
    honest = plan_cost(nodepools=pools, cluster=state, catalog_for=lambda _np: types)
    assert honest.summary.strategy == "cost" and not honest.pod_errors
    assert honest.summary.hourly_cost < honest.summary.karpenter_hourly_cost

    real = guided_mod.GuidedScheduler.solve_guided

    def lossy(self: Any, *args: Any, **kwargs: Any) -> SolveResult:
        result = real(self, *args, **kwargs)
        claim = result.new_claims.pop()  # cheaper: one NodeClaim fewer, its pods left pending
        for p in claim.pods:
            result.errors[p.key] = "dropped to save money"
        return result

    monkeypatch.setattr(guided_mod.GuidedScheduler, "solve_guided", lossy)
    doc = plan_cost(nodepools=pools, cluster=state, catalog_for=lambda _np: types)
    karpenter = plan(nodepools=pools, cluster=state, catalog_for=lambda _np: types)
    assert doc.pod_errors == karpenter.pod_errors == {}
    assert doc.summary.hourly_cost == karpenter.summary.hourly_cost
    assert doc.summary.scheduled == karpenter.summary.scheduled == 600
