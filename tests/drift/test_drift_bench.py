"""Benchmarks of the drift hot paths (run with --benchmark-enable; numbers in docs/drift.md)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from drift_support import live, make_claim, make_nodepool

from nodewright import crd
from nodewright.drift import drift_impact, nodepool_hash


def test_bench_nodepool_hash(benchmark: Any) -> None:
    np = make_nodepool(
        labels={f"k{i}": "v" for i in range(5)},
        taints=[{"key": f"t{i}", "effect": "NoSchedule"} for i in range(5)],
    )
    assert benchmark(nodepool_hash, np)


def test_bench_drift_impact_2000_claims(benchmark: Any) -> None:
    np = make_nodepool()
    state = SimpleNamespace(nodeclaims=[make_claim(f"c{i}", np) for i in range(2000)], nodepools=[live(np)])
    branch = [make_nodepool(labels={"a": "b"})]
    report = benchmark(drift_impact, branch, state, release=crd.default_release())
    assert len(report.drifted) == 2000
