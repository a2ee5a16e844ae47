"""NodeClaim templates, daemon overhead groups and in-flight NodeClaims (Karpenter
``nodeclaimtemplate.go``, ``nodeclaim.go``).

A :class:`Template` is a NodePool ready to launch: its requirements (NodePool requirements,
template labels, ``karpenter.sh/nodepool``, the NodeClass label, ``registered``/``initialized``),
taints and pre-filtered instance types, grouped by the set of daemonset pods they would run. A
:class:`InflightClaim` is one simulated launch: requirements narrowed by every pod added, remaining
instance-type options (a bitmask over its template's types), summed requests (daemon overhead
is added only at finalisation), host ports per daemon group and reserved offerings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import sub
from typing import TYPE_CHECKING, Final

from nodewright import labels
from nodewright.algebra.requirements import ALLOW_UNDEFINED_WELL_KNOWN, Requirement, Requirements
from nodewright.algebra.resources import ResourceList, add, min_resources
from nodewright.algebra.taints import tolerates
from nodewright.api.core import Taint
from nodewright.api.karpenter import NodePool
from nodewright.catalog.model import Offering
from nodewright.scheduling.hostports import HostPortUsage
from nodewright.scheduling.instancetypes import (
    CompatEntry,
    InstanceTypeFilterError,
    TypeIndex,
    iter_bits,
    satisfies_min_values,
    vec_add,
)
from nodewright.scheduling.poddata import PodData

if TYPE_CHECKING:
    from nodewright.scheduling.reservations import ReservationManager
    from nodewright.scheduling.topology import Topology

HOSTNAME_PLACEHOLDER: Final = "hostname-placeholder-{:04d}"
RESERVED_NOT_RESERVABLE: Final = (
    "one or more instance types with compatible reserved offerings are available, but could not be reserved"
)
RESERVED_REMOVED: Final = (
    "satisfying updated nodeclaim constraints would remove all compatible reserved offering options"
)


# equal Requirements share one object, so membership tests hit on identity (cleared per round)
_INTERNED: dict[Requirement, Requirement] = {}


def clear_interned() -> None:
    _INTERNED.clear()


@dataclass(slots=True)
class Failure:
    """A rejected placement; ``str()`` is Karpenter's text (built lazily)."""

    detail: object
    reserved: bool = False

    def __str__(self) -> str:
        return str(self.detail)


@dataclass(slots=True)
class DaemonGroup:
    """Instance types of a template that run the same daemonset pods, and those pods' cost."""

    mask: int
    overhead: ResourceList
    overhead_vec: tuple[int, ...]
    ports: HostPortUsage = field(default_factory=HostPortUsage)

    def copy(self) -> DaemonGroup:
        return DaemonGroup(self.mask, self.overhead, self.overhead_vec, self.ports.copy())


def template_requirements(nodepool: NodePool) -> Requirements:
    """Karpenter ``NewNodeClaimTemplate`` requirements."""
    spec = nodepool.spec.template.spec
    reqs = Requirements.from_node_selector_requirements(spec.requirements)
    reqs.add_all(Requirements.from_labels(nodepool.spec.template.metadata.labels))
    reqs.add(Requirement.new(labels.NODEPOOL, "In", (nodepool.name,)))
    ref = spec.node_class_ref
    reqs.add(Requirement.new(f"{ref.group}/{ref.kind.lower()}", "In", (ref.name,)))
    reqs.add(Requirement.new(labels.NODE_REGISTERED, "In", ("true",)))
    reqs.add(Requirement.new(labels.NODE_INITIALIZED, "In", ("true",)))
    return reqs


class Template:
    """One NodePool as the scheduler launches it."""

    def __init__(
        self,
        *,
        index: int,
        nodepool: NodePool,
        requirements: Requirements,
        types: TypeIndex,
        groups: list[DaemonGroup],
    ) -> None:
        self.index = index
        self.nodepool = nodepool
        self.name = nodepool.name
        self.requirements = requirements
        self.taints: tuple[Taint, ...] = tuple(
            Taint(key=t.key, value=t.value, effect=t.effect) for t in nodepool.spec.template.spec.taints
        )
        self.types = types
        self.groups = groups
        # well-known labels plus every label the catalog's instance types define (the provider's own)
        self.allow_undefined: frozenset[str] = ALLOW_UNDEFINED_WELL_KNOWN
        self.has_reserved = any(
            o.capacity_type == labels.CAPACITY_TYPE_RESERVED for it in types.types for o in it.offerings
        )

    def tolerates(self, pod: PodData) -> str | None:
        memo = pod.tolerates
        if self.index in memo:
            return memo[self.index]
        err = tolerates(self.taints, pod.current.spec.tolerations) if self.taints else None
        memo[self.index] = err
        return err


@dataclass(slots=True)
class Placement:
    requirements: Requirements
    options: int
    reserve: list[Offering]
    unsatisfiable: dict[str, int]


def filter_instance_types(
    idx: TypeIndex,
    options: int,
    reqs: Requirements,
    pod: PodData,
    groups: Sequence[DaemonGroup],
    total: tuple[int, ...],
    *,
    relax_min_values: bool,
    entry: CompatEntry | None = None,
    min_values: bool | None = None,
) -> tuple[int, dict[str, int]] | InstanceTypeFilterError:
    """Karpenter ``filterInstanceTypesByRequirements`` over bitmasks; returns (kept, relaxed keys).
    ``entry``: ``idx.compat(reqs)``, when known; ``min_values``: ``reqs.has_min_values()``, when known."""
    if entry is None:
        entry = idx.compat(reqs)
    compat, offering = entry.compat, entry.offering
    kept = 0
    for g in groups:
        elig = options & g.mask
        if not elig or (pod.ports and g.ports.conflicts(pod.key, pod.ports)):
            continue
        fit = idx.fit_mask(vec_add(total, g.overhead_vec) if g.overhead else total) & offering
        kept |= elig & compat & fit
    unsatisfiable: dict[str, int] = {}
    min_values_error = None
    if kept and (reqs.has_min_values() if min_values is None else min_values):
        _, unsatisfiable, min_values_error = satisfies_min_values(
            reqs, [idx.types[i] for i in iter_bits(kept)]
        )
        if min_values_error is not None:
            if relax_min_values:
                min_values_error = None
            else:
                kept = 0
    if kept:
        return kept, unsatisfiable
    err = InstanceTypeFilterError(
        requirements=reqs, pod_requests=pod.requests, min_values_error=min_values_error
    )
    for g in groups:
        if pod.ports and g.ports.conflicts(pod.key, pod.ports):
            continue
        if g.overhead:
            err.track_daemon_overhead(g.overhead)
        elig = options & g.mask
        if not elig:
            continue
        fit = idx.fit_mask(vec_add(total, g.overhead_vec) if g.overhead else total) & offering
        c, o = elig & compat, elig & offering
        err.requirements_met |= bool(c)
        err.fits |= bool(elig & fit)
        err.has_offering |= bool(o)
        err.requirements_and_offering |= bool(c & offering & ~fit)
        err.fits_and_offering |= bool(elig & fit & ~compat)
    return err


class InflightClaim:
    """One simulated launch of a template."""

    __slots__ = (
        "_alloc",
        "_compat",
        "_domains",
        "groups",
        "headroom",
        "hostname",
        "index",
        "min_values_relaxed",
        "options",
        "pods",
        "requests",
        "requests_vec",
        "requirements",
        "reserved",
        "template",
    )

    def __init__(self, template: Template, *, index: int, hostname: str, options: int) -> None:
        self.template = template
        self.index = index
        self.hostname = hostname
        self.requirements = template.requirements.copy()
        self.requirements.add(Requirement.new(labels.HOSTNAME, "In", (hostname,)))
        self.options = options
        self.requests: ResourceList = {}
        self.requests_vec: tuple[int, ...] = (0,) * len(template.types.space.names)
        self.pods: list[PodData] = []
        self.groups = [g.copy() for g in template.groups]
        self.reserved: list[Offering] = []
        self.min_values_relaxed: bool | None = None
        self._alloc = (options, template.types.max_alloc(options))  # the options' largest allocatable
        self.headroom: tuple[int, ...] = self._alloc[1]
        self._domains: dict[str, Requirement] = {}
        self._compat: tuple[Requirements, CompatEntry, bool] | None = None

    def domain(self, key: str) -> Requirement:
        """The claim's requirement for ``key``, interned so equal domains are the same object."""
        got = self._domains.get(key)
        if got is None:
            req = self.requirements.get(key)
            got = self._domains[key] = _INTERNED.setdefault(req, req)
        return got

    def can_add(
        self,
        pod: PodData,
        topology: Topology,
        reservations: ReservationManager | None,
        *,
        relax_min_values: bool,
        strict_reserved: bool,
        has_topology: bool = True,
    ) -> Placement | Failure:
        tmpl = self.template
        taint_err = tmpl.tolerates(pod)
        if taint_err is not None:
            return Failure(taint_err)
        total = self.requests_vec
        base = self.requirements
        if len(pod.requirements):
            err = base.compatible(pod.requirements, allow_undefined=tmpl.allow_undefined)
            if err is not None:
                return Failure("incompatible requirements, " + err)
            base = base.copy()
            base.add_all(pod.requirements)
        alternatives: Sequence[Requirements | None] = pod.volume_requirements or (None,)
        last: Failure | None = None
        for vol in alternatives:
            reqs = base
            if vol is not None:
                err = reqs.compatible(vol, allow_undefined=self.template.allow_undefined)
                if err is not None:
                    last = Failure("incompatible volume requirements, " + err)
                    continue
                reqs = reqs.copy()
                reqs.add_all(vol)
            result = self._place(
                pod, reqs, total, topology, reservations, relax_min_values, strict_reserved, has_topology
            )
            if isinstance(result, Placement):
                return result
            last = result
        assert last is not None
        return last

    def _place(
        self,
        pod: PodData,
        reqs: Requirements,
        total: tuple[int, ...],
        topology: Topology,
        reservations: ReservationManager | None,
        relax_min_values: bool,
        strict_reserved: bool,
        has_topology: bool,
    ) -> Placement | Failure:
        tmpl = self.template
        if has_topology:
            from nodewright.scheduling.topology import TopologyError

            try:
                narrowed = topology.add_requirements(
                    pod.current,
                    taints=tmpl.taints,
                    strict_requirements=pod.strict,
                    nodeclaim_requirements=reqs,
                    allow_undefined=tmpl.allow_undefined,
                )
            except TopologyError as exc:
                return Failure(exc)
            if narrowed is not reqs:
                err = reqs.compatible(narrowed, allow_undefined=tmpl.allow_undefined)
                if err is not None:
                    return Failure(err)
                reqs = narrowed
        # most pods leave the claim's requirements as they are: their compatibility is kept
        known = self._compat
        if known is None or known[0] is not reqs:
            known = self._compat = (reqs, tmpl.types.compat(reqs), reqs.has_min_values())
        got = filter_instance_types(
            tmpl.types,
            self.options,
            reqs,
            pod,
            self.groups,
            vec_add(total, pod.vec),
            relax_min_values=relax_min_values,
            entry=known[1],
            min_values=known[2],
        )
        if isinstance(got, InstanceTypeFilterError):
            return Failure(got)
        kept, unsatisfiable = got
        if unsatisfiable and relax_min_values:
            for key, n in unsatisfiable.items():
                r = reqs.get(key)
                reqs = replace_requirement(
                    reqs,
                    Requirement(
                        r.key, complement=r.complement, values=r.values, gte=r.gte, lte=r.lte, min_values=n
                    ),
                )
        reserve: list[Offering] = []
        if tmpl.has_reserved and reservations is not None:
            reserve_or_err = self._offerings_to_reserve(kept, reqs, reservations, strict_reserved)
            if isinstance(reserve_or_err, Failure):
                return reserve_or_err
            reserve = reserve_or_err
        return Placement(requirements=reqs, options=kept, reserve=reserve, unsatisfiable=unsatisfiable)

    def _offerings_to_reserve(
        self, kept: int, reqs: Requirements, reservations: ReservationManager, strict: bool
    ) -> list[Offering] | Failure:
        has_compatible = False
        out: list[Offering] = []
        types = self.template.types.types
        for i in iter_bits(kept):
            for o in types[i].offerings:
                if (
                    o.capacity_type != labels.CAPACITY_TYPE_RESERVED
                    or not o.available
                    or o.reservation_id is None
                ):
                    continue
                if not reqs.is_compatible(o.requirements, allow_undefined=ALLOW_UNDEFINED_WELL_KNOWN):
                    continue
                has_compatible = True
                if reservations.can_reserve(self.hostname, o):
                    out.append(o)
        if strict:
            if has_compatible and not out:
                return Failure(RESERVED_NOT_RESERVABLE, reserved=True)
            if self.reserved and not out:
                return Failure(RESERVED_REMOVED, reserved=True)
        return out

    def add(
        self, pod: PodData, placement: Placement, topology: Topology, reservations: ReservationManager | None
    ) -> None:
        self.pods.append(pod)
        self.options = placement.options
        self.requests = add(self.requests, pod.requests)
        self.requests_vec = vec_add(self.requests_vec, pod.vec)
        if self._alloc[0] != self.options:
            self._alloc = (self.options, self.template.types.max_alloc(self.options))
        self.headroom = tuple(map(sub, self._alloc[1], self.requests_vec))
        self.requirements = placement.requirements
        self._domains = {}
        topology.register(labels.HOSTNAME, self.hostname)
        topology.record(
            pod.current,
            taints=self.template.taints,
            requirements=placement.requirements,
            allow_undefined=self.template.allow_undefined,
        )
        if pod.ports:
            for g in self.groups:
                g.ports.add(pod.key, pod.ports)
        if reservations is not None and self.template.has_reserved:
            reservations.reserve(self.hostname, placement.reserve)
            keep = {o.reservation_id for o in placement.reserve}
            for o in self.reserved:
                if o.reservation_id not in keep:
                    reservations.release(self.hostname, o)
            self.reserved = list(placement.reserve)

    def add_run(
        self, pods: Sequence[PodData], requirements: Requirements, options: int, topology: Topology
    ) -> None:
        """``add`` of twin pods (no host ports, no reservations) one after the other, at once:
        ``requirements`` and ``options`` are what the last one's placement leaves."""
        n = len(pods)
        first = pods[0]
        self.pods.extend(pods)
        self.options = options
        # twins ask for the same: their sum is the first one's times n (the same key order)
        self.requests = add(self.requests, {k: v * n for k, v in first.requests.items()})
        self.requests_vec = tuple(t + v * n for t, v in zip(self.requests_vec, first.vec, strict=True))
        if self._alloc[0] != options:
            self._alloc = (options, self.template.types.max_alloc(options))
        self.headroom = tuple(map(sub, self._alloc[1], self.requests_vec))
        self.requirements = requirements
        self._domains = {}
        topology.register(labels.HOSTNAME, self.hostname)
        if topology.is_empty():
            return  # record counts in no group
        for p in pods:
            topology.record(
                p.current,
                taints=self.template.taints,
                requirements=requirements,
                allow_undefined=self.template.allow_undefined,
            )

    def finalize(self) -> None:
        """Karpenter ``FinalizeScheduling``: drop hostname, pin reservations, add daemon overhead."""
        reqs = Requirements(r for r in self.requirements.values() if r.key != labels.HOSTNAME)
        if self.reserved:
            reqs = replace_requirement(
                reqs, Requirement.new(labels.CAPACITY_TYPE, "In", (labels.CAPACITY_TYPE_RESERVED,))
            )
            reqs.add(
                Requirement.new(
                    labels.CAPACITY_RESERVATION_ID,
                    "In",
                    [o.reservation_id for o in self.reserved if o.reservation_id],
                )
            )
        self.requirements = reqs
        overhead: ResourceList | None = None
        for g in self.groups:
            if not (g.mask & self.options) or not g.overhead:
                continue
            overhead = g.overhead if overhead is None else min_resources(overhead, g.overhead)
        if overhead:
            self.requests = add(self.requests, overhead)


def replace_requirement(reqs: Requirements, req: Requirement) -> Requirements:
    """A copy of ``reqs`` with ``req`` replacing (not intersecting) the requirement of its key."""
    out = Requirements(r for r in reqs.values() if r.key != req.key)
    out.add(req)
    return out


def hostname_for(n: int) -> str:
    return HOSTNAME_PLACEHOLDER.format(n)
