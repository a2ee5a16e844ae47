"""Spread policies through ``plan``: ``nodeTaintsPolicy`` and ``matchLabelKeys`` (newer upstream
``topology_test.go`` contexts, reasoned from the algorithm in upstream ``topologygroup.go`` / docs/topology.md).
"""

from __future__ import annotations

from typing import Any

from test_topo_plan_support import LABELS, Cluster, node, nodepool, pod, req, spread

from nodewright.labels import CAPACITY_TYPE, ZONE

Z1, Z2, Z3 = "test-zone-1", "test-zone-2", "test-zone-3"
TAINT = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}


def _tainted_zone3(policy: str | None) -> list[int]:
    """A tainted NodePool owns zone-3; pods do not tolerate it."""
    extra: dict[str, Any] = {"nodeTaintsPolicy": policy} if policy else {}
    c = Cluster()
    pools = [
        nodepool(requirements=[req(CAPACITY_TYPE, "Exists"), req(ZONE, "In", Z1, Z2)]),
        nodepool("tainted", requirements=[req(ZONE, "In", Z3)], taints=[TAINT]),
    ]
    c.provision(pools, c.new_pods(4, tsc=[spread(ZONE, **extra)]))
    return c.skew(ZONE)


def test_node_taints_policy_ignore_counts_untolerated_domains() -> None:
    # default Ignore: zone-3 (empty, unreachable) keeps the minimum at 0
    assert _tainted_zone3(None) == [1, 1]
    assert _tainted_zone3("Ignore") == [1, 1]


def test_node_taints_policy_honor_skips_untolerated_domains() -> None:
    assert _tainted_zone3("Honor") == [2, 2]


def test_match_label_keys_spread_each_revision_separately() -> None:
    c = Cluster()
    c.nodes.append(node("old", labels={ZONE: Z1, CAPACITY_TYPE: "spot"}))
    c.add(*(pod(f"old-{i}", labels={**LABELS, "hash": "v1"}, node_name="old") for i in range(3)))
    tsc = spread(ZONE, matchLabelKeys=["hash"])
    new = c.new_pods(3, labels={**LABELS, "hash": "v2"}, tsc=[tsc])
    c.provision([nodepool()], new)
    assert c.scheduled(new)
    assert c.skew(ZONE, labels={"hash": "v2"}) == [1, 1, 1]


def test_without_match_label_keys_old_revision_counts() -> None:
    c = Cluster()
    c.nodes.append(node("old", labels={ZONE: Z1, CAPACITY_TYPE: "spot"}))
    c.add(*(pod(f"old-{i}", labels={**LABELS, "hash": "v1"}, node_name="old") for i in range(3)))
    new = c.new_pods(3, labels={**LABELS, "hash": "v2"}, tsc=[spread(ZONE)])
    c.provision([nodepool()], new)
    assert c.scheduled(new)
    # zone-1 already holds 3: the new pods fill zones 2 and 3 only
    assert c.skew(ZONE, labels={"hash": "v2"}) == [1, 2]
    assert c.skew(ZONE) == [1, 2, 3]
