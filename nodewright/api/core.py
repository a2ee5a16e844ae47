"""The Kubernetes core/v1, apps/v1 and storage subset the scheduler and drift logic need.

Field names follow the Kubernetes API (camelCase aliases). These models accept the output of
``kubectl get -o json`` unchanged; fields nodewright does not use are ignored.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from nodewright.api.base import KubeModel, TopLevel

QuantityValue = str | int | float


class OwnerReference(KubeModel):
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None


class ObjectMeta(KubeModel):
    name: str = ""
    generate_name: str | None = None
    namespace: str | None = None
    uid: str = ""
    generation: int | None = None
    resource_version: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    owner_references: list[OwnerReference] = Field(default_factory=list)
    finalizers: list[str] = Field(default_factory=list)
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None


class Condition(KubeModel):
    type: str
    status: str = "Unknown"
    reason: str | None = None
    message: str | None = None
    last_transition_time: str | None = None
    observed_generation: int | None = None


class Taint(KubeModel):
    key: str
    value: str | None = None
    effect: str
    time_added: str | None = None


class Toleration(KubeModel):
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: int | None = None


class NodeSelectorRequirement(KubeModel):
    key: str
    operator: str
    values: list[str] = Field(default_factory=list)


class NodeSelectorTerm(KubeModel):
    match_expressions: list[NodeSelectorRequirement] = Field(default_factory=list)
    match_fields: list[NodeSelectorRequirement] = Field(default_factory=list)


class NodeSelector(KubeModel):
    node_selector_terms: list[NodeSelectorTerm] = Field(default_factory=list)


class PreferredSchedulingTerm(KubeModel):
    weight: int
    preference: NodeSelectorTerm


class NodeAffinity(KubeModel):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] = Field(
        default_factory=list
    )


class LabelSelectorRequirement(KubeModel):
    key: str
    operator: str
    values: list[str] = Field(default_factory=list)


class LabelSelector(KubeModel):
    match_labels: dict[str, str] = Field(default_factory=dict)
    match_expressions: list[LabelSelectorRequirement] = Field(default_factory=list)


class PodAffinityTerm(KubeModel):
    label_selector: LabelSelector | None = None
    namespaces: list[str] = Field(default_factory=list)
    topology_key: str = ""
    namespace_selector: LabelSelector | None = None
    match_label_keys: list[str] = Field(default_factory=list)
    mismatch_label_keys: list[str] = Field(default_factory=list)


class WeightedPodAffinityTerm(KubeModel):
    weight: int
    pod_affinity_term: PodAffinityTerm


class PodAffinity(KubeModel):
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] = Field(default_factory=list)
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] = Field(
        default_factory=list
    )


class PodAntiAffinity(PodAffinity):
    pass


class Affinity(KubeModel):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAntiAffinity | None = None


class TopologySpreadConstraint(KubeModel):
    max_skew: int
    topology_key: str
    when_unsatisfiable: str = "DoNotSchedule"
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: list[str] = Field(default_factory=list)


class ContainerPort(KubeModel):
    container_port: int = 0
    host_port: int | None = None
    host_ip: str | None = Field(default=None, alias="hostIP")
    protocol: str = "TCP"
    name: str | None = None


class ResourceRequirements(KubeModel):
    requests: dict[str, QuantityValue] = Field(default_factory=dict)
    limits: dict[str, QuantityValue] = Field(default_factory=dict)


class Container(KubeModel):
    name: str = ""
    image: str | None = None
    resources: ResourceRequirements = Field(default_factory=ResourceRequirements)
    ports: list[ContainerPort] = Field(default_factory=list)
    restart_policy: str | None = None


class PersistentVolumeClaimVolumeSource(KubeModel):
    claim_name: str
    read_only: bool | None = None


class EphemeralVolumeSource(KubeModel):
    volume_claim_template: dict[str, Any] | None = None


class Volume(KubeModel):
    name: str
    persistent_volume_claim: PersistentVolumeClaimVolumeSource | None = None
    ephemeral: EphemeralVolumeSource | None = None


class PodSpec(KubeModel):
    node_name: str | None = None
    node_selector: dict[str, str] = Field(default_factory=dict)
    affinity: Affinity | None = None
    tolerations: list[Toleration] = Field(default_factory=list)
    topology_spread_constraints: list[TopologySpreadConstraint] = Field(default_factory=list)
    containers: list[Container] = Field(default_factory=list)
    init_containers: list[Container] = Field(default_factory=list)
    overhead: dict[str, QuantityValue] = Field(default_factory=dict)
    # pod-level requests/limits (PodLevelResources, on by default since Kubernetes 1.34)
    resources: ResourceRequirements | None = None
    volumes: list[Volume] = Field(default_factory=list)
    priority: int | None = None
    priority_class_name: str | None = None
    runtime_class_name: str | None = None
    scheduler_name: str | None = None
    host_network: bool | None = None
    restart_policy: str | None = None
    preemption_policy: str | None = None


class PodStatus(KubeModel):
    phase: str | None = None
    conditions: list[Condition] = Field(default_factory=list)
    nominated_node_name: str | None = None
    start_time: str | None = None


class Pod(TopLevel):
    api_version: str = "v1"
    kind: Literal["Pod"] = "Pod"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PodSpec = Field(default_factory=PodSpec)
    status: PodStatus = Field(default_factory=PodStatus)

    @property
    def key(self) -> str:
        """``namespace/name`` as the CLI prints pods."""
        return f"{self.metadata.namespace or 'default'}/{self.metadata.name}"


class NodeSpec(KubeModel):
    taints: list[Taint] = Field(default_factory=list)
    provider_id: str | None = Field(default=None, alias="providerID")
    unschedulable: bool | None = None


class NodeStatus(KubeModel):
    capacity: dict[str, QuantityValue] = Field(default_factory=dict)
    allocatable: dict[str, QuantityValue] = Field(default_factory=dict)
    conditions: list[Condition] = Field(default_factory=list)


class Node(TopLevel):
    api_version: str = "v1"
    kind: Literal["Node"] = "Node"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: NodeSpec = Field(default_factory=NodeSpec)
    status: NodeStatus = Field(default_factory=NodeStatus)


class PodTemplateSpec(KubeModel):
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PodSpec = Field(default_factory=PodSpec)


class DaemonSetSpec(KubeModel):
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)
    selector: LabelSelector | None = None


class DaemonSet(TopLevel):
    api_version: str = "apps/v1"
    kind: Literal["DaemonSet"] = "DaemonSet"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: DaemonSetSpec = Field(default_factory=DaemonSetSpec)


class PersistentVolumeClaimSpec(KubeModel):
    storage_class_name: str | None = None
    volume_name: str | None = None
    access_modes: list[str] = Field(default_factory=list)


class PersistentVolumeClaimStatus(KubeModel):
    phase: str | None = None


class PersistentVolumeClaim(TopLevel):
    api_version: str = "v1"
    kind: Literal["PersistentVolumeClaim"] = "PersistentVolumeClaim"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PersistentVolumeClaimSpec = Field(default_factory=PersistentVolumeClaimSpec)
    status: PersistentVolumeClaimStatus = Field(default_factory=PersistentVolumeClaimStatus)


class VolumeNodeAffinity(KubeModel):
    required: NodeSelector | None = None


class CSIPersistentVolumeSource(KubeModel):
    driver: str
    volume_handle: str | None = None


class PersistentVolumeSpec(KubeModel):
    storage_class_name: str | None = None
    node_affinity: VolumeNodeAffinity | None = None
    csi: CSIPersistentVolumeSource | None = None
    local: dict[str, Any] | None = None
    host_path: dict[str, Any] | None = None


class PersistentVolume(TopLevel):
    api_version: str = "v1"
    kind: Literal["PersistentVolume"] = "PersistentVolume"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PersistentVolumeSpec = Field(default_factory=PersistentVolumeSpec)


class TopologySelectorLabelRequirement(KubeModel):
    key: str
    values: list[str] = Field(default_factory=list)


class TopologySelectorTerm(KubeModel):
    match_label_expressions: list[TopologySelectorLabelRequirement] = Field(default_factory=list)


class StorageClass(TopLevel):
    api_version: str = "storage.k8s.io/v1"
    kind: Literal["StorageClass"] = "StorageClass"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    provisioner: str = ""
    volume_binding_mode: str | None = None
    allowed_topologies: list[TopologySelectorTerm] = Field(default_factory=list)


class VolumeNodeResources(KubeModel):
    count: int | None = None


class CSINodeDriver(KubeModel):
    name: str
    node_id: str | None = Field(default=None, alias="nodeID")
    allocatable: VolumeNodeResources | None = None


class CSINodeSpec(KubeModel):
    drivers: list[CSINodeDriver] = Field(default_factory=list)


class CSINode(TopLevel):
    api_version: str = "storage.k8s.io/v1"
    kind: Literal["CSINode"] = "CSINode"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: CSINodeSpec = Field(default_factory=CSINodeSpec)


class PodDisruptionBudgetSpec(KubeModel):
    selector: LabelSelector | None = None
    min_available: int | str | None = None
    max_unavailable: int | str | None = None
    unhealthy_pod_eviction_policy: str | None = None


class PodDisruptionBudgetStatus(KubeModel):
    disruptions_allowed: int = 0


class PodDisruptionBudget(TopLevel):
    """A ``policy/v1`` PodDisruptionBudget: what Karpenter's disruption reads of it."""

    api_version: str = "policy/v1"
    kind: Literal["PodDisruptionBudget"] = "PodDisruptionBudget"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PodDisruptionBudgetSpec = Field(default_factory=PodDisruptionBudgetSpec)
    status: PodDisruptionBudgetStatus = Field(default_factory=PodDisruptionBudgetStatus)


class Secret(TopLevel):
    api_version: str = "v1"
    kind: Literal["Secret"] = "Secret"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    type: str | None = None
    data: dict[str, str] = Field(default_factory=dict)
    string_data: dict[str, str] = Field(default_factory=dict)
