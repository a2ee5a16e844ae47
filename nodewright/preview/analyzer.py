"""Run the policy pack in-process on a program's registrations, as the engine's analyzer host would.

Boundary: drives ``pulumi_policy``'s own analyzer servicer (the object ``PolicyPack`` serves over
gRPC) directly: ``Configure`` with the engine-side resolved config
(:func:`nodewright.policy.resolve_config`), ``Analyze`` on every registered resource (components
included, as the engine does), then ``AnalyzeStack`` on all of them. Diagnostics come back exactly
as ``pulumi preview --policy-pack`` would print them; a resource diagnostic's blank URN is filled
with the resource's, as the engine does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf import struct_pb2  # type: ignore[import-untyped]
from pulumi.runtime import proto
from pulumi_policy.policy import _PolicyAnalyzerServicer

from nodewright.policy import PACK_NAME, resolve_config
from nodewright.preview.mocks import Registration
from nodewright.preview.pack import LEVELS, build_policies

_LEVEL_NAMES = {
    proto.ADVISORY: "advisory",
    proto.MANDATORY: "mandatory",
    proto.REMEDIATE: "mandatory",  # the engine reports a failed remediation as mandatory
    proto.DISABLED: "disabled",
}


@dataclass(frozen=True, kw_only=True)
class Violation:
    """One policy diagnostic."""

    policy: str
    enforcement: str
    resource: str
    type: str
    urn: str
    message: str
    description: str
    pack: str
    pack_version: str

    def as_json(self) -> dict[str, str]:
        return {
            "policy": self.policy,
            "enforcement": self.enforcement,
            "resource": self.resource,
            "type": self.type,
            "message": self.message,
        }


def _configure_request(config: Mapping[str, Any] | None) -> Any:
    resolved = resolve_config(config)
    req = proto.ConfigureAnalyzerRequest()
    for name, cfg in resolved.items():
        pc = proto.PolicyConfig()
        pc.enforcementLevel = {
            "advisory": proto.ADVISORY,
            "mandatory": proto.MANDATORY,
            "remediate": proto.REMEDIATE,
            "disabled": proto.DISABLED,
        }[cfg.enforcement]
        if cfg.properties:
            pc.properties.update(cfg.properties)
        req.policyConfig[name].CopyFrom(pc)
    return req


def _options(reg: Registration) -> Any:
    return proto.AnalyzerResourceOptions(protect=reg.protect, parent=reg.parent)


def analyze(
    registrations: Sequence[Registration],
    *,
    config: Mapping[str, Any] | None = None,
    version: str = "0.1.0",
) -> list[Violation]:
    """Every diagnostic the pack reports on these registrations (sorted: mandatory first)."""
    svc = _PolicyAnalyzerServicer(PACK_NAME, version, build_policies(), LEVELS["advisory"])
    svc.Configure(_configure_request(config), None)
    by_urn = {r.urn: r for r in registrations}
    found: list[Violation] = []

    def collect(diags: Any, default: Registration | None) -> None:
        for d in diags:
            reg = by_urn.get(d.urn) if d.urn else default
            prefix = d.description + "\n"
            msg = d.message[len(prefix) :] if d.message.startswith(prefix) else d.message
            found.append(
                Violation(
                    policy=d.policyName,
                    enforcement=_LEVEL_NAMES.get(d.enforcementLevel, "advisory"),
                    resource=reg.name if reg else "",
                    type=reg.type if reg else "",
                    urn=reg.urn if reg else d.urn,
                    message=msg,
                    description=d.description,
                    pack=d.policyPackName,
                    pack_version=d.policyPackVersion,
                )
            )

    for reg in registrations:
        props = struct_pb2.Struct()
        props.CopyFrom(reg.object)
        req = proto.AnalyzeRequest(
            type=reg.type, urn=reg.urn, name=reg.name, properties=props, options=_options(reg)
        )
        collect(svc.Analyze(req, None).diagnostics, reg)
    stack_req = proto.AnalyzeStackRequest()
    for reg in registrations:
        res = stack_req.resources.add()
        res.type, res.urn, res.name, res.parent = reg.type, reg.urn, reg.name, reg.parent
        res.properties.CopyFrom(reg.object)
        res.options.CopyFrom(_options(reg))
        res.dependencies.extend(reg.dependencies)
    collect(svc.AnalyzeStack(stack_req, None).diagnostics, None)
    order = {"mandatory": 0, "advisory": 1}
    found.sort(key=lambda v: (order.get(v.enforcement, 2), v.policy, v.type, v.resource, v.urn, v.message))
    return found


def has_mandatory(violations: Sequence[Violation]) -> bool:
    return any(v.enforcement == "mandatory" for v in violations)
