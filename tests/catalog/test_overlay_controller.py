"""Port of kubernetes-sigs/karpenter v1.14.1 ``pkg/controllers/nodeoverlay/suite_test.go`` (and
``store_test.go``): the NodeOverlay controller's conditions and the instance types read through
its store. ``reconcile`` = ``ExpectReconciled`` + ``store.ApplyAll``; the cloud provider is
Karpenter's fake (:mod:`nodewright.catalog.fake`). Each test names the upstream It / DescribeTable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import builders
import pytest

from nodewright import labels
from nodewright.api.karpenter import NodePool
from nodewright.api.nodeoverlay import NodeOverlay
from nodewright.catalog.fake import default_instance_types, new_instance_type
from nodewright.catalog.model import InstanceType, Offering
from nodewright.catalog.overlay import adjusted_price, apply_all, evaluate
from nodewright.catalog.overlay.store import OverlayStore, UnevaluatedNodePoolError, apply_one

IT = labels.INSTANCE_TYPE
LONG_KEY = f"test.com.test/test-{'a' * 250}"


def ov(name: str, *reqs: Mapping[str, Any], weight: int | None = 10, **spec: Any) -> NodeOverlay:
    body: dict[str, Any] = {"requirements": [dict(r) for r in reqs], **spec}
    if weight is not None:
        body["weight"] = weight
    return NodeOverlay.model_validate(
        {
            "apiVersion": "karpenter.sh/v1alpha1",
            "kind": "NodeOverlay",
            "metadata": {"name": name},
            "spec": body,
        }
    )


def req(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": op, "values": list(values)}


def pool(name: str, **kw: Any) -> NodePool:
    return NodePool.model_validate(builders.nodepool(name, **kw))


def offer(ct: str, zone: str, price: float) -> Offering:
    return Offering(zone=zone, capacity_type=ct, price=price)


def one_type(*offerings: Offering, name: str = "default-instance-type") -> InstanceType:
    return new_instance_type(name, offerings=offerings or (offer("spot", "test-zone-1", 1.020),))


def reconcile(
    overlays: Sequence[NodeOverlay],
    types: Sequence[InstanceType] | None = None,
    pools: Sequence[NodePool] = (),
) -> OverlayStore:
    pools = pools or [pool("default")]
    its = list(types) if types is not None else [one_type()]
    return evaluate(overlays, pools, {p.name: its for p in pools})


def cond(store: OverlayStore, name: str) -> tuple[bool, str]:
    c = store.condition(name)
    assert c is not None
    return c.succeeded, c.reason


def price_of(it: InstanceType, *, zone: str | None = None, ct: str | None = None) -> float:
    found = [o for o in it.offerings if zone in (None, o.zone) and ct in (None, o.capacity_type)]
    assert len(found) == 1
    return found[0].price


PRICE_A_B = [
    pytest.param({"price": "1.03"}, {"price": "23"}, id="Price"),
    pytest.param({"priceAdjustment": "+54"}, {"priceAdjustment": "-2"}, id="PriceAdjustment"),
]
ONE_CHANGE = [
    pytest.param({"price": "13234.223"}, 13234.223, id="Price"),
    pytest.param({"priceAdjustment": "+1000"}, 1001.020, id="PriceAdjustment"),
]


# -- Describe("Validation") --------------------------------------------------------------------


def test_same_instance_type_when_zero_overlays_are_applied() -> None:
    """It("should return the same instance type when zero overlay are applied")"""
    store = reconcile([])
    its = apply_all(store, "default", [one_type()])
    assert len(its) == 1 and its[0].offerings[0].price == 1.020


def test_should_pass_with_a_single_overlay() -> None:
    """It("should pass with a single overlay")"""
    store = reconcile([ov("o", req(IT, "In", "default-instance-type"))])
    assert cond(store, "o") == (True, "")


def test_should_fail_validation_for_invalid_requirements_values() -> None:
    """Context("Runtime Validation") It("should fail validation for invalid requirements values")"""
    store = reconcile([ov("o", {"key": LONG_KEY, "operator": "Exists"})])
    assert cond(store, "o") == (False, "RuntimeValidation")


def test_should_fail_validation_for_invalid_capacity_values() -> None:
    """Context("Runtime Validation") It("should fail validation for invalid capacity values"):
    upstream adds a test resource to WellKnownResources; here a well-known one (cpu) that an
    overlay read from a cluster without the CRD check could still carry."""
    store = reconcile([ov("o", req(IT, "In", "default-instance-type"), capacity={"cpu": "5"})])
    assert cond(store, "o") == (False, "RuntimeValidation")


def test_should_fail_when_requirements_overlays_overlap() -> None:
    """Describe("Instance types Requirements") It("should fail when requirements overlays overlap")"""
    store = reconcile(
        [
            ov("overlay-a", req(labels.ARCH, "In", "arm64"), price="1.03"),
            ov("overlay-b", {"key": labels.CAPACITY_TYPE, "operator": "Exists"}, price="23"),
        ],
        default_instance_types(),
    )
    assert cond(store, "overlay-a") == (False, "Conflict")
    assert cond(store, "overlay-b") == (True, "")


def test_should_succeed_with_requirements_overlays_that_dont_overlap() -> None:
    """Describe("Instance types Requirements") It("should succeed with requirements overlays don't overlap")"""
    types = [
        new_instance_type(
            "arm-instance-type", architecture="arm64", operating_systems=("linux", "windows", "darwin")
        ),
        new_instance_type("amd-instance-type", architecture="amd64", operating_systems=("ios",)),
    ]
    store = reconcile(
        [
            ov("overlay-a", req(labels.ARCH, "In", "arm64"), price="1.03"),
            ov("overlay-b", req(labels.OS, "In", "ios"), price="23"),
        ],
        types,
    )
    assert cond(store, "overlay-a") == (True, "")
    assert cond(store, "overlay-b") == (True, "")


FOUR_OFFERINGS = (
    offer("spot", "test-zone-1", 1.020),
    offer("on-demand", "test-zone-2", 2.020),
    offer("spot", "test-zone-3", 3.020),
    offer("reserved", "test-zone-4", 4.020),
)


EXISTS_CT = {"key": labels.CAPACITY_TYPE, "operator": "Exists"}


@pytest.mark.parametrize(
    ("a", "b", "conflict"),
    [
        # It("should fail with requirements overlays overlap on zone")
        (req(labels.ZONE, "In", "test-zone-1", "test-zone-4"), EXISTS_CT, True),
        # It("should fail with requirements overlays overlap on capacity type")
        (EXISTS_CT, req(labels.CAPACITY_TYPE, "In", "spot"), True),
        # It("should succeed with requirements overlays don't overlap")
        (
            req(labels.ZONE, "In", "test-zone-6", "test-zone-4"),
            req(labels.CAPACITY_TYPE, "In", "spot"),
            False,
        ),
        # It("should fail with requirements overlays overlap")
        (req(labels.ZONE, "In", "test-zone-1", "test-zone-4"), req(labels.CAPACITY_TYPE, "In", "spot"), True),
    ],
)
def test_offering_requirements(a: dict[str, Any], b: dict[str, Any], conflict: bool) -> None:
    """Describe("Offering Requirements"): the Its named in the comments."""
    store = reconcile(
        [ov("overlay-a", a, price="1.03"), ov("overlay-b", b, price="23")], [one_type(*FOUR_OFFERINGS)]
    )
    assert cond(store, "overlay-a") == ((False, "Conflict") if conflict else (True, ""))
    assert cond(store, "overlay-b") == (True, "")


# -- Context("Pricing Updates") ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("change_a", "change_b"),
    [*PRICE_A_B, pytest.param({"price": "100"}, {"price": "100"}, id="same-Price")],
)
def test_conflicting_pricing_updates_with_overlapping_requirements(
    change_a: dict[str, str], change_b: dict[str, str]
) -> None:
    """DescribeTable("should fail with conflicting pricing updates overlays with overlapping
    requirements") and DescribeTable("should fail with pricing updates are the same overlays with
    overlapping requirements")"""
    store = reconcile(
        [
            ov("overlay-a", req(IT, "In", "default-instance-type", "small-instance-type"), **change_a),
            ov("overlay-b", req(IT, "In", "default-instance-type", "gpu-vendor-instance-type"), **change_b),
        ]
    )
    assert cond(store, "overlay-a") == (False, "Conflict")
    assert cond(store, "overlay-b") == (True, "")


@pytest.mark.parametrize(("change_a", "change_b"), PRICE_A_B)
def test_pricing_updates_with_mutually_exclusive_requirements_or_weights(
    change_a: dict[str, str], change_b: dict[str, str]
) -> None:
    """DescribeTable("should pass with conflicting pricing updates overlays with mutually exclusive
    requirements") and DescribeTable("should pass with conflicting pricing update overlays with
    mutually exclusive weights")"""
    store = reconcile(
        [
            ov("overlay-a", req(IT, "In", "default-instance-type"), **change_a),
            ov("overlay-b", req(IT, "NotIn", "default-instance-type"), **change_b),
        ]
    )
    assert store.succeeded() == ["overlay-a", "overlay-b"]
    store = reconcile(
        [
            ov("overlay-a", req(IT, "In", "default-instance-type"), **change_a),
            ov(
                "overlay-b",
                req(IT, "In", "default-instance-type", "gpu-vendor-instance-type"),
                weight=20,
                **change_b,
            ),
        ]
    )
    assert store.succeeded() == ["overlay-a", "overlay-b"]


# -- Context("Capacity Adjustment") ------------------------------------------------------------


def test_conflicting_capacity_overlays_with_overlapping_requirements() -> None:
    """It("should fail with conflicting capacity overlays with overlapping requirements") and
    It("should pass with capacity adjustment are the same overlays with overlapping requirements")
    (whose expectation is also a Conflict)"""
    for a_value in ("1", "54"):
        store = reconcile(
            [
                ov(
                    "overlay-a",
                    req(IT, "In", "default-instance-type", "small-instance-type"),
                    capacity={"smarter-devices/fuse": a_value},
                ),
                ov(
                    "overlay-b",
                    req(IT, "In", "default-instance-type", "gpu-vendor-instance-type"),
                    capacity={"smarter-devices/fuse": "54"},
                ),
            ]
        )
        assert cond(store, "overlay-a") == (False, "Conflict")
        assert cond(store, "overlay-b") == (True, "")


def test_conflicting_capacity_overlays_with_multiple_overlays() -> None:
    """It("should fail with conflicting capacity overlays with multiple overlays")"""
    store = reconcile(
        [
            ov(
                "conflicting-overlay-1",
                req(IT, "In", "default-instance-type", "small-instance-type"),
                capacity={"hugepage-1Gi": "2Gi"},
            ),
            ov(
                "good-overlay-1",
                req(IT, "In", "default-instance-type"),
                capacity={"smarter-devices/fuse": "1"},
            ),
            ov(
                "conflicting-overlay-2",
                req(IT, "In", "default-instance-type"),
                capacity={"hugepage-1Gi": "3Gi"},
            ),
        ]
    )
    assert cond(store, "conflicting-overlay-1") == (False, "Conflict")
    assert cond(store, "good-overlay-1") == (True, "")
    assert cond(store, "conflicting-overlay-2") == (True, "")


@pytest.mark.parametrize(
    ("b_req", "b_weight", "b_resource"),
    [
        # It("should pass with conflicting capacity overlays with mutually exclusive requirements")
        (req(IT, "NotIn", "default-instance-type"), 10, "smarter-devices/fuse"),
        # It("should pass with conflicting capacity overlays with mutually exclusive weights")
        (req(IT, "In", "default-instance-type", "gpu-vendor-instance-type"), 20, "smarter-devices/fuse"),
        # It("should pass with non conflicting capacity overlays with overlapping requirements")
        (req(IT, "In", "default-instance-type", "gpu-vendor-instance-type"), 20, "smarter-devices/buz"),
    ],
)
def test_capacity_overlays_that_pass(b_req: dict[str, Any], b_weight: int, b_resource: str) -> None:
    """Context("Capacity Adjustment"): the Its named in the comments."""
    store = reconcile(
        [
            ov("overlay-a", req(IT, "In", "default-instance-type"), capacity={"smarter-devices/fuse": "55"}),
            ov("overlay-b", b_req, weight=b_weight, capacity={b_resource: "5"}),
        ]
    )
    assert store.succeeded() == ["overlay-a", "overlay-b"]


# -- Describe("Instance Type Controller") ------------------------------------------------------


@pytest.mark.parametrize(("change", "expected"), ONE_CHANGE)
def test_pricing_only_for_the_nodepool_in_the_requirements(change: dict[str, str], expected: float) -> None:
    """DescribeTable("should pass with conflicting pricing update overlays with mutually exclusive weights")
    (Context "Price Updates"/"Requirements": an overlay selecting one NodePool by karpenter.sh/nodepool)"""
    pools = [pool("one"), pool("two")]
    store = reconcile([ov("o", req(labels.NODEPOOL, "In", "one"), **change)], pools=pools)
    assert apply_all(store, "one", [one_type()])[0].offerings[0].price == pytest.approx(expected)
    assert apply_all(store, "two", [one_type()])[0].offerings[0].price == 1.020


@pytest.mark.parametrize(
    ("a", "b", "one", "two"),
    [
        pytest.param({"price": "13234.223"}, {"price": "232.11"}, 13234.223, 232.11, id="Price"),
        pytest.param(
            {"priceAdjustment": "+1000"},
            {"priceAdjustment": "+2500"},
            1001.020,
            2501.020,
            id="PriceAdjustment",
        ),
    ],
)
def test_pricing_updates_for_all_nodepools(
    a: dict[str, str], b: dict[str, str], one: float, two: float
) -> None:
    """DescribeTable("should pass with conflicting pricing update overlays for all nodepools")"""
    pools = [pool("one"), pool("two")]
    store = reconcile(
        [
            ov("overlay-a", req(labels.NODEPOOL, "In", "one"), **a),
            ov("overlay-b", req(labels.NODEPOOL, "In", "two"), **b),
        ],
        pools=pools,
    )
    assert apply_all(store, "one", [one_type()])[0].offerings[0].price == pytest.approx(one)
    assert apply_all(store, "two", [one_type()])[0].offerings[0].price == pytest.approx(two)


@pytest.mark.parametrize(("change", "expected"), ONE_CHANGE)
def test_pricing_only_for_nodepool_template_labels_in_the_requirements(
    change: dict[str, str], expected: float
) -> None:
    """DescribeTable("should only apply pricing updates for nodeclaim spec labels that defined in
    the overlay requirements")"""
    pools = [pool("one"), pool("two", labels={"test-label": "test-value"})]
    store = reconcile([ov("o", req("test-label", "In", "test-value"), **change)], pools=pools)
    assert apply_all(store, "one", [one_type()])[0].offerings[0].price == 1.020
    assert apply_all(store, "two", [one_type()])[0].offerings[0].price == pytest.approx(expected)


@pytest.mark.parametrize(("change", "expected"), ONE_CHANGE)
def test_pricing_updates(change: dict[str, str], expected: float) -> None:
    """DescribeTable("should not apply pricing updates for invalid overlays"),
    DescribeTable("should not apply adjustments for overlays that do not overlap with instance types
    requirements") and DescribeTable("should apply pricing updates for instances types")"""
    store = reconcile([ov("o", {"key": LONG_KEY, "operator": "Exists"}, **change)])
    assert not store.succeeded()
    assert apply_all(store, "default", [one_type()])[0].offerings[0].price == 1.020
    store = reconcile([ov("o", req(IT, "In", "default-instance-type-not-found"), **change)])
    assert apply_all(store, "default", [one_type()])[0].offerings[0].price == 1.020
    store = reconcile([ov("o", req(IT, "In", "default-instance-type"), **change)])
    assert apply_all(store, "default", [one_type()])[0].offerings[0].price == pytest.approx(expected)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param({"price": "12321.32"}, 12321.32, id="Price"),
        pytest.param({"priceAdjustment": "+1000"}, 1005.020, id="PriceAdjustment"),
    ],
)
def test_pricing_updates_for_capacity_type(change: dict[str, str], expected: float) -> None:
    """DescribeTable("should apply pricing updates for instances types for capacity type")"""
    it = one_type(offer("spot", "test-zone-1", 1.020), offer("on-demand", "test-zone-1", 5.020))
    store = reconcile([ov("o", req(labels.CAPACITY_TYPE, "In", "on-demand"), **change)], [it])
    got = apply_all(store, "default", [it])[0]
    assert price_of(got, ct="on-demand") == pytest.approx(expected)
    assert price_of(got, ct="spot") == pytest.approx(1.020)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param({"price": "121.421"}, 121.421, id="Price"),
        pytest.param({"priceAdjustment": "+1000"}, 1001.020, id="PriceAdjustment"),
    ],
)
def test_pricing_updates_for_availability_zone(change: dict[str, str], expected: float) -> None:
    """DescribeTable("should apply pricing updates for instances types for availability zone")"""
    it = one_type(offer("spot", "test-zone-1", 1.020), offer("spot", "test-zone-2", 5.020))
    store = reconcile([ov("o", req(labels.ZONE, "In", "test-zone-1"), **change)], [it])
    got = apply_all(store, "default", [it])[0]
    assert price_of(got, zone="test-zone-1") == pytest.approx(expected)
    assert price_of(got, zone="test-zone-2") == pytest.approx(5.020)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        pytest.param({"price": "121.421"}, {"price": "165.421"}, (121.421, 121.421, 165.421), id="Price"),
        pytest.param(
            {"priceAdjustment": "+201"},
            {"priceAdjustment": "-0.5"},
            (203.020, 205.020, 0.52),
            id="PriceAdjustment",
        ),
    ],
)
def test_price_updates_from_multiple_overlays(
    a: dict[str, str], b: dict[str, str], expected: tuple[float, ...]
) -> None:
    """DescribeTable("should update price updates offerings instance types from multiple overlays")"""
    it = one_type(
        offer("spot", "test-zone-1", 1.020),
        offer("on-demand", "test-zone-2", 2.020),
        offer("reserved", "test-zone-4", 4.020),
    )
    store = reconcile(
        [
            ov("overlay-a", req(labels.ZONE, "In", "test-zone-2", "test-zone-4"), **a),
            ov("overlay-b", req(labels.CAPACITY_TYPE, "In", "spot"), **b),
        ],
        [it],
    )
    got = apply_all(store, "default", [it])[0]
    assert price_of(got, zone="test-zone-2") == pytest.approx(expected[0])
    assert price_of(got, zone="test-zone-4") == pytest.approx(expected[1])
    assert price_of(got, ct="spot") == pytest.approx(expected[2])


# -- Context("Capacity") -------------------------------------------------------------------------

FUSE = "smarter-devices/fuse"


def test_capacity_only_for_the_nodepool_in_the_requirements() -> None:
    """Context("Capacity") It("should only apply override for nodepool that defined in the overlay
    requirements") and It("should pass with conflicting capcaity update overlays for all nodepools")"""
    pools = [pool("one"), pool("two")]
    store = reconcile([ov("o", req(labels.NODEPOOL, "In", "one"), capacity={FUSE: "1"})], pools=pools)
    assert apply_all(store, "one", [one_type()])[0].capacity[FUSE] == 1000
    assert FUSE not in apply_all(store, "two", [one_type()])[0].capacity
    store = reconcile(
        [
            ov("a", req(labels.NODEPOOL, "In", "one"), capacity={FUSE: "1"}),
            ov("b", req(labels.NODEPOOL, "In", "two"), capacity={"dumb-devices/bar": "2"}),
        ],
        pools=pools,
    )
    assert apply_all(store, "one", [one_type()])[0].capacity[FUSE] == 1000
    assert apply_all(store, "two", [one_type()])[0].capacity["dumb-devices/bar"] == 2000


def test_capacity_only_for_nodepool_template_labels() -> None:
    """It("should only apply price adjustments for nodeclaim spec labels that defined in the overlay
    requirements") (the capacity variant)"""
    pools = [pool("one"), pool("two", labels={"test-label": "test-value"})]
    store = reconcile([ov("o", req("test-label", "In", "test-value"), capacity={FUSE: "1"})], pools=pools)
    assert FUSE not in apply_all(store, "one", [one_type()])[0].capacity
    assert apply_all(store, "two", [one_type()])[0].capacity[FUSE] == 1000


def test_capacity_adjustments() -> None:
    """It("should not apply capacity adjustments for invalid overlay"), It("should not apply
    capacity adjustments for instances types that do not overlap") and It("should apply capacity
    adjustments for instances types")"""
    for reqs, applied in (
        ({"key": LONG_KEY, "operator": "Exists"}, False),
        (req(IT, "In", "default-instance-type-not-found"), False),
        (req(IT, "In", "default-instance-type"), True),
    ):
        store = reconcile([ov("o", reqs, capacity={FUSE: "1"})])
        assert (FUSE in apply_all(store, "default", [one_type()])[0].capacity) is applied


def _zone_types() -> list[InstanceType]:
    return [
        one_type(offer("spot", "test-zone-1", 1.020), name="default-instance-type-zone-one"),
        one_type(offer("on-demand", "test-zone-2", 2.020), name="default-instance-type-zone-two"),
        one_type(offer("reserved", "test-zone-4", 4.020), name="default-instance-type-zone-four"),
    ]


def test_capacity_from_multiple_overlays() -> None:
    """It("should update capacity for instance types from multiple overlays")"""
    types = _zone_types()
    store = reconcile(
        [
            ov("a", req(labels.ZONE, "In", "test-zone-2", "test-zone-4"), capacity={FUSE: "1"}),
            ov("b", req(labels.CAPACITY_TYPE, "In", "spot"), capacity={"hugepages-1Gi": "2Gi"}),
        ],
        types,
    )
    got = {it.name: it for it in apply_all(store, "default", types)}
    assert got["default-instance-type-zone-one"].capacity["hugepages-1Gi"] == 2 * 1024**3 * 1000
    assert got["default-instance-type-zone-two"].capacity[FUSE] == 1000
    assert got["default-instance-type-zone-four"].capacity[FUSE] == 1000
    assert [it.offerings[0].price for it in got.values()] == [1.020, 2.020, 4.020]


def test_capacity_for_one_type_from_multiple_overlays() -> None:
    """It("should update capacity for one instance types from multiple overlays")"""
    types = _zone_types()[:1]
    name = "default-instance-type-zone-one"
    store = reconcile(
        [
            ov("a", req(IT, "In", name), capacity={FUSE: "1"}),
            ov("b", req(IT, "In", name), capacity={"hugepages-1Gi": "2Gi"}),
        ],
        types,
    )
    got = apply_all(store, "default", types)[0]
    assert got.capacity[FUSE] == 1000 and got.capacity["hugepages-1Gi"] == 2 * 1024**3 * 1000


def test_capacity_from_overlays_with_different_weights() -> None:
    """It("should update price offerings instance types from multiple overlays with different weights")"""
    types = _zone_types()
    store = reconcile(
        [
            ov("a", req(labels.ZONE, "In", "test-zone-2"), weight=20, capacity={FUSE: "1"}),
            ov("b", req(labels.ZONE, "In", "test-zone-2", "test-zone-4"), capacity={"hugepages-1Gi": "2Gi"}),
        ],
        types,
    )
    got = {it.name: it for it in apply_all(store, "default", types)}
    assert got["default-instance-type-zone-two"].capacity[FUSE] == 1000
    assert got["default-instance-type-zone-four"].capacity["hugepages-1Gi"] == 2 * 1024**3 * 1000


def test_higher_weight_overlay_wins() -> None:
    """It("should apply higher weight overlay when multiple overlays match the same instance type")"""
    store = reconcile(
        [
            ov("overlay-a", req(IT, "In", "default-instance-type"), capacity={FUSE: "5"}),
            ov("overlay-b", req(IT, "In", "default-instance-type"), weight=20, capacity={FUSE: "99"}),
        ]
    )
    assert store.succeeded() == ["overlay-a", "overlay-b"]
    assert apply_all(store, "default", [one_type()])[0].capacity[FUSE] == 99000


def test_no_partial_application() -> None:
    """It("should that there is not a partial application for instance types") and It("should that
    there is not a partial application for nodepools")"""
    types = default_instance_types()
    pools = [pool("one"), pool("two")]
    store = reconcile(
        [
            ov(
                "overlay-a",
                req(IT, "In", "default-instance-type", "small-instance-type", "gpu-vendor-b-instance-type"),
                capacity={"smarter-devices/buz": "54"},
            ),
            ov(
                "overlay-b",
                req(IT, "In", "small-instance-type", "gpu-vendor-instance-type"),
                capacity={"smarter-devices/buz": "21"},
            ),
        ],
        types,
        pools,
    )
    assert cond(store, "overlay-a") == (False, "Conflict")
    assert cond(store, "overlay-b") == (True, "")
    for p in ("one", "two"):
        got = {it.name: "smarter-devices/buz" in it.capacity for it in apply_all(store, p, types)}
        assert len(got) == 6
        assert got["small-instance-type"] and got["gpu-vendor-instance-type"]
        assert not got["default-instance-type"] and not got["gpu-vendor-b-instance-type"]


def test_pricing_and_capacity_from_two_overlays_on_one_type() -> None:
    """It("should apply pricing and capacity adjustment from two overlays on the same instance type")"""
    store = reconcile(
        [
            ov("price", req(IT, "In", "default-instance-type"), priceAdjustment="+1000.0"),
            ov("capacity", req(IT, "In", "default-instance-type"), capacity={FUSE: "1"}),
        ]
    )
    got = apply_all(store, "default", [one_type()])[0]
    assert got.offerings[0].price == pytest.approx(1001.020) and got.capacity[FUSE] == 1000


def test_empty_and_unevaluated() -> None:
    """It("should have an empty instance types set when cloudprovider does not return instance
    types") and It("should have an empty instance types set when cloudprovider return an error")
    (a NodePool whose types could not be listed is not evaluated: ApplyAll refuses it)"""
    store = reconcile([ov("o", req(IT, "In", "default-instance-type"), capacity={FUSE: "1"})], [])
    assert apply_all(store, "default", []) == []
    store = evaluate([], [pool("default")], {})
    with pytest.raises(UnevaluatedNodePoolError):
        apply_all(store, "default", [])


def test_requirements_are_not_changed_by_the_store() -> None:
    """It("should not return instance type requirements with nodepool, nodeclass, and custom nodepool labels")"""
    pools = [pool("default", labels={"test-label": "test-value"})]
    store = reconcile([ov("o", req(IT, "In", "default-instance-type"), capacity={FUSE: "1"})], pools=pools)
    got = apply_all(store, "default", [one_type()])[0]
    assert labels.NODEPOOL not in got.requirements
    assert "test-label" not in got.requirements


# -- store_test.go -----------------------------------------------------------------------------


def test_store_apply_shares_what_no_overlay_changes() -> None:
    """store_test.go DescribeTable("Store Apply Selective Copy"): Entry("no overlays - everything
    shared") / ("price overlay only - offerings copied, others shared") / ("capacity overlay only -
    capacity copied, others shared")"""
    it = one_type()
    store = reconcile([])
    assert apply_all(store, "default", [it])[0] is it
    store = reconcile([ov("o", req(IT, "In", "default-instance-type"), price="2")])
    got = apply_all(store, "default", [it])[0]
    assert got.capacity is it.capacity and got.offerings is not it.offerings
    store = reconcile([ov("o", req(IT, "In", "default-instance-type"), capacity={FUSE: "1"})])
    got = apply_all(store, "default", [it])[0]
    assert got.offerings is it.offerings and got.capacity is not it.capacity


@pytest.mark.parametrize(
    ("price", "change", "expected"),
    [
        (1.0, "", 1.0),
        (1.0, "3.5", 3.5),
        (1.0, "+10%", 1.1),
        (1.0, "-100%", 0.0),
        (1.0, "-2", 0.0),
        (2.0, "+0.5", 2.5),
    ],
)
def test_adjusted_price(price: float, change: str, expected: float) -> None:
    """pkg/cloudprovider/types.go ``AdjustedPrice`` (exercised by the suite's price Entries)."""
    assert adjusted_price(price, change) == pytest.approx(expected)


def test_store_apply_correctness_price_on_one_offering() -> None:
    """store_test.go Describe("Store Apply Correctness") It("should correctly apply price overlay to
    specific offerings"): the other offering is shared, the input is not mutated"""
    it = one_type(
        offer("on-demand", "us-west-2a", 0.096), offer("on-demand", "us-west-2b", 0.096), name="m5.large"
    )
    store = reconcile([ov("o", req(labels.ZONE, "In", "us-west-2a"), priceAdjustment="+0.01")], [it])
    got = apply_one(store, "default", it)
    assert got.offerings[0].price == pytest.approx(0.106)
    assert got.offerings[1] is it.offerings[1]
    assert it.offerings[0].price == 0.096


def test_store_apply_correctness_capacity() -> None:
    """store_test.go It("should correctly apply capacity overlay")"""
    it = new_instance_type("m5.large", resources={"memory": "8Gi", "cpu": "2"})
    store = reconcile([ov("o", req(IT, "In", "m5.large"), capacity={"hugepages-2Mi": "100Mi"})], [it])
    got = apply_one(store, "default", it)
    assert got.capacity["hugepages-2Mi"] == 100 * 2**20 * 1000
    assert got.capacity["memory"] == it.capacity["memory"]
    assert "hugepages-2Mi" not in it.capacity


def test_store_apply_isolation_between_nodepools() -> None:
    """store_test.go Describe("Store Apply Isolation Between NodePools") It("should apply different
    overlays to different node pools")"""
    it = one_type(offer("on-demand", "us-west-2a", 0.096), name="m5.large")
    pools = [pool("nodepool-a"), pool("nodepool-b")]
    store = reconcile(
        [
            ov("a", req(labels.NODEPOOL, "In", "nodepool-a"), priceAdjustment="+10%"),
            ov("b", req(labels.NODEPOOL, "In", "nodepool-b"), priceAdjustment="-5%"),
        ],
        [it],
        pools,
    )
    a, b = apply_one(store, "nodepool-a", it), apply_one(store, "nodepool-b", it)
    assert a.offerings[0].price == pytest.approx(0.1056)
    assert b.offerings[0].price == pytest.approx(0.0912)
    assert it.offerings[0].price == 0.096 and a.offerings[0] is not b.offerings[0]


def test_failure_isolation() -> None:
    """suite_test.go Describe("Failure Isolation") It("should evaluate healthy NodePools when one
    NodePool fails GetInstanceTypes") and It("should update the store even when one NodePool
    fails"): a NodePool whose types are unknown is left unevaluated, the others get their overlays"""
    pools = [pool("healthy"), pool("failing")]
    store = evaluate(
        [ov("o", req(IT, "In", "default-instance-type"), capacity={FUSE: "1"})],
        pools,
        {"healthy": [one_type()]},
    )
    assert apply_all(store, "healthy", [one_type()])[0].capacity[FUSE] == 1000
    with pytest.raises(UnevaluatedNodePoolError):
        apply_all(store, "failing", [one_type()])
