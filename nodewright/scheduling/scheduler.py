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

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from operator import le
from typing import Final

from nodewright import labels
from nodewright.algebra.requirements import Requirement
from nodewright.algebra.resources import ResourceList
from nodewright.api.core import Pod
from nodewright.api.karpenter import NodePool
from nodewright.catalog.model import InstanceType
from nodewright.scheduling.claimorder import ClaimOrder
from nodewright.scheduling.existingnode import ExistingNode, StateNode, twins_that_fit
from nodewright.scheduling.instancetypes import ResourceSpace, TypeIndex
from nodewright.scheduling.nodeclaim import (
    Failure,
    InflightClaim,
    Placement,
    Template,
    clear_interned,
    hostname_for,
)
from nodewright.scheduling.nodememo import NODES
from nodewright.scheduling.poddata import PodData
from nodewright.scheduling.preferences import Preferences
from nodewright.scheduling.queue import Queue
from nodewright.scheduling.reservations import ReservationManager
from nodewright.scheduling.schedbase import BEST_EFFORT, SchedulerBase, preferences_tolerating
from nodewright.scheduling.topology import Topology, TopologyError
from nodewright.scheduling.topologygroup import TopologyType
from nodewright.scheduling.twins import claim_room, claim_takes, twin_placement, twin_run
from nodewright.scheduling.volumes import VolumeIndex

log = logging.getLogger("nodewright")

NO_TEMPLATES: Final = "nodepool requirements filtered out all available instance types"
NODES_EXHAUSTED: Final = "node limits have been exhausted for nodepool"
LIMITS_EXCEEDED: Final = "all available instance types exceed limits for nodepool"
RESPECT: Final = "Respect"
IGNORE: Final = "Ignore"
STRICT: Final = "Strict"
__all__ = ["BEST_EFFORT", "NODES", "Scheduler", "SchedulerOptions", "SolveResult"]


@dataclass(frozen=True, kw_only=True)
class SchedulerOptions:
    preference_policy: str = RESPECT
    min_values_policy: str = STRICT
    reserved_fallback: bool = False


@dataclass(kw_only=True)
class SolveResult:
    new_claims: list[InflightClaim]
    errors: dict[str, str]
    templates: list[Template]
    remaining: dict[str, ResourceList] = field(default_factory=dict)
    # the solve's existing nodes by position, and the positions left out of it
    nodes: list[ExistingNode] = field(default_factory=list)
    excluded: frozenset[int] = frozenset()
    # the positions of the nodes that took pods, ascending (None: not tracked, any may have)
    took: list[int] | None = None

    @property
    def existing(self) -> list[ExistingNode]:
        """The existing nodes, in order, without those left out."""
        if not self.excluded:
            return self.nodes
        return [n for i, n in enumerate(self.nodes) if i not in self.excluded]

    def placed_on(self) -> list[ExistingNode]:
        """The existing nodes that took pods, in order (when not tracked: every node)."""
        if self.took is None:
            return self.existing
        return [self.nodes[i] for i in self.took]


def _nodepool_ref(name: str) -> str:
    return f" (NodePool={name})"


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
        base = SchedulerBase(
            nodepools=nodepools,
            instance_types=instance_types,
            state_nodes=state_nodes,
            daemonset_pods=daemonset_pods,
            space=space,
            volumes=volumes,
            min_values_policy=options.min_values_policy,
            type_cache=type_cache,
        )
        self._start(base, topology, options, ())

    @classmethod
    def over(
        cls,
        base: SchedulerBase,
        topology: Topology,
        options: SchedulerOptions,
        excluded: Sequence[int] = (),
    ) -> Scheduler:
        """A solve from ``base`` without its existing nodes at positions ``excluded`` (ascending):
        the same decisions as a Scheduler built over the state nodes without them. The pods it
        solves are shared with other solves: it changes a copy of each pod it tries (relaxation,
        memos) and leaves the others as they are."""
        self = cls.__new__(cls)
        self._start(base, topology, options, excluded)
        self._shared_pods = True
        return self

    def _start(
        self, base: SchedulerBase, topology: Topology, options: SchedulerOptions, excluded: Sequence[int]
    ) -> None:
        clear_interned()
        self._shared_pods = False
        self.topology = topology
        self.space = base.space
        self.options = options
        self.relax_min_values = base.relax_min_values
        self.preferences = Preferences(tolerate_prefer_no_schedule=base.tolerate_prefer_no_schedule)
        self.reservations = ReservationManager(base.reserved_types)
        self.allow_undefined = base.allow_undefined
        self.templates: list[Template] = list(base.templates)
        self.remaining: dict[str, ResourceList] = dict(base.remaining)
        self._cow = base.shared
        self._owned: set[int] = set()
        self._excluded = frozenset(excluded)
        if self._cow:
            self.existing: list[ExistingNode] = list(base.existing)
            self._fit = base.fit.copy(self.existing)
            self._node_keys: dict[str, int] = dict(base.node_keys)
        else:
            self.existing, self._fit, self._node_keys = base.existing, base.fit, base.node_keys
        node_keys = self._node_keys
        for i in excluded:
            self._fit.exclude(i)
            for req_key in self.existing[i].requirements:
                node_keys[req_key] -= 1
            charge = base.charges.get(id(self.existing[i]))
            if charge is not None:
                # the node's share of its NodePool's limits goes back (limits minus the others)
                pool, taken = charge
                self.remaining[pool] = {k: v + taken.get(k, 0) for k, v in self.remaining[pool].items()}
        if topology.has_groups_of(labels.HOSTNAME):
            for i, n in enumerate(self.existing):
                if i not in self._excluded:
                    topology.register(labels.HOSTNAME, n.hostname)
        self.claims: list[InflightClaim] = []
        # a solve may stop once it has opened more NodeClaims than this (see drain)
        self.claim_limit: int | None = None
        self._order = ClaimOrder()
        self._hostnames = 0
        self._hostname_blocked: dict[str, int] = {}
        self._domain_index: dict[str, dict[Requirement, int]] = {}
        # the last pod placed on an in-flight NodeClaim (see _twin) and whether every other claim
        # refused it
        self._last: tuple[PodData, InflightClaim, bool] | None = None
        # the last pod placed on an existing node (without topology) and that node's position
        self._last_node: tuple[PodData, int] | None = None
        self._at = -1

    @staticmethod
    def preferences_tolerating(pod: Pod) -> Pod:
        return preferences_tolerating(pod)

    # -- solve -------------------------------------------------------------------------------------
    def solve(self, pods: Sequence[PodData]) -> SolveResult:
        return self.finish(self.drain(pods))

    def drain(self, pods: Sequence[PodData]) -> dict[str, str]:
        """The queue loop over ``pods``; returns the errors of those that never fit."""
        errors: dict[str, str] = {}
        queue: Queue[PodData] = Queue(pods)
        limit = self.claim_limit
        self._last = self._last_node = None
        hooked = type(self)._placed is not Scheduler._placed
        shared = self._shared_pods
        while (pod := queue.pop()) is not None:
            if shared:
                pod = pod.fresh()  # the solve's own copy: trying it may relax and memoise on it
            err = self._try_schedule(pod)
            if limit is not None and len(self.claims) > limit:
                break  # the caller rejects any result with this many NodeClaims
            if err is None:
                errors.pop(pod.key, None)
                self._placed(pod)
                last, at = self._last, self._last_node
                run: list[PodData] = []
                if last is not None and last[0] is pod and last[2]:
                    run = self._place_run(queue)
                elif at is not None and at[0] is pod:
                    run = self._fill_node(queue, at[1])
                if errors:
                    for placed in run:
                        errors.pop(placed.key, None)
                if hooked:
                    for placed in run:
                        self._placed(placed)
                continue
            errors[pod.key] = err
            pod.reset()
            self.topology.update(pod.pod)
            queue.push(pod)
        return errors

    def _placed(self, pod: PodData) -> None:
        """Called by the queue loop for each pod it placed, in order (a hook: nothing here)."""

    def finish(self, errors: dict[str, str]) -> SolveResult:
        """Finalize every NodeClaim and collect the result."""
        for claim in self.claims:
            claim.finalize()
        return SolveResult(
            new_claims=self.claims,
            nodes=self.existing,
            excluded=self._excluded,
            # copy-on-write: only the nodes cloned in this solve took pods (none left out)
            took=sorted(self._owned) if self._cow else None,
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
        node_keys = self._node_keys
        for r in pod.requirements.values():
            if not r.negative and not node_keys.get(r.key):
                return False  # every node would refuse it in can_add: same decisions, no scan
        for i in self._fit.candidates(pod.requests):  # only nodes with room: same decisions, no rescans
            node = existing[i]
            got = node.can_add(pod, topo)
            if not isinstance(got, Failure):
                if self._cow and i not in self._owned:  # the base's node stays as it was
                    node = existing[i] = node.clone()
                    self._owned.add(i)
                self._last = None  # an existing node changed
                self._at = i
                before = node.requirements
                node.add(pod, got, topo)
                for key in node.requirements:
                    if key not in before:
                        node_keys[key] = node_keys.get(key, 0) + 1
                self._fit.update(i)
                return True
        return False

    def _twin(self, pod: PodData) -> bool:
        """Place ``pod`` on the NodeClaim its twin (the pod placed just before it) went to, when the
        full scan certainly would (see :func:`~.twins.twin_placement`). False: no answer, scan."""
        assert self._last is not None
        prev, claim, all_refused = self._last
        placed = twin_placement(
            claim,
            prev,
            pod,
            None if all_refused else self._order.buckets,
            self.topology,
            self.reservations,
            strict_reserved=not self.options.reserved_fallback,
        )
        if placed is None:
            return False
        self._place_on(claim, pod, placed)
        self._last = (pod, claim, all_refused)
        return True

    def _place_run(self, queue: Queue[PodData]) -> list[PodData]:
        """The twins next in the queue of the pod just placed on a NodeClaim that every other claim
        refused (see _twin), placed there at once as far as it takes them, one after the other:
        the same placements as popping and scanning each. Returns those placed."""
        assert self._last is not None
        prev, claim, _ = self._last
        topo = self.topology
        got = claim_takes(
            claim,
            twin_run(queue, prev, topo, max(0, claim_room(claim, prev.vec))),
            topo,
            self.reservations,
            strict_reserved=not self.options.reserved_fallback,
        )
        if got is None:
            return []
        taken, placed, kept = got
        queue.drop(len(taken))
        old = len(claim.pods)
        before = {key: claim.domain(key) for key in self._domain_index}
        claim.add_run(taken, placed.requirements, kept, topo)
        self._order.moved(claim, old)
        self._track(claim, before)
        self._last = (taken[-1], claim, True)
        return taken

    def _fill_node(self, queue: Queue[PodData], i: int) -> list[PodData]:
        """The twins next in the queue of the pod just placed on existing node ``i``, placed there
        at once as far as its room takes them: every node before it refused their twin and is
        unchanged, and it accepts each while its remaining resources fit one more (its
        requirements already hold the twin's). Returns those placed."""
        assert self._last_node is not None
        prev = self._last_node[0]
        topo = self.topology
        node = self.existing[i]
        run = twin_run(queue, prev, topo, twins_that_fit(prev.requests, node.remaining, 1 << 30))
        n = len(run)
        if not n:
            return []
        taken = run[:n]
        queue.drop(n)
        node.add_run(taken, topo)
        self._fit.update(i)
        self._last_node = (taken[-1], i)
        return taken

    def _add(self, pod: PodData) -> Failure | None:
        topo = self.topology
        has_topology = topo.has_groups_for(pod.current)
        if self._last is not None:
            if not has_topology and self._twin(pod):
                return None
            self._last = None
        if self._on_existing(pod):
            if not has_topology:
                self._last_node = (pod, self._at)
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
                    if not has_topology and not claim.template.has_reserved:
                        self._last = (pod, claim, False)
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
        failure = self._add_new(pod, has_topology)
        if failure is None and not has_topology and not self.claims[-1].template.has_reserved:
            self._last = (pod, self.claims[-1], True)
        return failure

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
        self._last = None  # the caller says whether the next twin may follow (see _twin)
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
            self._last = None  # the caller says whether the next twin may follow (see _twin)
            claim.add(pod, placed, self.topology, self.reservations)
            self.claims.append(claim)
            self._order.add(claim)
            self._track(claim, None)
            if remaining is not None:
                cap = tmpl.types.max_capacity(claim.options)
                self.remaining[tmpl.name] = {k: v - cap.get(k, 0) for k, v in remaining.items()}
            return None
        return Failure("; ".join(str(e) for e in errs), reserved=reserved)
