"""The AWS provider's ``karpenter.k8s.aws/v1`` EC2NodeClass, with the CRD's defaults.

Field set follows the v1 CRD (aws/karpenter-provider-aws v1.14.1
``pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml``). ``metadataOptions`` defaults as the CRD
applies it (:data:`nodewright.api.amifamily.DEFAULT_METADATA_OPTIONS`). ``amiFamily()`` resolves
the family from the field or from an ``alias`` AMI selector term, as the provider does
(:mod:`nodewright.api.amifamily` owns the rule).
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import Field

from nodewright.api.amifamily import DEFAULT_METADATA_OPTIONS, resolve_family, spec_alias, split_alias
from nodewright.api.base import KubeModel, StrictModel, TopLevel
from nodewright.api.core import Condition, ObjectMeta

API_VERSION: Final = "karpenter.k8s.aws/v1"


class SubnetSelectorTerm(StrictModel):
    tags: dict[str, str] | None = None
    id: str | None = None


class SecurityGroupSelectorTerm(StrictModel):
    tags: dict[str, str] | None = None
    id: str | None = None
    name: str | None = None


class CapacityReservationSelectorTerm(StrictModel):
    tags: dict[str, str] | None = None
    id: str | None = None
    owner_id: str | None = Field(default=None, alias="ownerID")
    instance_match_criteria: str | None = None


class AMISelectorTerm(StrictModel):
    alias: str | None = None
    tags: dict[str, str] | None = None
    id: str | None = None
    name: str | None = None
    owner: str | None = None
    ssm_parameter: str | None = None


class KubeletConfiguration(StrictModel):
    cluster_dns: list[str] | None = Field(default=None, alias="clusterDNS")
    max_pods: int | None = None
    pods_per_core: int | None = None
    system_reserved: dict[str, str | int | float] | None = None
    kube_reserved: dict[str, str | int | float] | None = None
    eviction_hard: dict[str, str] | None = None
    eviction_soft: dict[str, str] | None = None
    eviction_soft_grace_period: dict[str, str] | None = None
    eviction_max_pod_grace_period: int | None = None
    image_gc_high_threshold_percent: int | None = Field(default=None, alias="imageGCHighThresholdPercent")
    image_gc_low_threshold_percent: int | None = Field(default=None, alias="imageGCLowThresholdPercent")
    cpu_cfs_quota: bool | None = Field(default=None, alias="cpuCFSQuota")


class BlockDevice(StrictModel):
    delete_on_termination: bool | None = None
    encrypted: bool | None = None
    iops: int | None = None
    kms_key_id: str | None = Field(default=None, alias="kmsKeyID")
    snapshot_id: str | None = Field(default=None, alias="snapshotID")
    throughput: int | None = None
    volume_initialization_rate: int | None = None
    volume_size: str | int | None = None
    volume_type: str | None = None


class BlockDeviceMapping(StrictModel):
    device_name: str | None = None
    ebs: BlockDevice | None = None
    root_volume: bool = False


class MetadataOptions(StrictModel):
    """``spec.metadataOptions``; each field defaults as :data:`DEFAULT_METADATA_OPTIONS` says."""

    http_endpoint: str = str(DEFAULT_METADATA_OPTIONS["httpEndpoint"])
    http_protocol_ipv6: str = Field(
        default=str(DEFAULT_METADATA_OPTIONS["httpProtocolIPv6"]), alias="httpProtocolIPv6"
    )
    http_put_response_hop_limit: int = int(DEFAULT_METADATA_OPTIONS["httpPutResponseHopLimit"])
    http_tokens: str = str(DEFAULT_METADATA_OPTIONS["httpTokens"])


class EC2NodeClassSpec(StrictModel):
    subnet_selector_terms: list[SubnetSelectorTerm] = Field(default_factory=list)
    security_group_selector_terms: list[SecurityGroupSelectorTerm] = Field(default_factory=list)
    capacity_reservation_selector_terms: list[CapacityReservationSelectorTerm] = Field(default_factory=list)
    associate_public_ip_address: bool | None = Field(default=None, alias="associatePublicIPAddress")
    ami_selector_terms: list[AMISelectorTerm] = Field(default_factory=list)
    ami_family: str | None = None
    user_data: str | None = None
    role: str | None = None
    instance_profile: str | None = None
    tags: dict[str, str] = Field(default_factory=dict)
    kubelet: KubeletConfiguration | None = None
    block_device_mappings: list[BlockDeviceMapping] = Field(default_factory=list)
    instance_store_policy: str | None = None
    detailed_monitoring: bool | None = None
    metadata_options: MetadataOptions = Field(default_factory=MetadataOptions)
    context: str | None = None
    ip_prefix_count: int | None = None
    network_interfaces: list[dict[str, Any]] | None = None
    placement_group_selector: dict[str, Any] | None = None
    cpu_options: dict[str, Any] | None = None
    connection_tracking: dict[str, Any] | None = None


class EC2NodeClassStatus(KubeModel):
    conditions: list[Condition] = Field(default_factory=list)
    amis: list[dict[str, Any]] = Field(default_factory=list)
    subnets: list[dict[str, Any]] = Field(default_factory=list)
    security_groups: list[dict[str, Any]] = Field(default_factory=list)
    instance_profile: str | None = None


class EC2NodeClass(TopLevel):
    api_version: Literal["karpenter.k8s.aws/v1"] = API_VERSION
    kind: Literal["EC2NodeClass"] = "EC2NodeClass"
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: EC2NodeClassSpec
    status: EC2NodeClassStatus = Field(default_factory=EC2NodeClassStatus)

    @property
    def name(self) -> str:
        return self.metadata.name

    def ami_family(self) -> str:
        """The AMI family the provider uses: ``spec.amiFamily``, else the alias's family, else Custom
        (as Karpenter's ``AMIFamily()``; validation makes the last case unreachable)."""
        return resolve_family(self.spec.ami_family, spec_alias(self.spec.ami_selector_terms))

    def alias(self) -> tuple[str, str] | None:
        """``(family, version)`` of the alias AMI selector term, if any (``al2023@latest``)."""
        alias = spec_alias(self.spec.ami_selector_terms)
        return split_alias(alias) if alias else None
