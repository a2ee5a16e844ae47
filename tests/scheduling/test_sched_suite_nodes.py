"""kubernetes-sigs/karpenter v1.14.1 ``pkg/controllers/provisioning/scheduling/suite_test.go``:
Describe "In-Flight Nodes" Contexts "Taints" and "Daemonsets" and its packing / host-port cases, Describes "Existing
Nodes", "Deleting Nodes" and "No Pre-Binding", through ``plan`` over rounds (:class:`Rounds`: a round's NodeClaims
become registered, not initialized Nodes that later rounds see in flight). Each case names its ``It``.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_sched_support import IT, ZONE, Rounds, nodepool, pod
from test_sched_support import req as r

from nodewright.api.core import OwnerReference
from nodewright.catalog.fake import new_instance_type


def _node_name(env: Rounds, p: Any) -> str:
    n = env.node_of(p)
    assert n is not None, env.errors()
    return n.metadata.name


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


# -- Describe "No Pre-Binding": rounds that launch but do not bind (ExpectProvisionedNoBinding) ----
GPU_A = "fake.com/vendor-a"


@pytest.mark.parametrize("zeroed", [False, True])
def test_unbound_pods_reuse_the_inflight_node(zeroed: bool) -> None:
    """It "should not bind pods to nodes" and "should handle resource zeroing of extended resources by
    kubelet" (the uninitialized node reports 0 GPUs; its NodeClaim's capacity still counts)."""
    limits = {"cpu": "10m", GPU_A: "1"} if zeroed else {"cpu": "10m"}
    env = Rounds([nodepool()])
    first = pod("first", limits=limits)
    env.round(first, bind=False)
    assert env.node_count() == 1 and env.bound([first]) == []
    if zeroed:
        env.update_node(
            env.nodes[0].metadata.name, capacity={GPU_A: "0"}, allocatable={"fake.com/vendor-b": "0"}
        )
    second = pod("second", limits=limits)
    env.round(second, bind=False)
    assert env.node_count() == 1


def test_self_affinity_without_binding() -> None:
    """It "should respect self pod affinity without pod binding (zone)"."""
    labels = {"security": "s2"}
    term = {"labelSelector": {"matchLabels": labels}, "topologyKey": ZONE}
    aff = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    pods = [pod(f"p{i}", labels=labels, affinity=aff) for i in range(2)]
    env = Rounds([nodepool()])
    env.round(pods[0], bind=False)
    env.round(pods[1], bind=False)
    assert env.node_count() == 1


# -- Describe "In-Flight Nodes", Context "Daemonsets" ---------------------------------------------
@pytest.mark.parametrize(
    ("selector", "cpu", "same_node"),
    [
        # It "should track daemonset usage separately so we know how many DS resources are remaining to
        # be scheduled": the bound DaemonSet pod leaves 14.9 of the 16 cpu type for the next pod
        (False, "14.9", True),
        # It "should handle unexpected daemonset pods binding to the node": a label appears on the node,
        # a selected DaemonSet's pod binds; 15.5 cpu does not fit any more
        (True, "15.5", False),
    ],
)
def test_daemonset_pods_bound_to_an_inflight_node(selector: bool, cpu: str, same_node: bool) -> None:
    from test_sched_support import daemonset

    sel = {"my-node-label": "value"} if selector else None
    ds = daemonset("ds", cpu="1", memory="1Gi", node_selector=sel)
    extra = [daemonset("ds2", cpu="1m")] if selector else []
    env = Rounds([nodepool()], daemonsets=[ds, *extra])
    name = _emptied(env, limits={"cpu": "8"})
    if selector:
        env.update_node(name, labels={"my-node-label": "value"})
    owner = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "uid": "u", "controller": True}
    env.add(pod("ds-pod", cpu="1", memory="2Gi", node_selector=sel, owner=owner, node_name=name))
    second = pod("second", limits={"cpu": cpu})
    env.round(second)
    assert (_node_name(env, second) == name) is same_node


def test_key_gained_from_a_placed_pod_opens_the_node_to_the_next_pod() -> None:
    """Ours (the scheduler's skip of existing nodes for a pod requiring a key no node defines): a
    pod placed with ``NotIn`` on a key the node lacks gives the node that key, so a later pod of
    the same batch requiring ``In`` on it is still tried there (and fits), as Karpenter tries it."""
    env = Rounds([nodepool()])
    _managed(env, "existing", initialized=True, capacity={"cpu": "10", "memory": "10Gi", "pods": "110"})
    first = pod("first", cpu="2", required=[[r("example.com/tier", "NotIn", "bronze")]])
    second = pod("second", cpu="1", required=[[r("example.com/tier", "In", "gold")]])
    env.round(first, second)
    assert _node_name(env, first) == "existing"
    assert _node_name(env, second) == "existing"


def test_pod_requiring_a_key_no_node_defines_gets_a_new_node() -> None:
    """Ours: no existing node defines the key (the NodePool's label does), so no node is tried and a
    NodeClaim is launched."""
    env = Rounds([nodepool(labels={"example.com/tier": "gold"})])
    _managed(env, "existing", initialized=True, capacity={"cpu": "10", "memory": "10Gi", "pods": "110"})
    p = pod("p", required=[[r("example.com/tier", "Exists")]])
    env.round(p)
    assert _node_name(env, p) not in (None, "existing")
