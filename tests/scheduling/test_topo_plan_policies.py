"""Spread policies through ``plan``: ``nodeTaintsPolicy`` and ``matchLabelKeys`` (newer upstream
``topology_test.go`` contexts, reasoned from the algorithm in upstream ``topologygroup.go`` / docs/topology.md).
"""

from __future__ import annotations

from typing import Any

from test_topo_plan_support import LABELS, Cluster, node, nodepool, pod, req, spread

from nodewright.api.core import Toleration
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


# -- ported: kubernetes-sigs/karpenter v1.14.1 topology_test.go, Contexts "NodeTaintsPolicy" and
# "NodeAffinityPolicy" (spread label ``fake-label``; the suite's NodePool requires capacity-type Exists)
SPREAD = "fake-label"


def _discovered_from_nodepool(policy: str) -> list[int]:
    pools = [
        nodepool(requirements=[req(CAPACITY_TYPE, "Exists"), req(SPREAD, "In", "foo")]),
        nodepool("tainted", requirements=[req(CAPACITY_TYPE, "Exists"), req(SPREAD, "In", "bar")],
                 taints=[{"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}]),
    ]  # fmt: skip
    c = Cluster()
    c.provision(pools, c.new_pods(2, tsc=[spread(SPREAD, nodeTaintsPolicy=policy)]))
    return c.skew(SPREAD)


def test_node_taints_policy_ignore_discovered_from_nodepool() -> None:
    """It "should balance pods across a label when discovered from the nodepool (NodeTaintsPolicy=ignore)":
    one pod in "foo"; the other would need "bar", whose pool it does not tolerate."""
    assert _discovered_from_nodepool("Ignore") == [1]


def test_node_taints_policy_honor_discovered_from_nodepool() -> None:
    """It "... when discovered from the nodepool (NodeTaintsPolicy=honor)": "bar" is not counted."""
    assert _discovered_from_nodepool("Honor") == [2]


def test_node_taints_policy_honor_exclusive_nodepools_share_a_domain() -> None:
    """It "should balance pods across a label when mutually exclusive NodePools (by taints) share
    domains (NodeTaintsPolicy=honor)": foo 2, bar 1, baz 3."""
    pools = [
        nodepool(f"np-{i}", requirements=[req(CAPACITY_TYPE, "Exists"), req(SPREAD, "In", *domains)],
                 taints=[{"key": "taint-key", "value": f"nodepool-{i}", "effect": "NoSchedule"}])
        for i, domains in enumerate((("foo", "bar"), ("foo", "baz")))
    ]  # fmt: skip
    tsc = [spread(SPREAD, nodeTaintsPolicy="Honor")]
    c = Cluster()
    pods: list[Any] = []
    for i in range(2):
        toleration = {"key": "taint-key", "effect": "NoSchedule", "value": f"nodepool-{i}"}
        batch = c.new_pods((i + 1) * 2, tsc=tsc)
        pods += [p.model_copy(update={"spec": p.spec.model_copy(update={"tolerations": [
            Toleration.model_validate(toleration)]})}) for p in batch]  # fmt: skip
    c.provision(pools, pods)
    assert c.skew(SPREAD) == [1, 2, 3]


def _affinity_policy(policy: str) -> list[int]:
    c = Cluster()
    for name, domain in (("node-1", "foo"), ("node-2", "bar")):
        c.nodes.append(
            node(name, labels={SPREAD: domain, "selector": "mismatch"}, allocatable={"cpu": "100m"})
        )
    pool = nodepool(labels={SPREAD: "baz", "selector": "value"})
    tsc = [spread(SPREAD, nodeAffinityPolicy=policy)]
    c.provision([pool], c.new_pods(5, cpu="1", node_selector={"selector": "value"}, tsc=tsc))
    return c.skew(SPREAD)


def test_node_affinity_policy_ignore() -> None:
    """It "should balance pods across a label (NodeAffinityPolicy=ignore)": three domains known, one
    reachable: a single pod schedules."""
    assert _affinity_policy("Ignore") == [1]


def test_node_affinity_policy_honor() -> None:
    """It "should balance pods across a label (NodeAffinityPolicy=honor)": only "baz" counts."""
    assert _affinity_policy("Honor") == [5]
