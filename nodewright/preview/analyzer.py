"""Run the policy pack in-process on a program's registrations, as the engine's analyzer host would.

Boundary: drives ``pulumi_policy``'s own analyzer servicer (the object ``PolicyPack`` serves over
gRPC) directly: ``Configure`` with the engine-side resolved config
(:func:`nodewright.policy.resolve_config`), ``Analyze`` on every registered resource (components
included, as the engine does), then ``AnalyzeStack`` on all of them. Diagnostics come back exactly
as ``pulumi preview --policy-pack`` would print them; a resource diagnostic's blank URN is filled
with the resource's, as the engine does.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pulumi.runtime import proto
from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyResource,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.policy import _NotApplicableError, _PolicyAnalyzerServicer
from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy

from nodewright.policy import PACK_NAME, resolve_config
from nodewright.preview.mocks import SECRET_SIG, SIG_KEY, UNKNOWN, RecordedRegistration
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


def _options(reg: RecordedRegistration) -> Any:
    return proto.AnalyzerResourceOptions(protect=reg.protect, parent=reg.parent)


def _level(svc: _PolicyAnalyzerServicer, policy: Policy, kind: type) -> EnforcementLevel | None:
    """The level a policy of ``kind`` runs at (``None``: it does not run), as the servicer decides."""
    level = svc._get_enforcement_level(policy)
    if level == EnforcementLevel.DISABLED or not isinstance(policy, kind):
        return None
    if isinstance(policy, ResourceValidationPolicy) and not policy.has_validation():
        return None  # reported as "not applicable", which the engine does not print
    return EnforcementLevel.MANDATORY if level == EnforcementLevel.REMEDIATE else level


def _run(
    svc: _PolicyAnalyzerServicer,
    policy: Policy,
    level: EnforcementLevel,
    args: Any,
    response: Any,
    version: str,
) -> None:
    """``policy.validate(args)`` with the servicer's reporting, as its ``Analyze`` runs it."""
    report = svc._create_report_violation(response, policy.name, policy.description, level, policy.severity)
    try:
        policy.validate(args, report)
    except UnknownValueError as e:
        response.diagnostics.append(
            proto.AnalyzeDiagnostic(
                policyName=policy.name,
                policyPackName=PACK_NAME,
                policyPackVersion=version,
                message=(
                    f"can't run policy '{policy.name}' from policy pack "
                    f"'{PACK_NAME}@v{version}' during preview: {e.message}"
                ),
                urn="",
                description=policy.description,
                enforcementLevel=proto.ADVISORY,
            )
        )
    except _NotApplicableError:
        pass  # the engine does not print "not applicable"


def analyze(
    registrations: Sequence[RecordedRegistration],
    *,
    config: Mapping[str, Any] | None = None,
    version: str = "0.1.0",
) -> list[Violation]:
    """Every diagnostic the pack reports on these registrations (sorted: mandatory first).

    Equivalent to ``Analyze`` per resource then ``AnalyzeStack`` on the servicer, but each
    resource's properties are decoded (wire JSON, secrets unwrapped, unknown-checking proxy) once
    for every policy instead of once per policy and phase: that decoding was most of the time.
    """
    copied = _plain_props_of(registrations)
    first = iter([copied])  # the resource phase's copy; the stack phase gets a copy of its own
    policies = build_policies(lambda: next(first, None) or _plain_props_of(registrations))
    svc = _PolicyAnalyzerServicer(PACK_NAME, version, policies, LEVELS["advisory"])
    svc.Configure(_configure_request(config), None)
    svc._configure_runtime_settings()
    tags = svc._PolicyAnalyzerServicer__stack_tags
    by_urn = {r.urn: r for r in registrations}
    found: list[Violation] = []

    def collect(diags: Any, default: RecordedRegistration | None) -> None:
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

    resource_policies = [
        (p, lv) for p in policies if (lv := _level(svc, p, ResourceValidationPolicy)) is not None
    ]
    stack_policies = [(p, lv) for p in policies if (lv := _level(svc, p, StackValidationPolicy)) is not None]
    resource_config = {p.name: svc._get_policy_config(p.name) for p, _ in resource_policies}
    stack_resources: list[Any] = []
    for reg in registrations:
        if (reg.type, reg.name, reg.urn) in copied:  # the validators read the copy: decoded only if asked
            props: Any = _LazyProps(reg)
        else:
            props = unknown_checking_proxy(deserialize_properties(reg.raw()))
        head = proto.AnalyzeRequest(type=reg.type, urn=reg.urn, name=reg.name, options=_options(reg))
        opts = svc._get_resource_options(head)
        provider = svc._get_provider_resource(head)
        response = proto.AnalyzeResponse()
        for policy, level in resource_policies:
            args = ResourceValidationArgs(
                reg.type, props, reg.urn, reg.name, opts, provider, resource_config[policy.name], tags
            )
            _run(svc, policy, level, args, response, version)
        collect(response.diagnostics, reg)
        if stack_policies:
            stack_resources.append(
                PolicyResource(reg.type, props, reg.urn, reg.name, opts, provider, None, [], {})
            )
    if stack_policies:
        by_resource_urn = {r.urn: r for r in stack_resources}
        for reg, res in zip(registrations, stack_resources, strict=True):
            if reg.parent in by_resource_urn:
                res.parent = by_resource_urn[reg.parent]
            res.dependencies.extend(by_resource_urn[d] for d in reg.dependencies if d in by_resource_urn)
        response = proto.AnalyzeResponse()
        for policy, level in stack_policies:
            args = StackValidationArgs(stack_resources, svc._get_policy_config(policy.name), tags)
            _run(svc, policy, level, args, response, version)
        collect(response.diagnostics, None)
    order = {"mandatory": 0, "advisory": 1}
    found.sort(key=lambda v: (order.get(v.enforcement, 2), v.policy, v.type, v.resource, v.urn, v.message))
    return found


class _LazyProps(Mapping[str, Any]):
    """pulumi_policy's unknown-checking proxy over a registration's props, made on first read."""

    def __init__(self, reg: RecordedRegistration) -> None:
        self._reg = reg
        self._props: Any = None

    def _target(self) -> Any:
        if self._props is None:
            self._props = unknown_checking_proxy(deserialize_properties(self._reg.raw()))
        return self._props

    def __getitem__(self, key: str) -> Any:
        return self._target()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._target())

    def __len__(self) -> int:
        return len(self._target())


class _NotPlain(Exception):
    """Wire JSON the fast copy leaves to pulumi_policy (unknowns, assets, resource references)."""


def _plain(value: Any) -> Any:
    """``plain_props(unknown_checking_proxy(deserialize_properties(...)))`` of one wire value, in one
    pass: secrets unwrapped, whole floats as ints; anything else pulumi_policy gives meaning to raises
    :class:`_NotPlain` (the resource then takes pulumi_policy's own path)."""
    kind = type(value)
    if kind is str:
        if value == UNKNOWN:
            raise _NotPlain
        return value
    if kind is float:
        return int(value) if value.is_integer() else value
    if kind is dict:
        sig = value.get(SIG_KEY)
        if sig is None:
            return {k: _plain(v) for k, v in value.items()}
        if sig == SECRET_SIG and "value" in value:
            return _plain(value["value"])
        raise _NotPlain
    if kind is list:
        return [_plain(v) for v in value]
    if value is None or kind is bool or kind is int:
        return value
    raise _NotPlain


def _plain_props_of(registrations: Sequence[RecordedRegistration]) -> dict[tuple[str, str, str], Any]:
    """Each registration's plain props (what the pack's validators copy from the engine's props),
    keyed as the pack caches them; a registration :func:`_plain` cannot copy is left out."""
    out: dict[tuple[str, str, str], Any] = {}
    for reg in registrations:
        if not reg.urn:
            continue
        with contextlib.suppress(_NotPlain):
            out[(reg.type, reg.name, reg.urn)] = {k: _plain(v) for k, v in reg.raw().items()}
    return out


def has_mandatory(violations: Sequence[Violation]) -> bool:
    return any(v.enforcement == "mandatory" for v in violations)
