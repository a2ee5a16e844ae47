"""``nodewright:index:NodePool``: a ``karpenter.sh/v1`` NodePool CR stamped with its drift hash.

The ``karpenter.sh/nodepool-hash`` / ``-hash-version`` annotations are computed by
:mod:`nodewright.drift` (the same function ``nodewright hash`` prints) before the component is built,
so ``pulumi up`` writes exactly what Karpenter would stamp: no spurious drift on adoption. The
component's own props carry the pool's registration health (issue 7), which the
``nodepool-pair-health`` advisory policy reads.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.plan import NodePoolPlan


@dataclass(frozen=True, kw_only=True)
class NodePoolArgs:
    plan: NodePoolPlan


class NodePool(pulumi.ComponentResource):
    """The NodePool custom resource."""

    hash: pulumi.Output[str]
    """The karpenter.sh/nodepool-hash stamped on the CR."""

    def __init__(self, name: str, args: NodePoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        plan = args.plan
        super().__init__(
            "nodewright:index:NodePool",
            name,
            {
                "nodePool": plan.name,
                "nodeClass": plan.nodeclass,
                "hash": plan.hash,
                "health": plan.health.as_mapping(),
            },
            opts,
        )
        body = plan.body
        self.custom_resource = k8s.apiextensions.CustomResource(
            f"{name}-nodepool",
            api_version="karpenter.sh/v1",
            kind="NodePool",
            metadata=dict(body.get("metadata") or {}),
            spec=dict(body.get("spec") or {}),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.hash = pulumi.Output.from_input(plan.hash)
        self.register_outputs({"hash": self.hash})
