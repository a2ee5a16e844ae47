"""A TopologyBase's node views (made on first read, kept per Node object across bases by
TopoViews) are those an eager base over the same Nodes makes: active nodes by name, and where a
pod runs (an active node, else the first Node of that name), and the bound anti-affinity pods."""

from __future__ import annotations

import random

import builders
from hypothesis import given, settings
from hypothesis import strategies as st

from nodewright.api.core import Node, Pod
from nodewright.scheduling.topologybase import TopologyBase, TopoNode, TopoViews


def _view(t: TopoNode) -> tuple[object, ...]:
    return (t.name, dict(t.labels), list(t.taints))


def _views(d: dict[str, TopoNode]) -> dict[str, tuple[object, ...]]:
    return {k: _view(v) for k, v in d.items()}


ANTI = {
    "podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "kubernetes.io/hostname"}
        ]
    }
}


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), rounds=st.integers(1, 4))
def test_lazy_kept_views_equal_eager_ones(seed: int, rounds: int) -> None:
    rng = random.Random(seed)
    kept = TopoViews()
    pool = [
        Node.model_validate(builders.node(f"n{rng.randrange(8)}", labels={"zone": rng.choice("ab")}))
        for _ in range(12)
    ]
    for _ in range(rounds):
        every = rng.sample(pool, rng.randrange(len(pool) + 1))
        active = [n for n in every if rng.random() < 0.7]
        pods = [
            Pod.model_validate(
                builders.pod(
                    f"p{i}",
                    cpu="1",
                    labels={"app": "a"},
                    affinity=ANTI if rng.random() < 0.5 else None,
                    node_name=rng.choice([n.metadata.name for n in every] or ["gone"]),
                )
            )
            for i in range(rng.randrange(4))
        ]
        affinity = [p for p in pods if p.spec.affinity is not None] if rng.random() < 0.5 else None
        base = TopologyBase(
            nodes=active, all_nodes=every, cluster_pods=pods, affinity_pods=affinity, kept=kept
        )
        # the oracle: an active node by its name (the last of a name, as a dict keeps it), else
        # the first Node of that name
        want_nodes = {n.metadata.name: _view(TopoNode.of(n)) for n in active}
        want_lookup = dict(want_nodes)
        for n in every:
            want_lookup.setdefault(n.metadata.name, _view(TopoNode.of(n)))
        want_inverse = [
            (p.key, p.spec.node_name)
            for p in pods
            if p.spec.affinity is not None and p.spec.node_name in want_lookup
        ]
        assert [(p.key, _view(t)) for p, t in base.inverse()] == [
            (k, want_lookup[n]) for k, n in want_inverse
        ]  # read before the views are made
        assert _views(base.nodes) == want_nodes
        assert _views(base.lookup) == want_lookup
