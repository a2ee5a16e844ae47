"""Support for the topology scenarios run through the product: builders and a multi-round cluster.

Every scenario goes through :func:`nodewright.scheduling.plan.plan` (the core of ``nodewright
plan``) with Karpenter's fake provider catalog (``tests/data/catalogs/fake.yaml``) and the topology
suite's NodePool (``karpenter.sh/capacity-type Exists``). :class:`Cluster` plays upstream's
``ExpectProvisioned``: pending pods are planned, then every planned NodeClaim becomes a NodeClaim
and a registered, not yet initialized Node (labels from the plan: launch instance type, zone,
capacity type and reservation ID, single-valued requirements, plus the hostname and the instance
type's own single-valued labels; taints and startup taints of its NodePool) with its pods bound, so the next round sees them as in-flight
capacity and counted pods. Pods that did not schedule stay pending and are
retried next round, as they are upstream (the kube client lists every pending pod);
:meth:`Cluster.drop_pending` is upstream's ``ExpectDeleteAllUnscheduledPods``.
:meth:`Cluster.skew` is ``ExpectSkew``: counts of the bound pods a selector picks, per value of
the key on their node (the node name for the hostname key), as a sorted list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import builders

from nodewright.algebra.resources import format_resource_list
from nodewright.api.core import Node, Pod
from nodewright.api.karpenter import NodeClaim, NodePool
from nodewright.catalog import load_catalog_file
from nodewright.catalog.model import InstanceType
from nodewright.cluster.state import ClusterState
from nodewright.labels import CAPACITY_TYPE, HOSTNAME, INSTANCE_TYPE, NODE_REGISTERED, ZONE
from nodewright.scheduling.plan import PlanOptions, plan
from nodewright.scheduling.plandoc import PlanDocument, PlannedNodeClaim

FAKE: Final = Path(__file__).resolve().parent.parent / "data" / "catalogs" / "fake.yaml"
ARCH: Final = "kubernetes.io/arch"
LABELS: Final = {"test": "test"}

_CATALOG: list[InstanceType] = []


def fake_catalog() -> list[InstanceType]:
    if not _CATALOG:
        _CATALOG.extend(load_catalog_file(FAKE))
    return _CATALOG


def test_plan_support_catalog_is_the_fake_provider() -> None:
    names = {it.name for it in fake_catalog()}
    assert {"default-instance-type", "small-instance-type", "arm-instance-type"} <= names


# -- builders ------------------------------------------------------------------------------------
def req(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": op, "values": list(values)}


def nodepool(
    name: str = "default",
    *,
    requirements: Sequence[Mapping[str, Any]] | None = None,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, Any]] = (),
    limits: Mapping[str, str] | None = None,
    weight: int | None = None,
) -> NodePool:
    """The topology suite's NodePool (:func:`builders.nodepool`): ``capacity-type Exists`` unless
    requirements are given."""
    reqs = list(requirements) if requirements is not None else [{"key": CAPACITY_TYPE, "operator": "Exists"}]
    return NodePool.model_validate(
        builders.nodepool(
            name, requirements=reqs, labels=labels or {}, taints=taints, limits=limits, weight=weight
        )
    )


def spread(
    key: str,
    *,
    max_skew: int = 1,
    labels: Mapping[str, str] | None = LABELS,
    when: str = "DoNotSchedule",
    **extra: Any,
) -> dict[str, Any]:
    """A topology spread constraint; ``labels=None`` leaves the selector nil."""
    out: dict[str, Any] = {"topologyKey": key, "maxSkew": max_skew, "whenUnsatisfiable": when, **extra}
    if labels is not None:
        out["labelSelector"] = {"matchLabels": dict(labels)}
    return out


def term(key: str, labels: Mapping[str, str], **extra: Any) -> dict[str, Any]:
    """A pod (anti-)affinity term selecting ``labels``."""
    return {"topologyKey": key, "labelSelector": {"matchLabels": dict(labels)}, **extra}


def pod(
    name: str,
    *,
    labels: Mapping[str, str] | None = None,
    namespace: str = "default",
    cpu: str | None = None,
    node_selector: Mapping[str, str] | None = None,
    node_requirements: Sequence[Mapping[str, Any]] = (),
    node_preferences: Sequence[Mapping[str, Any]] = (),
    tsc: Sequence[Mapping[str, Any]] = (),
    affinity: Sequence[Mapping[str, Any]] = (),
    affinity_preferred: Sequence[tuple[int, Mapping[str, Any]]] = (),
    anti: Sequence[Mapping[str, Any]] = (),
    anti_preferred: Sequence[tuple[int, Mapping[str, Any]]] = (),
    node_name: str | None = None,
    phase: str | None = None,
    deleting: bool = False,
    provisionable: bool = True,
) -> Pod:
    """An upstream ``test.UnschedulablePod`` (``provisionable=False``: a plain ``test.Pod``; bound with
    ``node_name``): :func:`builders.pod` with one node-affinity term and pod (anti-)affinity terms."""
    pod_affinity: dict[str, Any] = {}
    for field, required, preferred in (
        ("podAffinity", affinity, affinity_preferred),
        ("podAntiAffinity", anti, anti_preferred),
    ):
        if required or preferred:
            pod_affinity[field] = {
                "requiredDuringSchedulingIgnoredDuringExecution": list(required),
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": w, "podAffinityTerm": dict(t)} for w, t in preferred
                ],
            }
    return Pod.model_validate(
        builders.pod(
            name,
            namespace=namespace,
            uid=f"uid-{namespace}-{name}",
            labels=labels or {},
            cpu=cpu,
            node_selector=node_selector,
            required=[node_requirements] if node_requirements else None,
            preferred=[(1, node_preferences)] if node_preferences else (),
            affinity=pod_affinity or None,
            tsc=tsc,
            node_name=node_name,
            phase=phase,
            deleting=deleting,
            pending=provisionable and not deleting,
        )
    )


def node(
    name: str,
    *,
    labels: Mapping[str, str],
    capacity: Mapping[str, str] | None = None,
    allocatable: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, Any]] = (),
) -> Node:
    """A ready Node (:func:`builders.node`); upstream's ``test.Node`` capacity: 10 cpu, 100Gi, 110 pods."""
    cap = dict(capacity or {"cpu": "10", "memory": "100Gi", "pods": "110"})
    return Node.model_validate(
        builders.node(name, labels=labels, capacity=cap, allocatable=allocatable, taints=taints)
    )


def _bind(p: Pod, node_name: str) -> Pod:
    spec = p.spec.model_copy(update={"node_name": node_name})
    status = p.status.model_copy(update={"conditions": [], "phase": "Running"})
    return p.model_copy(update={"spec": spec, "status": status})


def selects(labels: Mapping[str, str] | None) -> Callable[[Pod], bool]:
    """matchLabels semantics; ``None`` (a nil selector in ExpectSkew's list options) selects all."""
    if labels is None:
        return lambda _p: True
    want = dict(labels)
    return lambda p: all(p.metadata.labels.get(k) == v for k, v in want.items())


# -- the multi-round cluster ---------------------------------------------------------------------
class Cluster:
    """Cluster state across provisioning rounds, each round through ``plan``."""

    def __init__(
        self,
        *,
        types: Sequence[InstanceType] | None = None,
        types_for: Mapping[str, Sequence[InstanceType]] | None = None,
        objects: Mapping[str, Sequence[Any]] | None = None,
    ) -> None:
        """``types_for``: catalogs per NodePool name (else ``types``); ``objects``: more cluster
        state by :class:`ClusterState` field (``pvcs``, ``storageclasses``...)."""
        self.types = list(types) if types is not None else fake_catalog()
        self.types_for = {k: list(v) for k, v in (types_for or {}).items()}
        self.objects = {k: tuple(v) for k, v in (objects or {}).items()}
        self.nodeclaims: list[NodeClaim] = []
        self._pools: dict[str, NodePool] = {}
        self.nodes: list[Node] = []
        self.pods: list[Pod] = []
        self.last: PlanDocument | None = None
        self._serial = 0
        self._node_serial = 0

    # pods ------------------------------------------------------------------------------------
    def new_pods(self, count: int, *, prefix: str = "p", **kw: Any) -> list[Pod]:
        """``count`` pods with fresh names (``labels`` default to the suite's ``test: test``)."""
        kw.setdefault("labels", LABELS)
        out = []
        for _ in range(count):
            self._serial += 1
            out.append(pod(f"{prefix}-{self._serial:03d}", **kw))
        return out

    def add(self, *pods: Pod) -> None:
        self.pods.extend(pods)

    def pod(self, key: str) -> Pod:
        return next(p for p in self.pods if p.key == key)

    def node_of(self, p: Pod | str) -> Node | None:
        key = p if isinstance(p, str) else p.key
        bound = self.pod(key).spec.node_name
        return next((n for n in self.nodes if n.metadata.name == bound), None) if bound else None

    def pending(self) -> list[Pod]:
        return [p for p in self.pods if not p.spec.node_name]

    def drop_pending(self) -> None:
        self.pods = [p for p in self.pods if p.spec.node_name]

    def delete_pods(self, keep: Callable[[Pod], bool]) -> None:
        self.pods = [p for p in self.pods if keep(p)]

    # rounds ----------------------------------------------------------------------------------
    def provision(
        self,
        nodepools: Sequence[NodePool],
        pods: Iterable[Pod] = (),
        *,
        options: PlanOptions | None = None,
        bind: bool = True,
    ) -> PlanDocument:
        """Add ``pods`` as pending, plan a round, launch its NodeClaims and bind what scheduled
        (``bind=False``: upstream ``ExpectProvisionedNoBinding``, the pods stay pending)."""
        self.add(*pods)
        self._pools.update({np.name: np for np in nodepools})
        state = ClusterState(
            pods=tuple(self.pods), nodes=tuple(self.nodes), nodeclaims=tuple(self.nodeclaims), **self.objects
        )
        doc = plan(
            nodepools=nodepools,
            cluster=state,
            catalog_for=lambda np: self.types_for.get(np.name, self.types),
            options=options or PlanOptions(max_instance_types=60),
        )
        placed: dict[str, str] = {}
        for existing in doc.existing_nodes:
            placed.update({k: existing.name for k in existing.pods})
        for claim in doc.node_claims:
            name = self._launch(claim)
            placed.update({k: name for k in claim.pods})
        if bind:
            self.pods = [_bind(p, placed[p.key]) if p.key in placed else p for p in self.pods]
        self.last = doc
        return doc

    def _launch(self, claim: PlannedNodeClaim) -> str:
        """The NodeClaim and Node a NodeClaim of the plan becomes (as the fake cloud provider's Create
        labels it; upstream ``ExpectNodeClaimDeployedAndStateUpdated``): registered, not initialized,
        capacity and allocatable of the launched type."""
        self._node_serial += 1
        name = f"node-{self._node_serial:03d}"
        launch = claim.launch
        assert launch is not None
        pool_types = self.types_for.get(claim.node_pool, self.types)
        it = next(t for t in pool_types if t.name == launch.instance_type)
        labels: dict[str, str] = {}
        for r in it.requirement_specs:
            if r.operator == "In" and r.values:
                labels[r.key] = sorted(r.values)[0]
        labels.update(claim.labels)
        labels.update(
            {
                INSTANCE_TYPE: launch.instance_type,
                ZONE: launch.zone,
                CAPACITY_TYPE: launch.capacity_type,
                NODE_REGISTERED: "true",
            }
        )
        cap, alloc = format_resource_list(it.capacity), format_resource_list(it.allocatable())
        pool = self._pools.get(claim.node_pool)
        startup = [t.to_k8s() for t in pool.spec.template.spec.startup_taints] if pool is not None else []
        taints = [*claim.taints, *startup]
        self.nodes.append(node(name, labels=labels, capacity=cap, allocatable=alloc, taints=taints))
        status = {"nodeName": name, "providerID": f"fake://{name}", "capacity": cap, "allocatable": alloc}
        self.nodeclaims.append(
            NodeClaim.model_validate(
                {
                    "apiVersion": "karpenter.sh/v1",
                    "kind": "NodeClaim",
                    "metadata": {"name": name, "labels": dict(claim.labels)},
                    "spec": {
                        "requirements": [],
                        "taints": list(claim.taints),
                        "startupTaints": startup,
                    },
                    "status": status,
                }
            )
        )
        return name

    # assertions ------------------------------------------------------------------------------
    def errors(self) -> dict[str, str]:
        return dict(self.last.pod_errors) if self.last is not None else {}

    def scheduled(self, pods: Iterable[Pod]) -> bool:
        return all(self.pod(p.key).spec.node_name for p in pods)

    def unscheduled(self, pods: Iterable[Pod]) -> bool:
        return not any(self.pod(p.key).spec.node_name for p in pods)

    def skew(
        self, key: str, *, labels: Mapping[str, str] | None = LABELS, namespace: str | None = "default"
    ) -> list[int]:
        """Upstream ``ExpectSkew``: bound, non-terminal pods the selector picks, per node domain."""
        match = selects(labels)
        by_name = {n.metadata.name: n for n in self.nodes}
        counts: dict[str, int] = {}
        for p in self.pods:
            n = by_name.get(p.spec.node_name or "")
            if n is None or not match(p) or p.status.phase in ("Succeeded", "Failed"):
                continue
            if namespace is not None and p.metadata.namespace != namespace:
                continue
            if p.metadata.deletion_timestamp is not None:
                continue
            domain = n.metadata.name if key == HOSTNAME else n.metadata.labels.get(key)
            if domain is not None:
                counts[domain] = counts.get(domain, 0) + 1
        return sorted(counts.values())

    def max_skew(self, key: str, *, labels: Mapping[str, str] | None = LABELS) -> int:
        counts = self.skew(key, labels=labels)
        return max(counts) - min(counts) if counts else 0

    def node_count(self) -> int:
        return len(self.nodes)


def zone_of(c: Cluster, p: Pod) -> str | None:
    n = c.node_of(p)
    return None if n is None else n.metadata.labels.get(ZONE)


def label_of(c: Cluster, p: Pod, key: str) -> str | None:
    n = c.node_of(p)
    return None if n is None else n.metadata.labels.get(key)
