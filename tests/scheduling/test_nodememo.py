"""A scheduling base patched from the last one (:mod:`nodewright.scheduling.nodememo`) holds what a
base derived from scratch holds: the same existing nodes in the scheduler's order, the same
charges against NodePool limits, the same remaining limits and the same fit index, whichever state nodes left, came
or changed in between (a disruption forecast's reconciles)."""

from __future__ import annotations

from typing import Any

import builders
from hypothesis import given, settings
from hypothesis import strategies as st

from nodewright import labels
from nodewright.api.core import Node
from nodewright.api.karpenter import NodePool
from nodewright.scheduling import nodememo
from nodewright.scheduling.existingnode import StateNode
from nodewright.scheduling.instancetypes import ResourceSpace
from nodewright.scheduling.nodememo import NodeMemo
from nodewright.scheduling.schedbase import SchedulerBase

POOLS = (
    NodePool.model_validate(builders.nodepool("limited", limits={"cpu": "40", "nodes": "9"})),
    NodePool.model_validate(builders.nodepool("free")),
    NodePool.model_validate(builders.nodepool("memory", limits={"memory": "64Gi"})),
)
SPACE = ResourceSpace(["cpu", "memory", "pods"])

node_specs = st.tuples(
    st.integers(0, 30),  # name
    st.sampled_from([p.name for p in POOLS] + ["unmanaged"]),
    st.booleans(),  # initialized
    st.sampled_from(["2", "4", "8"]),
    st.sampled_from(["4Gi", "16Gi"]),
)


def _state(spec: tuple[int, str, bool, str, str]) -> StateNode:
    name, pool, initialized, cpu, memory = spec
    node_labels = {} if pool == "unmanaged" else {labels.NODEPOOL: pool}
    if initialized:
        node_labels[labels.NODE_INITIALIZED] = "true"
    body = builders.node(
        f"node-{name:02d}", labels=node_labels, capacity={"cpu": cpu, "memory": memory, "pods": "20"}
    )
    return StateNode(name=f"node-{name:02d}", node=Node.model_validate(body), nodeclaim=None)


def _base(states: list[StateNode], memo: NodeMemo | None) -> SchedulerBase:
    return SchedulerBase(
        nodepools=POOLS,
        instance_types={},
        state_nodes=states,
        daemonset_pods=[],
        space=SPACE,
        memo=memo,
    )


def _facts(base: SchedulerBase) -> tuple[Any, ...]:
    names = [n.name for n in base.existing]
    charges = {n.name: base.charges.get(id(n)) for n in base.existing}
    return names, charges, base.remaining, base.fit.dims, base.fit.tree, base.node_keys


def _unique(specs: list[tuple[int, str, bool, str, str]]) -> list[tuple[int, str, bool, str, str]]:
    return list({s[0]: s for s in specs}.values())


@settings(max_examples=200, deadline=None)
@given(
    before=st.lists(node_specs, max_size=24).map(_unique),
    steps=st.lists(
        st.lists(
            st.tuples(st.sampled_from(["drop", "add", "swap"]), st.integers(0, 40), node_specs), max_size=4
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_a_patched_base_holds_what_a_fresh_one_holds(
    before: list[tuple[int, str, bool, str, str]], steps: list[list[tuple[str, int, Any]]]
) -> None:
    memo = NodeMemo()
    states = [_state(s) for s in before]
    _base(states, memo)
    for edits in steps:
        states = list(states)
        for op, at, spec in edits:
            taken = {sn.name for sn in states}
            if op == "drop" and states:
                states.pop(at % len(states))
            elif op == "add" and f"node-{spec[0]:02d}" not in taken:
                states.insert(at % (len(states) + 1), _state(spec))
            elif op == "swap" and states:  # the same node with other pods: a new state node
                i = at % len(states)
                old = states[i]
                states[i] = StateNode(name=old.name, node=old.node, nodeclaim=None, pods=[])
        base = _base(states, memo)
        assert _facts(base) == _facts(_base(states, None))
        # positions by name (bisection over the unique order keys) as a scan finds them
        by_name = {n.name: i for i, n in enumerate(base.existing) if n.state.node is not None}
        asked = [sn.name for sn in states[::2]] + ["node-99"]
        assert base.indexes_of(asked) == sorted(by_name[n] for n in asked if n in by_name)


def test_a_base_over_mostly_the_same_state_nodes_is_patched(monkeypatch: Any) -> None:
    """The patch is taken (not only the fallback) when few state nodes changed."""
    used: list[bool] = []
    real = nodememo.patched

    def spy(*args: Any) -> Any:
        got = real(*args)
        used.append(got is not None)
        return got

    monkeypatch.setattr("nodewright.scheduling.schedbase.patched", spy)
    memo = NodeMemo()
    states = [_state((i, POOLS[i % 3].name, True, "4", "16Gi")) for i in range(20)]
    _base(states, memo)
    states = [s for s in states if s.name != "node-03"] + [_state((25, "limited", True, "8", "4Gi"))]
    patched = _facts(_base(states, memo))
    assert used == [False, True]
    assert patched == _facts(_base(states, None))
    assert patched[1]["node-25"] == (
        "limited",
        {"cpu": 8000, "memory": 4 * 1024**3 * 1000, "pods": 20000, "nodes": 1000},
    )
