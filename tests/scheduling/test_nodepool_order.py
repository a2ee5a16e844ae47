"""The order in which the provisioner tries NodePools.

Ported from kubernetes-sigs/karpenter v1.14.1 ``pkg/utils/nodepool/suite_test.go``, Context
"OrderByWeight": "should order the NodePools by weight" and "should order the NodePools by name
when the weights are the same" (``OrderByWeight``: a larger weight first; equal weights, the name
later in the alphabet first).
"""

from __future__ import annotations

import random
from pathlib import Path

import yaml
from builders import nodepool

from nodewright.api.loading import load_objects
from nodewright.scheduling.plan import order_nodepools


def _pools(tmp_path: Path, spec: list[tuple[str, int | None]]) -> list[str]:
    docs = [nodepool(name, weight=w) for name, w in spec]
    path = tmp_path / "pools.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return [np.name for np in order_nodepools(load_objects([path]).nodepools)]


def test_nodepools_are_tried_by_weight_descending(tmp_path: Path) -> None:
    rng = random.Random(7)
    spec = [(f"pool-{i}", rng.randint(1, 5)) for i in range(10)]
    order = _pools(tmp_path, spec)
    weights = dict(spec)
    assert [weights[n] for n in order] == sorted(weights.values(), reverse=True)


def test_equal_weight_nodepools_are_tried_by_name_descending(tmp_path: Path) -> None:
    spec: list[tuple[str, int | None]] = [(name, 10) for name in ("alpha", "delta", "bravo", "charlie")]
    assert _pools(tmp_path, spec) == ["delta", "charlie", "bravo", "alpha"]


def test_an_unset_weight_counts_as_zero_and_goes_last(tmp_path: Path) -> None:
    spec: list[tuple[str, int | None]] = [("zeta", None), ("alpha", 1), ("beta", None)]
    assert _pools(tmp_path, spec) == ["alpha", "zeta", "beta"]
