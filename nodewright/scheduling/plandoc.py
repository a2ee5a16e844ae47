"""The typed answer of :func:`nodewright.scheduling.plan.plan` (``nodewright plan -o json``).

Frozen parts: the NodeClaims the round launches (:class:`PlannedNodeClaim`), the existing nodes that
receive pods (:class:`ExistingNodePods`), the pods that fail with Karpenter's reason, the cost
(:class:`PlanSummary`, :class:`PoolCost`) and what is not the Solve (pods the round added, NodePools
left out, static scale-down, notes). :meth:`PlanDocument.as_dict` is the one wire form (docs/cli.md):
its keys, their order and their values are the ``plan -o json|yaml`` document byte for byte.

Boundary: data and its wire form only; rendering a Solve into it is :mod:`.planrender`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict


class LaunchDict(TypedDict):
    """The wire form of a NodeClaim's launch (also a claims file entry's ``launch``)."""

    instanceType: str
    zone: str
    capacityType: str
    price: float


class NodeClaimDict(TypedDict):
    """The wire form of one planned NodeClaim (a claims file entry adds ``nodePoolHash``)."""

    name: str
    nodePool: str
    nodeClass: str
    instanceTypes: list[str]
    launch: LaunchDict | None
    labels: dict[str, str]
    requests: dict[str, str]
    pods: list[str]
    taints: NotRequired[list[dict[str, Any]]]
    minValuesRelaxed: NotRequired[bool]
    static: NotRequired[bool]
    nodePoolHash: NotRequired[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedLaunch:
    """The offering a NodeClaim launches on: its cheapest compatible one (price rounded to 4 places)."""

    instance_type: str
    zone: str
    capacity_type: str
    price: float

    def as_dict(self) -> LaunchDict:
        return {
            "instanceType": self.instance_type,
            "zone": self.zone,
            "capacityType": self.capacity_type,
            "price": self.price,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedNodeClaim:
    """One NodeClaim the round launches: instance types cheapest first, launch, labels, requests, pods."""

    name: str
    node_pool: str
    node_class: str
    instance_types: tuple[str, ...]
    launch: PlannedLaunch | None
    labels: Mapping[str, str]
    requests: Mapping[str, str]
    pods: tuple[str, ...]
    taints: tuple[Mapping[str, Any], ...] = ()
    min_values_relaxed: bool | None = None
    static: bool = False  # launched by the static provisioner (no pods of this round)

    def as_dict(self) -> NodeClaimDict:
        out: NodeClaimDict = {
            "name": self.name,
            "nodePool": self.node_pool,
            "nodeClass": self.node_class,
            "instanceTypes": list(self.instance_types),
            "launch": self.launch.as_dict() if self.launch is not None else None,
            "labels": dict(self.labels),
            "requests": dict(self.requests),
            "pods": list(self.pods),
        }
        if self.taints:
            out["taints"] = [dict(t) for t in self.taints]
        if self.min_values_relaxed is not None:
            out["minValuesRelaxed"] = self.min_values_relaxed
        if self.static:
            out["static"] = True
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class ExistingNodePods:
    """An existing node and the pending pods the round places on it."""

    name: str
    pods: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "pods": list(self.pods)}


@dataclass(frozen=True, slots=True, kw_only=True)
class PoolCost:
    """What one NodePool's new NodeClaims cost."""

    new_node_claims: int
    hourly_cost: float
    monthly_cost: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "newNodeClaims": self.new_node_claims,
            "hourlyCost": self.hourly_cost,
            "monthlyCost": self.monthly_cost,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanSummary:
    """Counts and cost of the round. The optional parts are present when they apply: pods the round
    added (workloads, CapacityBuffers), static NodeClaims (feature gate StaticCapacity), the cost
    strategy and the karpenter strategy's cost it is compared with."""

    pending_pods: int
    scheduled: int
    new_node_claims: int
    hourly_cost: float
    monthly_cost: float
    by_node_pool: Mapping[str, PoolCost]
    workload_pods: int | None = None
    buffer_pods: int | None = None
    static_node_claims: int | None = None
    strategy: str | None = None
    karpenter_hourly_cost: float | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "pendingPods": self.pending_pods,
            "scheduled": self.scheduled,
            "newNodeClaims": self.new_node_claims,
            "hourlyCost": self.hourly_cost,
            "monthlyCost": self.monthly_cost,
            "byNodePool": {pool: c.as_dict() for pool, c in self.by_node_pool.items()},
        }
        if self.workload_pods is not None or self.buffer_pods is not None:
            out["workloadPods"] = self.workload_pods or 0
            out["bufferPods"] = self.buffer_pods or 0
        if self.static_node_claims is not None:
            out["staticNodeClaims"] = self.static_node_claims
        if self.strategy is not None:
            out["strategy"] = self.strategy
            out["karpenterHourlyCost"] = self.karpenter_hourly_cost
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class SkippedNodePool:
    """A NodePool this Karpenter leaves alone, and why."""

    name: str
    why: str

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "why": self.why}


@dataclass(frozen=True, slots=True, kw_only=True)
class StaticScaleDown:
    """The NodeClaims the static deprovisioner deletes from one static NodePool."""

    node_pool: str
    node_claims: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"nodePool": self.node_pool, "nodeClaims": list(self.node_claims)}


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanDocument:
    """One simulated provisioning round (docs/cli.md, ``nodewright plan``).

    ``pod_errors``: pod key -> Karpenter's reason, sorted by key. ``generated_pods``: pod key -> the
    workload or CapacityBuffer that adds it. ``round_notes`` are the notes of those added pods
    (workloads, buffers), ``notes`` the others (static NodePools); the wire form lists them as one
    ``notes``. ``karpenter``: the release and settings the plan was made for (the CLI sets it)."""

    node_claims: tuple[PlannedNodeClaim, ...]
    existing_nodes: tuple[ExistingNodePods, ...]
    pod_errors: Mapping[str, str]
    summary: PlanSummary
    generated_pods: Mapping[str, str] = field(default_factory=dict)
    round_notes: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    skipped_node_pools: tuple[SkippedNodePool, ...] = ()
    static_scale_down: tuple[StaticScaleDown, ...] = ()
    karpenter: Mapping[str, Any] | None = None

    @property
    def all_notes(self) -> tuple[str, ...]:
        return (*self.round_notes, *self.notes)

    def placements(self) -> dict[str, PlannedNodeClaim | ExistingNodePods]:
        """Pod key -> the new NodeClaim or existing node it lands on."""
        out: dict[str, PlannedNodeClaim | ExistingNodePods] = {}
        for c in self.node_claims:
            for p in c.pods:
                out[p] = c
        for n in self.existing_nodes:
            for p in n.pods:
                out[p] = n
        return out

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "nodeClaims": [c.as_dict() for c in self.node_claims],
            "existingNodes": [n.as_dict() for n in self.existing_nodes],
            "podErrors": dict(self.pod_errors),
            "summary": self.summary.as_dict(),
        }
        if self.generated_pods:
            out["generatedPods"] = dict(self.generated_pods)
        # the round's own notes come first (and place the key); static NodePools' notes follow
        if self.round_notes:
            out["notes"] = [*self.round_notes, *self.notes]
        if self.skipped_node_pools:
            out["skippedNodePools"] = [s.as_dict() for s in self.skipped_node_pools]
        if self.static_scale_down:
            out["staticScaleDown"] = [s.as_dict() for s in self.static_scale_down]
        if self.notes and not self.round_notes:
            out["notes"] = list(self.notes)
        if self.karpenter is not None:
            out["karpenter"] = dict(self.karpenter)
        return out
