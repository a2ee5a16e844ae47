"""Every kind nodewright reads from a cluster: its apiVersion, list path and whether a CRD serves it.

The one table behind ``nodewright cluster snapshot``, the live loader and the ``ClusterState``
fields; docs/cli.md lists the same kinds and the RBAC rules they need. No Secret, ever.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class Kind:
    kind: str
    api_version: str
    path: str
    crd: bool = False  # served only once its CRD is installed: skipped (and recorded) on 404

    @property
    def group(self) -> str:
        return self.api_version.rsplit("/", 1)[0] if "/" in self.api_version else ""

    @property
    def resource(self) -> str:
        return self.path.rsplit("/", 1)[1]


TABLE: Final[tuple[Kind, ...]] = (
    Kind("Pod", "v1", "/api/v1/pods"),
    Kind("Node", "v1", "/api/v1/nodes"),
    Kind("DaemonSet", "apps/v1", "/apis/apps/v1/daemonsets"),
    Kind("Deployment", "apps/v1", "/apis/apps/v1/deployments"),
    Kind("ReplicaSet", "apps/v1", "/apis/apps/v1/replicasets"),
    Kind("StatefulSet", "apps/v1", "/apis/apps/v1/statefulsets"),
    Kind("Job", "batch/v1", "/apis/batch/v1/jobs"),
    Kind("PodTemplate", "v1", "/api/v1/podtemplates"),
    Kind("PodDisruptionBudget", "policy/v1", "/apis/policy/v1/poddisruptionbudgets"),
    Kind("NodeClaim", "karpenter.sh/v1", "/apis/karpenter.sh/v1/nodeclaims", crd=True),
    Kind("NodePool", "karpenter.sh/v1", "/apis/karpenter.sh/v1/nodepools", crd=True),
    Kind("EC2NodeClass", "karpenter.k8s.aws/v1", "/apis/karpenter.k8s.aws/v1/ec2nodeclasses", crd=True),
    Kind("NodeOverlay", "karpenter.sh/v1alpha1", "/apis/karpenter.sh/v1alpha1/nodeoverlays", crd=True),
    Kind(
        "CapacityBuffer",
        "autoscaling.x-k8s.io/v1beta1",
        "/apis/autoscaling.x-k8s.io/v1beta1/capacitybuffers",
        crd=True,
    ),
    Kind("PersistentVolumeClaim", "v1", "/api/v1/persistentvolumeclaims"),
    Kind("PersistentVolume", "v1", "/api/v1/persistentvolumes"),
    Kind("StorageClass", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/storageclasses"),
    Kind("CSINode", "storage.k8s.io/v1", "/apis/storage.k8s.io/v1/csinodes"),
)
BY_KIND: Final = {k.kind: k for k in TABLE}
RAW_KINDS: Final = frozenset(
    {"Deployment", "ReplicaSet", "StatefulSet", "Job", "PodTemplate", "PodDisruptionBudget", "NodeOverlay",
     "CapacityBuffer"}
)  # fmt: skip
"""Kinds a ClusterState keeps as raw documents (``ClusterState.raw(kind)``) for the readers that use them."""
# Where each kind keeps a pod template (container env values are dropped from a snapshot).
POD_TEMPLATE_AT: Final = {
    "DaemonSet": ("spec", "template", "spec"),
    "Deployment": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "PodTemplate": ("template", "spec"),
    "Pod": ("spec",),
}
