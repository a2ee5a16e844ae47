"""The pod predicates of :mod:`nodewright.scheduling.podutil`, written as single passes, are
Karpenter's definitions (``pkg/utils/pod``: ``IsReschedulable``, ``IsActive``, ``IsOwnedBy``) as
written out here (Hypothesis over owner references, phases and deletion)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from nodewright.api.core import Pod
from nodewright.scheduling import podutil

owner = st.fixed_dictionaries(
    {
        "apiVersion": st.sampled_from(["apps/v1", "v1", "batch/v1", "apps/v1beta1"]),
        "kind": st.sampled_from(["DaemonSet", "StatefulSet", "Node", "ReplicaSet", "Job"]),
        "name": st.just("o"),
        "uid": st.just("u"),
    }
)


def _pod(owners: list[dict[str, Any]], phase: str | None, deleting: bool) -> Pod:
    meta: dict[str, Any] = {"name": "p", "namespace": "ns", "ownerReferences": owners}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-20T00:00:00Z"
    return Pod.model_validate({"metadata": meta, "status": {"phase": phase} if phase else {}})


def _owned(pod: Pod, api_version: str, kind: str) -> bool:
    return any(o.api_version == api_version and o.kind == kind for o in pod.metadata.owner_references)


@given(
    owners=st.lists(owner, max_size=3),
    phase=st.sampled_from([None, "Pending", "Running", "Succeeded", "Failed", "Unknown"]),
    deleting=st.booleans(),
)
def test_predicates_are_the_definitions(
    owners: list[dict[str, Any]], phase: str | None, deleting: bool
) -> None:
    pod = _pod(owners, phase, deleting)
    terminal = pod.status.phase in ("Failed", "Succeeded")
    terminating = pod.metadata.deletion_timestamp is not None
    active = not terminal and not terminating
    daemonset, node = _owned(pod, "apps/v1", "DaemonSet"), _owned(pod, "v1", "Node")
    statefulset = _owned(pod, "apps/v1", "StatefulSet")
    assert podutil.is_active(pod) == active
    assert podutil.is_owned_by_daemonset(pod) == daemonset
    assert podutil.is_owned_by_node(pod) == node
    assert podutil.is_owned_by_statefulset(pod) == statefulset
    assert podutil.is_reschedulable(pod) == (
        (active or (statefulset and terminating)) and not daemonset and not node
    )
