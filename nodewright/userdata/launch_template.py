"""The EC2 launch template Karpenter's AWS provider creates for one launch, as pure data.

Translates aws/karpenter-provider-aws v1.14.1 ``pkg/providers/launchtemplate`` (``types.go``
``CreateLaunchTemplateInputBuilder.Build``, ``launchtemplate.go`` ``generateNetworkInterfaces``,
``blockDeviceMappings``, ``volumeSize``, ``cpuOptions``, ``LaunchTemplateName``), ``pkg/utils``
``GetTags`` and ``pkg/providers/amifamily/resolver.go`` ``resolveLaunchTemplates`` (default block
devices and metadata options, EFA count, enclave, tenancy, placement group, capacity reservation).
:func:`launch_template_spec` returns a :class:`LaunchTemplateSpec` that the Pulumi component maps
field by field onto ``aws.ec2.LaunchTemplate``; the user data is passed in already rendered.

Boundary: no pulumi, no I/O. What Karpenter resolves from EC2 at launch time (AMI id, security
group ids, instance profile name, subnet, capacity reservation and placement group ids) is given by
the caller. Spot market options are not set here: Karpenter requests spot through CreateFleet's
``TargetCapacitySpecification``, never in the launch template (only capacity blocks and
interruptible reservations set ``InstanceMarketOptions``).
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Final

from nodewright import labels as L
from nodewright.algebra.quantity import QuantityError, to_gib_ceil
from nodewright.api import EC2NodeClass
from nodewright.api.amifamily import DEFAULT_METADATA_OPTIONS, default_block_device_mappings, renderer_family
from nodewright.userdata.options import ClusterInfo, UserDataError

LAUNCH_TEMPLATE_NAME_PREFIX: Final = "karpenter.k8s.aws"  # v1.LaunchTemplateNamePrefix = apis.Group
EKS_CLUSTER_NAME_TAG: Final = "eks:eks-cluster-name"
EFA_RESOURCE: Final = "vpc.amazonaws.com/efa"
NIP_SLOTS_RESOURCE: Final = "eks.amazonaws.com/nip-slots"
INSTANCE_TENANCY_LABEL: Final = L.INSTANCE_TENANCY
RESERVATION_TYPE_LABEL: Final = L.CAPACITY_RESERVATION_TYPE
RESERVATION_INTERRUPTIBLE_LABEL: Final = L.CAPACITY_RESERVATION_INTERRUPTIBLE
EFA_ONLY: Final = "efa-only"
# resolver.go httpProtocolUnsupportedRegions: HTTPProtocolIPv6 is dropped there.
HTTP_PROTOCOL_UNSUPPORTED_REGIONS: Final = frozenset(
    {
        "us-iso-east-1",
        "us-iso-west-1",
        "us-isob-east-1",
        "us-isob-west-1",
        "us-isof-south-1",
        "us-isof-east-1",
    }
)


@dataclass(frozen=True, kw_only=True)
class BlockDeviceSpec:
    """``LaunchTemplateBlockDeviceMappingRequest`` (sizes in whole GiB, rounded up)."""

    device_name: str | None
    volume_size_gib: int | None = None
    volume_type: str | None = None
    iops: int | None = None
    throughput: int | None = None
    kms_key_id: str | None = None
    snapshot_id: str | None = None
    encrypted: bool | None = None
    delete_on_termination: bool | None = None
    volume_initialization_rate: int | None = None


@dataclass(frozen=True, kw_only=True)
class NetworkInterfaceSpec:
    """``LaunchTemplateInstanceNetworkInterfaceSpecificationRequest``; ``None`` = not set."""

    device_index: int
    network_card_index: int | None = None
    interface_type: str | None = None  # efa, efa-only, interface; None = EC2's default ENA
    security_groups: tuple[str, ...] = ()
    associate_public_ip_address: bool | None = None
    ipv4_prefix_count: int | None = None
    ipv6_prefix_count: int | None = None
    ipv6_address_count: int | None = None
    primary_ipv6: bool | None = None
    connection_tracking: Mapping[str, int] | None = (
        None  # tcpEstablishedTimeout, udpStreamTimeout, udpTimeout
    )


@dataclass(frozen=True, kw_only=True)
class LaunchTemplateSpec:
    """Everything Karpenter puts in ``CreateLaunchTemplateInput`` for one launch."""

    name: str
    user_data: str  # decoded; EC2 receives it base64-encoded
    image_id: str | None
    instance_profile: str | None
    block_device_mappings: tuple[BlockDeviceSpec, ...]
    metadata_options: Mapping[str, Any]
    monitoring: bool
    network_interfaces: tuple[NetworkInterfaceSpec, ...]
    security_group_ids: tuple[str, ...] | None  # always None: the groups ride on the interfaces
    tenancy: str
    placement_group_id: str | None = None
    placement_group_partition: int | None = None
    cpu_nested_virtualization: str | None = None
    enclave_enabled: bool = False
    capacity_reservation_preference: str | None = None  # open launch mode: unset
    capacity_reservation_id: str | None = None
    market_type: str | None = None  # capacity-block / interruptible-capacity-reservation
    tags: Mapping[str, str] = field(default_factory=dict)  # the launch template's own tags
    tag_specifications: tuple[tuple[str, Mapping[str, str]], ...] = ()  # (resource type, tags)

    def as_dict(self) -> dict[str, Any]:
        """camelCase JSON (``blockDeviceMappings[].volumeSizeGib``, ``tagSpecifications[].resourceType``...)."""
        out = _camel_fields(self)
        out["blockDeviceMappings"] = [_camel_fields(b) for b in self.block_device_mappings]
        out["networkInterfaces"] = [_camel_fields(n) for n in self.network_interfaces]
        out["tagSpecifications"] = [{"resourceType": r, "tags": dict(t)} for r, t in self.tag_specifications]
        return out


def _camel_fields(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(obj):
        head, *rest = f.name.split("_")
        value = getattr(obj, f.name)
        out[head + "".join(p.title() for p in rest)] = (
            dict(value) if isinstance(value, Mapping) else list(value) if isinstance(value, tuple) else value
        )
    return out


def launch_template_tags(nodeclass: EC2NodeClass, *, cluster_name: str, nodepool: str) -> dict[str, str]:
    """``utils.GetTags``: ``spec.tags`` overlaid with Karpenter's static tags (which always win)."""
    return {
        **dict(nodeclass.spec.tags),
        f"kubernetes.io/cluster/{cluster_name}": "owned",
        L.NODEPOOL: nodepool,
        EKS_CLUSTER_NAME_TAG: cluster_name,
        L.EC2NODECLASS: nodeclass.name,
    }


def block_device_specs(nodeclass: EC2NodeClass, family: str) -> tuple[BlockDeviceSpec, ...]:
    """``blockDeviceMappings`` of ``spec.blockDeviceMappings``, else the family's defaults."""
    given = [b.model_dump(by_alias=True, exclude_none=True) for b in nodeclass.spec.block_device_mappings]
    raw = given or default_block_device_mappings(family)
    out = []
    for i, bdm in enumerate(raw):
        ebs = bdm.get("ebs") or {}
        size = ebs.get("volumeSize")
        try:
            gib = None if size is None else to_gib_ceil(size)
        except QuantityError:
            raise UserDataError(
                f"invalid quantity {size!r}; use e.g. 100Gi or 200G",
                path=f"spec.blockDeviceMappings[{i}].ebs.volumeSize",
            ) from None
        out.append(
            BlockDeviceSpec(
                device_name=bdm.get("deviceName"),
                volume_size_gib=gib,
                volume_type=ebs.get("volumeType"),
                iops=ebs.get("iops") or None,  # lo.EmptyableToPtr: 0 is not sent
                throughput=ebs.get("throughput") or None,
                kms_key_id=ebs.get("kmsKeyID"),
                snapshot_id=ebs.get("snapshotID"),
                encrypted=ebs.get("encrypted"),
                delete_on_termination=ebs.get("deleteOnTermination"),
                volume_initialization_rate=ebs.get("volumeInitializationRate"),
            )
        )
    return tuple(out)


def launch_template_metadata_options(nodeclass: EC2NodeClass, *, region: str | None = None) -> dict[str, Any]:
    """``MetadataOptions`` (the CRD default fills unset fields) plus ``InstanceMetadataTags: disabled``."""
    given = nodeclass.spec.metadata_options.model_dump(by_alias=True, exclude_none=True)
    out: dict[str, Any] = {**DEFAULT_METADATA_OPTIONS, **given, "instanceMetadataTags": "disabled"}
    if region in HTTP_PROTOCOL_UNSUPPORTED_REGIONS:
        out.pop("httpProtocolIPv6", None)
    return out


def _connection_tracking(nodeclass: EC2NodeClass) -> dict[str, int] | None:
    """``connectionTrackingSpec``: nil unless at least one timeout is set."""
    ct = nodeclass.spec.connection_tracking or {}
    out = {
        k: int(ct[k])
        for k in ("tcpEstablishedTimeout", "udpStreamTimeout", "udpTimeout")
        if ct.get(k) is not None
    }
    return out or None


def network_interfaces(
    nodeclass: EC2NodeClass,
    *,
    ipv6: bool,
    efa_count: int = 0,
    security_group_ids: Sequence[str] = (),
) -> tuple[NetworkInterfaceSpec, ...]:
    """``generateNetworkInterfaces``: the NodeClass's interfaces, else one EFA per card, else the primary ENI."""
    spec = nodeclass.spec
    groups = tuple(security_group_ids)
    public = spec.associate_public_ip_address
    prefix = spec.ip_prefix_count
    conntrack = _connection_tracking(nodeclass)
    if spec.network_interfaces:
        out = []
        for ni in spec.network_interfaces:
            kind = str(ni.get("interfaceType") or "")
            not_efa_only = kind != EFA_ONLY
            out.append(
                NetworkInterfaceSpec(
                    network_card_index=int(ni.get("networkCardIndex") or 0),
                    device_index=int(ni.get("deviceIndex") or 0),
                    interface_type=kind,
                    security_groups=groups,
                    associate_public_ip_address=public if not_efa_only else None,
                    ipv4_prefix_count=prefix if not_efa_only and not ipv6 else None,
                    ipv6_prefix_count=prefix if not_efa_only and ipv6 else None,
                    ipv6_address_count=1 if not_efa_only and ipv6 else None,
                    primary_ipv6=True if not_efa_only and ipv6 else None,
                    connection_tracking=conntrack if not_efa_only else None,
                )
            )
        return tuple(out)
    common: dict[str, Any] = {
        "security_groups": groups,
        "associate_public_ip_address": public,
        "ipv4_prefix_count": None if ipv6 else prefix,
        "ipv6_prefix_count": prefix if ipv6 else None,
        "ipv6_address_count": 1 if ipv6 else None,
        "primary_ipv6": True if ipv6 else None,
        "connection_tracking": conntrack,
    }
    if efa_count:
        return tuple(
            NetworkInterfaceSpec(
                network_card_index=i, device_index=0 if i == 0 else 1, interface_type="efa", **common
            )
            for i in range(efa_count)
        )
    return (NetworkInterfaceSpec(device_index=0, **common),)


def is_ipv6_cluster(cluster: ClusterInfo) -> bool:
    """``ClusterIPFamily``: IPv6 when the kube-dns IP is not IPv4."""
    if not cluster.dns:
        return False
    try:
        return ipaddress.ip_address(cluster.dns[0]).version != 4
    except ValueError:
        return False


def launch_template_name(identity: Mapping[str, Any]) -> str:
    """``karpenter.k8s.aws/<hash>``: a 64-bit decimal hash of what distinguishes the template.

    Upstream hashes the Go ``amifamily.LaunchTemplate`` struct with hashstructure: its options
    (cluster, instance profile, security groups, tags, kube-dns IP, public IP, NodeClass name...),
    the bootstrapper (so the rendered user data: labels, taints, kubelet, CA bundle, custom user
    data), block devices, AMI, monitoring, EFA count, capacity type, enclave, reservation, tenancy
    and placement, but not the instance types. nodewright hashes the same inputs as canonical JSON
    (BLAKE2b, 8 bytes): names follow the same rule (one per distinct template, stable across runs)
    but are not Karpenter's numbers.
    """
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), default=str)
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
    return f"{LAUNCH_TEMPLATE_NAME_PREFIX}/{int.from_bytes(digest, 'big')}"


def launch_template_spec(
    nodeclass: EC2NodeClass,
    *,
    cluster: ClusterInfo,
    nodepool: str,
    user_data: str,
    capacity_type: str,
    identity: Mapping[str, Any] | None = None,
    image_id: str | None = None,
    instance_profile: str | None = None,
    security_group_ids: Sequence[str] = (),
    efa_count: int = 0,
    enclave: bool = False,
    tenancy: str = "default",
    placement_group_id: str | None = None,
    placement_group_partition: int = 0,
    capacity_reservation_id: str | None = None,
    capacity_reservation_type: str | None = None,
    capacity_reservation_interruptible: bool = False,
    reserved_capacity_gate: bool = True,
    region: str | None = None,
) -> LaunchTemplateSpec:
    """The launch template Karpenter would create for this launch (``CreateLaunchTemplateInputBuilder.Build``).

    ``identity``: extra inputs that distinguish launch templates (e.g. the max-pods group);
    ``efa_count``: the instance type's EFA count when the
    NodeClaim requests ``vpc.amazonaws.com/efa`` (else 0); ``enclave``: the NodeClaim requests
    ``eks.amazonaws.com/nip-slots``; ``tenancy``: the ``karpenter.k8s.aws/instance-tenancy``
    label; ``reserved_capacity_gate``: the ReservedCapacity feature gate (default on in v1.14),
    which makes the launch mode targeted.
    """
    family = renderer_family(nodeclass.ami_family())
    tags = launch_template_tags(nodeclass, cluster_name=cluster.name, nodepool=nodepool)
    ipv6 = is_ipv6_cluster(cluster)
    nis = network_interfaces(nodeclass, ipv6=ipv6, efa_count=efa_count, security_group_ids=security_group_ids)
    tag_specs: list[tuple[str, Mapping[str, str]]] = [("network-interface", tags)]
    if capacity_type == L.CAPACITY_TYPE_SPOT:
        tag_specs.append(("spot-instances-request", tags))
    reserved = capacity_type == L.CAPACITY_TYPE_RESERVED
    preference = target = market = None
    if reserved_capacity_gate:
        preference = "capacity-reservations-only" if reserved else "none"
        target = capacity_reservation_id if reserved else None
        if capacity_reservation_type == "capacity-block":
            market = "capacity-block"
        elif capacity_reservation_interruptible:
            market = "interruptible-capacity-reservation"
    cpu = nodeclass.spec.cpu_options or {}
    bdms = block_device_specs(nodeclass, family)
    meta = launch_template_metadata_options(nodeclass, region=region)
    name = launch_template_name(
        {
            "cluster": [cluster.name, cluster.endpoint, cluster.cidr, list(cluster.dns)],
            "nodeClass": nodeclass.name,
            "userData": user_data,
            "family": family,
            "tags": tags,
            "instanceProfile": instance_profile,
            "securityGroups": sorted(security_group_ids),
            "imageId": image_id,
            "blockDevices": [asdict(b) for b in bdms],
            "metadata": meta,
            "interfaces": [asdict(n) for n in nis],
            "monitoring": bool(nodeclass.spec.detailed_monitoring),
            "cpu": cpu,
            "efa": efa_count,
            "enclave": enclave,
            "capacityType": capacity_type,
            "reservation": [
                capacity_reservation_id,
                capacity_reservation_type,
                capacity_reservation_interruptible,
            ],
            "placement": [tenancy, placement_group_id, placement_group_partition],
            "instanceStorePolicy": nodeclass.spec.instance_store_policy,
            **dict(identity or {}),
        }
    )
    return LaunchTemplateSpec(
        name=name,
        user_data=user_data,
        image_id=image_id,
        instance_profile=instance_profile,
        block_device_mappings=bdms,
        metadata_options=meta,
        monitoring=bool(nodeclass.spec.detailed_monitoring),
        network_interfaces=nis,
        security_group_ids=None,
        tenancy=tenancy,
        placement_group_id=placement_group_id or None,
        placement_group_partition=placement_group_partition or None,
        cpu_nested_virtualization=cpu.get("nestedVirtualization"),
        enclave_enabled=enclave,
        capacity_reservation_preference=preference,
        capacity_reservation_id=target,
        market_type=market,
        tags=tags,
        tag_specifications=tuple(tag_specs),
    )


def instance_type_efa_count(capacity_milli: Mapping[str, int]) -> int:
    """``it.Capacity[vpc.amazonaws.com/efa].Value()`` of a catalog capacity (milli-units, rounded up)."""
    return -(-int(capacity_milli.get(EFA_RESOURCE, 0)) // 1000)


def efa_count_for(capacity_milli: Mapping[str, int], requests: Mapping[str, Any]) -> int:
    """``resolver.go``: the instance type's EFA count when the NodeClaim requests EFA, else 0."""
    return instance_type_efa_count(capacity_milli) if EFA_RESOURCE in requests else 0
