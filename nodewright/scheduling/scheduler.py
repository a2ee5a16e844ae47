"""The Solve loop (Karpenter ``scheduler.go``): pending pods onto existing nodes, in-flight
NodeClaims and new NodeClaims, relaxing preferences when a pod does not fit.

Order of a placement attempt (``add``): existing nodes (initialized first, then by name; the
first that accepts wins), in-flight NodeClaims (fewest pods first; ties by creation order), then a
new NodeClaim per template in weight order (the first that accepts wins; limits are checked first:
``nodes`` exhausted, then instance types filtered by remaining limits). On failure the pod is
relaxed one step at a time (:mod:`.preferences`) and retried; a pod that still fails goes to the
back of the queue, which stops after a full cycle without progress.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from operator import le
from typing import Final

from nodewright import labels
from nodewright.algebra.requirements import ALLOW_UNDEFINED_WELL_KNOWN, Requirement, Requirements
from nodewright.algebra.resources import ResourceList, parse_resource_list, requests_for_pods, subtract
from nodewright.algebra.taints import tolerates
from nodewright.api.core import Pod
from nodewright.api.karpenter import NodePool
from nodewright.catalog.model import InstanceType
from nodewright.scheduling.existingnode import ExistingNode, FitIndex, StateNode, daemon_compatible_with_node
from nodewright.scheduling.hostports import HostPortUsage, host_ports
from nodewright.scheduling.instancetypes import ResourceSpace, TypeIndex, iter_bits
from nodewright.scheduling.nodeclaim import (
    DaemonGroup,
    Failure,
    InflightClaim,
    Placement,
    Template,
    clear_interned,
    hostname_for,
    template_requirements,
)
from nodewright.scheduling.poddata import PodData
from nodewright.scheduling.podrequirements import pod_requirements
from nodewright.scheduling.preferences import Preferences, remove_required_node_affinity_term
from nodewright.scheduling.queue import Queue
from nodewright.scheduling.reservations import ReservationManager
from nodewright.scheduling.topology import Topology, TopologyError
from nodewright.scheduling.topologygroup import TopologyType
from nodewright.scheduling.volumes import VolumeIndex, VolumeUsage

log = logging.getLogger("nodewright")

NO_TEMPLATES: Final = "nodepool requirements filtered out all available instance types"
NODES_EXHAUSTED: Final = "node limits have been exhausted for nodepool"
LIMITS_EXCEEDED: Final = "all available instance types exceed limits for nodepool"
NODES: Final = "nodes"
RESPECT: Final = "Respect"
IGNORE: Final = "Ignore"
STRICT: Final = "Strict"
BEST_EFFORT: Final = "BestEffort"


@dataclass(frozen=True, kw_only=True)
class SchedulerOptions:
    preference_policy: str = RESPECT
    min_values_policy: str = STRICT
    reserved_fallback: bool = False


@dataclass(kw_only=True)
class SolveResult:
    new_claims: list[InflightClaim]
    existing: list[ExistingNode]
    errors: dict[str, str]
    templates: list[Template]
    remaining: dict[str, ResourceList] = field(default_factory=dict)


def _nodepool_ref(name: str) -> str:
    return f" (NodePool={name})"


class _ClaimOrder:
    """In-flight NodeClaims ordered by (pod count, creation index), as bitmasks of claim indices.

    Each pod count has one ``int`` whose bit *i* is claim *i*; a scan walks counts ascending and,
    within a count, indices ascending (lowest set bit first), skipping whole sets of claims with
    one AND-NOT instead of visiting them.
    """

    def __init__(self) -> None:
        self.buckets: dict[int, int] = {}
        self.counts: list[int] = []

    def add(self, claim: InflightClaim) -> None:
        self._insert(len(claim.pods), 1 << claim.index)

    def _insert(self, count: int, bit: int) -> None:
        mask = self.buckets.get(count)
        if mask is None:
            bisect.insort(self.counts, count)
            self.buckets[count] = bit
        else:
            self.buckets[count] = mask | bit

    def moved(self, claim: InflightClaim, old_count: int) -> None:
        bit = 1 << claim.index
        mask = self.buckets[old_count] & ~bit
        if mask:
            self.buckets[old_count] = mask
        else:
            del self.buckets[old_count]
            self.counts.remove(old_count)
        self._insert(len(claim.pods), bit)


class Scheduler:
    """One provisioning round (see module docstring)."""

    def __init__(
        self,
        *,
        nodepools: Sequence[NodePool],
        instance_types: Mapping[str, Sequence[InstanceType]],
        state_nodes: Sequence[StateNode],
        daemonset_pods: Sequence[Pod],
        topology: Topology,
        space: ResourceSpace,
        volumes: VolumeIndex | None = None,
        options: SchedulerOptions = SchedulerOptions(),
        type_cache: dict[tuple[object, ...], TypeIndex | None] | None = None,
    ) -> None:
        """``type_cache``: where each NodePool's filtered :class:`TypeIndex` is kept between rounds
        over the same NodePools, instance types and resource space (its memos are pure)."""
        clear_interned()
        self.topology = topology
        self.space = space
        self.options = options
        self.relax_min_values = options.min_values_policy == BEST_EFFORT
        self.preferences = Preferences(
            tolerate_prefer_no_schedule=any(
                t.effect == "PreferNoSchedule" for np in nodepools for t in np.spec.template.spec.taints
            )
        )
        # NodePools of one NodeClass share their type objects: each distinct type once
        all_types = list({id(it): it for np in nodepools for it in instance_types.get(np.name, ())}.values())
        self.reservations = ReservationManager(all_types)
        provider_keys: set[str] = set()
        for it in all_types:
            provider_keys.update(it.requirements.keys())
        self.allow_undefined = ALLOW_UNDEFINED_WELL_KNOWN | provider_keys
        self.templates: list[Template] = []
        for np in nodepools:
            its = instance_types.get(np.name, ())
            if not its:
                continue
            reqs = template_requirements(np)
            key = (np.name, id(np), tuple(its), tuple(space.names), self.relax_min_values)
            if type_cache is not None and key in type_cache:
                index = type_cache[key]
            else:
                index = self._template_types(np, reqs, its, space)
                if type_cache is not None:
                    type_cache[key] = index
            if index is None:
                continue
            tmpl = Template(index=len(self.templates), nodepool=np, requirements=reqs, types=index, groups=[])
            tmpl.allow_undefined = self.allow_undefined
            tmpl.groups = self._daemon_groups(tmpl, daemonset_pods)
            self.templates.append(tmpl)
        self.remaining: dict[str, ResourceList] = {
            np.name: parse_resource_list(np.spec.limits) for np in nodepools if np.spec.limits
        }
        self.existing: list[ExistingNode] = []
        for sn in state_nodes:
            taints = sn.taints()
            node_labels = sn.labels()
            daemons = [p for p in daemonset_pods if daemon_compatible_with_node(p, taints, node_labels)]
            daemon_requests = requests_for_pods(daemons) if daemons else {}
            self.existing.append(
                ExistingNode(
                    sn,
                    daemon_requests=daemon_requests,
                    volume_usage=VolumeUsage(volumes, sn.name, sn.active_pods()),
                )
            )
            pool = node_labels.get(labels.NODEPOOL)
            if pool is not None and pool in self.remaining:
                self.remaining[pool] = subtract(self.remaining[pool], {**sn.capacity(), NODES: 1000})
        self.existing.sort(key=lambda n: (not n.initialized, n.name))
        self._fit = FitIndex(self.existing)
        for n in self.existing:
            topology.register(labels.HOSTNAME, n.hostname)
        self.claims: list[InflightClaim] = []
        self._order = _ClaimOrder()
        self._hostnames = 0
        self._hostname_blocked: dict[str, int] = {}
        self._domain_index: dict[str, dict[Requirement, int]] = {}

    # -- construction helpers ----------------------------------------------------------------------
    def _template_types(
        self, np: NodePool, reqs: Requirements, its: Sequence[InstanceType], space: ResourceSpace
    ) -> TypeIndex | None:
        """The NodePool's compatible, offered, fitting instance types (None: none, with a warning)."""
        full = TypeIndex(its, space)
        entry = full.compat(reqs)
        mask = entry.compat & entry.offering & full.fit_mask((0,) * len(space.names))
        kept = [its[i] for i in iter_bits(mask)]
        if kept and reqs.has_min_values():
            from nodewright.scheduling.instancetypes import satisfies_min_values

            _, _, err = satisfies_min_values(reqs, kept)
            if err is not None and not self.relax_min_values:
                kept = []
        if not kept:
            log.warning(
                "NodePool %s: requirements filtered out all compatible available instance types", np.name
            )
            return None
        return TypeIndex(kept, space)

    def _daemon_groups(self, tmpl: Template, daemons: Sequence[Pod]) -> list[DaemonGroup]:
        groups: dict[tuple[str, ...], DaemonGroup] = {}
        prepared = []
        for p in daemons:
            # a daemon pod never respects PreferNoSchedule
            relaxed = self.preferences_tolerating(p)
            prepared.append(relaxed)
        taint_ok = [tolerates(tmpl.taints, p.spec.tolerations) is None for p in prepared]
        for i, it in enumerate(tmpl.types.types):
            compatible = [
                p
                for p, ok in zip(prepared, taint_ok, strict=True)
                if ok and self._daemon_fits_type(tmpl, it, p)
            ]
            key = tuple(sorted(p.key for p in compatible))
            g = groups.get(key)
            if g is None:
                overhead: ResourceList = requests_for_pods(compatible) if compatible else {}
                ports = HostPortUsage()
                for p in compatible:
                    ports.add(p.key, host_ports(p))
                g = groups[key] = DaemonGroup(0, overhead, self.space.vec(overhead), ports)
            g.mask |= 1 << i
        return list(groups.values())

    @staticmethod
    def preferences_tolerating(pod: Pod) -> Pod:
        from nodewright.scheduling.preferences import tolerate_prefer_no_schedule_taints

        relaxed = tolerate_prefer_no_schedule_taints(pod)
        return relaxed if relaxed is not None else pod

    @staticmethod
    def _daemon_fits_type(tmpl: Template, it: InstanceType, pod: Pod) -> bool:
        current: Pod | None = pod
        while current is not None:
            reqs = pod_requirements(current, include_preferred=False)
            if tmpl.requirements.is_compatible(
                reqs, allow_undefined=tmpl.allow_undefined
            ) and it.requirements.has_intersection(reqs):
                return True
            current = remove_required_node_affinity_term(current)
        return False

    # -- solve -------------------------------------------------------------------------------------
    def solve(self, pods: Sequence[PodData]) -> SolveResult:
        return self.finish(self.drain(pods))

    def drain(self, pods: Sequence[PodData]) -> dict[str, str]:
        """The queue loop over ``pods``; returns the errors of those that never fit."""
        errors: dict[str, str] = {}
        queue: Queue[PodData] = Queue(pods)
        while (pod := queue.pop()) is not None:
            err = self._try_schedule(pod)
            if err is None:
                errors.pop(pod.key, None)
                continue
            errors[pod.key] = err
            pod.reset()
            self.topology.update(pod.pod)
            queue.push(pod)
        return errors

    def finish(self, errors: dict[str, str]) -> SolveResult:
        """Finalize every NodeClaim and collect the result."""
        for claim in self.claims:
            claim.finalize()
        return SolveResult(
            new_claims=self.claims,
            existing=self.existing,
            errors=errors,
            templates=self.templates,
            remaining=self.remaining,
        )

    def _try_schedule(self, pod: PodData) -> str | None:
        while True:
            failure = self._add(pod)
            if failure is None:
                return None
            if failure.reserved:
                return str(failure)
            relaxed = self.preferences.relax(pod.current)
            if relaxed is None:
                return str(failure)
            pod.refresh(relaxed)
            self.topology.update(relaxed)

    def _on_existing(self, pod: PodData) -> bool:
        """Place ``pod`` on the first existing node that accepts it (Karpenter's order)."""
        topo = self.topology
        existing = self.existing
        for i in self._fit.candidates(pod.requests):  # only nodes with room: same decisions, no rescans
            node = existing[i]
            got = node.can_add(pod, topo)
            if not isinstance(got, Failure):
                node.add(pod, got, topo)
                self._fit.update(i)
                return True
        return False

    def _add(self, pod: PodData) -> Failure | None:
        topo = self.topology
        has_topology = topo.has_groups_for(pod.current)
        if self._on_existing(pod):
            return None
        sig = pod.topology_signature() if has_topology else ""
        skip = self._hostname_blocked.get(sig, 0) if has_topology else 0
        pvec = pod.vec
        strict_reserved = not self.options.reserved_fallback
        claims = self.claims
        order = self._order
        for count in list(order.counts):
            pending = order.buckets.get(count, 0) & ~skip
            while pending:
                low = pending & -pending
                pending ^= low
                claim = claims[low.bit_length() - 1]
                # cheap necessary conditions first: the largest remaining option has room, the
                # template's taints are tolerated
                if not all(map(le, pvec, claim.headroom)) or claim.template.tolerates(pod) is not None:
                    continue
                placed = claim.can_add(
                    pod,
                    topo,
                    self.reservations,
                    relax_min_values=False,
                    strict_reserved=strict_reserved,
                    has_topology=has_topology,
                )
                if isinstance(placed, Placement):
                    self._place_on(claim, pod, placed)
                    return None
                if not has_topology or not isinstance(placed.detail, TopologyError):
                    continue
                group = placed.detail.group
                if group.key == labels.HOSTNAME:
                    if group.type in (TopologyType.SPREAD, TopologyType.POD_ANTI_AFFINITY):
                        # counts only grow within a round: this hostname stays closed to such pods
                        self._hostname_blocked[sig] = self._hostname_blocked.get(sig, 0) | low
                elif not pod.volume_requirements:
                    # counts are constant during this scan: every claim with the same domains for
                    # this key is rejected by the same group
                    same = self._domain_mask(group.key, claim.domain(group.key))
                    skip |= same
                    pending &= ~same
        if not self.templates:
            return Failure(NO_TEMPLATES)
        return self._add_new(pod, has_topology)

    def _domain_mask(self, key: str, domain: Requirement) -> int:
        """Claims whose (interned) requirement for ``key`` is ``domain``; indexed on first use."""
        index = self._domain_index.get(key)
        if index is None:
            index = self._domain_index[key] = {}
            for c in self.claims:
                d = c.domain(key)
                index[d] = index.get(d, 0) | (1 << c.index)
        return index.get(domain, 0)

    def _track(self, claim: InflightClaim, before: dict[str, Requirement] | None) -> None:
        """Keep the domain index current after ``claim`` changed (``before``: its old domains)."""
        bit = 1 << claim.index
        for key, index in self._domain_index.items():
            new = claim.domain(key)
            if before is not None:
                old = before[key]
                if old is new:
                    continue
                index[old] = index.get(old, 0) & ~bit
            index[new] = index.get(new, 0) | bit

    def _place_on(self, claim: InflightClaim, pod: PodData, placed: Placement) -> None:
        old = len(claim.pods)
        before = {key: claim.domain(key) for key in self._domain_index}
        claim.add(pod, placed, self.topology, self.reservations)
        self._order.moved(claim, old)
        self._track(claim, before)

    def _add_new(
        self, pod: PodData, has_topology: bool, *, restrict: tuple[Template, int] | None = None
    ) -> Failure | None:
        """A new NodeClaim for ``pod`` from the first template that accepts it; ``restrict`` (a
        template and a mask of its instance types) opens one from that template and types only."""
        errs: list[Failure] = []
        reserved = False
        for tmpl in self.templates if restrict is None else (restrict[0],):
            options = tmpl.types.all if restrict is None else restrict[1]
            remaining = self.remaining.get(tmpl.name)
            if remaining is not None:
                nodes = remaining.get(NODES)
                if nodes is not None and nodes == 0:
                    errs.append(Failure(NODES_EXHAUSTED + _nodepool_ref(tmpl.name)))
                    continue
                options &= tmpl.types.within_limits_mask(remaining)
                if not options:
                    errs.append(Failure(LIMITS_EXCEEDED + _nodepool_ref(tmpl.name)))
                    continue
            self._hostnames += 1
            claim = InflightClaim(
                tmpl, index=len(self.claims), hostname=hostname_for(self._hostnames), options=options
            )
            placed = claim.can_add(
                pod,
                self.topology,
                self.reservations,
                relax_min_values=self.relax_min_values,
                strict_reserved=not self.options.reserved_fallback,
                has_topology=has_topology,
            )
            if isinstance(placed, Failure):
                errs.append(placed)
                if placed.reserved:
                    reserved = True
                    break
                continue
            claim.min_values_relaxed = bool(placed.unsatisfiable) if self.relax_min_values else None
            claim.add(pod, placed, self.topology, self.reservations)
            self.claims.append(claim)
            self._order.add(claim)
            self._track(claim, None)
            if remaining is not None:
                cap = tmpl.types.max_capacity(claim.options)
                self.remaining[tmpl.name] = {k: v - cap.get(k, 0) for k, v in remaining.items()}
            return None
        return Failure("; ".join(str(e) for e in errs), reserved=reserved)
