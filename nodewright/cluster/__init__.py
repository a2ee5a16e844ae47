"""Cluster state: what a Kubernetes cluster holds that scheduling, drift and health read.

Two sources with one result type, :class:`ClusterState`: a file with the output of
``kubectl get pods,nodes,daemonsets,nodeclaims.karpenter.sh,nodepools.karpenter.sh -A -o json``
(:func:`load_cluster`), or a live cluster through the kubernetes client and a kubeconfig
(:func:`nodewright.cluster.live.load_live`).
"""

from nodewright.cluster.state import ClusterState, cluster_from_objects, load_cluster

__all__ = ["ClusterState", "cluster_from_objects", "load_cluster"]
