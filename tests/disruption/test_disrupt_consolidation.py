"""Consolidation (single- and multi-node), ported from kubernetes-sigs/karpenter v1.14.1
``pkg/controllers/disruption/consolidation_test.go``; each test names its Context and ``It``.

Upstream's catalog is ``fake.InstanceTypesAssorted()``; the ports use small catalogs with the same
price relations (the assertion is about the decision, not the catalog).
"""

from __future__ import annotations

from datetime import timedelta

import builders
from disrupt_support import (
    AT,
    disrupted,
    itype,
    managed,
    methods,
    nodepool,
    pod,
    run,
)

from nodewright.catalog.fake import new_instance_type
from nodewright.catalog.model import Offering

BIG = itype("big", 1.0, cpu="8", memory="16Gi", spot_price=0.5)
SMALL = itype("small", 0.25, cpu="2", memory="4Gi", spot_price=0.1)
TYPES = [BIG, SMALL]
POOL = nodepool(budgets=[{"nodes": "100%"}])
OD_POOL = nodepool(budgets=[{"nodes": "100%"}], capacity_types=("on-demand",))


def test_replace_on_demand_with_cheaper() -> None:
    """Context("Replace") DescribeTable("can replace node") Entry("if the candidate is on-demand
    node"): one pod on the dear node moves to a cheaper replacement, pinned to spot (the candidate is
    on-demand and the replacement could be either); the replacement does not launch the dear type."""
    r = run([POOL], [*managed("n1", BIG), pod("p1", "n1", cpu="500m")], TYPES)
    assert methods(r) == ["single-node-consolidation"]
    cmd = r.commands[0]
    assert cmd.decision == "replace" and cmd.reason == "Underutilized"
    rep = cmd.replacements[0]
    # the worst-case launch price counts spot first, so the candidate's own type stays an option
    # (its spot offering is below the on-demand price); the requirement is pinned to spot
    assert rep["instanceTypes"] == ["small", "big"] and rep["capacityType"] == "spot"
    assert rep["launch"] == {
        "instanceType": "small",
        "zone": "test-zone-1",
        "capacityType": "spot",
        "price": 0.1,
    }
    assert cmd.hourly_cost_before == 1.0 and round(cmd.hourly_cost_after, 6) == 0.1


def test_replace_spot_with_spot_needs_the_gate() -> None:
    """Context("Replace") It("cannot replace spot with spot if the spotToSpotConsolidation is
    disabled")."""
    items = [*managed("n1", BIG, ct="spot"), pod("p1", "n1", cpu="500m")]
    r = run([POOL], items, TYPES, gates="SpotToSpotConsolidation=false")
    assert r.commands == ()
    assert r.unconsolidatable[0].message == (
        "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node"
    )


def test_spot_to_spot_needs_fifteen_cheaper_options() -> None:
    """Context("Replace") It("cannot replace spot with spot if less than minimum InstanceTypes
    flexibility")."""
    items = [*managed("n1", BIG, ct="spot"), pod("p1", "n1", cpu="500m")]
    r = run([POOL], items, TYPES, gates="SpotToSpotConsolidation=true")
    assert r.commands == ()
    assert r.unconsolidatable[0].message == (
        "SpotToSpotConsolidation requires 15 cheaper instance type options than the current candidate to "
        "consolidate, got 1"
    )


def test_spot_to_spot_keeps_the_fifteen_cheapest() -> None:
    """Context("Replace") DescribeTable("can replace node") Entry("if the candidate is spot node"),
    and It("spot to spot consolidation should consider the default for truncation ..."): with 20
    cheaper spot options the launch keeps the 15 cheapest, cheapest first."""
    cheap = [itype(f"c{i:02d}", 0.5, cpu="2", memory="4Gi", spot_price=0.01 * (i + 1)) for i in range(20)]
    items = [*managed("n1", BIG, ct="spot"), pod("p1", "n1", cpu="500m")]
    r = run([POOL], items, [BIG, *cheap], gates="SpotToSpotConsolidation=true")
    rep = r.commands[0].replacements[0]
    assert rep["instanceTypes"] == [f"c{i:02d}" for i in range(15)]
    assert rep["capacityType"] == "spot"


def test_wont_replace_if_any_spot_replacement_is_more_expensive() -> None:
    """Context("Replace") It("won't replace node if any spot replacement is more expensive"): the
    worst-case spot price (1.0) is not below the candidate's 0.5."""
    current = new_instance_type(
        "current-on-demand",
        offerings=(Offering(zone="test-zone-1", capacity_type="on-demand", price=0.5, available=False),),
    )
    replacement = new_instance_type(
        "potential-spot-replacement",
        offerings=(
            Offering(zone="test-zone-1", capacity_type="spot", price=1.0),
            Offering(zone="test-zone-2", capacity_type="spot", price=0.2),
            Offering(zone="test-zone-3", capacity_type="spot", price=0.4),
        ),
    )
    items = [*managed("n1", current), pod("p1", "n1", cpu="500m")]
    r = run([POOL], items, [current, replacement])
    assert r.commands == ()
    assert r.unconsolidatable[0].message == "Can't replace with a cheaper node"


def test_can_delete_nodes() -> None:
    """Context("Delete") It("can delete nodes"): the pods of one node fit on the other."""
    items = [*managed("n1", BIG), *managed("n2", BIG), pod("p1", "n1"), pod("p2", "n2")]
    r = run([OD_POOL], items, TYPES)
    assert r.commands[0].decision == "delete"
    assert sum(len(c) for c in disrupted(r)) == 1


def test_delete_considers_pdb() -> None:
    """Context("Delete") It("can delete nodes, considers PDB"): the node whose pod a PDB blocks is
    no candidate; its blocking text is Karpenter's."""
    items = [
        *managed("n1", BIG),
        *managed("n2", BIG),
        pod("p1", "n1", labels={"app": "a"}),
        pod("p2", "n2", labels={"app": "b"}),
        builders.pdb("pdb-a", match_labels={"app": "a"}, disruptions_allowed=0),
    ]
    r = run([POOL], items, TYPES)
    assert disrupted(r) == [["n2"]]
    assert r.blocked[0].as_dict() == {
        "node": "n1",
        "nodeClaim": "n1-claim",
        "reason": "Pdb prevents pod evictions (PodDisruptionBudget=[default/pdb-a])",
    }


def test_delete_considers_do_not_disrupt_on_pods() -> None:
    """Context("Delete") It("can delete nodes, considers karpenter.sh/do-not-disrupt set to true on
    pods")."""
    items = [
        *managed("n1", BIG),
        *managed("n2", BIG),
        pod("p1", "n1", annotations={"karpenter.sh/do-not-disrupt": "true"}),
        pod("p2", "n2"),
    ]
    r = run([POOL], items, TYPES)
    assert disrupted(r) == [["n2"]]
    assert r.blocked[0].reason == 'Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/p1)'


def test_duration_do_not_disrupt() -> None:
    """Context("Delete") It("does not consolidate nodes with pods that have a duration-based
    do-not-disrupt annotation that is still active") and It("can consolidate nodes after
    duration-based do-not-disrupt annotation expires"); It("can delete nodes, considers invalid
    do-not-disrupt annotation format as not blocking")."""
    started = (AT - timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for value, blocks in (("1h", True), ("10m", False), ("not-a-duration", False)):
        items = [
            *managed("n1", BIG),
            *managed("n2", BIG),
            pod("p1", "n1", annotations={"karpenter.sh/do-not-disrupt": value}, start_time=started),
            pod("p2", "n2", cpu="2"),
        ]
        r = run([POOL], items, TYPES)
        nodes = {n for c in disrupted(r) for n in c}
        assert ("n1" not in nodes) == blocks, value


def test_terminationgraceperiod_does_not_lift_blocks_for_consolidation() -> None:
    """Context("Delete") It("does not consolidate nodes with pods with blocking PDBs when the
    NodePool's TerminationGracePeriod is not nil"): consolidation is graceful."""
    items = [
        *managed("n1", BIG, termination_grace_period="1h"),
        pod("p1", "n1", labels={"app": "a"}),
        builders.pdb("pdb-a", match_labels={"app": "a"}),
    ]
    assert run([POOL], items, TYPES).commands == ()


def test_wont_delete_onto_uninitialized_node() -> None:
    """Context("Delete") It("won't delete node if it would require pods to schedule on an
    uninitialized node")."""
    items = [*managed("n1", BIG), *managed("n2", BIG, initialized=False), pod("p1", "n1", cpu="7")]
    r = run([POOL], items, [BIG])
    assert r.commands == ()
    msg = r.unconsolidatable[0].message
    assert (
        msg.startswith("Not all pods would schedule")
        and "would schedule against uninitialized nodeclaim/n2-claim" in msg
    )


def test_wont_delete_if_non_pending_pod_goes_pending() -> None:
    """Context("Delete") It("won't delete nodes if it would make a non-pending pod go pending"):
    nothing in the catalog holds the pod elsewhere."""
    items = [*managed("n1", BIG), pod("p1", "n1", cpu="7")]
    r = run([nodepool(budgets=[{"nodes": "100%"}], capacity_types=("on-demand",))], items, [BIG])
    assert r.commands == ()
    assert r.unconsolidatable[0].message == "Can't replace with a cheaper node"


def test_can_delete_with_permanently_pending_pod() -> None:
    """Context("Delete") It("can delete nodes with a permanently pending pod"): a pod that can never
    schedule does not block consolidation."""
    items = [
        *managed("n1", BIG),
        *managed("n2", BIG),
        pod("p1", "n1"),
        pod("p2", "n2"),
        pod("huge", None, cpu="100"),
    ]
    r = run([OD_POOL], items, TYPES)
    assert r.commands and r.commands[0].decision == "delete"


def test_multi_node_merges_into_one() -> None:
    """Context("Multi-NodeClaim") It("can merge 3 nodes into 1"): three dear nodes with small pods
    become one cheaper node."""
    mid = itype("mid", 0.5, cpu="4", memory="8Gi")
    items = [
        *[x for i in range(3) for x in managed(f"n{i}", BIG)],
        *[pod(f"p{i}", f"n{i}", cpu="1") for i in range(3)],
    ]
    r = run([nodepool(budgets=[{"nodes": "100%"}], capacity_types=("on-demand",))], items, [BIG, mid])
    assert methods(r)[0] == "multi-node-consolidation"
    cmd = r.commands[0]
    assert len(cmd.candidates) == 3 and cmd.decision == "replace"
    assert cmd.replacements[0]["instanceTypes"] == ["mid"]


def test_multi_node_budget_limits_batch() -> None:
    """Context("Budgets") It("should only allow 3 nodes to be deleted in multi node consolidation
    delete"): 10 underutilized nodes, budget 30%: one command of at most 3."""
    items = [
        *[x for i in range(10) for x in managed(f"n{i}", BIG)],
        *[pod(f"p{i}", f"n{i}", cpu="100m") for i in range(10)],
    ]
    r = run([nodepool(budgets=[{"nodes": "30%"}])], items, TYPES)
    assert len(r.commands[0].candidates) <= 3
    assert r.commands[0].method == "multi-node-consolidation"


def test_no_nodes_when_budget_is_zero() -> None:
    """Context("Budgets") It("should allow no nodes from each nodePool to be deleted"); the pool
    shows in blockedNodePools."""
    items = [*managed("n1", BIG), *managed("n2", BIG), pod("p1", "n1"), pod("p2", "n2")]
    r = run([nodepool(budgets=[{"nodes": "0"}])], items, TYPES)
    assert r.commands == ()
    assert [b.as_dict() for b in r.blocked_pools] == [
        {"nodePool": "default", "reason": "Underutilized", "allowed": 0, "disrupting": 0}
    ]


def test_events_consolidation_disabled_and_labels() -> None:
    """Context("Events"): It("should fire an event for ConsolidationDisabled when the NodePool has
    consolidateAfter set to 'Never'"), It("should fire an event when a candidate does not have a
    resolvable instance type")."""
    r = run([nodepool(after="Never")], [*managed("n1", BIG), pod("p1", "n1")], TYPES)
    assert r.unconsolidatable[0].message == 'NodePool "default" has consolidation disabled'
    r = run([POOL], [*managed("n1", BIG), pod("p1", "n1")], [SMALL])
    assert r.unconsolidatable[0].message == 'Instance Type "big" not found'


def test_until_quiet_reaches_steady_state() -> None:
    """The sequence: with --until-quiet each command completes; the pods end on the fewest,
    cheapest nodes and the summary carries the total savings."""
    items = [
        *[x for i in range(4) for x in managed(f"n{i}", BIG)],
        *[pod(f"p{i}", f"n{i}", cpu="500m") for i in range(4)],
    ]
    pool = nodepool(budgets=[{"nodes": "100%"}], capacity_types=("on-demand",))
    r = run([pool], items, TYPES, until_quiet=True)
    assert r.stopped == "quiet"
    assert r.hourly_cost_after < r.hourly_cost_before
    # three nodes go at once; the four half-cpu pods (2 cpu) do not fit a small node (1.9 allocatable)
    assert sum(len(c) for c in disrupted(r)) == 3 and r.hourly_cost_after == 1.0
    assert r.unconsolidatable[0].message == "Can't replace with a cheaper node"


def test_nothing_completes_without_until_quiet() -> None:
    """Without --until-quiet the candidates stay marked for deletion and consume the budget:
    with a budget of 1 only one command is forecast."""
    items = [
        *[x for i in range(4) for x in managed(f"n{i}", BIG)],
        *[pod(f"p{i}", f"n{i}", cpu="500m") for i in range(4)],
    ]
    r = run([nodepool(budgets=[{"nodes": "1"}])], items, TYPES)
    assert len(r.commands) == 1
    assert r.blocked_pools and r.blocked_pools[0].disrupting == 1


def test_best_savings_ratio_first() -> None:
    """Context("Node Lifetime Consideration") It("should consolidate the node with best savings
    ratio first"): same price, the node with fewer pods (lower reschedule cost) goes first."""
    items = [
        *managed("n0", BIG),
        *managed("n1", BIG),
        pod("p0", "n0", cpu="100m"),
        pod("p1", "n0", cpu="100m"),
        pod("p2", "n1", cpu="100m"),
    ]
    r = run([nodepool(budgets=[{"nodes": "1"}], capacity_types=("on-demand",))], items, [BIG])
    assert disrupted(r) == [["n1"]]


def test_wont_delete_if_it_violates_anti_affinity() -> None:
    """Context("Topology Consideration") It("won't delete node if it would violate pod
    anti-affinity"): pods that must not share a node keep their nodes."""
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
    items = [
        *managed("n0", BIG),
        *managed("n1", BIG),
        pod("db-0", "n0", labels={"app": "db"}, affinity=anti),
        pod("db-1", "n1", labels={"app": "db"}, affinity=anti),
    ]
    r = run([nodepool(budgets=[{"nodes": "100%"}], capacity_types=("on-demand",))], items, TYPES)
    # neither node can be deleted onto the other; each may only be replaced by a cheaper one
    assert r.commands and all(c.decision == "replace" and len(c.candidates) == 1 for c in r.commands)
    assert all(c.replacements[0]["instanceTypes"] == ["small"] for c in r.commands)
