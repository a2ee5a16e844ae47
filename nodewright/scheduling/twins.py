"""Twin pods: pods the scheduler cannot tell apart when neither has topology (the same requests,
requirements and tolerations, no host ports, no volume claims or volume requirements).

Twins are adjacent in the queue (it sorts by requests first). Once one of them lands on an
in-flight NodeClaim after the full scan, every existing node and every NodeClaim the scan reached
first refused it and is unchanged, so they refuse its twin too: the twin goes straight to that
claim if it takes it (``Scheduler._twin``). When every other claim refused the first one, a run of
twins is placed at once (``Scheduler._place_run``): the claim's options only narrow as its
requests grow, so the j-th twin fits exactly when the options narrowed by the sum of all j still
hold a type, and the last that fits is found by bisection (:func:`run_length`).
"""

from __future__ import annotations

from collections.abc import Callable

from nodewright.api.core import Pod
from nodewright.scheduling.instancetypes import InstanceTypeFilterError
from nodewright.scheduling.nodeclaim import InflightClaim, Placement, filter_instance_types
from nodewright.scheduling.poddata import PodData


def twins(a: PodData, b: PodData) -> bool:
    """Whether every existing node and NodeClaim treats ``a`` and ``b`` alike, given neither has
    topology."""
    return twin_of(a)(b)


def twin_of(a: PodData) -> Callable[[PodData], bool]:
    """``twins(a, ·)``, with ``a``'s side decided once."""
    if a.ports or a.volume_requirements or claims_volumes(a.pod):
        return _never
    requests, reqs, tolerations = a.requests, a.requirements, a.current.spec.tolerations

    def same(b: PodData) -> bool:
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


def claims_volumes(pod: Pod) -> bool:
    return any(v.persistent_volume_claim is not None or v.ephemeral is not None for v in pod.spec.volumes)


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
