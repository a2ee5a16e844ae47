"""Pod predicates of Karpenter's ``pkg/utils/pod`` that pick what a provisioning round schedules.

``is_provisionable`` selects pending pods, ``is_reschedulable`` the pods of deleting nodes,
``ignored_for_topology`` the pods topology counting skips. Pure functions of the pod model; no
scheduling decisions here.
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Final

from nodewright import labels
from nodewright.api.core import Pod
from nodewright.goduration import DurationError, parse_duration, parse_rfc3339

_APPS_V1: Final = "apps/v1"
_CORE_V1: Final = "v1"


def failed_to_schedule(pod: Pod) -> bool:
    """A ``PodScheduled`` condition with reason ``Unschedulable`` (its status is not checked)."""
    return any(c.type == "PodScheduled" and c.reason == "Unschedulable" for c in pod.status.conditions)


def is_scheduled(pod: Pod) -> bool:
    return bool(pod.spec.node_name)


def is_preempting(pod: Pod) -> bool:
    return bool(pod.status.nominated_node_name)


def _owned_by(pod: Pod, api_version: str, kind: str) -> bool:
    for o in pod.metadata.owner_references:  # noqa: SIM110 - a loop: per pod, many times a forecast
        if o.api_version == api_version and o.kind == kind:
            return True
    return False


def is_owned_by_daemonset(pod: Pod) -> bool:
    return _owned_by(pod, _APPS_V1, "DaemonSet")


def is_owned_by_node(pod: Pod) -> bool:
    """A mirror (static) pod."""
    return _owned_by(pod, _CORE_V1, "Node")


def is_owned_by_statefulset(pod: Pod) -> bool:
    return _owned_by(pod, _APPS_V1, "StatefulSet")


def is_terminal(pod: Pod) -> bool:
    return pod.status.phase in ("Failed", "Succeeded")


def is_terminating(pod: Pod) -> bool:
    return pod.metadata.deletion_timestamp is not None


def is_active(pod: Pod) -> bool:
    """Neither terminal nor terminating."""
    return pod.status.phase not in ("Failed", "Succeeded") and pod.metadata.deletion_timestamp is None


def is_provisionable(pod: Pod) -> bool:
    """Karpenter's ``IsProvisionable``: the pending pods a provisioning round picks up."""
    # the cheapest test first (most pods are bound); the conjunction is Karpenter's
    return (
        not pod.spec.node_name
        and failed_to_schedule(pod)
        and not is_preempting(pod)
        and not is_owned_by_daemonset(pod)
        and not is_owned_by_node(pod)
    )


def is_reschedulable(pod: Pod) -> bool:
    """Pods of a deleting node that need a new home (terminating StatefulSet pods included):
    active, or a terminating StatefulSet pod; never a DaemonSet's or a mirror pod (one pass over
    the owner references)."""
    statefulset = False
    for o in pod.metadata.owner_references:
        if o.api_version == _APPS_V1:
            if o.kind == "DaemonSet":
                return False
            statefulset = statefulset or o.kind == "StatefulSet"
        elif o.api_version == _CORE_V1 and o.kind == "Node":
            return False
    terminating = pod.metadata.deletion_timestamp is not None
    if not terminating and pod.status.phase not in ("Failed", "Succeeded"):
        return True
    return statefulset and terminating


DELETION_COST: Final = "controller.kubernetes.io/pod-deletion-cost"


def do_not_disrupt_active(pod: Pod, now: datetime | None) -> bool:
    """``pod.IsDoNotDisruptActive``: ``karpenter.sh/do-not-disrupt: "true"``, or a duration the pod
    has not yet run for (no start time, or no clock: active, failing safe); an invalid or
    non-positive duration counts as absent (Karpenter emits InvalidDoNotDisruptAnnotation)."""
    value = pod.metadata.annotations.get(labels.DO_NOT_DISRUPT)
    if value is None:
        return False
    if value == "true":
        return True
    try:
        span_ns = parse_duration(value)
    except DurationError:
        return False
    if span_ns <= 0:
        return False
    started = parse_rfc3339(pod.status.start_time)
    if started is None or now is None:
        return True
    return (now - started).total_seconds() * 1e9 < span_ns


def eviction_cost(pod: Pod) -> float:
    """``disruption.EvictionCost``: 1, plus deletion cost / 2^27, plus priority / 2^25, clamped to [-10, 10]."""
    cost = 1.0
    raw = pod.metadata.annotations.get(DELETION_COST)
    if raw is not None:
        with contextlib.suppress(ValueError):
            cost += float(raw) / 2.0**27
    if pod.spec.priority is not None:
        cost += pod.spec.priority / 2.0**25
    return min(max(cost, -10.0), 10.0)
