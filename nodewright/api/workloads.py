"""Workload kinds read as inputs: Deployment, ReplicaSet, StatefulSet, Job, PodTemplate, and the
CapacityBuffer (``autoscaling.x-k8s.io/v1beta1``, shipped with Karpenter v1.14.1).

The workloads are lenient models of the fields that decide the pods their controllers create
(replicas, selector, pod template; a Job's parallelism, completions and status counts). The
CapacityBuffer is validated and defaulted by its shipped CRD before this model is built (as
NodePools are); its model keeps the fields Karpenter's buffer controller reads.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from nodewright.api.base import KubeModel, TopLevel
from nodewright.api.core import (
    LabelSelector,
    ObjectMeta,
    PersistentVolumeClaimSpec,
    PodTemplateSpec,
    QuantityValue,
)


class ReplicatedSpec(KubeModel):
    replicas: int | None = None  # unset: 1 (the apps/v1 default)
    selector: LabelSelector | None = None
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)


class ReplicatedStatus(KubeModel):
    replicas: int | None = None
    ready_replicas: int | None = None


class Deployment(TopLevel):
    api_version: str = "apps/v1"
    kind: Literal["Deployment"] = "Deployment"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ReplicatedSpec = Field(default_factory=ReplicatedSpec)
    status: ReplicatedStatus = Field(default_factory=ReplicatedStatus)


class ReplicaSet(TopLevel):
    api_version: str = "apps/v1"
    kind: Literal["ReplicaSet"] = "ReplicaSet"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ReplicatedSpec = Field(default_factory=ReplicatedSpec)
    status: ReplicatedStatus = Field(default_factory=ReplicatedStatus)


class ClaimTemplate(KubeModel):
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PersistentVolumeClaimSpec = Field(default_factory=PersistentVolumeClaimSpec)


class StatefulSetSpec(ReplicatedSpec):
    volume_claim_templates: list[ClaimTemplate] = Field(default_factory=list)


class StatefulSet(TopLevel):
    api_version: str = "apps/v1"
    kind: Literal["StatefulSet"] = "StatefulSet"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: StatefulSetSpec = Field(default_factory=StatefulSetSpec)
    status: ReplicatedStatus = Field(default_factory=ReplicatedStatus)


class JobSpec(KubeModel):
    parallelism: int | None = None  # unset: 1
    completions: int | None = None  # unset: any one success completes the Job
    suspend: bool | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)


class JobStatus(KubeModel):
    active: int | None = None
    succeeded: int | None = None
    failed: int | None = None
    completion_time: str | None = None


class Job(TopLevel):
    api_version: str = "batch/v1"
    kind: Literal["Job"] = "Job"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: JobSpec = Field(default_factory=JobSpec)
    status: JobStatus = Field(default_factory=JobStatus)


class PodTemplate(TopLevel):
    api_version: str = "v1"
    kind: Literal["PodTemplate"] = "PodTemplate"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    template: PodTemplateSpec = Field(default_factory=PodTemplateSpec)


class LocalObjectRef(KubeModel):
    name: str


class ScalableRef(KubeModel):
    api_group: str = ""
    kind: str
    name: str


class CapacityBufferSpec(KubeModel):
    pod_template_ref: LocalObjectRef | None = None
    scalable_ref: ScalableRef | None = None
    replicas: int | None = None
    percentage: int | None = None
    limits: dict[str, QuantityValue] | None = None
    provisioning_strategy: str | None = None


class CapacityBuffer(TopLevel):
    api_version: str = "autoscaling.x-k8s.io/v1beta1"
    kind: Literal["CapacityBuffer"] = "CapacityBuffer"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: CapacityBufferSpec = Field(default_factory=CapacityBufferSpec)

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace or 'default'}/{self.metadata.name}"
