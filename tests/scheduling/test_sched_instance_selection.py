"""kubernetes-sigs/karpenter v1.14.1 ``pkg/controllers/provisioning/scheduling/instance_selection_test.go``,
Describe "Instance Type Selection", through ``plan``.

Catalog: ``fake.InstanceTypesAssorted()`` (1,344 types, one offering each); NodePool: capacity type
In [spot, on-demand] and arch In [arm64, amd64] unless the case replaces the requirements. Upstream's
``nodePrice(node) == minPrice`` is the launch price against the cheapest offering of the whole
catalog, and ``ExpectInstancesWithLabel/WithOffering(supportedInstanceTypes(CreateCalls[0]))`` checks
every instance type the NodeClaim carries (the plan's ``instanceTypes``).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
from test_sched_support import CT, IT, ZONE, Rounds, nodepool, pod

from nodewright.catalog.fake import instance_types_assorted, new_instance_type
from nodewright.catalog.model import InstanceType, Offering
from nodewright.labels import ARCH, OS
from nodewright.scheduling.plan import PlanOptions


def r(key: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": "In", "values": list(values)}


@cache
def assorted() -> tuple[InstanceType, ...]:
    return tuple(instance_types_assorted())


def _label(it: InstanceType, key: str) -> set[str]:
    req = it.requirements.get(key)
    return set(req.values)


SUITE_POOL = [r(CT, "spot", "on-demand"), r(ARCH, "arm64", "amd64")]

# (It, NodePool requirements or None for the suite's, pod requirements, labels every type has,
#  (capacity type, zone) every type offers)
CASES: list[tuple[str, list[Any] | None, list[Any], dict[str, str], tuple[str, str] | None]] = [
    ("should schedule on one of the cheapest instances", None, [], {}, None),
    ("(pod arch = amd64)", None, [r(ARCH, "amd64")], {ARCH: "amd64"}, None),
    ("(pod arch = arm64)", None, [r(ARCH, "arm64")], {ARCH: "arm64"}, None),
    ("(prov arch = amd64)", [r(ARCH, "amd64")], [], {ARCH: "amd64"}, None),
    ("(prov arch = arm64)", [r(ARCH, "arm64")], [], {ARCH: "arm64"}, None),
    ("(prov os = windows)", [r(OS, "windows")], [], {OS: "windows"}, None),
    ("(pod os = windows)", None, [r(OS, "windows")], {OS: "windows"}, None),
    ("(pod os = linux)", None, [r(OS, "linux")], {OS: "linux"}, None),
    ("(prov zone = test-zone-2)", [r(ZONE, "test-zone-2")], [], {ZONE: "test-zone-2"}, None),
    ("(pod zone = test-zone-2)", None, [r(ZONE, "test-zone-2")], {ZONE: "test-zone-2"}, None),
    ("(prov ct = spot)", [r(CT, "spot")], [], {CT: "spot"}, None),
    ("(pod ct = spot)", None, [r(CT, "spot")], {CT: "spot"}, None),
    ("(prov ct = ondemand, prov zone = test-zone-1)", [r(CT, "on-demand"), r(ZONE, "test-zone-1")], [], {},
     ("on-demand", "test-zone-1")),
    ("(pod ct = spot, pod zone = test-zone-1)", None, [r(CT, "spot"), r(ZONE, "test-zone-1")], {},
     ("spot", "test-zone-1")),
    ("(prov ct = spot, pod zone = test-zone-2)", [r(CT, "spot")], [r(ZONE, "test-zone-2")], {},
     ("spot", "test-zone-2")),
    ("(prov ct = ondemand/test-zone-1/arm64/windows)",
     [r(ARCH, "arm64"), r(OS, "windows"), r(CT, "on-demand"), r(ZONE, "test-zone-1")], [],
     {OS: "windows", ARCH: "arm64"}, ("on-demand", "test-zone-1")),
    ("(prov = spot/test-zone-2, pod = amd64/linux)", [r(ARCH, "amd64"), r(OS, "linux")],
     [r(CT, "spot"), r(ZONE, "test-zone-2")], {OS: "linux", ARCH: "amd64"}, ("spot", "test-zone-2")),
    ("(pod ct = spot/test-zone-2/amd64/linux)", None,
     [r(ARCH, "amd64"), r(OS, "linux"), r(CT, "spot"), r(ZONE, "test-zone-2")], {OS: "linux", ARCH: "amd64"},
     ("spot", "test-zone-2")),
]  # fmt: skip


@pytest.mark.parametrize(("it", "pool", "reqs", "labels", "offering"), CASES, ids=[c[0] for c in CASES])
def test_cheapest_instance(
    it: str, pool: list[Any] | None, reqs: list[Any], labels: dict[str, str], offering: tuple[str, str] | None
) -> None:
    """It "should schedule on one of the cheapest instances <case>"."""
    types = assorted()
    min_price = min(o.price for t in types for o in t.offerings)
    env = Rounds([nodepool(requirements=pool if pool is not None else SUITE_POOL)], types=types,
                 options=PlanOptions(max_instance_types=600))  # fmt: skip
    p = pod("p", required=[reqs] if reqs else None)
    doc = env.round(p)
    assert env.node_of(p) is not None, doc.pod_errors
    (claim,) = doc.node_claims
    assert claim.launch.price == round(min_price, 4)
    by_name = {t.name: t for t in types}
    for name in claim.instance_types:
        t = by_name[name]
        for key, value in labels.items():
            assert _label(t, key) == {value}, (name, key)
        if offering is not None:
            assert any((o.capacity_type, o.zone) == offering for o in t.offerings), name


def _without_arm(zone: str | None) -> list[InstanceType]:
    """``filterInstanceTypes``: drop arm64 types (in ``zone`` only, when given)."""
    return [
        t
        for t in assorted()
        if "amd64" in _label(t, ARCH) or (zone is not None and all(o.zone != zone for o in t.offerings))
    ]


@pytest.mark.parametrize(
    ("zone", "pool", "reqs"),
    [
        # It "should not schedule if no instance type matches selector (pod arch = arm)"
        (None, None, [r(ARCH, "arm64")]),
        # It "... (pod arch = arm zone=test-zone-2)"
        ("test-zone-2", None, [r(ARCH, "arm64"), r(ZONE, "test-zone-2")]),
        # It "... (prov arch = arm / pod zone=test-zone-2)"
        ("test-zone-2", [r(ARCH, "arm64")], [r(ZONE, "test-zone-2")]),
    ],
)
def test_no_instance_type_matches(zone: str | None, pool: list[Any] | None, reqs: list[Any]) -> None:
    env = Rounds([nodepool(requirements=pool if pool is not None else SUITE_POOL)], types=_without_arm(zone))
    p = pod("p", required=[reqs])
    doc = env.round(p)
    assert env.node_of(p) is None and doc.node_claims == ()


@pytest.mark.parametrize("cpu", ["0.1", "1.0", "2", "2.5", "4", "8", "16"])
@pytest.mark.parametrize("mem", ["0.1", "1.0", "2", "4", "8", "16", "32"])
def test_instance_with_enough_resources(cpu: str, mem: str) -> None:
    """It "should schedule on an instance with enough resources": three such pods share one node and
    every instance type of the NodeClaim holds them plus its overhead."""
    from nodewright.algebra.resources import parse_resource_list

    types = assorted()
    env = Rounds(
        [nodepool(requirements=SUITE_POOL)], types=types, options=PlanOptions(max_instance_types=600)
    )
    pods = [pod(f"p{i}", cpu=cpu, memory=f"{mem}Gi") for i in range(3)]
    doc = env.round(*pods)
    assert len({env.node_of(p).metadata.name for p in pods if env.node_of(p)}) == 1  # type: ignore[union-attr]
    need = parse_resource_list({"cpu": cpu, "memory": f"{mem}Gi"})
    by_name = {t.name: t for t in types}
    for name in doc.node_claims[0].instance_types:
        t = by_name[name]
        overhead = t.overhead.total()
        for res in ("cpu", "memory"):
            assert 3 * need[res] + overhead.get(res, 0) < t.capacity[res], (name, res)


def test_cheaper_on_demand_despite_spot_order() -> None:
    """It "should schedule on cheaper on-demand instance even when spot price ordering would place
    other instance types first"."""

    def it(name: str, od: float, spot: float) -> InstanceType:
        offerings = (
            Offering(zone="test-zone-1a", capacity_type="on-demand", price=od),
            Offering(zone="test-zone-1a", capacity_type="spot", price=spot),
        )
        return new_instance_type(name, resources={"cpu": "1", "memory": "1Gi"}, operating_systems=("linux",),
                                 offerings=offerings)  # fmt: skip

    types = [it("test-instance1", 1.0, 0.2), it("test-instance2", 1.3, 0.1)]
    env = Rounds([nodepool(requirements=[r(CT, "on-demand")])], types=types)
    p = pod("p")
    env.round(p)
    n = env.node_of(p)
    assert n is not None and n.metadata.labels[IT] == "test-instance1"


# -- Context "MinValues" ---------------------------------------------------------------------------
GEN = "karpenter/numerical-value"


def _mv_type(name: str, cpu: str, price: float, gen: str | None = None) -> InstanceType:
    """The Context's types: arm64/linux, one spot offering in test-zone-1-spot, optionally the
    ``karpenter/numerical-value`` label (``fake.WithRequirements``)."""
    from dataclasses import replace

    from nodewright.catalog.model import RequirementSpec

    it = new_instance_type(name, resources={"cpu": cpu, "memory": f"{cpu}Gi"}, architecture="arm64",
                           operating_systems=("linux",),
                           offerings=(Offering(zone="test-zone-1-spot", capacity_type="spot", price=price),))  # fmt: skip
    if gen is None:
        return it
    return replace(it, requirement_specs=(*it.requirement_specs, RequirementSpec(GEN, "In", (gen,))))


def _two_pods(**kw: Any) -> list[Any]:
    return [pod(f"p{i}", cpu="0.9", memory="0.9Gi", **kw) for i in range(2)]


def _min_values(key: str, op: str, n: int, *values: str) -> list[dict[str, Any]]:
    return [{"key": key, "operator": op, "values": list(values), "minValues": n}]


def test_min_values_on_instance_type() -> None:
    """It "should schedule respecting the minValues from instance-type requirements": with two
    types required, the two pods go to two NodeClaims that each keep both types."""
    types = [_mv_type("instance-type-1", "1", 0.52), _mv_type("instance-type-2", "4", 1.0)]
    pool = _min_values(IT, "In", 2, "instance-type-1", "instance-type-2")
    env = Rounds([nodepool(requirements=pool)], types=types)
    pods = _two_pods()
    doc = env.round(*pods)
    assert len({env.node_of(p).metadata.name for p in pods}) == 2  # type: ignore[union-attr]
    assert len(doc.node_claims[0].instance_types) >= 2


def test_min_values_with_gt() -> None:
    """It "should schedule respecting the minValues in Gt operator"."""
    types = [_mv_type("instance-type-1", "1", 0.52, "2"), _mv_type("instance-type-2", "1", 1.0, "3"),
             _mv_type("instance-type-3", "4", 1.2, "4")]  # fmt: skip
    env = Rounds([nodepool(requirements=_min_values(GEN, "Gt", 2, "2"))], types=types)
    pods = _two_pods()
    doc = env.round(*pods)
    assert len({env.node_of(p).metadata.name for p in pods}) == 2  # type: ignore[union-attr]
    assert len(doc.node_claims[0].instance_types) >= 2


def test_min_values_with_gt_not_satisfied() -> None:
    """It "scheduler should fail if the minValues in Gt operator is not satisfied"."""
    types = [_mv_type("instance-type-1", "1", 0.52, "2"), _mv_type("instance-type-2", "4", 1.0, "3")]
    env = Rounds([nodepool(requirements=_min_values(GEN, "Exists", 2))], types=types)
    pods = _two_pods(required=[[{"key": GEN, "operator": "Gt", "values": ["2"]}]])
    doc = env.round(*pods)
    assert env.bound(pods) == []
    for err in doc.pod_errors.values():
        assert "minValues requirement is not met for label(s) (label(s)=[karpenter/numerical-value])" in err


def test_min_values_more_than_instance_types() -> None:
    """It "schedule should fail if minimum number of InstanceTypes is not met as per the minValues in
    the requirement" (ten types, minValues 11)."""
    env = Rounds([nodepool(requirements=_min_values(IT, "Exists", 11))], types=assorted()[:10])
    p = pod("p")
    env.round(p)
    assert env.bound([p]) == []


def test_min_values_after_truncation() -> None:
    """It "schedule should fail if minimum number of InstanceTypes is not met as per the minValues in
    the requirement after truncation" (``MaxInstanceTypes = 1``)."""
    types = [_mv_type("instance-type-1", "1", 0.52), _mv_type("instance-type-2", "4", 1.0)]
    pool = _min_values(IT, "In", 2, "instance-type-1", "instance-type-2")
    env = Rounds([nodepool(requirements=pool)], types=types, options=PlanOptions(max_instance_types=1))
    pods = _two_pods()
    doc = env.round(*pods)
    assert env.bound(pods) == [] and len(doc.pod_errors) == 2
