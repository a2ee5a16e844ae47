"""The domain model: Karpenter v1 (NodePool, NodeClaim), the AWS EC2NodeClass, and the Kubernetes
subset the scheduler needs, as frozen pydantic v2 models; plus loading and validation.

Public names are re-exported here; modules: ``core`` (Kubernetes), ``karpenter``, ``nodeoverlay``
(``karpenter.sh/v1alpha1`` NodeOverlay), ``ec2nodeclass``,
``documents`` (file reading), ``loading`` (build + validate through :mod:`nodewright.crd`, the
shipped CRDs of the Karpenter release passed in), ``validation`` (cluster-state Pod checks, typo hint).
"""

from nodewright.api.core import (
    Affinity,
    Condition,
    Container,
    CSINode,
    DaemonSet,
    LabelSelector,
    Node,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodAffinityTerm,
    Secret,
    StorageClass,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from nodewright.api.documents import Document, documents_from_text, load_documents
from nodewright.api.ec2nodeclass import EC2NodeClass, KubeletConfiguration, MetadataOptions
from nodewright.api.karpenter import NodeClaim, NodeClassReference, NodePool
from nodewright.api.loading import Objects, load_nodepools, load_objects, objects_from_documents
from nodewright.api.nodeoverlay import NodeOverlay

__all__ = [
    "Affinity",
    "CSINode",
    "Condition",
    "Container",
    "DaemonSet",
    "Document",
    "EC2NodeClass",
    "KubeletConfiguration",
    "LabelSelector",
    "MetadataOptions",
    "Node",
    "NodeClaim",
    "NodeClassReference",
    "NodeOverlay",
    "NodePool",
    "NodeSelectorRequirement",
    "NodeSelectorTerm",
    "ObjectMeta",
    "Objects",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Pod",
    "PodAffinityTerm",
    "Secret",
    "StorageClass",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "documents_from_text",
    "load_documents",
    "load_nodepools",
    "load_objects",
    "objects_from_documents",
]
