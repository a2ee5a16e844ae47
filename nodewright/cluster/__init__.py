"""Cluster state: what a Kubernetes cluster holds that scheduling, drift and health read.

Two sources with one result type, :class:`ClusterState`: files (:func:`load_cluster`: the output
of ``nodewright cluster snapshot``, or kubectl lists of the same kinds), or a live cluster through
the kubernetes client and a kubeconfig (:func:`nodewright.cluster.live.load_live`, the code path of
``nodewright cluster snapshot`` and of the stack setting ``nodewright:clusterState: live``);
:func:`resolve_cluster` picks one from a stack setting. The kinds read are
:data:`nodewright.cluster.kinds.TABLE`; workloads, PodDisruptionBudgets, NodeOverlays and
CapacityBuffers are kept as documents (``ClusterState.raw(kind)``), and :func:`snapshot_settings`
gives the running Karpenter controller's settings a snapshot recorded, for
``nodewright.settings.resolve(snapshot=...)``.
"""

from nodewright.cluster.controller import snapshot_settings
from nodewright.cluster.state import LIVE, ClusterState, cluster_from_objects, load_cluster, resolve_cluster

__all__ = [
    "LIVE",
    "ClusterState",
    "cluster_from_objects",
    "load_cluster",
    "resolve_cluster",
    "snapshot_settings",
]
