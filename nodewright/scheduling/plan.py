"""``plan``: one simulated Karpenter provisioning round from NodePools, cluster state and catalog.

Selects the pending pods (``IsProvisionable``) and the reschedulable pods of deleting nodes,
validates them (Karpenter's texts), orders and filters the NodePools (managed, not static, Ready,
not deleting; weight descending then name descending), builds topology and runs the
:class:`~.scheduler.Scheduler`. The result is a typed :class:`~.plandoc.PlanDocument` (rendered by
:mod:`.planrender`; its ``as_dict()`` is the ``nodewright plan -o json`` document, ``docs/cli.md``):
NodeClaims with instance types cheapest first (truncated to ``max_instance_types``), launch choice,
labels, requests and pods; existing nodes that receive pods; per-pod errors; a summary.
Deterministic byte for byte.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from nodewright import labels
from nodewright.algebra.requirements import RequirementError
from nodewright.algebra.resources import ResourceList, requests_for_pod
from nodewright.api.core import (
    Affinity,
    Container,
    NodeAffinity,
    ObjectMeta,
    PersistentVolumeClaim,
    Pod,
    PodSpec,
    ResourceRequirements,
)
from nodewright.api.karpenter import NodePool
from nodewright.catalog.model import InstanceType
from nodewright.cluster.state import ClusterState
from nodewright.scheduling import podutil
from nodewright.scheduling.existingnode import StateNode, build_state_nodes
from nodewright.scheduling.identity import Derived, same_objects
from nodewright.scheduling.instancetypes import ResourceSpace, TypeIndex
from nodewright.scheduling.plandoc import PlanDocument
from nodewright.scheduling.planrender import FAILED, empty_summary, render_document
from nodewright.scheduling.poddata import PodData
from nodewright.scheduling.reservations import consume_reservations
from nodewright.scheduling.scheduler import Scheduler, SchedulerOptions, SolveResult
from nodewright.scheduling.topology import Topology
from nodewright.scheduling.topologydomains import DomainSource, DomainUniverse
from nodewright.scheduling.validation import managed_label_does_not_exist, validate_pod
from nodewright.scheduling.volumes import VolumeIndex, VolumeTopologyError
from nodewright.scheduling.workloads import Generated, Input, Scale, round_pods
from nodewright.settings import FeatureGates, KarpenterSettings

log = logging.getLogger("nodewright")

MAX_INSTANCE_TYPES: Final = 600
NO_DYNAMIC_NODEPOOLS: Final = "no dynamic nodepools found"

CatalogFor = Callable[[NodePool], Sequence[InstanceType]]


@dataclass(frozen=True, kw_only=True)
class PlanOptions:
    max_instance_types: int = MAX_INSTANCE_TYPES
    preference_policy: str = "Respect"
    min_values_policy: str = "Strict"
    # Karpenter's provisioner always runs the strict reserved-offering mode
    # (provisioner.go: DisableReservedCapacityFallback); fallback is an explicit opt-in
    reserved_fallback: bool = False
    # the Karpenter feature gates in force (StaticCapacity, CapacityBuffer change the round)
    feature_gates: FeatureGates = field(default_factory=FeatureGates)

    @classmethod
    def of(cls, settings: KarpenterSettings, **rest: Any) -> PlanOptions:
        """The options Karpenter's ``settings`` decide (PREFERENCE_POLICY, MIN_VALUES_POLICY, FEATURE_GATES), plus
        nodewright's own (``max_instance_types``, ``reserved_fallback``)."""
        return cls(
            preference_policy=settings.preference_policy,
            min_values_policy=settings.min_values_policy,
            feature_gates=settings.feature_gates,
            **rest,
        )


def order_nodepools(nodepools: Sequence[NodePool]) -> list[NodePool]:
    """Managed (``nodepool.ListManaged``), dynamic, Ready, not deleting; weight descending, then name
    descending."""
    usable = [
        np
        for np in nodepools
        if not np.is_static() and np.unmanaged_reason() is None and np.is_ready() and not np.is_deleting()
    ]
    by_name = sorted(usable, key=lambda np: np.name, reverse=True)
    return sorted(by_name, key=lambda np: -(np.spec.weight or 0))


def daemonset_pods(cluster: ClusterState) -> list[Pod]:
    """One pod per DaemonSet: its newest pod if any, else its template; required node affinity
    always from the DaemonSet spec (the daemonset controller overrides it)."""
    out: list[Pod] = []
    by_owner: dict[tuple[str, str], list[Pod]] = {}
    if cluster.daemonsets:
        for p in cluster.daemon_pods():
            ns = p.metadata.namespace or "default"
            for o in p.metadata.owner_references:
                if o.kind == "DaemonSet":
                    by_owner.setdefault((ns, o.name), []).append(p)
    for ds in cluster.daemonsets:
        ns = ds.metadata.namespace or "default"
        owned = by_owner.get((ns, ds.metadata.name), [])
        tmpl_spec = ds.spec.template.spec
        if owned:
            pod = max(owned, key=lambda p: (p.metadata.creation_timestamp or "", p.metadata.name))
        else:
            pod = Pod(
                metadata=ObjectMeta(
                    name=ds.metadata.name, namespace=ns, labels=ds.spec.template.metadata.labels
                ),
                spec=tmpl_spec,
            )
        req = (
            tmpl_spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
            if tmpl_spec.affinity is not None and tmpl_spec.affinity.node_affinity is not None
            else None
        )
        if req is not None:
            aff = pod.spec.affinity or Affinity()
            na = aff.node_affinity or NodeAffinity()
            na = na.model_copy(update={"required_during_scheduling_ignored_during_execution": req})
            spec: PodSpec = pod.spec.model_copy(
                update={"affinity": aff.model_copy(update={"node_affinity": na})}
            )
            pod = pod.model_copy(update={"spec": spec})
        # the group key is the DaemonSet, whatever pod stands for it
        pod = pod.model_copy(
            update={"metadata": pod.metadata.model_copy(update={"name": ds.metadata.name, "namespace": ns})}
        )
        out.append(pod)
    return out


def _requests(pod: Pod, memo: dict[tuple[object, ...], ResourceList]) -> ResourceList:
    """``requests_for_pod``, memoised on the pod's resource fields (workloads repeat them)."""
    spec = pod.spec

    def c_key(c: Container) -> tuple[object, ...]:
        r = c.resources
        return (tuple(r.requests.items()), tuple(r.limits.items()), c.restart_policy)

    def c_key_resources(r: ResourceRequirements) -> tuple[object, ...]:
        return (tuple(r.requests.items()), tuple(r.limits.items()))

    key = (
        tuple(c_key(c) for c in spec.containers),
        tuple(c_key(c) for c in spec.init_containers),
        tuple(spec.overhead.items()),
        None if spec.resources is None else c_key_resources(spec.resources),
    )
    got = memo.get(key)
    if got is None:
        got = memo[key] = requests_for_pod(pod)
    return dict(got)


def _volume_index(
    cluster: ClusterState, pending: Sequence[Pod], created: Sequence[PersistentVolumeClaim] = ()
) -> VolumeIndex | None:
    """The cluster's volume objects, when they matter: some are listed, or a pending pod has a
    claim (which then fails validation as missing, as in a cluster without it). ``created``: the
    claims a StatefulSet creates for its new pods."""
    claims = any(
        v.persistent_volume_claim is not None or v.ephemeral is not None
        for p in pending
        for v in p.spec.volumes
    )
    if not (claims or cluster.pvcs or cluster.csinodes):
        return None
    if claims and not cluster.pvcs and not created:
        log.warning(
            "cluster state lists no PersistentVolumeClaims: pending pods with claims fail as in a cluster "
            "without them; include pvc, pv and storageclass objects in the cluster state"
        )
    return VolumeIndex.build([*cluster.pvcs, *created], cluster.pvs, cluster.storageclasses, cluster.csinodes)


@dataclass(kw_only=True)
class Round:
    """The inputs of one provisioning round, prepared once; :meth:`scheduler` builds a fresh
    :class:`~.scheduler.Scheduler` (and topology) over them, so several solves can share them."""

    cluster: ClusterState
    pools: list[NodePool]
    types_by_pool: dict[str, Sequence[InstanceType]]
    active: list[StateNode]
    ds_pods: list[Pod]
    space: ResourceSpace
    volumes: VolumeIndex | None
    datas: list[PodData]
    errors: dict[str, str]
    pending: int
    options: PlanOptions
    generated: Generated = field(default_factory=Generated)
    buffers: Generated = field(default_factory=Generated)
    # kept between rounds over the same NodePools and instance types (disruption simulations)
    universe: DomainUniverse | None = None
    # every state node of the cluster, in build order (the deleting ones too)
    state_nodes: list[StateNode] = field(default_factory=list)
    # the deleting ones (marked for deletion), in build order
    deleting: list[StateNode] = field(default_factory=list)
    type_cache: dict[tuple[object, ...], TypeIndex | None] | None = None

    def domain_universe(self) -> DomainUniverse:
        return DomainUniverse(
            DomainSource.from_nodepool(np, [it.requirements for it in self.types_by_pool[np.name]])
            for np in self.pools
        )

    def topology(self) -> Topology:
        return Topology(
            # built only without a kept universe
            domain_sources=(
                DomainSource.from_nodepool(np, [it.requirements for it in self.types_by_pool[np.name]])
                for np in self.pools
            ),
            nodes=[s.node for s in self.active if s.node is not None],
            all_nodes=self.cluster.nodes,
            cluster_pods=self.cluster.pods,
            batch_pods=[d.pod for d in self.datas],
            preference_policy=self.options.preference_policy,
            universe=self.universe,
        )

    def scheduler(self, cls: type[Scheduler] = Scheduler) -> Scheduler:
        options = self.options
        return cls(
            nodepools=self.pools,
            instance_types=self.types_by_pool,
            state_nodes=self.active,
            daemonset_pods=self.ds_pods,
            topology=self.topology(),
            space=self.space,
            volumes=self.volumes,
            options=SchedulerOptions(
                preference_policy=options.preference_policy,
                min_values_policy=options.min_values_policy,
                reserved_fallback=options.reserved_fallback,
            ),
            type_cache=self.type_cache,
        )

    def render(self, result: SolveResult) -> PlanDocument:
        return self.annotate(
            render_document(result, errors=self.errors, pending=self.pending, options=self.options)
        )

    def annotate(self, doc: PlanDocument) -> PlanDocument:
        """Mark the pods this round added (workloads' and buffers') and their notes."""
        sources = {**self.generated.sources, **self.buffers.sources}
        if sources:
            doc = replace(
                doc,
                generated_pods=dict(sorted(sources.items())),
                summary=replace(
                    doc.summary,
                    workload_pods=len(self.generated.sources),
                    buffer_pods=len(self.buffers.sources),
                ),
            )
        notes = (*self.generated.notes, *self.buffers.notes)
        if notes:
            doc = replace(doc, round_notes=(*doc.round_notes, *notes))
        return doc


def _reservation(sn: StateNode) -> str | None:
    """The capacity reservation a reserved node uses."""
    if sn.label(labels.CAPACITY_TYPE) != labels.CAPACITY_TYPE_RESERVED:
        return None
    return sn.label(labels.CAPACITY_RESERVATION_ID) or None


def _ordered(nodepools: Sequence[NodePool], kept: dict[str, Any] | None) -> list[NodePool]:
    """:func:`order_nodepools`, kept while the NodePools are the very same objects."""
    got = kept.get("ordered") if kept is not None else None
    if got is not None and same_objects(got[0], nodepools):
        return list(got[1])
    pools = order_nodepools(nodepools)
    if kept is not None:
        kept["ordered"] = (list(nodepools), pools)  # holds the NodePools: their ids are not reused
    return list(pools)


def _marked_or_none(sn: StateNode) -> bool | None:
    return True if sn.marked_for_deletion() else None


def prepare_round(
    *,
    nodepools: Sequence[NodePool],
    cluster: ClusterState,
    catalog_for: CatalogFor,
    options: PlanOptions = PlanOptions(),
    workloads: Sequence[Input] = (),
    scales: Sequence[Scale] = (),
    state_nodes: list[StateNode] | None = None,
    kept: dict[str, Any] | None = None,
) -> Round:
    """Everything :func:`plan` computes before the Solve (pod selection, validation, pools, types).

    The pending pods are the cluster's, plus those its workloads (and ``workloads``, the branch's)
    would create, plus, with the CapacityBuffer gate, the buffers' virtual pods (added after
    validation, as the provisioner does). ``state_nodes``: the cluster's, already built; ``kept``:
    facts kept between rounds over the same catalogs (a forecast's many rounds)."""
    if state_nodes is None:
        state_nodes = build_state_nodes(cluster.nodes, cluster.nodeclaims, cluster.pods)
    if kept is not None:
        # which state nodes are marked, kept per StateNode (its objects do not change)
        marks: Derived[StateNode, bool] = kept.setdefault("marked", Derived(_marked_or_none))
        any_marked = bool(marks.facts(state_nodes))
    else:
        any_marked = any(map(StateNode.marked_for_deletion, state_nodes))
    if any_marked:
        marked = list(map(StateNode.marked_for_deletion, state_nodes))
        deleting = [s for s, m in zip(state_nodes, marked, strict=True) if m]
        active = [s for s, m in zip(state_nodes, marked, strict=True) if not m]
    else:
        deleting, active = [], state_nodes  # (read only)

    generated, buffers = round_pods(
        cluster, workloads, capacity_buffer=options.feature_gates.capacity_buffer, scales=scales
    )
    pending = [p for p in cluster.unbound_pods() if podutil.is_provisionable(p)]
    pending.extend(generated.pods)
    rescheduled = [p for s in deleting for p in s.pods if podutil.is_reschedulable(p)]
    errors: dict[str, str] = {}
    batch: list[Pod] = []
    volumes = _volume_index(cluster, pending, generated.pvcs)
    for p in pending:
        ignored = managed_label_does_not_exist(p)
        if ignored is not None:
            errors[p.key] = "ignoring pod, " + ignored
            continue
        problems = validate_pod(p)
        pvc_err = volumes.validate(p) if volumes is not None else None
        if pvc_err is not None:
            problems.append(pvc_err)
        if problems:
            errors[p.key] = FAILED + "; ".join(problems)
            continue
        batch.append(p)
    batch.extend(buffers.pods)
    batch.extend(rescheduled)

    pools = _ordered(nodepools, kept)
    used: dict[str, int] = {}
    reserved: Derived[StateNode, str] = Derived(_reservation)
    if kept is not None:
        reserved = kept.setdefault("reserved", reserved)
    for rid in reserved.facts(active).values():  # (a StateNode's objects do not change)
        used[rid] = used.get(rid, 0) + 1
    if kept is not None:
        # per NodePool object, its catalog (a forecast's ``catalog_for`` answers one pool alike)
        held: dict[int, tuple[NodePool, Sequence[InstanceType]]] = kept.setdefault("catalogs", {})
        catalogs = {}
        for np in pools:
            pair = held.get(id(np))
            if pair is None or pair[0] is not np:
                pair = held[id(np)] = (np, catalog_for(np))  # holds the pool: its id is not reused
            catalogs[np.name] = pair[1]
    else:
        catalogs = {np.name: catalog_for(np) for np in pools}
    types_by_pool: dict[str, Sequence[InstanceType]] = {
        name: consume_reservations(types, used) for name, types in catalogs.items()
    }
    datas: list[PodData] = []
    names: set[str] = set()
    # NodePools of one NodeClass share their catalog (and its types): each distinct type once; a
    # consumed reservation changes offerings only, not resources
    distinct = {id(types): types for types in catalogs.values()}
    names.update(_type_resources(list(distinct.values()), kept))
    ds_pods = daemonset_pods(cluster)
    requests = {}
    memo: dict[tuple[object, ...], ResourceList] = {}
    for p in [*batch, *ds_pods]:
        requests[id(p)] = _requests(p, memo)
        names.update(requests[id(p)])
    for np in pools:
        names.update(k for k in np.spec.limits if k != "nodes")
    space = ResourceSpace(sorted(names))
    for p in batch:
        got = pod_data(p, space=space, options=options, volumes=volumes, requests=requests[id(p)])
        if isinstance(got, str):
            errors[p.key] = got
        else:
            datas.append(got)

    return Round(
        cluster=cluster,
        pools=pools,
        types_by_pool=types_by_pool,
        active=active,
        ds_pods=ds_pods,
        space=space,
        volumes=volumes,
        datas=datas,
        errors=errors,
        pending=len(pending) + len(buffers.pods) + len(rescheduled),
        options=options,
        generated=generated,
        buffers=buffers,
        state_nodes=state_nodes,
        deleting=deleting,
    )


def _type_resources(catalogs: list[Sequence[InstanceType]], kept: dict[str, Any] | None) -> frozenset[str]:
    """The resources the types of ``catalogs`` have (kept while they are the same catalogs)."""
    got = kept.get("type_resources") if kept is not None else None
    if got is not None and same_objects(got[0], catalogs):
        return got[1]  # type: ignore[no-any-return]
    names: set[str] = set()
    for it in {id(it): it for types in catalogs for it in types}.values():
        names.update(it.capacity)
        names.update(it.allocatable())
    out = frozenset(names)
    if kept is not None:
        kept["type_resources"] = (catalogs, out)  # holds the catalogs: their ids are not reused
    return out


def pod_data(
    pod: Pod,
    *,
    space: ResourceSpace,
    options: PlanOptions,
    volumes: VolumeIndex | None,
    requests: ResourceList | None = None,
    memo: dict[tuple[object, ...], ResourceList] | None = None,
) -> PodData | str:
    """The round's :class:`PodData` of ``pod``, or the error that keeps it out of the round."""
    if requests is None:
        requests = _requests(pod, {} if memo is None else memo)
    try:
        vol_reqs = volumes.topology(pod) if volumes is not None else []
        return PodData(
            pod,
            space=space,
            ignore_preferences=options.preference_policy == "Ignore",
            requests=requests,
            volume_requirements=vol_reqs,
        )
    except RequirementError as exc:
        return FAILED + str(exc)
    except VolumeTopologyError as exc:
        return "ignoring pod, failed getting volume topology requirements, " + str(exc)


def plan(
    *,
    nodepools: Sequence[NodePool],
    cluster: ClusterState,
    catalog_for: CatalogFor,
    options: PlanOptions = PlanOptions(),
    workloads: Sequence[Input] = (),
    scales: Sequence[Scale] = (),
) -> PlanDocument:
    """Simulate one provisioning round; returns the plan document (``as_dict()``: ``plan -o json``).

    ``workloads``: Deployments, ReplicaSets, StatefulSets, Jobs, PodTemplates and CapacityBuffers of
    the branch (``-f``); they replace the cluster's of the same name, and the pods they would create
    (and the buffers hold) join the round; ``scales`` sets workloads' replicas first (a what-if
    ``kubectl scale``)."""
    rnd = prepare_round(
        nodepools=nodepools,
        cluster=cluster,
        catalog_for=catalog_for,
        options=options,
        workloads=workloads,
        scales=scales,
    )
    if not rnd.pools and rnd.datas:
        # provisioner.go Schedule: ErrNodePoolsNotFound marks every pod, existing nodes included
        errors = {**rnd.errors, **{d.pod.key: NO_DYNAMIC_NODEPOOLS for d in rnd.datas}}
        doc = rnd.annotate(
            PlanDocument(
                node_claims=(),
                existing_nodes=(),
                pod_errors=dict(sorted(errors.items())),
                summary=empty_summary(rnd.pending),
            )
        )
    else:
        doc = rnd.render(rnd.scheduler().solve(rnd.datas))
    from nodewright.scheduling.staticplan import add_round_extras  # renders with this module's helpers

    return add_round_extras(
        doc, nodepools=nodepools, cluster=cluster, catalog_for=catalog_for, options=options
    )
