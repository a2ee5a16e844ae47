"""Pod predicates of Karpenter's ``pkg/utils/pod`` that pick what a provisioning round schedules.

``is_provisionable`` selects pending pods, ``is_reschedulable`` the pods of deleting nodes,
``ignored_for_topology`` the pods topology counting skips. Pure functions of the pod model; no
scheduling decisions here.
"""

from __future__ import annotations

from typing import Final

from nodewright.api.core import Pod

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
    return any(o.api_version == api_version and o.kind == kind for o in pod.metadata.owner_references)


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
    return not is_terminal(pod) and not is_terminating(pod)


def is_provisionable(pod: Pod) -> bool:
    """Karpenter's ``IsProvisionable``: the pending pods a provisioning round picks up."""
    return (
        failed_to_schedule(pod)
        and not is_scheduled(pod)
        and not is_preempting(pod)
        and not is_owned_by_daemonset(pod)
        and not is_owned_by_node(pod)
    )


def is_reschedulable(pod: Pod) -> bool:
    """Pods of a deleting node that need a new home (terminating StatefulSet pods included)."""
    return (
        (is_active(pod) or (is_owned_by_statefulset(pod) and is_terminating(pod)))
        and not is_owned_by_daemonset(pod)
        and not is_owned_by_node(pod)
    )
