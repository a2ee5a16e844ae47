"""kubernetes-sigs/karpenter v1.14.1 ``pkg/controllers/provisioning/scheduling/suite_test.go``,
Describes "In-Flight Nodes", "Instance Type Compatibility" (with Context "Provider Specific Labels")
and "Binpacking", and ``topology_test.go`` Describe "Taints", through ``plan`` over rounds (:class:`Rounds`, upstream ``ExpectProvisioned``: a
round's NodeClaims become registered, not initialized Nodes). Each case names its upstream ``It``.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_sched_support import FAKE5, IT, ZONE, Rounds, catalog, nodepool, pod
from test_sched_support import req as r

from nodewright.catalog.fake import new_instance_type
from nodewright.catalog.model import Offering
from nodewright.labels import ARCH, HOSTNAME, OS


# -- Describe "In-Flight Nodes": a round's NodeClaims are registered, not initialized Nodes ----------
def _limit(cpu: str, **kw: Any) -> Any:
    return {"limits": {"cpu": cpu}, **kw}


def _node_name(env: Rounds, p: Any) -> str:
    n = env.node_of(p)
    assert n is not None, env.errors()
    return n.metadata.name


def test_inflight_node_takes_the_second_pod() -> None:
    """It "should not launch a second node if there is an in-flight node that can support the pod"."""
    env = Rounds([nodepool()])
    first, second = pod("first", **_limit("10m")), pod("second", **_limit("10m"))
    env.round(first)
    env.round(second)
    assert _node_name(env, first) == _node_name(env, second) and env.node_count() == 1


def test_inflight_node_with_node_selectors() -> None:
    """It "should not launch a second node if there is an in-flight node that can support the pod
    (node selectors)"."""
    env = Rounds([nodepool()])
    pods = [pod(f"p{i}", **_limit("10m", required=[[r(ZONE, "In", *zones)]]))
            for i, zones in enumerate([("test-zone-2",), ("test-zone-1", "test-zone-2"),
                                        ("test-zone-1", "test-zone-3")])]  # fmt: skip
    for p in pods:
        env.round(p)
    names = [_node_name(env, p) for p in pods]
    assert names[0] == names[1] != names[2]


def test_second_node_when_pod_does_not_fit() -> None:
    """It "should launch a second node if a pod won't fit on the existingNodes node"."""
    env = Rounds([nodepool()])
    first, second = pod("first", **_limit("1001m")), pod("second", **_limit("1"))
    env.round(first)
    env.round(second)
    assert _node_name(env, first) != _node_name(env, second)


def test_second_node_when_selector_is_incompatible() -> None:
    """It "should launch a second node if a pod isn't compatible with the existingNodes node (node
    selector)"."""
    env = Rounds([nodepool()])
    first, second = pod("first", **_limit("10m")), pod("second", node_selector={ARCH: "arm64"})
    env.round(first)
    env.round(second)
    assert _node_name(env, first) != _node_name(env, second)


def test_second_node_when_inflight_is_deleted() -> None:
    """It "should launch a second node if an in-flight node is terminating" (its Node and NodeClaim
    are deleted before the second round)."""
    env = Rounds([nodepool()])
    first, second = pod("first", **_limit("10m")), pod("second", **_limit("10m"))
    env.round(first)
    gone = _node_name(env, first)
    env.nodes = [n for n in env.nodes if n.metadata.name != gone]
    env.nodeclaims = [c for c in env.nodeclaims if c.metadata.name != gone]
    env.round(second)
    assert _node_name(env, second) != gone


@pytest.mark.parametrize(
    ("key", "first", "second", "new_nodes"),
    [
        # Context "Topology", It "should balance pods across zones with in-flight nodes"
        (ZONE, [1, 1, 2], [3, 3, 3], False),
        # It "should balance pods across hostnames with in-flight nodes"
        (HOSTNAME, [1, 1, 1, 1], [1] * 9, True),
    ],
)
def test_balance_with_inflight_nodes(key: str, first: list[int], second: list[int], new_nodes: bool) -> None:
    labels = {"foo": "bar"}
    tsc = [{"topologyKey": key, "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 1,
            "labelSelector": {"matchLabels": labels}}]  # fmt: skip
    env = Rounds([nodepool()])
    env.round(*[pod(f"a{i}", labels=labels, tsc=tsc) for i in range(4)])
    assert env.skew(key, labels=labels) == first
    count = env.node_count()
    env.round(*[pod(f"b{i}", labels=labels, tsc=tsc) for i in range(5)])
    assert env.skew(key, labels=labels) == second
    assert (env.node_count() > count) is new_nodes


# -- Describe "Instance Type Compatibility" --------------------------------------------------------
ANY_ARCH = [r(ARCH, "In", "arm64", "amd64")]
AMD = [r(ARCH, "In", "amd64")]
GPU1, GPU2 = "karpenter.sh/super-great-gpu", "karpenter.sh/even-better-gpu"


def _fake5(gpus: bool = False) -> list[Any]:
    from dataclasses import replace

    types = list(catalog(FAKE5))
    if gpus:
        types[0] = replace(types[0], capacity={**types[0].capacity, GPU1: 25_000})
        types[1] = replace(types[1], capacity={**types[1].capacity, GPU2: 25_000})
    return types


def _names(env: Rounds, pods: list[Any]) -> list[str | None]:
    return [None if env.node_of(p) is None else env.node_of(p).metadata.name for p in pods]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("pool", "pod_kws", "types", "want"),
    [
        # It "should not schedule if requesting more resources than any instance type has"
        (None, [{"cpu": "512"}], None, "none"),
        # It "should launch pods with different archs on different instances"
        (ANY_ARCH, [{"node_selector": {ARCH: "amd64"}}, {"node_selector": {ARCH: "arm64"}}], None, "distinct"),
        # It "should exclude instance types that are not supported by the pod constraints (node affinity/instance type)"
        (AMD, [{"required": [[r(IT, "In", "arm-instance-type")]]}], None, "none"),
        # It "... (node affinity/operating system)"
        (AMD, [{"required": [[r(OS, "In", "ios")]]}], None, "none"),
        # It "should exclude instance types that are not supported by the provider constraints (arch)"
        (AMD, [{"limits": {"cpu": "14"}}], None, "none"),
        # It "should launch pods with different operating systems on different instances"
        (ANY_ARCH, [{"node_selector": {OS: "linux"}}, {"node_selector": {OS: "windows"}}], None, "distinct"),
        # It "should launch pods with different instance type node selectors on different instances"
        (ANY_ARCH, [{"node_selector": {"beta.kubernetes.io/instance-type": "small-instance-type"}},
                    {"node_selector": {IT: "default-instance-type"}}], None, "distinct"),
        # It "should launch pods with different zone selectors on different instances"
        (ANY_ARCH, [{"node_selector": {ZONE: "test-zone-1"}}, {"node_selector": {ZONE: "test-zone-2"}}], None,
         "distinct"),
        # It "should launch pods with resources that aren't on any single instance type on different instances"
        (None, [{"limits": {GPU1: "1"}}, {"limits": {GPU2: "1"}}], "gpus", "distinct"),
        # It "should fail to schedule a pod with resources requests that aren't on a single instance type"
        (None, [{"limits": {GPU1: "1", GPU2: "1"}}], "gpus", "none"),
        # Context "Provider Specific Labels", It "should not schedule with incompatible labels"
        (None, [{"node_selector": {"size": "large", IT: "fake-it-0"}},
                {"node_selector": {"size": "small", IT: "fake-it-4"}}], "fake5", "none"),
    ],
)  # fmt: skip
def test_instance_type_compatibility(
    pool: list[Any] | None, pod_kws: list[dict[str, Any]], types: str | None, want: str
) -> None:
    cat = _fake5(gpus=types == "gpus") if types else None
    env = Rounds([nodepool(requirements=pool)], types=cat)
    pods = [pod(f"p{i}", **kw) for i, kw in enumerate(pod_kws)]
    env.round(*pods)
    names = _names(env, pods)
    if want == "none":
        assert names == [None] * len(pods)
    else:
        assert None not in names and len(set(names)) == len(pods)


@pytest.mark.parametrize(
    ("reqs", "want_type", "exotic"),
    [
        # It "should filter instance types that match labels" (two pods in one round upstream)
        ([r("size", "In", "large")], "fake-it-4", None),
        ([r("size", "In", "small")], "fake-it-0", None),
        # It "should schedule optional labels"
        ([r("special", "Exists")], "fake-it-4", True),
        # It "should schedule without optional labels if disallowed"
        ([r("special", "DoesNotExist")], None, False),
    ],
)
def test_provider_specific_labels(reqs: list[Any], want_type: str | None, exotic: bool | None) -> None:
    env = Rounds([nodepool()], types=_fake5())
    p = pod("p", required=[reqs])
    env.round(p)
    n = env.node_of(p)
    assert n is not None
    if want_type is not None:
        assert n.metadata.labels[IT] == want_type
    if exotic is not None:
        assert ("special" in n.metadata.labels) is exotic


# -- Describe "Binpacking" -------------------------------------------------------------------------
def _many(prefix: str, n: int, **kw: Any) -> list[Any]:
    return [pod(f"{prefix}{i:02d}", **kw) for i in range(n)]


AMD_SEL = {"node_selector": {ARCH: "amd64"}}


@pytest.mark.parametrize(
    ("pods", "types", "want_type", "nodes"),
    [
        # It "should schedule a small pod on the smallest instance"
        (lambda: [pod("p", memory="100M")], None, "small-instance-type", 1),
        # It "should schedule a small pod on the smallest possible instance type"
        (lambda: [pod("p", memory="2000M")], None, "small-instance-type", 1),
        # It "should take pod runtime class into consideration" (the RuntimeClass admission sets the
        # pod's overhead: 2 cpu)
        (lambda: [pod("p", cpu="1", overhead={"cpu": "2"})], None, "default-instance-type", 1),
        # It "should schedule multiple small pods on the smallest possible instance type"
        (lambda: _many("p", 5, memory="10M"), None, "small-instance-type", 1),
        # It "should create new nodes when a node is at capacity"
        (lambda: _many("p", 40, memory="1.8G", **AMD_SEL), None, "default-instance-type", 20),
        # It "should pack small and large pods together"
        (lambda: _many("l", 40, memory="1.8G", **AMD_SEL) + _many("s", 20, memory="400M", **AMD_SEL), None,
         "default-instance-type", 20),
        # It "should handle zero-quantity resource requests"
        (lambda: [pod("p", requests={"foo.com/weird-resources": "0"}, limits={"foo.com/weird-resources": "0"})],
         None, None, 1),
        # It "should not schedule pods that exceed every instance type's capacity"
        (lambda: [pod("p", memory="2Ti")], None, None, 0),
        # It "should create new nodes when a node is at capacity due to pod limits per node"
        (lambda: _many("p", 25, memory="1m", cpu="1m", **AMD_SEL), None, "small-instance-type", 5),
        # It "should take into account initContainer resource requests when binpacking"
        (lambda: [pod("p", memory="1Gi", cpu="1", init=[{"memory": "1Gi", "cpu": "2"}])], None,
         "default-instance-type", 1),
        # It "should not schedule pods when initContainer resource requests are greater than available instance types"
        (lambda: [pod("p", memory="1Gi", cpu="1", init=[{"memory": "1Ti", "cpu": "2"}])], None, None, 0),
    ],
)  # fmt: skip
def test_binpacking(pods: Any, types: Any, want_type: str | None, nodes: int) -> None:
    env = Rounds([nodepool()], types=types)
    ps = pods()
    env.round(*ps)
    assert env.node_count() == nodes
    if nodes:
        assert env.waiting(ps) == []
    for p in env.bound(ps):
        n = env.node_of(p)
        assert n is not None and (want_type is None or n.metadata.labels[IT] == want_type)


def test_pack_nodes_tightly() -> None:
    """It "should pack nodes tightly" (fake.InstanceTypes(5))."""
    env = Rounds([nodepool()], types=_fake5())
    big, small = pod("big", cpu="4.5"), pod("small", cpu="1")
    env.round(big, small)
    a, b = env.node_of(big), env.node_of(small)
    assert a is not None and b is not None and a.metadata.labels[IT] != b.metadata.labels[IT]


def test_valid_instance_types_regardless_of_price() -> None:
    """It "should select for valid instance types, regardless of price"."""

    def it(name: str, cpu: str, price: float) -> Any:
        off = (Offering(zone="test-zone-1a", capacity_type="on-demand", price=price),)
        return new_instance_type(name, resources={"cpu": cpu, "memory": f"{cpu}Gi"}, offerings=off)

    env = Rounds([nodepool()], types=[it("medium", "2", 3.0), it("small", "1", 2.0), it("large", "4", 1.0)])
    p = pod("p", limits={"cpu": "1m", "memory": "1Mi"})
    doc = env.round(p)
    n = env.node_of(p)
    assert n is not None and n.metadata.labels[IT] == "large"
    assert set(doc.node_claims[0].instance_types) == {"small", "medium", "large"}


# -- topology_test.go Describe "Taints" (the NodePool requires capacity-type Exists) ---------------
CT_EXISTS = [{"key": "karpenter.sh/capacity-type", "operator": "Exists"}]


def test_nodes_carry_nodepool_taints() -> None:
    """It "should taint nodes with NodePool taints"."""
    taint = {"key": "test", "value": "bar", "effect": "NoSchedule"}
    env = Rounds([nodepool(requirements=CT_EXISTS, taints=[taint])])
    p = pod("p", tolerations=[{"effect": "NoSchedule", "operator": "Exists"}])
    env.round(p)
    n = env.node_of(p)
    assert n is not None and [t.to_k8s() for t in n.spec.taints] == [taint]


def test_pods_that_tolerate_nodepool_taints() -> None:
    """It "should schedule pods that tolerate NodePool constraints"."""
    taint = {"key": "test-key", "value": "test-value", "effect": "NoSchedule"}
    env = Rounds([nodepool(requirements=CT_EXISTS, taints=[taint])])
    ok = [
        pod("exists", tolerations=[{"key": "test-key", "operator": "Exists", "effect": "NoSchedule"}]),
        pod(
            "equal",
            tolerations=[
                {"key": "test-key", "value": "test-value", "operator": "Equal", "effect": "NoSchedule"}
            ],
        ),
    ]
    env.round(*ok)
    assert env.bound(ok) == ok
    bad = [
        pod("missing"),
        pod("key-mismatch", tolerations=[{"key": "invalid", "operator": "Exists"}]),
        pod("value-mismatch", tolerations=[{"key": "test-key", "operator": "Equal", "effect": "NoSchedule"}]),
    ]
    env.round(*bad)
    assert env.bound(bad) == []


def test_startup_taint_only() -> None:
    """It "should provision nodes with taints and schedule pods if the taint is only a startup taint"."""
    startup = [{"key": "ignore-me", "value": "nothing-to-see-here", "effect": "NoSchedule"}]
    env = Rounds([nodepool(requirements=CT_EXISTS, startup_taints=startup)])
    p = pod("p")
    env.round(p)
    assert env.bound([p]) == [p]


def test_no_taints_generated_for_exists_toleration() -> None:
    """It "should not generate taints for OpExists"."""
    env = Rounds([nodepool(requirements=CT_EXISTS)])
    p = pod("p", tolerations=[{"key": "test-key", "operator": "Exists", "effect": "NoExecute"}])
    doc = env.round(p)
    n = env.node_of(p)
    assert n is not None and n.spec.taints == [] and doc.node_claims[0].taints == ()


# -- Describe "NodePool requirements instance filtering" ------------------------------------------
NO_TYPES = "nodepool requirements filtered out all available instance types"


@pytest.mark.parametrize(
    ("reqs", "count"),
    [
        # It "should return appropriate pod error when no available instance types exist"
        ([r(IT, "In", "non-existent-instance-type")], 1),
        # It "should handle multiple pods when requirements filter out all instance types"
        ([r(ARCH, "In", "non-existent-arch")], 3),
        # It "should handle conflicting requirements that eliminate all instance types"
        ([r(ARCH, "In", "amd64"), r(ARCH, "In", "arm64")], 1),
        # It "should handle zone requirements that filter out all instance types"
        ([r(ZONE, "In", "non-existent-zone-1", "non-existent-zone-2")], 1),
    ],
)
def test_nodepool_requirements_filter_out_every_type(reqs: list[Any], count: int) -> None:
    ct = r("karpenter.sh/capacity-type", "In", "spot", "on-demand", "reserved")
    pods = [pod(f"p{i}", cpu="32", memory="256Gi") if count == 1 else pod(f"p{i}") for i in range(count)]
    env = Rounds([nodepool(requirements=[ct, *reqs])])
    doc = env.round(*pods)
    assert env.bound(pods) == [] and len(doc.pod_errors) == count
    assert all(NO_TYPES in e for e in doc.pod_errors.values())
