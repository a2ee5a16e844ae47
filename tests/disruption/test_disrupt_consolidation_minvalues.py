"""Consolidation under minValues and reserved capacity, ported from kubernetes-sigs/karpenter v1.14.1
``pkg/controllers/disruption/consolidation_test.go`` (Context "Replace", "Reserved Capacity"); each
test names its Context and ``It``. SpotToSpotConsolidation is on, as upstream's BeforeEach sets it.
"""

from __future__ import annotations

from typing import Any

import pytest
from disrupt_support import IT, disrupted, managed, nodepool, pod, run

from nodewright import labels
from nodewright.catalog.fake import new_instance_type
from nodewright.catalog.model import InstanceType, Offering

S2S = "SpotToSpotConsolidation=true"


def _types_min_values(n: int) -> list[dict[str, Any]]:
    return [{"key": IT, "operator": "Exists", "minValues": n}]


def _eighteen_spot() -> list[InstanceType]:
    """18 spot types priced 1.0, 1.1, ... except t16, the cheapest at 0.001; t17 is the dearest."""
    prices = [1.0 + 0.1 * i for i in range(18)]
    prices[16] = 0.001
    return [
        new_instance_type(
            f"t{i:02d}", offerings=(Offering(zone="test-zone-1", capacity_type="spot", price=p),)
        )
        for i, p in enumerate(prices)
    ]


def test_spot_to_spot_truncates_to_min_values_above_fifteen() -> None:
    """Context("Replace") It("spot to spot consolidation should consider the max of default and
    minimum number of instanceTypeOptions from minValues in requirement for truncation if minimum
    number of instanceTypeOptions from minValues in requirement is greater than 15."): minValues 16
    keeps the 16 cheapest, including the cheap type listed 17th, never the candidate's."""
    types = _eighteen_spot()
    pool = nodepool(budgets=[{"nodes": "100%"}], capacity_types=("spot",), requirements=_types_min_values(16))
    r = run([pool], [*managed("n1", types[17], ct="spot"), pod("p1", "n1", cpu="100m")], types, gates=S2S)
    rep = r.commands[0].replacements[0]
    expected = sorted(types[:17], key=lambda t: t.offerings[0].price)[:16]
    assert rep["instanceTypes"] == [t.name for t in expected]
    assert "t16" in rep["instanceTypes"] and "t17" not in rep["instanceTypes"]


def test_spot_to_spot_truncates_to_fifteen_when_min_values_below() -> None:
    """Context("Replace") It("spot to spot consolidation should consider the default for truncation
    if minimum number of instanceTypeOptions from minValues in requirement is less than 15."):
    minValues 10 still keeps 15."""
    types = _eighteen_spot()
    pool = nodepool(budgets=[{"nodes": "100%"}], capacity_types=("spot",), requirements=_types_min_values(10))
    r = run([pool], [*managed("n1", types[17], ct="spot"), pod("p1", "n1", cpu="100m")], types, gates=S2S)
    rep = r.commands[0].replacements[0]
    assert len(rep["instanceTypes"]) == 15 and rep["instanceTypes"][0] == "t16"


@pytest.mark.parametrize("ct", ["on-demand", "spot"])
def test_filter_by_price_breaking_min_values_fails(ct: str) -> None:
    """Context("Replace") DescribeTable("Consolidation should fail if filterByPrice breaks the minimum
    requirement from the NodePools."): the candidate is the dearest of 16 types, so 15 are cheaper,
    but minValues asks for 16 instance types: no command, the node stays."""
    types = [
        new_instance_type(
            f"t{i:02d}", offerings=(Offering(zone="test-zone-1", capacity_type=ct, price=1.0 + 0.1 * i),)
        )
        for i in range(16)
    ]
    pool = nodepool(budgets=[{"nodes": "100%"}], capacity_types=(ct,), requirements=_types_min_values(16))
    r = run([pool], [*managed("n1", types[15], ct=ct), pod("p1", "n1", cpu="100m")], types, gates=S2S)
    assert r.commands == ()
    assert r.unconsolidatable[0].message.startswith("Filtering by price: ")


def test_failing_filter_out_same_instance_type_with_min_values() -> None:
    """Context("Replace") It("should handle failing filterOutSameInstanceType correctly (without a
    panic) when minValues isn't satisfied"): merging the two half-full nodes leaves one cheaper type
    against minValues 2, so multi-node gives up and single-node deletes one of them onto the other."""

    def one(name: str, price: float) -> InstanceType:
        offer = Offering(zone="test-zone-1a", capacity_type="on-demand", price=price)
        return new_instance_type(name, resources={"cpu": "5"}, offerings=(offer,))

    current, other = one("current-on-demand", 0.5), one("other-on-demand", 0.4)
    pool = nodepool(
        budgets=[{"nodes": "100%"}], capacity_types=("on-demand",), requirements=_types_min_values(2)
    )
    items = [
        *[x for i in range(3) for x in managed(f"n{i}", current, zone="test-zone-1a")],
        pod("p0", "n0", cpu="2"),
        pod("p1", "n1", cpu="2"),
        pod("p2", "n2", cpu="2"),
        pod("p3", "n2", cpu="2"),
    ]
    r = run([pool], items, [current, other])
    assert [(c.method, c.decision) for c in r.commands] == [("single-node-consolidation", "delete")]
    assert disrupted(r)[0][0] in {"n0", "n1"}


# -- Reserved Capacity -----------------------------------------------------------------------------
def _reservable(name: str, price: float, rid: str) -> InstanceType:
    return new_instance_type(
        name,
        offerings=(
            Offering(zone="test-zone-1", capacity_type="on-demand", price=price),
            Offering(zone="test-zone-1", capacity_type="spot", price=price * 0.6),
            Offering(
                zone="test-zone-1",
                capacity_type="reserved",
                price=price / 1_000_000.0,
                reservation_id=rid,
                reservation_capacity=10,
            ),
        ),
    )


def _reserved_node(name: str, it: InstanceType, ct: str, rid: str | None) -> list[dict[str, Any]]:
    items = managed(name, it, ct=ct)
    if rid is not None:
        for obj in items:
            obj["metadata"]["labels"][labels.CAPACITY_RESERVATION_ID] = rid
    return items


def test_consolidate_from_one_reserved_offering_to_another() -> None:
    """Context("Reserved Capacity") It("can consolidate from one reserved offering to another"): the
    dear type's reserved node moves to the cheap type's reservation."""
    dear, cheap = _reservable("dear", 2.0, "r-dear"), _reservable("cheap", 0.5, "r-cheap")
    pool = nodepool(budgets=[{"nodes": "100%"}], capacity_types=("on-demand", "spot", "reserved"))
    items = [*_reserved_node("n1", dear, "reserved", "r-dear"), pod("p1", "n1", cpu="100m")]
    r = run([pool], items, [dear, cheap], gates=S2S)
    assert [c.decision for c in r.commands] == ["replace"]
    launch = r.commands[0].replacements[0]["launch"]
    assert (launch["instanceType"], launch["capacityType"]) == ("cheap", "reserved")


@pytest.mark.parametrize("ct", ["on-demand", "spot"])
def test_consolidate_into_reserved_capacity_of_the_same_type(ct: str) -> None:
    """Context("Reserved Capacity") DescribeTable("can consolidate into reserved capacity for the same
    instance pool") Entry("from on-demand") and Entry("from spot"): the node's own type is offered
    reserved for almost nothing, so it is replaced by the same type, reserved."""
    dear = _reservable("dear", 2.0, "r-dear")
    pool = nodepool(budgets=[{"nodes": "100%"}], capacity_types=("on-demand", "spot", "reserved"))
    items = [*_reserved_node("n1", dear, ct, None), pod("p1", "n1", cpu="100m")]
    r = run([pool], items, [dear], gates=S2S)
    assert [c.decision for c in r.commands] == ["replace"]
    launch = r.commands[0].replacements[0]["launch"]
    assert (launch["instanceType"], launch["capacityType"]) == ("dear", "reserved")
