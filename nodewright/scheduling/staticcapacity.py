"""Static capacity: NodePools with ``spec.replicas`` (feature gate StaticCapacity).

Translated from kubernetes-sigs/karpenter v1.14.1:

* ``pkg/controllers/state/statenodepool.go``: a pool's NodeClaims are *running* (active), *deleting*
  (marked for deletion) or *pending disruption* (chosen by a disruption command); ``ReserveNodeCount``
  grants at most ``limits.nodes - running - deleting - pending - reserved`` (0 when negative);
* ``pkg/controllers/static/provisioning/controller.go``: a managed, Ready, not-deleting static pool
  with ``running + pending < replicas`` launches ``ReserveNodeCount(limit, replicas - running)``
  NodeClaims from its template (the cloud provider picks the instance type: the cheapest compatible
  offering);
* ``pkg/controllers/static/deprovisioning/controller.go``: with ``running > replicas`` it deletes the
  excess: NodeClaims without a providerID first (list order), then empty nodes (no pods, or only
  DaemonSet pods and none with an active ``karpenter.sh/do-not-disrupt``), then the others, those
  without do-not-disrupt pods first, cheapest ``ReschedulingCost x LifetimeRemaining`` first
  (``pkg/utils/disruption``; eviction cost and do-not-disrupt are :mod:`~nodewright.scheduling.podutil`'s);
* ``pkg/controllers/disruption/staticdrift.go``: :func:`static_drift_allowance`.

Offline, "pending disruption" is a NodeClaim whose Node carries the ``karpenter.sh/disrupted`` taint
(Karpenter keeps the set in memory; the taint is what a snapshot shows of it).

Boundary: pure counting and ordering over raw mappings (any shape) and pods; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from nodewright import labels
from nodewright.api.core import Pod
from nodewright.goduration import DurationError, parse_duration, parse_rfc3339
from nodewright.scheduling import podutil

MAX_INT64: Final = 2**63 - 1


@dataclass(frozen=True, kw_only=True)
class PoolCounts:
    """``NodePoolState.GetNodeCount`` of one pool: its NodeClaims by state."""

    running: int
    deleting: int = 0
    pending_disruption: int = 0


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _marked_for_deletion(claim: Mapping[str, Any], node: Mapping[str, Any] | None) -> bool:
    return bool(_map(claim.get("metadata")).get("deletionTimestamp")) or bool(
        _map(_map(node).get("metadata")).get("deletionTimestamp")
    )


def _disrupted(node: Mapping[str, Any] | None) -> bool:
    taints = _map(_map(node).get("spec")).get("taints") or []
    return any(isinstance(t, Mapping) and t.get("key") == labels.DISRUPTED_TAINT_KEY for t in taints)


def claim_node(
    claim: Mapping[str, Any], nodes_by_name: Mapping[str, Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    return nodes_by_name.get(str(_map(claim.get("status")).get("nodeName", "")))


def pool_counts(
    claims: Iterable[Mapping[str, Any]], nodes_by_name: Mapping[str, Mapping[str, Any]]
) -> PoolCounts:
    """:class:`PoolCounts` of one pool's NodeClaims (``Cluster.UpdateNodeClaim``: every NodeClaim
    is active unless marked for deletion; the disrupted taint stands for pending disruption)."""
    running = deleting = pending = 0
    for claim in claims:
        node = claim_node(claim, nodes_by_name)
        if _marked_for_deletion(claim, node):
            deleting += 1
        elif _disrupted(node):
            pending += 1
        else:
            running += 1
    return PoolCounts(running=running, deleting=deleting, pending_disruption=pending)


def reserve_node_count(node_limit: int | None, counts: PoolCounts, wanted: int, reserved: int = 0) -> int:
    """``NodePoolState.ReserveNodeCount`` (no limit: ``MaxInt64``)."""
    limit = MAX_INT64 if node_limit is None else node_limit
    remaining = limit - (counts.running + counts.deleting + counts.pending_disruption) - reserved
    if remaining < 0:
        return 0
    return min(wanted, remaining)


def node_limit(spec: Mapping[str, Any] | None) -> int | None:
    """``limits.nodes`` as ``Quantity.Value()`` (rounded up); None when unset or unreadable."""
    from nodewright.algebra.quantity import QuantityError, parse_quantity

    raw = _map(_map(spec).get("limits")).get("nodes")
    if raw is None:
        return None
    try:
        return math.ceil(parse_quantity(raw).amount)
    except QuantityError:
        return None


def static_launches(*, replicas: int, node_limit: int | None, counts: PoolCounts) -> tuple[int, str | None]:
    """How many NodeClaims one static provisioning reconcile launches, and why none when 0."""
    if counts.running + counts.pending_disruption >= replicas:
        return 0, None
    granted = reserve_node_count(node_limit, counts, replicas - counts.running)
    if granted <= 0:
        return 0, f"nodepool node limit reached (limits.nodes {node_limit})"
    return granted, None


def static_drift_allowance(
    *, replicas: int, node_limit: int | None, counts: PoolCounts, budget: int, drifted: int, reserved: int = 0
) -> tuple[int, str | None]:
    """How many drifted NodeClaims of a static NodePool one ``StaticDrift.ComputeCommands`` replaces.

    ``staticdrift.go``: a pool whose budget allows 0 is skipped; so is one whose running plus
    pending-disruption NodeClaims exceed ``replicas`` (a replacement in flight, or the pool is
    over-scaled: the deprovisioner acts first); otherwise ``min(budget, drifted)`` is reserved against
    ``limits.nodes``. A replacement is launched before its drifted NodeClaim goes, so with
    ``limits.nodes`` equal to ``replicas`` nothing ever rolls. Returns (count, why 0 when it is 0).
    """
    if budget <= 0:
        return 0, "the disruption budget allows 0 disruptions"
    if counts.running + counts.pending_disruption > replicas:
        return 0, (
            f"{counts.running} running + {counts.pending_disruption} pending disruption > replicas {replicas}: "
            "static drift waits until the pool is back at its replica count"
        )
    wanted = min(budget, drifted)
    granted = reserve_node_count(node_limit, counts, wanted, reserved)
    if granted == 0 and wanted > 0:
        total = counts.running + counts.deleting + counts.pending_disruption
        return 0, (
            f"limits.nodes {node_limit} leaves no room for a replacement next to {total} NodeClaims: static "
            "drift launches the replacement first, so it never rolls (raise limits.nodes above replicas)"
        )
    return granted, None


# -- scale down --------------------------------------------------------------------------------


def lifetime_remaining(claim: Mapping[str, Any], now: datetime | None) -> float:
    """``disruption.LifetimeRemaining``: the unexpired fraction of ``spec.expireAfter`` (1 without one)."""
    expire = _map(claim.get("spec")).get("expireAfter")
    created = _map(claim.get("metadata")).get("creationTimestamp")
    if not expire or expire == "Never" or now is None or not created:
        return 1.0
    try:
        total = parse_duration(str(expire)) / 1e9
    except DurationError:
        return 1.0
    start = parse_rfc3339(str(created))
    if start is None or total <= 0:
        return 1.0
    return min(max((total - (now - start).total_seconds()) / total, 0.0), 1.0)


def scale_down_candidates(
    claims: Sequence[Mapping[str, Any]],
    *,
    count: int,
    nodes_by_name: Mapping[str, Mapping[str, Any]],
    pods_by_node: Mapping[str, Sequence[Pod]],
    now: datetime | None = None,
) -> list[str]:
    """The names of the ``count`` NodeClaims the static deprovisioner deletes, in its order."""
    out: list[str] = []
    for c in claims:
        if len(out) >= count:
            return out
        if not _map(c.get("status")).get("providerID") and not _map(c.get("metadata")).get(
            "deletionTimestamp"
        ):
            out.append(str(_map(c.get("metadata")).get("name", "")))
    live = [
        c
        for c in claims
        if _map(c.get("status")).get("providerID")
        and claim_node(c, nodes_by_name) is not None
        and not _marked_for_deletion(c, claim_node(c, nodes_by_name))
    ]
    empty: list[Mapping[str, Any]] = []
    rest: list[tuple[bool, float, int, Mapping[str, Any]]] = []
    for i, c in enumerate(live):
        pods = pods_by_node.get(str(_map(c.get("status")).get("nodeName", "")), ())
        dnd = any(podutil.do_not_disrupt_active(p, now) for p in pods)
        if not pods or (all(podutil.is_owned_by_daemonset(p) for p in pods) and not dnd):
            empty.append(c)
        else:
            cost = sum(podutil.eviction_cost(p) for p in pods) * lifetime_remaining(c, now)
            rest.append((dnd, cost, i, c))
    for c in empty:
        if len(out) >= count:
            return out
        out.append(str(_map(c.get("metadata")).get("name", "")))
    rest.sort(key=lambda t: (t[0], t[1], t[2]))
    for _, _, _, c in rest:
        if len(out) >= count:
            break
        out.append(str(_map(c.get("metadata")).get("name", "")))
    return out
