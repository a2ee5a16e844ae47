"""Karpenter ``karpenter.sh/v1`` NodePool and NodeClaim, with the CRD's defaults.

A NodePool a user already runs loads unchanged: field names, optionality and defaults are those of
Karpenter's v1 CRD (``expireAfter: 720h``, ``consolidationPolicy: WhenEmptyOrUnderutilized``,
``consolidateAfter: 0s``, one budget of ``10%``). The CEL/webhook rules live in
:mod:`nodewright.api.validation`; these models only fix the shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

from pydantic import Field

from nodewright.api.base import KubeModel, StrictModel, TopLevel
from nodewright.api.core import Condition, ObjectMeta, QuantityValue, Taint

API_VERSION: Final = "karpenter.sh/v1"

# The node classes a Karpenter serves (``CloudProvider.GetSupportedNodeClasses``): the AWS provider's
# EC2NodeClass (aws/karpenter-provider-aws v1.14.1 pkg/cloudprovider/cloudprovider.go) and the fake
# provider's TestNodeClass (kubernetes-sigs/karpenter v1.14.1 pkg/cloudprovider/fake), on which the
# ported upstream suites run. A NodePool referencing any other group/kind is not Karpenter's
# (``pkg/utils/nodepool.IsManaged``): provisioning, drift and disruption leave it alone.
SUPPORTED_NODE_CLASSES: Final = frozenset(
    {("karpenter.k8s.aws", "EC2NodeClass"), ("karpenter.test.sh", "TestNodeClass")}
)
# Node classes of another controller, named in the reason a pool is left out.
FOREIGN_NODE_CLASSES: Final[dict[tuple[str, str], str]] = {
    ("eks.amazonaws.com", "NodeClass"): "EKS Auto Mode's own Karpenter",
}


def unmanaged_reason(group: str, kind: str) -> str | None:
    """Why a NodePool whose ``nodeClassRef`` is ``group``/``kind`` is not this Karpenter's (None: it is).

    Mirrors ``nodepool.IsManaged``: the ref's GroupKind must be one of the provider's node classes.
    """
    if (group, kind) in SUPPORTED_NODE_CLASSES:
        return None
    owner = FOREIGN_NODE_CLASSES.get((group, kind), "another controller")
    return (
        f"nodeClassRef {group}/{kind} is not a node class of Karpenter's AWS provider "
        f"(karpenter.k8s.aws/EC2NodeClass): {owner} manages this NodePool, a self-managed Karpenter ignores it"
    )


def unmanaged_reason_of(body: object) -> str | None:
    """:func:`unmanaged_reason` of a NodePool or NodeClaim as a raw mapping (any shape: a missing or
    malformed ``nodeClassRef`` is left to validation and counts as managed)."""

    def get(v: object, key: str) -> object:
        return v.get(key) if isinstance(v, Mapping) else None

    spec = get(body, "spec")
    ref = (
        get(spec, "nodeClassRef")
        if get(spec, "template") is None
        else get(get(get(spec, "template"), "spec"), "nodeClassRef")
    )
    if not isinstance(ref, Mapping):
        return None
    return unmanaged_reason(str(ref.get("group", "")), str(ref.get("kind", "")))


class NodeClassReference(StrictModel):
    group: str
    kind: str
    name: str


class NodeSelectorRequirementWithMinValues(StrictModel):
    key: str
    operator: str
    values: list[str] = Field(default_factory=list)
    min_values: int | None = None


class TemplateTaint(StrictModel):
    key: str
    value: str | None = None
    effect: str
    time_added: str | None = None


class NodeClaimTemplateSpec(StrictModel):
    taints: list[TemplateTaint] = Field(default_factory=list)
    startup_taints: list[TemplateTaint] = Field(default_factory=list)
    requirements: list[NodeSelectorRequirementWithMinValues]
    node_class_ref: NodeClassReference
    expire_after: str = "720h"
    termination_grace_period: str | None = None


class TemplateMetadata(StrictModel):
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)


class NodeClaimTemplate(StrictModel):
    metadata: TemplateMetadata = Field(default_factory=TemplateMetadata)
    spec: NodeClaimTemplateSpec


class Budget(StrictModel):
    nodes: str = "10%"
    schedule: str | None = None
    duration: str | None = None
    reasons: list[str] | None = None


class Disruption(StrictModel):
    consolidate_after: str = "0s"
    consolidation_policy: str = "WhenEmptyOrUnderutilized"
    budgets: list[Budget] = Field(default_factory=lambda: [Budget()])


class NodePoolSpec(StrictModel):
    template: NodeClaimTemplate
    disruption: Disruption = Field(default_factory=Disruption)
    limits: dict[str, QuantityValue] = Field(default_factory=dict)
    weight: int | None = None
    replicas: int | None = None


class NodePoolStatus(KubeModel):
    conditions: list[Condition] = Field(default_factory=list)
    resources: dict[str, QuantityValue] = Field(default_factory=dict)
    node_class_observed_generation: int | None = None
    nodes: int | None = None


class NodePool(TopLevel):
    """A Karpenter v1 NodePool. ``spec`` is strict; ``metadata``/``status`` as the server returns them."""

    api_version: Literal["karpenter.sh/v1"] = API_VERSION
    kind: Literal["NodePool"] = "NodePool"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: NodePoolSpec
    status: NodePoolStatus = Field(default_factory=NodePoolStatus)

    @property
    def name(self) -> str:
        return self.metadata.name

    def is_ready(self) -> bool:
        """Karpenter schedules only onto Ready NodePools; a NodePool from Git has no status yet.

        A NodePool without conditions (as written in Git) is taken as ready; one read from a
        cluster is ready unless its ``Ready`` condition says otherwise.
        """
        for cond in self.status.conditions:
            if cond.type == "Ready":
                return cond.status == "True"
        return True

    def is_deleting(self) -> bool:
        return self.metadata.deletion_timestamp is not None

    def is_static(self) -> bool:
        """``nodepool.IsStatic``: ``spec.replicas`` is set."""
        return self.spec.replicas is not None

    def unmanaged_reason(self) -> str | None:
        """Why this Karpenter leaves the pool alone (:func:`unmanaged_reason`); None when it is its own."""
        ref = self.spec.template.spec.node_class_ref
        return unmanaged_reason(ref.group, ref.kind)


class ResourceRequests(KubeModel):
    requests: dict[str, QuantityValue] = Field(default_factory=dict)


class NodeClaimSpec(KubeModel):
    taints: list[Taint] = Field(default_factory=list)
    startup_taints: list[Taint] = Field(default_factory=list)
    requirements: list[NodeSelectorRequirementWithMinValues] = Field(default_factory=list)
    resources: ResourceRequests = Field(default_factory=ResourceRequests)
    node_class_ref: NodeClassReference | None = None
    expire_after: str | None = None
    termination_grace_period: str | None = None


class NodeClaimStatus(KubeModel):
    node_name: str | None = None
    provider_id: str | None = Field(default=None, alias="providerID")
    image_id: str | None = Field(default=None, alias="imageID")
    capacity: dict[str, QuantityValue] = Field(default_factory=dict)
    allocatable: dict[str, QuantityValue] = Field(default_factory=dict)
    conditions: list[Condition] = Field(default_factory=list)
    last_pod_event_time: str | None = None


class NodeClaim(TopLevel):
    api_version: Literal["karpenter.sh/v1"] = API_VERSION
    kind: Literal["NodeClaim"] = "NodeClaim"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: NodeClaimSpec = Field(default_factory=NodeClaimSpec)
    status: NodeClaimStatus = Field(default_factory=NodeClaimStatus)

    @property
    def name(self) -> str:
        return self.metadata.name

    def condition(self, type_: str) -> Condition | None:
        for cond in self.status.conditions:
            if cond.type == type_:
                return cond
        return None
