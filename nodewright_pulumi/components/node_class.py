"""``nodewright:index:NodeClass``: an EC2NodeClass as launch templates (+ the EC2NodeClass CR).

Children (``parent=self``, named ``f"{name}-..."``): the instance profile for ``spec.role``; one
``aws.ec2.LaunchTemplate`` per distinct user data (per NodePool, max-pods and EFA group, as Karpenter
renders them) with the AMI from SSM (alias terms) or the pinned id; every other field is the core's
:class:`~nodewright.userdata.launch_template.LaunchTemplateSpec` mapped one to one (Karpenter's name,
tags, network interfaces, block devices, metadata, monitoring, placement, CPU, enclave and
capacity-reservation options); in ``karpenter`` mode the ``karpenter.k8s.aws/v1`` EC2NodeClass CR for
the in-cluster Karpenter. User data is a secret output: it carries the cluster CA bundle and
whatever the user put in ``spec.userData``.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from nodewright import labels
from nodewright.stack import (
    BlockDeviceSpec,
    LaunchTemplatePlan,
    LaunchTemplateSpec,
    NetworkInterfaceSpec,
    NodeClassPlan,
)
from nodewright_pulumi.components.outputs import output_map


@dataclass(frozen=True, kw_only=True)
class NodeClassArgs:
    plan: NodeClassPlan
    cluster_name: str
    create_crd_object: bool = True
    create_launch_templates: bool = True
    security_group_ids: tuple[str, ...] = ()
    tags: Mapping[str, str] = field(default_factory=dict)
    karpenter_version: str = ""  # the stack's Karpenter release (the policies' expectations follow it)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def _block_device(b: BlockDeviceSpec) -> aws.ec2.LaunchTemplateBlockDeviceMappingArgs:
    def flag(v: bool | None) -> str | None:
        return None if v is None else str(v).lower()

    return aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
        device_name=b.device_name,
        ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
            volume_size=b.volume_size_gib,
            volume_type=b.volume_type,
            iops=b.iops,
            throughput=b.throughput,
            kms_key_id=b.kms_key_id,
            snapshot_id=b.snapshot_id,
            delete_on_termination=flag(b.delete_on_termination),
            encrypted=flag(b.encrypted),
            volume_initialization_rate=b.volume_initialization_rate,
        ),
    )


def _metadata(opts: Mapping[str, Any]) -> aws.ec2.LaunchTemplateMetadataOptionsArgs:
    return aws.ec2.LaunchTemplateMetadataOptionsArgs(
        http_endpoint=opts.get("httpEndpoint"),
        http_protocol_ipv6=opts.get("httpProtocolIPv6"),
        http_put_response_hop_limit=opts.get("httpPutResponseHopLimit"),
        http_tokens=opts.get("httpTokens"),
        instance_metadata_tags=opts.get("instanceMetadataTags"),
    )


def _interface(ni: NetworkInterfaceSpec) -> aws.ec2.LaunchTemplateNetworkInterfaceArgs:
    ct = ni.connection_tracking
    return aws.ec2.LaunchTemplateNetworkInterfaceArgs(
        device_index=ni.device_index,
        network_card_index=ni.network_card_index,
        interface_type=ni.interface_type,
        security_groups=list(ni.security_groups) or None,
        associate_public_ip_address=None
        if ni.associate_public_ip_address is None
        else str(ni.associate_public_ip_address).lower(),
        ipv4_prefix_count=ni.ipv4_prefix_count,
        ipv6_prefix_count=ni.ipv6_prefix_count,
        ipv6_address_count=ni.ipv6_address_count,
        primary_ipv6=None if ni.primary_ipv6 is None else str(ni.primary_ipv6).lower(),
        connection_tracking_specification=None
        if ct is None
        else aws.ec2.LaunchTemplateNetworkInterfaceConnectionTrackingSpecificationArgs(
            tcp_established_timeout=ct.get("tcpEstablishedTimeout"),
            udp_stream_timeout=ct.get("udpStreamTimeout"),
            udp_timeout=ct.get("udpTimeout"),
        ),
    )


def launch_template_args(
    spec: LaunchTemplateSpec,
    *,
    image_id: pulumi.Input[str],
    instance_profile: pulumi.Input[str],
    extra_tags: Mapping[str, str],
) -> dict[str, Any]:
    """``aws.ec2.LaunchTemplate`` keyword arguments from the core :class:`LaunchTemplateSpec`."""
    # A reserved launch targets its reservation; Karpenter also sends the preference
    # "capacity-reservations-only", which the provider's schema does not take next to a target
    # (its preference is open/none), so the target alone is set then.
    reservation = None
    if spec.capacity_reservation_preference is not None:
        reservation = aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
            capacity_reservation_preference=spec.capacity_reservation_preference
            if spec.capacity_reservation_id is None
            else None,
            capacity_reservation_target=None
            if spec.capacity_reservation_id is None
            else aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs(
                capacity_reservation_id=spec.capacity_reservation_id
            ),
        )
    tags = {**extra_tags, **spec.tags}
    tag_specs = [(r, {**extra_tags, **t}) for r, t in spec.tag_specifications]
    # nodewright launches with aws.ec2.Instance (no CreateFleet): the instance and volume tags
    # Karpenter passes to CreateFleet ride on the launch template instead (README Limits).
    tag_specs += [("instance", tags), ("volume", tags)]
    return {
        "name": spec.name,
        "image_id": image_id,
        "user_data": pulumi.Output.secret(_b64(spec.user_data)),
        "block_device_mappings": [_block_device(b) for b in spec.block_device_mappings] or None,
        "metadata_options": _metadata(spec.metadata_options),
        "iam_instance_profile": aws.ec2.LaunchTemplateIamInstanceProfileArgs(name=instance_profile),
        "vpc_security_group_ids": list(spec.security_group_ids) if spec.security_group_ids else None,
        "network_interfaces": [_interface(n) for n in spec.network_interfaces],
        "monitoring": aws.ec2.LaunchTemplateMonitoringArgs(enabled=spec.monitoring),
        "placement": aws.ec2.LaunchTemplatePlacementArgs(
            tenancy=spec.tenancy,
            group_id=spec.placement_group_id,
            partition_number=spec.placement_group_partition,
        ),
        "cpu_options": None
        if spec.cpu_nested_virtualization is None
        else aws.ec2.LaunchTemplateCpuOptionsArgs(nested_virtualization=spec.cpu_nested_virtualization),
        "enclave_options": aws.ec2.LaunchTemplateEnclaveOptionsArgs(enabled=spec.enclave_enabled),
        "capacity_reservation_specification": reservation,
        "instance_market_options": None
        if spec.market_type is None
        else aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(market_type=spec.market_type),
        "tags": tags,
        "tag_specifications": [
            aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=r, tags=t) for r, t in tag_specs
        ],
    }


class NodeClass(pulumi.ComponentResource):
    """Launch templates (and the EC2NodeClass CR) for one EC2NodeClass."""

    image_id: pulumi.Output[str]
    """The resolved AMI id."""
    instance_profile: pulumi.Output[str]
    """Instance profile name the nodes run with."""
    launch_template_ids: pulumi.Output[dict[str, str]]
    """Launch template id per launch-template key (NodePool or NodePool-usergroup)."""

    def __init__(self, name: str, args: NodeClassArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        plan = args.plan
        super().__init__(
            "nodewright:index:NodeClass",
            name,
            {
                "nodeClass": plan.name,
                "amiFamily": plan.family,
                "amiAlias": plan.ami.alias or "",
                "launchTemplates": [lt.key for lt in plan.launch_templates],
                # What each launch template is for (the PR comment groups templates that differ only here).
                "launchTemplateGroups": [
                    {
                        "resource": f"{name}-{lt.key}",
                        "nodePool": lt.nodepool,
                        "maxPods": lt.max_pods,
                        "capacityType": lt.capacity_type,
                    }
                    for lt in plan.launch_templates
                ],
                "karpenterVersion": args.karpenter_version,
            },
            opts,
        )
        child = pulumi.ResourceOptions(parent=self)
        spec = plan.body.get("spec") or {}
        self.image_id = self._image(plan)
        self.instance_profile = self._instance_profile(name, plan, spec, args, child)
        self.launch_templates: dict[str, aws.ec2.LaunchTemplate] = {}
        if args.create_launch_templates:
            for lt in plan.launch_templates:
                self.launch_templates[lt.key] = self._launch_template(name, lt, plan, args, child)
        self.launch_template_ids = output_map({k: v.id for k, v in self.launch_templates.items()})
        self.custom_resource: k8s.apiextensions.CustomResource | None = None
        if args.create_crd_object:
            body_spec = dict(spec)
            if body_spec.get("userData"):
                body_spec["userData"] = pulumi.Output.secret(str(body_spec["userData"]))
            self.custom_resource = k8s.apiextensions.CustomResource(
                f"{name}-ec2nodeclass",
                api_version="karpenter.k8s.aws/v1",
                kind="EC2NodeClass",
                metadata={"name": plan.name},
                spec=body_spec,
                opts=child,
            )
        self.register_outputs(
            {
                "imageId": self.image_id,
                "instanceProfile": self.instance_profile,
                "launchTemplateIds": self.launch_template_ids,
            }
        )

    @staticmethod
    def _image(plan: NodeClassPlan) -> pulumi.Output[str]:
        if plan.ami.ssm_parameter:
            param = aws.ssm.get_parameter_output(name=plan.ami.ssm_parameter)
            value: pulumi.Output[str] = param.value.apply(str)
            return value
        return pulumi.Output.from_input(str(plan.ami.image_id))

    @staticmethod
    def _instance_profile(
        name: str,
        plan: NodeClassPlan,
        spec: Mapping[str, Any],
        args: NodeClassArgs,
        child: pulumi.ResourceOptions,
    ) -> pulumi.Output[str]:
        if spec.get("instanceProfile"):
            return pulumi.Output.from_input(str(spec["instanceProfile"]))
        profile = aws.iam.InstanceProfile(
            f"{name}-profile",
            role=str(spec.get("role", "")),
            tags={**args.tags, labels.EC2NODECLASS: plan.name},
            opts=child,
        )
        profile_name: pulumi.Output[str] = profile.name
        return profile_name

    def _launch_template(
        self,
        name: str,
        lt: LaunchTemplatePlan,
        plan: NodeClassPlan,
        args: NodeClassArgs,
        child: pulumi.ResourceOptions,
    ) -> aws.ec2.LaunchTemplate:
        if lt.spec is None:
            raise ValueError(
                f"launch template {lt.key} of {plan.name} has no spec; build it with components.plan"
            )
        return aws.ec2.LaunchTemplate(
            f"{name}-{lt.key}",
            **launch_template_args(
                lt.spec,
                image_id=self.image_id,
                instance_profile=self.instance_profile,
                extra_tags={**args.tags, labels.AMI_FAMILY_TAG: plan.family},
            ),
            opts=child,
        )
