"""Scheduler scenario helpers: typed wrappers over :mod:`builders`, catalogs, and ``run``.

``run`` goes through :func:`nodewright.scheduling.plan.plan` (the core of ``nodewright plan``);
``materialize`` turns a round's NodeClaims into initialized Nodes with their pods bound, for the
multi-round scenarios.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import builders
from test_topo_plan_support import Cluster, req

from nodewright.algebra.resources import format_resource_list
from nodewright.api.core import DaemonSet, Node, PersistentVolume, PersistentVolumeClaim, Pod, StorageClass
from nodewright.api.karpenter import NodeClaim, NodePool
from nodewright.catalog import load_catalog_file
from nodewright.catalog.model import InstanceType
from nodewright.cluster.state import ClusterState
from nodewright.scheduling.plan import PlanOptions, plan
from nodewright.scheduling.plandoc import ExistingNodePods, PlanDocument, PlannedNodeClaim

DATA = Path(__file__).resolve().parent.parent / "data"
FAKE = DATA / "catalogs" / "fake.yaml"
FAKE5 = DATA / "catalogs" / "fake-5.yaml"
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
CT = "karpenter.sh/capacity-type"
IT = "node.kubernetes.io/instance-type"
ARCH = "kubernetes.io/arch"
OS = "kubernetes.io/os"

_CATALOGS: dict[str, list[InstanceType]] = {}


def catalog(path: Path = FAKE) -> list[InstanceType]:
    key = str(path)
    if key not in _CATALOGS:
        _CATALOGS[key] = list(load_catalog_file(path))
    return _CATALOGS[key]


__all__ = ["Cluster", "req"]  # re-exported: the one multi-round helper and requirement builder


def test_support_builders() -> None:
    assert {it.name for it in catalog()} >= {
        "default-instance-type",
        "small-instance-type",
        "arm-instance-type",
    }


def nodepool(
    name: str = "default",
    *,
    requirements: Sequence[Mapping[str, Any]] | None = None,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, Any]] = (),
    startup_taints: Sequence[Mapping[str, Any]] = (),
    limits: Mapping[str, str] | None = None,
    weight: int | None = None,
) -> NodePool:
    """:func:`builders.nodepool` with the scheduling suite's default requirement (capacity type In
    spot, on-demand, reserved), as a model."""
    reqs = (
        list(requirements)
        if requirements is not None
        else [{"key": CT, "operator": "In", "values": ["spot", "on-demand", "reserved"]}]
    )
    return NodePool.model_validate(
        builders.nodepool(
            name,
            requirements=reqs,
            labels=labels or {},
            taints=taints,
            startup_taints=startup_taints,
            limits=limits,
            weight=weight,
        )
    )


def pod(name: str, **kw: Any) -> Pod:
    """:func:`builders.pod` (uid ``uid-<name>``) as a model."""
    kw.setdefault("uid", f"uid-{name}")
    kw.setdefault("tolerations", ())
    return Pod.model_validate(builders.pod(name, **kw))


def node(name: str, **kw: Any) -> Node:
    return Node.model_validate(builders.node(name, **kw))


def nodeclaim(
    name: str,
    *,
    nodepool_name: str,
    labels: Mapping[str, str],
    capacity: Mapping[str, str],
    allocatable: Mapping[str, str] | None = None,
    node_name: str | None = None,
    provider_id: str | None = None,
) -> NodeClaim:
    return NodeClaim.model_validate(
        builders.nodeclaim(
            name,
            nodepool_name=nodepool_name,
            labels=labels,
            capacity=capacity,
            allocatable=allocatable,
            node_name=node_name,
            provider_id=provider_id,
        )
    )


def daemonset(name: str, *, cpu: str | None = None, memory: str | None = None, **pod_kw: Any) -> DaemonSet:
    return DaemonSet.model_validate(builders.daemonset(name, cpu=cpu, memory=memory, **pod_kw))


def run(
    nodepools: Sequence[NodePool],
    pods: Sequence[Pod],
    *,
    nodes: Sequence[Node] = (),
    nodeclaims: Sequence[NodeClaim] = (),
    daemonsets: Sequence[DaemonSet] = (),
    types: Sequence[InstanceType] | None = None,
    options: PlanOptions | None = None,
    **extra: Any,
) -> PlanDocument:
    its = list(types) if types is not None else catalog()
    state = ClusterState(
        pods=tuple(pods),
        nodes=tuple(nodes),
        nodeclaims=tuple(nodeclaims),
        daemonsets=tuple(daemonsets),
        **{k: tuple(v) for k, v in extra.items()},
    )
    return plan(
        nodepools=nodepools,
        cluster=state,
        catalog_for=lambda _np: its,
        options=options or PlanOptions(max_instance_types=60),
    )


def scheduled(doc: PlanDocument) -> dict[str, PlannedNodeClaim | ExistingNodePods]:
    """pod key -> the NodeClaim (or existing node) it landed on."""
    return doc.placements()


def label_of(doc: PlanDocument, pod_key: str, key: str) -> str | None:
    c = scheduled(doc).get(pod_key)
    return c.labels.get(key) if isinstance(c, PlannedNodeClaim) else None


def materialize(
    doc: PlanDocument,
    pods: Sequence[Pod],
    *,
    types: Sequence[InstanceType] | None = None,
    prefix: str = "n",
) -> tuple[list[Node], list[Pod]]:
    """Launch every NodeClaim of ``doc``: an initialized Node of its launch type, pods bound."""
    its = {it.name: it for it in (types if types is not None else catalog())}
    by_key = {p.key: p for p in pods}
    nodes: list[Node] = []
    bound: list[Pod] = []
    for i, c in enumerate(doc.node_claims):
        assert c.launch is not None
        it = its[c.launch.instance_type]
        name = f"{prefix}-{i}"
        labels = {**c.labels, "karpenter.sh/initialized": "true", "karpenter.sh/registered": "true"}
        for r in it.requirement_specs:
            if r.operator == "In" and len(r.values) == 1 and r.key not in labels:
                labels[r.key] = r.values[0]
        nodes.append(
            node(
                name,
                labels=labels,
                capacity=format_resource_list(it.capacity),
                allocatable=format_resource_list(it.allocatable()),
            )
        )
        for key in c.pods:
            p = by_key[key]
            spec = p.spec.model_copy(update={"node_name": name})
            status = p.status.model_copy(update={"conditions": [], "phase": "Running"})
            bound.append(p.model_copy(update={"spec": spec, "status": status}))
    return nodes, bound


class Rounds(Cluster):
    """Upstream's ``ExpectProvisioned`` (kubernetes-sigs/karpenter ``pkg/test/expectations``) with the
    scheduling suite's NodePools fixed: ``provision(*pods)`` adds the pods as unschedulable, plans
    one round over every pending pod and launches its NodeClaims as NodeClaims plus registered, not
    initialized Nodes (:class:`Cluster`, the one multi-round helper), binding the pods that got a
    place. Pods left pending stay for the next round."""

    def __init__(
        self,
        nodepools: Sequence[NodePool],
        *,
        types: Sequence[InstanceType] | None = None,
        types_for: Mapping[str, Sequence[InstanceType]] | None = None,
        options: PlanOptions | None = None,
        **objects: Sequence[Any],
    ) -> None:
        super().__init__(
            types=types if types is not None else catalog(), types_for=types_for, objects=objects
        )
        self.nodepools = list(nodepools)
        self.options = options

    def round(self, *pods: Pod, bind: bool = True) -> PlanDocument:
        known = {p.key for p in self.pods}
        new = [p for p in pods if p.key not in known]
        return self.provision(self.nodepools, new, options=self.options, bind=bind)

    def _node_name(self, p: Pod) -> str | None:
        return next((q.spec.node_name for q in self.pods if q.key == p.key), None)

    def bound(self, pods: Sequence[Pod]) -> list[Pod]:
        return [p for p in pods if self._node_name(p)]

    def waiting(self, pods: Sequence[Pod]) -> list[Pod]:
        return [p for p in pods if not self._node_name(p)]

    def delete(self, *pods: Pod) -> None:
        """``ExpectDeleted`` for pods."""
        keys = {p.key for p in pods}
        self.delete_pods(lambda q: q.key not in keys)

    def update_node(
        self,
        name: str,
        *,
        taints: Sequence[Mapping[str, Any]] | None = None,
        labels: Mapping[str, str] | None = None,
        capacity: Mapping[str, str] | None = None,
        allocatable: Mapping[str, str] | None = None,
    ) -> None:
        """Change a launched Node as a test does before applying it: taints replaced, labels added
        (``karpenter.sh/initialized`` marks it initialized), capacity / allocatable replaced."""
        for i, n in enumerate(self.nodes):
            if n.metadata.name != name:
                continue
            doc = n.to_k8s()
            if taints is not None:
                doc["spec"]["taints"] = [dict(t) for t in taints]
            doc["metadata"]["labels"].update(labels or {})
            if capacity is not None:
                doc["status"]["capacity"] = dict(capacity)
            if allocatable is not None:
                doc["status"]["allocatable"] = dict(allocatable)
            self.nodes[i] = Node.model_validate(doc)


def reserved_type(
    name: str, cpu: str, memory: str, reservations: Sequence[tuple[str, int]] = ()
) -> InstanceType:
    """Upstream ``fake.NewInstanceType`` with its five offerings plus, per ``(id, capacity)``, a
    reserved offering in test-zone-1 priced ``PriceFromResources / 100000`` (the "Reserved Instance
    Types" fixtures of ``scheduling/suite_test.go``)."""
    from nodewright.algebra.resources import parse_resource_list
    from nodewright.catalog.fake import DEFAULT_OFFERINGS, new_instance_type, price_from_resources
    from nodewright.catalog.model import Offering

    price = price_from_resources(parse_resource_list({"cpu": cpu, "memory": memory}))
    offerings = [Offering(zone=z, capacity_type=ct, price=price) for ct, z in DEFAULT_OFFERINGS]
    offerings += [
        Offering(
            zone="test-zone-1",
            capacity_type="reserved",
            price=price / 100_000.0,
            reservation_id=rid,
            reservation_capacity=n,
        )
        for rid, n in reservations
    ]
    return new_instance_type(name, resources={"cpu": cpu, "memory": memory}, offerings=tuple(offerings))


def anti_affinity(key: str = HOSTNAME, app: str = "test") -> dict[str, Any]:
    """``PodAntiRequirements``: required anti-affinity to pods labelled ``app``, over ``key``."""
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def affinity_to(key: str, app: str = "test") -> dict[str, Any]:
    """``PodRequirements``: required affinity to pods labelled ``app``, over ``key``."""
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def storage_class(name: str, **kw: Any) -> StorageClass:
    """:func:`builders.storage_class` as a model."""
    return StorageClass.model_validate(builders.storage_class(name, **kw))


def pvc(name: str, **kw: Any) -> PersistentVolumeClaim:
    """:func:`builders.pvc` as a model."""
    return PersistentVolumeClaim.model_validate(builders.pvc(name, **kw))


def pv(name: str, **kw: Any) -> PersistentVolume:
    """:func:`builders.pv` as a model."""
    return PersistentVolume.model_validate(builders.pv(name, **kw))
