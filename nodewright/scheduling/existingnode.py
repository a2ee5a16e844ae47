"""Existing capacity: cluster state nodes and the scheduler's view of them (Karpenter
``state/statenode.go``, ``existingnode.go``).

A :class:`StateNode` merges a Node with its NodeClaim, or stands for an in-flight NodeClaim that
has no Node yet. :class:`ExistingNode` is a state node during one round: remaining resources
(available minus the part of compatible daemonset requests not yet bound), requirements from its
labels plus hostname, host ports and volume usage, and the pods placed on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nodewright import labels
from nodewright.algebra.requirements import Requirement, Requirements
from nodewright.algebra.resources import (
    ResourceList,
    add,
    fits,
    parse_resource_list,
    requests_for_pod,
    subtract,
)
from nodewright.algebra.taints import is_tolerated, tolerates
from nodewright.api.core import Node, Pod, Taint
from nodewright.api.karpenter import NodeClaim as NodeClaimModel
from nodewright.scheduling import podutil
from nodewright.scheduling.hostports import CONFLICT, HostPortUsage, host_ports
from nodewright.scheduling.nodeclaim import Failure
from nodewright.scheduling.poddata import PodData
from nodewright.scheduling.podrequirements import pod_requirements
from nodewright.scheduling.topology import TopologyError
from nodewright.scheduling.volumes import VolumeUsage

if TYPE_CHECKING:
    from nodewright.scheduling.topology import Topology


def _is_ephemeral_taint(t: Taint) -> bool:
    if t.key.startswith(labels.EPHEMERAL_TAINT_KEY_PREFIX):
        return True
    for key, value, effect in labels.KNOWN_EPHEMERAL_TAINTS:
        if t.key == key and t.effect == effect and (value is None or t.value == value):
            return True
    return False


@dataclass(kw_only=True)
class StateNode:
    """A Node and/or its NodeClaim, with what is bound to it."""

    name: str
    node: Node | None
    nodeclaim: NodeClaimModel | None
    pods: list[Pod] = field(default_factory=list)
    # facts derived from this (unchanging once built) state node, by whoever derives them
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def managed(self) -> bool:
        return self.nodeclaim is not None or (
            self.node is not None and labels.NODEPOOL in self.node.metadata.labels
        )

    def labels(self) -> dict[str, str]:
        if self.node is not None:
            return dict(self.node.metadata.labels)
        assert self.nodeclaim is not None
        out = Requirements.from_node_selector_requirements(self.nodeclaim.spec.requirements).labels(
            include_restricted=True
        )
        out.update(self.nodeclaim.metadata.labels)
        return out

    def label(self, key: str) -> str | None:
        """``labels().get(key)`` without copying the labels."""
        if self.node is not None:
            return self.node.metadata.labels.get(key)
        return self.labels().get(key)

    def hostname(self) -> str:
        if self.node is not None:
            return self.node.metadata.labels.get(labels.HOSTNAME) or self.name
        return self.name

    def initialized(self) -> bool:
        got = self.memo.get("initialized")
        if got is None:
            got = self.memo["initialized"] = self._initialized()
        return bool(got)

    def _initialized(self) -> bool:
        if self.node is None:
            return False
        if self.nodeclaim is None and labels.NODEPOOL not in self.node.metadata.labels:
            return True
        return self.node.metadata.labels.get(labels.NODE_INITIALIZED) == "true"

    def marked_for_deletion(self) -> bool:
        got = self.memo.get("marked")
        if got is None:
            got = self.memo["marked"] = self._marked_for_deletion()
        return bool(got)

    def _marked_for_deletion(self) -> bool:
        if self.node is not None and (
            self.node.metadata.deletion_timestamp is not None
            or any(t.key == labels.DISRUPTED_TAINT_KEY for t in self.node.spec.taints)
        ):
            return True
        return self.nodeclaim is not None and self.nodeclaim.metadata.deletion_timestamp is not None

    def taints(self) -> list[Taint]:
        if self.node is not None:
            taints = list(self.node.spec.taints)
        else:
            assert self.nodeclaim is not None
            taints = list(self.nodeclaim.spec.taints)
        if not self.initialized() and self.managed:
            startup = list(self.nodeclaim.spec.startup_taints) if self.nodeclaim is not None else []
            taints = [
                t
                for t in taints
                if not _is_ephemeral_taint(t)
                and not any(s.key == t.key and s.effect == t.effect for s in startup)
            ]
        return taints

    def _from_claim(self) -> bool:
        """Until a managed node is initialized its NodeClaim's status is the truth (Karpenter)."""
        return self.nodeclaim is not None and (self.node is None or not self.initialized())

    def capacity(self) -> ResourceList:
        if self._from_claim() and self.nodeclaim is not None and self.nodeclaim.status.capacity:
            return parse_resource_list(self.nodeclaim.status.capacity)
        if self.node is not None:
            return parse_resource_list(self.node.status.capacity)
        return {}

    def allocatable(self) -> ResourceList:
        if self._from_claim() and self.nodeclaim is not None and self.nodeclaim.status.allocatable:
            return parse_resource_list(self.nodeclaim.status.allocatable)
        if self.node is not None:
            return parse_resource_list(self.node.status.allocatable)
        return {}

    def active_pods(self) -> list[Pod]:
        return [p for p in self.pods if not podutil.is_terminal(p)]

    def available(self, active: Sequence[Pod] | None = None) -> ResourceList:
        """Allocatable minus the active pods' requests (``active``: :meth:`active_pods`, when the
        caller already has them)."""
        pods = self.active_pods() if active is None else active
        return subtract(self.allocatable(), add({}, *(requests_for_pod(p) for p in pods)))

    def daemonset_requests(self, active: Sequence[Pod] | None = None) -> ResourceList:
        """The requests of the active DaemonSet pods (``active``: as for :meth:`available`)."""
        pods = self.active_pods() if active is None else active
        return add({}, *(requests_for_pod(p) for p in pods if podutil.is_owned_by_daemonset(p)))

    def nodepool(self) -> str | None:
        return self.labels().get(labels.NODEPOOL)


def build_state_nodes(
    nodes: Sequence[Node], nodeclaims: Sequence[NodeClaimModel], pods: Sequence[Pod]
) -> list[StateNode]:
    """Merge Nodes with their NodeClaims (by provider ID, then node name); in-flight claims too."""
    by_provider = {nc.status.provider_id: nc for nc in nodeclaims if nc.status.provider_id}
    by_node_name = {nc.status.node_name: nc for nc in nodeclaims if nc.status.node_name}
    used: set[int] = set()
    out: list[StateNode] = []
    for node in nodes:
        nc = by_provider.get(node.spec.provider_id or "") if node.spec.provider_id else None
        if nc is None:
            nc = by_node_name.get(node.metadata.name)
        if nc is not None:
            used.add(id(nc))
        out.append(StateNode(name=node.metadata.name, node=node, nodeclaim=nc))
    for nc in nodeclaims:
        if id(nc) not in used:
            out.append(StateNode(name=nc.metadata.name, node=None, nodeclaim=nc))
    by_name = {s.name: s for s in out if s.node is not None}
    for p in pods:
        if p.spec.node_name and p.spec.node_name in by_name:
            by_name[p.spec.node_name].pods.append(p)
    return out


@dataclass(frozen=True, slots=True)
class _Untolerated:
    """A taint rejection whose text (Karpenter's ``Tolerates`` error) is built on ``str()``."""

    taints: Sequence[Taint]
    tolerations: Sequence[Any]

    def __str__(self) -> str:
        return tolerates(self.taints, self.tolerations) or ""


class ExistingNode:
    """A state node during one scheduling round."""

    def __init__(
        self,
        state: StateNode,
        *,
        daemon_requests: ResourceList,
        volume_usage: VolumeUsage,
    ) -> None:
        self.state = state
        self.name = state.name
        self.hostname = state.hostname()
        self.initialized = state.initialized()
        self.order = (not self.initialized, self.name)
        self.taints = state.taints()
        active = state.active_pods()  # read once for the three uses below
        bound = state.daemonset_requests(active)
        missing = {k: max(0, v) for k, v in subtract(daemon_requests, bound).items()}
        self.remaining: ResourceList = subtract(state.available(active), missing)
        self.requirements = Requirements.from_labels(state.labels())
        self.requirements.add(Requirement.new(labels.HOSTNAME, "In", (self.hostname,)))
        self.ports = HostPortUsage()
        for p in active:
            self.ports.add(p.key, host_ports(p))
        self.volumes = volume_usage
        self.pods: list[PodData] = []

    def clone(self) -> ExistingNode:
        """A copy a solve may change without touching this one (what :meth:`add` mutates is copied;
        ``remaining`` and ``requirements`` are replaced by :meth:`add`, never changed in place)."""
        out = ExistingNode.__new__(ExistingNode)
        out.state = self.state
        out.name = self.name
        out.hostname = self.hostname
        out.initialized = self.initialized
        out.order = self.order
        out.taints = self.taints
        out.remaining = self.remaining
        out.requirements = self.requirements
        out.ports = self.ports.copy()
        out.volumes = self.volumes.copy()
        out.pods = list(self.pods)
        return out

    def can_add(self, pod: PodData, topology: Topology) -> Requirements | Failure:
        if self.taints and not is_tolerated(self.taints, pod.current.spec.tolerations):
            # the common rejection beside many nodes: the text is only built if someone reads it
            return Failure(_Untolerated(self.taints, pod.current.spec.tolerations))
        vol_err = self.volumes.exceeds_limits(pod.pod)
        if vol_err is not None:
            return Failure("checking volume usage, " + vol_err)
        if pod.ports and self.ports.conflicts(pod.key, pod.ports):
            return Failure("checking host port usage, " + CONFLICT)
        if not fits(pod.requests, self.remaining):
            return Failure("exceeds node resources")
        err = self.requirements.incompatibility(pod.requirements)
        if err is not None:  # its text (and "typo of" hint) is built only if printed
            return Failure(err)
        base = self.requirements.copy()
        base.add_all(pod.requirements)
        last: Failure | None = None
        for vol in pod.volume_requirements or (None,):
            reqs = base
            if vol is not None:
                verr = reqs.compatible(vol)
                if verr is not None:
                    last = Failure("incompatible volume requirements, " + verr)
                    continue
                reqs = reqs.copy()
                reqs.add_all(vol)
            if topology.has_groups_for(pod.current):
                try:
                    narrowed = topology.add_requirements(
                        pod.current,
                        taints=self.taints,
                        strict_requirements=pod.strict,
                        nodeclaim_requirements=reqs,
                    )
                except TopologyError as exc:
                    last = Failure(exc)
                    continue
                if narrowed is not reqs:
                    terr = reqs.compatible(narrowed)
                    if terr is not None:
                        last = Failure(terr)
                        continue
                    reqs = narrowed
            return reqs
        assert last is not None
        return last

    def add_run(self, pods: Sequence[PodData], topology: Topology) -> None:
        """``add`` of twins of the last pod added (no host ports, no volume claims, requirements
        it already holds), one after the other, at once."""
        self.pods.extend(pods)
        n = len(pods)  # twins ask for the same: their sum is the first one's times n
        self.remaining = subtract(self.remaining, {k: v * n for k, v in pods[0].requests.items()})
        for p in pods:
            topology.record(p.current, taints=self.taints, requirements=self.requirements)
            self.volumes.add(p.pod)

    def add(self, pod: PodData, reqs: Requirements, topology: Topology) -> None:
        self.pods.append(pod)
        self.remaining = subtract(self.remaining, pod.requests)
        self.requirements = reqs
        topology.record(pod.current, taints=self.taints, requirements=reqs)
        if pod.ports:
            self.ports.add(pod.key, pod.ports)
        self.volumes.add(pod.pod)


def twins_that_fit(requests: Mapping[str, int], remaining: Mapping[str, int], limit: int) -> int:
    """How many pods asking ``requests`` each fit one after the other in ``remaining`` (as
    ``fits`` decides each after the ones before were subtracted), at most ``limit``."""
    if any(v < 0 for v in remaining.values()):
        return 0
    n = limit
    for name, value in requests.items():
        if value < 0:
            return 0
        if value > 0:
            n = min(n, remaining.get(name, 0) // value)
    return n


def daemon_compatible_with_node(pod: Pod, taints: Sequence[Taint], node_labels: dict[str, str]) -> bool:
    if tolerates(taints, pod.spec.tolerations) is not None:
        return False
    return (
        Requirements.from_labels(node_labels).compatible(pod_requirements(pod, include_preferred=False))
        is None
    )
