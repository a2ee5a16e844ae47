"""Twin pods: pods the scheduler cannot tell apart when neither has topology (the same requests,
requirements and tolerations, no host ports, no volume claims or volume requirements).

Twins are adjacent in the queue (it sorts by requests first). Once one of them lands after the
full scan, every existing node and NodeClaim the scan reached first refused it and is unchanged,
so they refuse its twins too:

* on an in-flight NodeClaim, the next twin goes straight to that claim if it takes it
  (:func:`twin_placement`); when every other claim refused the first one, a run of twins is
  placed at once (:func:`claim_takes`): the claim's options only narrow as its requests grow, so
  the j-th twin fits exactly when the options narrowed by the sum of all j still hold a type, and
  the last that fits is found by bisection (:func:`run_length`);
* on an existing node, the twins next in the queue fill it while its remaining resources fit one
  more (``Scheduler._fill_node``, :func:`~.existingnode.twins_that_fit`).

Each gives the placements the one-by-one scan gives (``tests/scheduling/test_sched_twins.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from operator import le
from typing import TYPE_CHECKING

from nodewright.scheduling.instancetypes import InstanceTypeFilterError
from nodewright.scheduling.nodeclaim import InflightClaim, Placement, filter_instance_types
from nodewright.scheduling.poddata import PodData, claims_volumes
from nodewright.scheduling.queue import Queue

if TYPE_CHECKING:
    from nodewright.scheduling.reservations import ReservationManager
    from nodewright.scheduling.topology import Topology


def twins(a: PodData, b: PodData) -> bool:
    """Whether every existing node and NodeClaim treats ``a`` and ``b`` alike, given neither has
    topology."""
    return twin_of(a)(b)


def twin_of(a: PodData) -> Callable[[PodData], bool]:
    """``twins(a, ·)``, with ``a``'s side decided once."""
    if a.ports or a.volume_requirements or claims_volumes(a.pod):
        return _never
    requests, reqs, tolerations = a.requests, a.requirements, a.current.spec.tolerations
    cls = a.twin_class()

    def same(b: PodData) -> bool:
        got = b.twin
        if got is None:
            got = b.twin_class()
        if got is cls:
            return True
        return (
            b.requests == requests
            and not b.ports
            and not b.volume_requirements
            and (b.requirements is reqs or b.requirements == reqs)
            and b.current.spec.tolerations == tolerations
            and not (b.pod.spec.volumes and claims_volumes(b.pod))
        )

    return same


def _never(_b: PodData) -> bool:
    return False


def twin_placement(
    claim: InflightClaim,
    prev: PodData,
    pod: PodData,
    buckets: Mapping[int, int] | None,
    topology: Topology,
    reservations: ReservationManager | None,
    *,
    strict_reserved: bool,
) -> Placement | None:
    """Where the full scan places ``pod`` when that is certainly ``claim``, the NodeClaim its twin
    ``prev`` just went to: neither has topology (the caller checks ``pod``), every existing node
    and every NodeClaim the scan reaches first refused ``prev`` and is unchanged since (only
    ``claim`` changed), and they refuse ``pod`` alike. ``buckets``: the scan's claims per pod count
    (as bitmasks of claim indices), None when every other claim refused ``prev``. None: no answer."""
    if not twins(prev, pod):
        return None
    if buckets is not None:
        # the claims the scan now reaches before ``claim`` (one pod more) were all reached before it
        bit = 1 << claim.index
        n = len(claim.pods)
        if buckets.get(n - 1, 0) & ~((bit << 1) - 1) or buckets.get(n, 0) & (bit - 1):
            return None
    return _accepts(claim, pod, topology, reservations, strict_reserved)


def _accepts(
    claim: InflightClaim,
    pod: PodData,
    topology: Topology,
    reservations: ReservationManager | None,
    strict_reserved: bool,
) -> Placement | None:
    """The claim's placement of ``pod`` (without topology) as the scan decides it: its largest
    option has room and its taints are tolerated first (None: refused)."""
    if not all(map(le, pod.vec, claim.headroom)) or claim.template.tolerates(pod) is not None:
        return None
    placed = claim.can_add(
        pod,
        topology,
        reservations,
        relax_min_values=False,
        strict_reserved=strict_reserved,
        has_topology=False,
    )
    return placed if isinstance(placed, Placement) else None


def twin_run(queue: Queue[PodData], prev: PodData, topology: Topology, limit: int) -> list[PodData]:
    """The pods next in the queue that are twins of ``prev`` without topology, at most ``limit``
    (none removed)."""
    twin = twin_of(prev)
    if topology.is_empty():
        return queue.head_run(twin, limit)
    return queue.head_run(lambda p: twin(p) and not topology.has_groups_for(p.current), limit)


def claim_room(claim: InflightClaim, vec: tuple[int, ...]) -> int:
    """At most how many more pods asking ``vec`` the claim can take: its largest option's room."""
    return min((h // v for h, v in zip(claim.headroom, vec, strict=True) if v > 0), default=1 << 30)


def claim_takes(
    claim: InflightClaim,
    run: list[PodData],
    topology: Topology,
    reservations: ReservationManager | None,
    *,
    strict_reserved: bool,
) -> tuple[list[PodData], Placement, int] | None:
    """Of ``run`` (twins of the claim's last pod), those the claim takes one after the other, the
    first one's placement and the options the last leaves (None: fewer than two, or a claim with
    reserved offerings or minValues, which the pods' one-by-one scan handles)."""
    if len(run) < 2 or claim.template.has_reserved or claim.requirements.has_min_values():
        return None
    # a copy tries: the queue's pods may be shared with other solves (memos are per solve)
    first = run[0].fresh()
    placed = _accepts(claim, first, topology, reservations, strict_reserved)
    if placed is None or placed.requirements.has_min_values():
        return None
    n, kept = run_length(claim, first, placed, len(run))
    return run[:n], placed, kept


def run_length(claim: InflightClaim, first: PodData, placed: Placement, count: int) -> tuple[int, int]:
    """How many of ``count`` twins of ``first`` the claim takes one after the other (at least the
    first, whose placement is ``placed``), and the options the last one leaves. The claim's
    requirements are no min-values ones (a relaxation could change what fits)."""
    types, options, total, vec = claim.template.types, claim.options, claim.requests_vec, first.vec
    reqs = placed.requirements
    entry = types.compat(reqs)

    def kept(j: int) -> int:
        got = filter_instance_types(
            types,
            options,
            reqs,
            first,
            claim.groups,
            tuple(t + v * j for t, v in zip(total, vec, strict=True)),
            relax_min_values=False,
            entry=entry,
            min_values=False,
        )
        return 0 if isinstance(got, InstanceTypeFilterError) else got[0]

    lo, hi, last = 1, count, placed.options
    while lo < hi:
        mid = (lo + hi + 1) // 2
        got = kept(mid)
        if got:
            lo, last = mid, got
        else:
            hi = mid - 1
    return lo, last
