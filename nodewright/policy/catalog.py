"""The nodewright policies: names, descriptions, default enforcement, config schema and rule.

Boundary: pure data over the pure rules; :mod:`nodewright.preview.pack` wraps each entry in a
``pulumi_policy`` policy for ``policies/__main__.py`` (the real CrossGuard pack) and for the
in-process analyzer of ``nodewright preview``, so both run the same code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from nodewright.api.amifamily import USER_DATA_MAX_BYTES
from nodewright.catalog.loader import DEFAULT_SPEC
from nodewright.policy.cost_rules import check_oversized_types
from nodewright.policy.crd_rules import check_crds_update, check_crds_valid
from nodewright.policy.drift_rules import check_instances_hash, check_nodepool_hashes, check_pair_health
from nodewright.policy.labels_rules import (
    check_custom_ami_user_data,
    check_restricted_labels,
    check_user_data_registers,
)
from nodewright.policy.resources import ResourceView
from nodewright.policy.safety import (
    DEFAULT_MAX_HOP_LIMIT,
    check_ebs_encrypted,
    check_imdsv2,
    check_user_data_safe,
)

PACK_NAME: Final = "nodewright"
Enforcement = Literal["advisory", "mandatory", "remediate", "disabled"]
ENFORCEMENT_LEVELS: Final[tuple[str, ...]] = ("advisory", "mandatory", "remediate", "disabled")

ResourceCheck = Callable[[ResourceView, Mapping[str, Any]], list[str]]
StackCheck = Callable[[Sequence[ResourceView], Mapping[str, Any]], list[tuple[str, str]]]


@dataclass(frozen=True, kw_only=True)
class PolicySpec:
    """One policy of the pack."""

    name: str
    description: str
    enforcement: Enforcement
    resource_check: ResourceCheck | None = None
    stack_check: StackCheck | None = None
    config_properties: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return "stack" if self.stack_check is not None else "resource"


POLICIES: Final[tuple[PolicySpec, ...]] = (
    PolicySpec(
        name="karpenter-crd-valid",
        description="NodePool and EC2NodeClass CRs pass the Karpenter release's CRD (schema, CEL rules) and runtime validation.",
        enforcement="mandatory",
        stack_check=check_crds_valid,
    ),
    PolicySpec(
        name="karpenter-crd-update-valid",
        description="NodePool and EC2NodeClass CRs are valid updates of the base branch's (transition rules such as an immutable nodeClassRef group/kind or static/dynamic NodePools, immutable metadata; unchanged invalid fields ratchet).",
        enforcement="mandatory",
        stack_check=check_crds_update,
        config_properties={
            "base": {
                "type": "string",
                "default": "",
                "description": "`nodewright preview -o json` of the base branch (`nodewright preview --base` sets it); empty: not checked.",
            }
        },
    ),
    PolicySpec(
        name="nodepool-hash-current",
        description="A NodePool's karpenter.sh/nodepool-hash annotation is the hash Karpenter computes, at the current version.",
        enforcement="mandatory",
        stack_check=check_nodepool_hashes,
    ),
    PolicySpec(
        name="nodeclaim-hash-current",
        description="Instances (NodeClaims) of a NodePool carry the pool's current hash; others are drifted.",
        enforcement="advisory",
        stack_check=check_instances_hash,
    ),
    PolicySpec(
        name="nodepool-restricted-labels",
        description="NodePool labels and requirements use no restricted label (Karpenter v1.9+ IsRestrictedLabel: karpenter.sh, karpenter.k8s.aws domains unless well known, kubernetes.io/hostname; #2586).",
        enforcement="mandatory",
        resource_check=check_restricted_labels,
        config_properties={
            "extraRestrictedDomains": {
                "type": "array",
                "items": {"type": "string"},
                "default": [],
                "description": "More label domains to refuse in NodePools.",
            }
        },
    ),
    PolicySpec(
        name="user-data-registers-nodepool",
        description="Launch template user data registers the node with its NodePool's labels and taints (the karpenter.sh/unregistered taint is optional since Karpenter v1.3, #1991).",
        enforcement="mandatory",
        stack_check=check_user_data_registers,
    ),
    PolicySpec(
        name="custom-ami-has-user-data",
        description="A Custom-family AMI comes with user data.",
        enforcement="mandatory",
        resource_check=check_custom_ami_user_data,
    ),
    PolicySpec(
        name="imdsv2-required",
        description="Nodes require IMDSv2 (httpTokens: required) with a bounded hop limit.",
        enforcement="mandatory",
        resource_check=check_imdsv2,
        config_properties={
            "maxHopLimit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 64,
                "default": DEFAULT_MAX_HOP_LIMIT,
                "description": "Highest allowed httpPutResponseHopLimit.",
            }
        },
    ),
    PolicySpec(
        name="ebs-encrypted",
        description="Every EBS volume of a node is encrypted.",
        enforcement="mandatory",
        resource_check=check_ebs_encrypted,
    ),
    PolicySpec(
        name="user-data-safe",
        description="User data fits EC2's 16 KB limit and holds no plain-text credentials.",
        enforcement="mandatory",
        resource_check=check_user_data_safe,
        config_properties={
            "maxBytes": {
                "type": "integer",
                "minimum": 1,
                "maximum": USER_DATA_MAX_BYTES,
                "default": USER_DATA_MAX_BYTES,
                "description": "Largest allowed decoded user data, in bytes.",
            },
            "extraCredentialPatterns": {
                "type": "array",
                "items": {"type": "string"},
                "default": [],
                "description": "More regular expressions that must not match user data.",
            },
        },
    ),
    PolicySpec(
        name="nodepool-pair-health",
        description="A change to a NodePool whose NodePool/NodeClass pair is Unhealthy or never verified gets a second look.",
        enforcement="advisory",
        resource_check=check_pair_health,
    ),
    PolicySpec(
        name="nodepool-oversized-types",
        description="A NodePool does not let NodeClaims grow into instance types far dearer per vCPU or GiB than its best offering.",
        enforcement="advisory",
        resource_check=check_oversized_types,
        config_properties={
            "catalog": {
                "type": "string",
                "default": DEFAULT_SPEC,
                "description": "Instance-type catalog: a file or aws:<region>.",
            },
            "maxPriceRatio": {
                "type": "number",
                "minimum": 1,
                "default": 2.0,
                "description": "Oversized: $/vCPU or $/GiB above this multiple of the pool's best (10th percentile).",
            },
        },
    ),
)


def policy_names() -> list[str]:
    return [p.name for p in POLICIES]


def get_policy(name: str) -> PolicySpec:
    for p in POLICIES:
        if p.name == name:
            return p
    raise KeyError(name)
