"""``nodewright:index:OperatingSystemConfig``: a rendered Gardener OSC stored as its result Secret.

Gardener's contract: Secret ``osc-result-<name>`` with data key ``cloud_config`` (the manifest comes
from :func:`nodewright.osc.result.result_secret`). The data is a secret output.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from nodewright.stack import OscPlan


@dataclass(frozen=True, kw_only=True)
class OperatingSystemConfigArgs:
    plan: OscPlan


class OperatingSystemConfig(pulumi.ComponentResource):
    """The OSC result Secret."""

    secret_name: pulumi.Output[str]
    """Name of the result Secret (``osc-result-<name>``)."""

    def __init__(
        self, name: str, args: OperatingSystemConfigArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        manifest = args.plan.secret
        meta = dict(manifest.get("metadata") or {})
        super().__init__(
            "nodewright:index:OperatingSystemConfig",
            name,
            {"operatingSystemConfig": args.plan.name, "secret": str(meta.get("name", ""))},
            opts,
        )
        self.secret = k8s.core.v1.Secret(
            f"{name}-result",
            metadata=meta,
            type=str(manifest.get("type", "Opaque")),
            data=pulumi.Output.secret(dict(manifest.get("data") or {})),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.secret_name = pulumi.Output.from_input(str(meta.get("name", "")))
        self.register_outputs({"secretName": self.secret_name})
