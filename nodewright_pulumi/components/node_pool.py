"""``nodewright:index:NodePool``: a ``karpenter.sh/v1`` NodePool CR stamped with its drift hash.

The ``karpenter.sh/nodepool-hash`` / ``-hash-version`` annotations are computed by
:mod:`nodewright.drift` (the same function ``nodewright hash`` prints) before the component is built,
so ``pulumi up`` writes exactly what Karpenter would stamp: no spurious drift on adoption. The
component's own props carry the pool's registration health, which the
``nodepool-pair-health`` advisory policy reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from nodewright.stack import NodePoolPlan


@dataclass(frozen=True, kw_only=True)
class NodePoolArgs:
    plan: NodePoolPlan
    create_custom_resource: bool = True  # False in fleet mode: no in-cluster Karpenter reads it
    karpenter_version: str = ""  # the stack's Karpenter release (the policies' expectations follow it)


def _template_summary(body: Mapping[str, Any]) -> dict[str, Any]:
    """Labels and taints of the pool's template: what its nodes must register with (policies read it)."""
    tmpl = (body.get("spec") or {}).get("template") or {}
    spec = tmpl.get("spec") or {}
    return {
        "metadata": {"labels": dict((tmpl.get("metadata") or {}).get("labels") or {})},
        "spec": {
            "taints": list(spec.get("taints") or []),
            "startupTaints": list(spec.get("startupTaints") or []),
        },
    }


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
                "template": _template_summary(plan.body),
                "karpenterVersion": args.karpenter_version,
            },
            opts,
        )
        body = plan.body
        if args.create_custom_resource:
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
