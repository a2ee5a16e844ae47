"""The scheduling benchmark at 1000 pods, as CI's smoke test (no timing assertion)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "scheduling.py"


def _bench():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_scheduling", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_scheduling"] = module
    spec.loader.exec_module(module)
    return module


def test_benchmark_workload_schedules_every_pod() -> None:
    from nodewright.catalog import fake_instance_types

    bench = _bench()
    types = fake_instance_types(400)
    doc, _seconds = bench.run_plan(bench.diverse_pods(1000), types)
    assert doc.pod_errors == {}
    assert doc.summary.scheduled == 1000
    # one hostname-anti-affinity pod per node bounds the count from below (upstream: 200)
    assert len(doc.node_claims) == 200


def test_lp_bound_is_below_the_plan() -> None:
    from nodewright.catalog import fake_instance_types

    bench = _bench()
    types = fake_instance_types(400)
    raw = bench.generic_pods(200)
    doc, _ = bench.run_plan(raw, types)
    bound = bench.lp_lower_bound(types, bench._demand(raw))
    assert 0 < bound <= doc.summary.hourly_cost


def test_benchmark_main_runs_small() -> None:
    assert _bench().main(["--sizes", "1", "20", "--no-cli"]) == 0
