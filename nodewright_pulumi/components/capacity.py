"""``nodewright:index:Capacity`` (fleet mode): the reviewed NodeClaims as EC2 instances.

One ``aws.ec2.Instance`` per claim of ``stacks/claims-<stack>.yaml`` (written by
``nodewright plan --write`` and reviewed in Git): its launch template, instance type, the subnet of
the chosen zone, spot through instance market options. The child is named after the claim
(``f"{name}-{claim}"``), so a re-run with the same claims file re-declares the same instances
instead of replacing them; nothing is planned at ``pulumi up`` time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from nodewright import labels
from nodewright.stack import ClaimPlan
from nodewright_pulumi.components.outputs import output_map


@dataclass(frozen=True, kw_only=True)
class CapacityArgs:
    claims: tuple[ClaimPlan, ...]
    launch_templates: Mapping[tuple[str, str], aws.ec2.LaunchTemplate]  # (nodeclass, lt key) -> LT
    subnets: Mapping[str, str]
    cluster_name: str


class Capacity(pulumi.ComponentResource):
    """The planned NodeClaims, materialised."""

    instance_ids: pulumi.Output[dict[str, str]]
    """Instance id per NodeClaim name."""

    def __init__(self, name: str, args: CapacityArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(
            "nodewright:index:Capacity",
            name,
            {"nodeClaims": [c.name for c in args.claims]},
            opts,
        )
        self.instances: dict[str, aws.ec2.Instance] = {}
        for claim in args.claims:
            lt = args.launch_templates[(claim.nodeclass, claim.launch_template)]
            market = None
            if claim.capacity_type == labels.CAPACITY_TYPE_SPOT:
                market = aws.ec2.InstanceInstanceMarketOptionsArgs(
                    market_type="spot",
                    spot_options=aws.ec2.InstanceInstanceMarketOptionsSpotOptionsArgs(
                        instance_interruption_behavior="terminate", spot_instance_type="one-time"
                    ),
                )
            self.instances[claim.name] = aws.ec2.Instance(
                f"{name}-{claim.name}",
                instance_type=claim.instance_type,
                subnet_id=args.subnets.get(claim.zone),
                availability_zone=claim.zone,
                launch_template=aws.ec2.InstanceLaunchTemplateArgs(id=lt.id, version="$Latest"),
                instance_market_options=market,
                metadata_options=aws.ec2.InstanceMetadataOptionsArgs(
                    http_tokens=claim.metadata_options.get("httpTokens"),
                    http_endpoint=claim.metadata_options.get("httpEndpoint"),
                    http_put_response_hop_limit=claim.metadata_options.get("httpPutResponseHopLimit"),
                ),
                tags={
                    "Name": f"{args.cluster_name}-{claim.name}",
                    labels.NODEPOOL: claim.nodepool,
                    labels.NODEPOOL_HASH: claim.nodepool_hash,
                    labels.EC2NODECLASS: claim.nodeclass,
                    labels.NODECLAIM_TAG: claim.name,
                    "eks:eks-cluster-name": args.cluster_name,
                },
                opts=pulumi.ResourceOptions(parent=self),
            )
        self.instance_ids = output_map({k: v.id for k, v in self.instances.items()})
        self.register_outputs({"instanceIds": self.instance_ids})
