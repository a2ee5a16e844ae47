"""More of consolidation's Replace and Events contexts, ported from kubernetes-sigs/karpenter v1.14.1
``pkg/controllers/disruption/consolidation_test.go``; each test names its Context and ``It``.

Upstream's DescribeTables over on-demand and spot candidates run here on both capacity types where
the decision does not depend on SpotToSpotConsolidation (upstream's BeforeEach turns the gate on;
so do these tests). Events are asserted through the forecast's ``unconsolidatable`` texts, which are
the messages of Karpenter's Unconsolidatable events.
"""

from __future__ import annotations

from typing import Any

import builders
import pytest
from disrupt_support import CT, IT, ZONE, disrupted, itype, managed, nodepool, pod, run

from nodewright.catalog.fake import new_instance_type
from nodewright.catalog.model import Offering

BIG = itype("big", 1.0, cpu="8", memory="16Gi", spot_price=0.5)
SMALL = itype("small", 0.25, cpu="2", memory="4Gi", spot_price=0.1)
# 15 more cheaper spot options so a spot candidate may be replaced by spot
CHEAP = [itype(f"c{i:02d}", 0.6, cpu="2", memory="4Gi", spot_price=0.2 + 0.001 * i) for i in range(15)]
TYPES = [BIG, SMALL, *CHEAP]
POOL = nodepool(budgets=[{"nodes": "100%"}])
S2S = "SpotToSpotConsolidation=true"
APP = {"app": "test"}


def _drop_label(items: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    for obj in items:
        del obj["metadata"]["labels"][key]
    return items


def test_no_event_when_policy_allows_consolidation() -> None:
    """Context("Events") It("should not fire an event for ConsolidationDisabled when the NodePool has
    consolidation set to WhenEmptyOrUnderutilized")."""
    r = run([POOL], managed("n1", BIG), TYPES, gates=S2S)
    assert r.unconsolidatable == ()


@pytest.mark.parametrize(("key", "text"), [(CT, CT), (ZONE, ZONE)])
def test_event_for_missing_capacity_type_or_zone_label(key: str, text: str) -> None:
    """Context("Events") It("should fire an event when a candidate does not have the capacity type
    label") and It("should fire an event when a candidate does not have the zone label")."""
    items = [*_drop_label(managed("n1", BIG), key), pod("p1", "n1")]
    r = run([POOL], items, TYPES, gates=S2S)
    assert r.commands == ()
    assert [u.message for u in r.unconsolidatable] == [f'Node does not have label "{text}"']


def test_event_for_unresolvable_instance_type() -> None:
    """Context("Events") It("should fire an event when a candidate does not have a resolvable
    instance type"): the instance-type label is removed from the node and its NodeClaim."""
    items = [*_drop_label(managed("n1", BIG), IT), pod("p1", "n1")]
    r = run([POOL], items, TYPES, gates=S2S)
    assert r.commands == ()
    assert [u.message for u in r.unconsolidatable] == ['Instance Type "" not found']


def test_wont_replace_on_demand_if_on_demand_replacement_is_dearer() -> None:
    """Context("Replace") It("won't replace on-demand node if on-demand replacement is more
    expensive"): the pool requires on-demand, the only other type costs 0.6 on demand."""
    current = new_instance_type(
        "current-on-demand",
        offerings=(Offering(zone="test-zone-1a", capacity_type="on-demand", price=0.5, available=False),),
    )
    replacement = new_instance_type(
        "on-demand-replacement",
        offerings=(
            Offering(zone="test-zone-1a", capacity_type="on-demand", price=0.6),
            Offering(zone="test-zone-1b", capacity_type="on-demand", price=0.6),
            Offering(zone="test-zone-1b", capacity_type="spot", price=0.2),
            Offering(zone="test-zone-1c", capacity_type="spot", price=0.3),
        ),
    )
    pool = nodepool(budgets=[{"nodes": "100%"}], capacity_types=("on-demand",))
    items = [*managed("n1", current, zone="test-zone-1a"), pod("p1", "n1", cpu="500m")]
    r = run([pool], items, [current, replacement], gates=S2S)
    assert r.commands == ()
    assert r.unconsolidatable[0].message == "Can't replace with a cheaper node"


def test_spot_cannot_replace_spot_in_the_fifteen_cheapest() -> None:
    """Context("Replace") It("cannot replace spot with spot if it is part of the 15 cheapest instance
    types."): the candidate is the second cheapest spot type of 20, one option is cheaper."""
    types = [itype(f"t{i:02d}", 1.0, cpu="4", memory="8Gi", spot_price=0.001 + 0.01 * i) for i in range(20)]
    items = [*managed("n1", types[1], ct="spot"), pod("p1", "n1", cpu="500m")]
    r = run([POOL], items, types, gates=S2S)
    assert r.commands == ()
    assert r.unconsolidatable[0].message.endswith("to consolidate, got 1")


def test_spot_to_spot_orders_types_by_price_before_truncating() -> None:
    """Context("Replace") It("spot to spot consolidation should order the instance types by price
    before enforcing minimum flexibility."): the catalog comes dearest first; the launch keeps the 15
    cheapest, cheapest first."""
    cheap = [itype(f"c{i:02d}", 0.6, cpu="2", memory="4Gi", spot_price=0.3 - 0.01 * i) for i in range(20)]
    items = [*managed("n1", BIG, ct="spot"), pod("p1", "n1", cpu="500m")]
    r = run([POOL], items, [BIG, *cheap], gates=S2S)
    rep = r.commands[0].replacements[0]
    assert rep["instanceTypes"] == [f"c{i:02d}" for i in range(19, 4, -1)]
    assert rep["launch"]["instanceType"] == "c19"


@pytest.mark.parametrize("ct", ["on-demand", "spot"])
def test_replace_when_another_nodepool_has_no_instance_types(ct: str) -> None:
    """Context("Replace") DescribeTable("can replace nodes if another nodePool returns no instance
    types"): a second pool that no type satisfies does not stop the replacement."""
    empty = nodepool("empty", requirements=[{"key": IT, "operator": "In", "values": ["nonexistent"]}])
    items = [*managed("n1", BIG, ct=ct), pod("p1", "n1", cpu="500m")]
    r = run([POOL, empty], items, TYPES, gates=S2S)
    assert [(c.method, c.decision) for c in r.commands] == [("single-node-consolidation", "replace")]


@pytest.mark.parametrize("ct", ["on-demand", "spot"])
def test_replace_considers_pdb(ct: str) -> None:
    """Context("Replace") DescribeTable("can replace nodes, considers PDB"): a PDB allowing no
    disruption of the node's pod keeps it."""
    items = [
        *managed("n1", BIG, ct=ct),
        pod("p1", "n1", cpu="500m", labels=APP),
        builders.pdb("pdb", match_labels=APP, max_unavailable=0),
    ]
    r = run([POOL], items, TYPES, gates=S2S)
    assert r.commands == ()
    assert r.blocked[0].reason == "Pdb prevents pod evictions (PodDisruptionBudget=[default/pdb])"


@pytest.mark.parametrize("ct", ["on-demand", "spot"])
def test_replace_considers_pdb_policy(ct: str) -> None:
    """Context("Replace") DescribeTable("can replace nodes, considers PDB policy"): with
    unhealthyPodEvictionPolicy AlwaysAllow, a PDB allowing no disruption does not block unready
    pods."""
    pods = [pod(f"p{i}", "n1", cpu="500m", labels=APP) for i in range(3)]
    for p in pods:
        p["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    items = [
        *managed("n1", BIG, ct=ct),
        *pods,
        builders.pdb("pdb", match_labels=APP, max_unavailable=0, unhealthy_pod_eviction_policy="AlwaysAllow"),
    ]
    r = run([POOL], items, TYPES, gates=S2S)
    assert [c.decision for c in r.commands] == ["replace"]


@pytest.mark.parametrize("ct", ["on-demand", "spot"])
def test_replace_pdb_namespace_must_match(ct: str) -> None:
    """Context("Replace") DescribeTable("can replace nodes, PDB namespace must match"): a blocking
    PDB of another namespace does not select the pod."""
    items = [
        *managed("n1", BIG, ct=ct),
        pod("p1", "n1", cpu="500m", labels=APP),
        builders.pdb("pdb", match_labels=APP, max_unavailable=0, namespace="other"),
    ]
    r = run([POOL], items, TYPES, gates=S2S)
    assert [c.decision for c in r.commands] == ["replace"]


@pytest.mark.parametrize("ct", ["on-demand", "spot"])
def test_replace_considers_do_not_disrupt_on_nodes(ct: str) -> None:
    """Context("Replace") DescribeTable("can replace nodes, considers karpenter.sh/do-not-disrupt set
    to true on nodes"): of two dear nodes, only the one without the annotation is replaced."""
    dnd = {"karpenter.sh/do-not-disrupt": "true"}
    items = [
        *managed("n1", BIG, ct=ct),
        *managed("n2", BIG, ct=ct, node_annotations=dnd),
        pod("p1", "n1", cpu="500m"),
        pod("p2", "n2", cpu="500m"),
    ]
    r = run([POOL], items, TYPES, gates=S2S)
    assert "n2" not in {n for c in disrupted(r) for n in c} and r.commands
    assert r.blocked[0].node == "n2"


@pytest.mark.parametrize("ct", ["on-demand", "spot"])
def test_replace_considers_do_not_disrupt_on_pods(ct: str) -> None:
    """Context("Replace") DescribeTable("can replace nodes, considers karpenter.sh/do-not-disrupt set
    to true on pods"): the node running the annotated pod is neither replaced nor deleted."""
    dnd = {"karpenter.sh/do-not-disrupt": "true"}
    items = [
        *managed("n1", BIG, ct=ct),
        *managed("n2", BIG, ct=ct),
        pod("p1", "n1", cpu="500m"),
        pod("p2", "n2", cpu="500m", annotations=dnd),
    ]
    r = run([POOL], items, TYPES, gates=S2S)
    assert "n2" not in {n for c in disrupted(r) for n in c} and r.commands
    assert r.blocked[0].reason == 'Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/p2)'


def test_replace_when_ignoring_preferences() -> None:
    """Context("Preferences") It("should consolidate a node through replacement when ignoring
    preferences"): the pod prefers the dear type; with preferencePolicy Ignore the replacement does
    not offer it."""
    pref = [(1, [{"key": IT, "operator": "In", "values": ["big"]}])]
    items = [*managed("n1", BIG), pod("p1", "n1", cpu="500m", preferred=pref)]
    pool = nodepool(budgets=[{"nodes": "100%"}], capacity_types=("on-demand",))
    from nodewright.settings import resolve

    r = run([pool], items, TYPES, settings=resolve(flags={"preference_policy": "Ignore"}))
    assert [c.decision for c in r.commands] == ["replace"]
    assert "big" not in r.commands[0].replacements[0]["instanceTypes"]
