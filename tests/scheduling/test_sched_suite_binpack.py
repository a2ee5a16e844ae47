"""kubernetes-sigs/karpenter v1.14.1 ``pkg/controllers/provisioning/scheduling/suite_test.go``,
Describes "In-Flight Nodes" (with its Taints context), "Instance Type Compatibility" (with Context
"Provider Specific Labels"), "Binpacking", "Existing Nodes" and "Deleting Nodes", and ``topology_test.go`` Describe "Taints", through ``plan`` over rounds (:class:`Rounds`, upstream ``ExpectProvisioned``: a
round's NodeClaims become registered, not initialized Nodes). Each case names its upstream ``It``.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_sched_support import FAKE5, IT, ZONE, Rounds, catalog, nodepool, pod
from test_sched_support import req as r

from nodewright.api.core import OwnerReference
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
    assert set(doc["nodeClaims"][0]["instanceTypes"]) == {"small", "medium", "large"}


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
    assert n is not None and n.spec.taints == [] and "taints" not in doc["nodeClaims"][0]


# -- Describe "In-Flight Nodes", Context "Taints" ---------------------------------------------------
INIT = {"karpenter.sh/initialized": "true"}
NOT_READY = "node.kubernetes.io/not-ready"


def _emptied(env: Rounds, **kw: Any) -> str:
    """One pod provisions a node, then is deleted so the node is empty; the node's name."""
    first = pod("first", **kw)
    env.round(first)
    name = _node_name(env, first)
    env.delete(first)
    return name


def test_inflight_tainted_node_with_no_taints() -> None:
    """It "should assume pod will schedule to a tainted node with no taints"."""
    env = Rounds([nodepool()])
    name = _emptied(env, limits={"cpu": "8"})
    env.update_node(name, taints=[])
    second = pod("second")
    env.round(second)
    assert _node_name(env, second) == name


def test_inflight_not_ready_taint_is_ephemeral_until_initialized() -> None:
    """It "should assume pod will schedule to a node with ephemeral taint
    node.kubernetes.io/not-ready:NoExecute when the node is uninitialized" (and not once it is)."""
    env = Rounds([nodepool()])
    name = _emptied(env)
    env.update_node(name, taints=[{"key": NOT_READY, "effect": "NoExecute"}])
    second = pod("second")
    env.round(second)
    assert _node_name(env, second) == name
    env.delete(second)
    env.update_node(name, labels=INIT)
    third = pod("third")
    env.round(third)
    assert _node_name(env, third) != name


def test_initialized_tainted_node_is_not_assumed() -> None:
    """It "should not assume pod will schedule to a tainted node"."""
    env = Rounds([nodepool()])
    name = _emptied(env, limits={"cpu": "8"})
    env.update_node(
        name, labels=INIT, taints=[{"key": "foo.com/taint", "value": "tainted", "effect": "NoSchedule"}]
    )
    second = pod("second")
    env.round(second)
    assert _node_name(env, second) != name


def test_inflight_node_with_custom_startup_taint() -> None:
    """It "should assume pod will schedule to a tainted node with a custom startup taint"."""
    startup = {"key": "foo.com/taint", "value": "tainted", "effect": "NoSchedule"}
    env = Rounds([nodepool(startup_taints=[startup])])
    name = _emptied(env, limits={"cpu": "8"})
    node_taints = [t.to_k8s() for n in env.nodes if n.metadata.name == name for t in n.spec.taints]
    assert startup in node_taints
    second = pod("second")
    env.round(second)
    assert _node_name(env, second) == name


def test_startup_taint_after_initialization_is_not_assumed() -> None:
    """It "should not assume pod will schedule to a node with startup taints after initialization"."""
    startup = {"key": "ignore-me", "value": "nothing-to-see-here", "effect": "NoSchedule"}
    env = Rounds([nodepool(startup_taints=[startup])])
    name = _emptied(env)
    env.update_node(name, labels=INIT, taints=[startup], capacity={"pods": "10"})
    second = pod("second")
    env.round(second)
    assert _node_name(env, second) != name


def test_pack_inflight_nodes_before_launching() -> None:
    """It "should pack in-flight nodes before launching new nodes" (ten rounds of 0-9 pods of 1 cpu
    on a 4.25 cpu / 4 pod type; a fixed sequence of batch sizes instead of upstream's random one):
    at most one node keeps a cpu free."""
    medium = new_instance_type("medium", resources={"cpu": "4.25", "pods": "4"})
    env = Rounds([nodepool()], types=[medium])
    serial = 0
    for size in (3, 7, 0, 9, 1, 4, 8, 2, 6, 5):
        batch = [pod(f"p{serial + i:02d}", limits={"cpu": "1"}) for i in range(size)]
        serial += size
        env.round(*batch)
        assert env.waiting(batch) == []
    used: dict[str, int] = {}
    for p in env.pods:
        used[p.spec.node_name or ""] = used.get(p.spec.node_name or "", 0) + 1
    assert sum(1 for n in env.nodes if 4 - used.get(n.metadata.name, 0) >= 1) <= 1


def test_same_host_port_on_different_nodes() -> None:
    """It "should schedule pods with the same host port to different nodes"."""
    port = [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}]
    env = Rounds([nodepool()])
    a, b = pod("a", ports=port), pod("b", ports=port)
    env.round(a, b)
    assert _node_name(env, a) != _node_name(env, b)


# -- Describe "Existing Nodes" ---------------------------------------------------------------------
def _unowned(name: str = "existing", **capacity: str) -> Any:
    from test_sched_support import node

    return node(name, labels={}, capacity=capacity or {"cpu": "10", "memory": "10Gi", "pods": "110"})


@pytest.mark.parametrize("count", [1, 100])
def test_pods_on_an_existing_unowned_node(count: int) -> None:
    """It "should schedule a pod to an existing node unowned by Karpenter" (1) and "should schedule
    multiple pods to an existing node unowned by Karpenter" (100)."""
    env = Rounds([nodepool()])
    env.nodes.append(_unowned(cpu="10", memory="100Gi", pods="110"))
    pods = [pod(f"p{i:03d}", requests={"cpu": "10m"}, limits={"cpu": "10m"}) for i in range(count)]
    env.round(*pods)
    assert {_node_name(env, p) for p in pods} == {"existing"} and env.node_count() == 1


def _managed(env: Rounds, name: str, *, initialized: bool, capacity: dict[str, str]) -> None:
    """A NodeClaim and its registered Node of the suite's NodePool (``test.NodeClaimAndNode``)."""
    from test_sched_support import node, nodeclaim

    labels = {
        "karpenter.sh/nodepool": "default",
        "karpenter.sh/registered": "true",
        **(INIT if initialized else {}),
    }
    env.nodes.append(node(name, labels=labels, capacity=capacity))
    env.nodeclaims.append(nodeclaim(name, nodepool_name="default", labels={}, capacity=capacity, node_name=name,
                                    provider_id=f"fake://{name}"))  # fmt: skip


def test_initialized_node_is_tried_first() -> None:
    """It "should order initialized nodes for scheduling uninitialized nodes" (100 in-flight nodes, the
    73rd initialized, instead of upstream's random one)."""
    env = Rounds([nodepool()])
    for i in range(100):
        _managed(env, f"n{i:03d}", initialized=i == 73, capacity={"cpu": "4", "memory": "4Gi", "pods": "5"})
    p = pod("p")
    env.round(p)
    assert _node_name(env, p) == "n073"


def test_incompatible_existing_node_but_compatible_nodepool() -> None:
    """It "should consider a pod incompatible with an existing node but compatible with NodePool": the
    initialized node has no zone label; without a NodePool the pod waits, with one it launches."""
    env = Rounds([])
    _managed(env, "existing", initialized=True, capacity={"cpu": "10", "memory": "10Gi", "pods": "110"})
    p = pod("p", required=[[r(ZONE, "In", "test-zone-1")]])
    env.round(p)
    assert env.node_of(p) is None
    env.nodepools = [nodepool()]
    env.round()
    assert _node_name(env, p) not in (None, "existing")


def test_incompatible_daemonset_overhead_is_not_subtracted() -> None:
    """Context "Daemonsets", It "should not subtract daemonset overhead that is not strictly
    compatible with an existing node": the 100 cpu DaemonSet wants test-zone-1, the node has no zone;
    the first pod fits the node, the second cannot get a new one (every type carries the DaemonSet)."""
    from test_sched_support import daemonset

    ds = daemonset("ds", cpu="100", memory="100Gi", required=[[r(ZONE, "In", "test-zone-1")]])
    env = Rounds([nodepool()], daemonsets=[ds])
    _managed(env, "existing", initialized=True, capacity={"cpu": "1", "memory": "1Gi", "pods": "110"})
    first = pod("first", cpu="1", memory="1Gi")
    env.round(first)
    assert _node_name(env, first) == "existing"
    second = pod("second", cpu="1", memory="1Gi")
    env.round(second)
    assert env.node_of(second) is None


# -- Describe "Deleting Nodes" ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("owner", "terminating", "nodes"),
    [
        # It "should re-schedule pods from a deleting node when pods are active"
        (None, False, 2),
        # It "should not re-schedule pods from a deleting node when pods are not active"
        (None, True, 1),
        # It "should not re-schedule pods from a deleting node when pods are owned by a DaemonSet"
        ("DaemonSet", False, 1),
        # It "should not reschedule pods from a deleting node when pods are not active and they are owned by a ReplicaSet"
        ("ReplicaSet", True, 1),
        # It "should reschedule pods from a deleting node when pods are not active and they are owned by a StatefulSet"
        ("StatefulSet", True, 2),
    ],
)
def test_pods_of_a_deleting_node(owner: str | None, terminating: bool, nodes: int) -> None:
    """The node is marked for deletion (``cluster.MarkForDeletion``: the ``karpenter.sh/disrupted``
    taint here); its pod, evicted (deletion timestamp) or not, is rescheduled on a new node of the same
    size only when Karpenter counts it as reschedulable."""
    env = Rounds([nodepool()])
    p = pod("p", memory="100M")
    env.round(p)
    name = _node_name(env, p)
    env.update_node(name, taints=[{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}])
    meta: dict[str, Any] = {}
    if owner is not None:
        meta["owner_references"] = [
            OwnerReference.model_validate({"apiVersion": "apps/v1", "kind": owner, "name": "o", "uid": "u"})
        ]
    if terminating:
        meta["deletion_timestamp"] = "2024-01-01T00:00:10Z"
    bound = env.pod(p.key)
    env.delete_pods(lambda q: q.key != p.key)
    env.add(bound.model_copy(update={"metadata": bound.metadata.model_copy(update=meta)}))
    env.round()
    assert env.node_count() == nodes
    assert {n.metadata.labels[IT] for n in env.nodes} == {"small-instance-type"}
