"""The Pulumi program: stack config -> nodewright components. Wiring only.

Stack config (``stacks/Pulumi.<stack>.yaml``, keys ``nodewright:<key>``) is documented in
docs/pulumi.md. ``nodewright:mode`` selects ``karpenter`` (CRs for an in-cluster Karpenter,
launch templates optional) or ``fleet`` (nodewright provisions the reviewed claims itself).
"""

from __future__ import annotations

from pathlib import Path

import pulumi
import pulumi_aws as aws

from nodewright.stack import build_stack_plan, read_settings
from nodewright_pulumi.components.capacity import Capacity, CapacityArgs
from nodewright_pulumi.components.node_class import NodeClass, NodeClassArgs
from nodewright_pulumi.components.node_pool import NodePool, NodePoolArgs
from nodewright_pulumi.components.osc import OperatingSystemConfig, OperatingSystemConfigArgs

KEYS = (
    "mode", "files", "cluster", "kubernetesVersion", "clusterState", "claims", "subnets",
    "securityGroups", "launchTemplates", "oscFormat", "oscNamespace", "tags", "catalog",
    "kubeconfig", "kubeContext", "karpenterVersion", "planStrategy", "karpenter",
)  # fmt: skip

config = pulumi.Config("nodewright")
# aws:region (the AWS provider's) picks the catalog when nodewright:catalog is unset
settings = read_settings(
    {**{k: config.get(k) for k in KEYS}, "aws:region": pulumi.Config("aws").get("region")},
    stack=pulumi.get_stack(),
)
# The Karpenter release (settings.release) and settings (settings.karpenter) are values of the plan.
plan = build_stack_plan(settings, base_dir=Path.cwd())
fleet = settings.mode == "fleet"
for note in plan.notes:  # a degenerate stack previews and applies; say why it declares little
    pulumi.log.warn(note)

node_classes: dict[str, NodeClass] = {}
for nc in plan.nodeclasses:
    node_classes[nc.name] = NodeClass(
        nc.name,
        NodeClassArgs(
            plan=nc,
            cluster_name=settings.cluster.cluster_name,
            create_crd_object=not fleet,
            create_launch_templates=fleet or settings.launch_templates,
            security_group_ids=settings.security_groups,
            tags=settings.tags,
            karpenter_version=settings.karpenter_version,
        ),
    )


def _nodeclass_crs(nc: NodeClass) -> list[pulumi.Resource]:
    return [nc.custom_resource] if nc.custom_resource is not None else []


node_pools = {
    p.name: NodePool(
        p.name,
        NodePoolArgs(plan=p, create_custom_resource=not fleet, karpenter_version=settings.karpenter_version),
        # The NodePool CR names its EC2NodeClass CR: it waits for that object alone (a dependency on
        # the whole NodeClass component would also wait for every launch template it holds).
        pulumi.ResourceOptions(depends_on=_nodeclass_crs(node_classes[p.nodeclass])),
    )
    for p in plan.nodepools
}

launch_templates: dict[tuple[str, str], aws.ec2.LaunchTemplate] = {
    (nc_name, key): lt for nc_name, nc in node_classes.items() for key, lt in nc.launch_templates.items()
}
if fleet:
    capacity = Capacity(
        "capacity",
        CapacityArgs(
            claims=plan.claims,
            launch_templates=launch_templates,
            subnets=settings.subnets,
            cluster_name=settings.cluster.cluster_name,
        ),
    )
    pulumi.export("instanceIds", capacity.instance_ids)

for osc in plan.oscs:
    OperatingSystemConfig(osc.name, OperatingSystemConfigArgs(plan=osc))

pulumi.export("mode", settings.mode)
pulumi.export("karpenter", settings.karpenter_dict())
pulumi.export("nodePoolHashes", {p.name: p.hash for p in plan.nodepools})
pulumi.export("imageIds", {name: nc.image_id for name, nc in node_classes.items()})
pulumi.export("launchTemplateIds", {name: nc.launch_template_ids for name, nc in node_classes.items()})
pulumi.export("oscSecrets", [f"osc-result-{o.name}" for o in plan.oscs])
