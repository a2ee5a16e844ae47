"""``nodewright:index:NodeClass``: an EC2NodeClass as launch templates (+ the EC2NodeClass CR).

Children (``parent=self``, named ``f"{name}-..."``): the instance profile for ``spec.role``; one
``aws.ec2.LaunchTemplate`` per distinct user data (per NodePool and max-pods group, as Karpenter
renders them) with the AMI from SSM (alias terms) or the pinned id, per-family block devices,
IMDSv2 metadata options and tags; in ``karpenter`` mode the ``karpenter.k8s.aws/v1`` EC2NodeClass
CR for the in-cluster Karpenter. User data is a secret output: it carries the cluster CA bundle and
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

from components.outputs import output_map
from nodewright import labels
from nodewright.policy.resources import AMI_FAMILY_TAG
from nodewright.stack import LaunchTemplatePlan, NodeClassPlan
from nodewright.stack.ami import volume_size_gib


@dataclass(frozen=True, kw_only=True)
class NodeClassArgs:
    plan: NodeClassPlan
    cluster_name: str
    create_crd_object: bool = True
    create_launch_templates: bool = True
    security_group_ids: tuple[str, ...] = ()
    tags: Mapping[str, str] = field(default_factory=dict)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def _block_device(bdm: Mapping[str, Any]) -> aws.ec2.LaunchTemplateBlockDeviceMappingArgs:
    ebs = bdm.get("ebs") or {}
    enc = ebs.get("encrypted")
    return aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
        device_name=str(bdm.get("deviceName")),
        ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
            volume_size=volume_size_gib(ebs.get("volumeSize")),
            volume_type=ebs.get("volumeType"),
            iops=ebs.get("iops"),
            throughput=ebs.get("throughput"),
            kms_key_id=ebs.get("kmsKeyID"),
            snapshot_id=ebs.get("snapshotID"),
            delete_on_termination=None
            if ebs.get("deleteOnTermination") is None
            else str(ebs["deleteOnTermination"]).lower(),
            encrypted=None if enc is None else str(enc).lower(),
        ),
    )


def _metadata(opts: Mapping[str, Any]) -> aws.ec2.LaunchTemplateMetadataOptionsArgs:
    return aws.ec2.LaunchTemplateMetadataOptionsArgs(
        http_endpoint=opts.get("httpEndpoint"),
        http_protocol_ipv6=opts.get("httpProtocolIPv6"),
        http_put_response_hop_limit=opts.get("httpPutResponseHopLimit"),
        http_tokens=opts.get("httpTokens"),
        instance_metadata_tags="disabled",  # Karpenter always sets it
    )


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
        spec = plan.body.get("spec") or {}
        tags = {
            **args.tags,
            **{str(k): str(v) for k, v in (spec.get("tags") or {}).items()},
            labels.NODEPOOL: lt.nodepool,
            labels.EC2NODECLASS: plan.name,
            AMI_FAMILY_TAG: plan.family,
            "eks:eks-cluster-name": args.cluster_name,
        }
        return aws.ec2.LaunchTemplate(
            f"{name}-{lt.key}",
            name=f"nodewright-{args.cluster_name}-{plan.name}-{lt.key}",
            image_id=self.image_id,
            user_data=pulumi.Output.secret(_b64(lt.user_data)),
            block_device_mappings=[_block_device(b) for b in plan.block_devices],
            metadata_options=_metadata(plan.metadata_options),
            iam_instance_profile=aws.ec2.LaunchTemplateIamInstanceProfileArgs(name=self.instance_profile),
            vpc_security_group_ids=list(args.security_group_ids) or None,
            monitoring=aws.ec2.LaunchTemplateMonitoringArgs(
                enabled=bool(spec.get("detailedMonitoring", False))
            ),
            tags=tags,
            tag_specifications=[
                aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=t, tags=tags)
                for t in ("instance", "volume")
            ],
            opts=child,
        )
