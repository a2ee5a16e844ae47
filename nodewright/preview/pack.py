"""The nodewright CrossGuard policies as ``pulumi_policy`` objects.

Boundary: a thin adapter. Each :class:`nodewright.policy.PolicySpec` becomes a
``ResourceValidationPolicy`` or ``StackValidationPolicy`` whose validator converts the props the
engine sends (an unknown-checking proxy) to plain JSON and calls the pure rule. Used by
``policies/__main__.py`` (the pack ``pulumi preview --policy-pack policies`` runs) and by the
in-process analyzer of ``nodewright preview`` — same code, same messages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from nodewright import __version__
from nodewright.policy import PACK_NAME, POLICIES, PolicySpec, ResourceView

LEVELS: dict[str, EnforcementLevel] = {
    "advisory": EnforcementLevel.ADVISORY,
    "mandatory": EnforcementLevel.MANDATORY,
    "remediate": EnforcementLevel.REMEDIATE,
    "disabled": EnforcementLevel.DISABLED,
}


def plain_props(value: Any) -> Any:
    """Deep copy of engine props (proxies included) into plain dict/list values."""
    kind = type(value)
    if kind is str or kind is bool or kind is int or value is None:
        return value  # the leaves, most of the calls: no abstract-class checks
    if kind is float:
        return int(value) if value.is_integer() else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, Mapping):
        return {str(k): plain_props(value[k]) for k in value}
    if isinstance(value, Sequence):
        return [plain_props(value[i]) for i in range(len(value))]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _config(args: ResourceValidationArgs | StackValidationArgs) -> Mapping[str, Any]:
    cfg = args.get_config()
    return plain_props(cfg) if cfg else {}


_PropsCache = dict[tuple[str, str, str], Any]


def _props(cache: _PropsCache, resource_type: str, name: str, urn: str | None, props: Any) -> Any:
    """``plain_props(props)`` once per resource of a run: pulumi_policy hands every policy its own copy
    of the same properties, and copying them is most of a large preview's policy time."""
    key = (resource_type, name, urn or "")
    if not urn or key not in cache:
        cache[key] = plain_props(props)
    return cache[key]


def _resource_validator(spec: PolicySpec, cache: _PropsCache) -> Any:
    check = spec.resource_check
    assert check is not None

    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        props = _props(cache, args.resource_type, args.name, args.urn, args.props)
        view = ResourceView(type=args.resource_type, name=args.name, urn=args.urn or "", props=props)
        for message in check(view, _config(args)):
            report_violation(message, None)

    return validate


def _stack_validator(spec: PolicySpec, cache: _PropsCache) -> Any:
    check = spec.stack_check
    assert check is not None

    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        views = [
            ResourceView(
                type=r.resource_type,
                name=r.name,
                urn=r.urn or "",
                props=_props(cache, r.resource_type, r.name, r.urn, r.props),
            )
            for r in args.resources
        ]
        for urn, message in check(views, _config(args)):
            report_violation(message, urn or None)

    return validate


def build_policies(known: Callable[[], Mapping[tuple[str, str, str], Any]] | None = None) -> list[Policy]:
    """Every nodewright policy, in catalogue order (one properties cache per pack and phase).

    ``known`` (the in-process analyzer's) gives each phase its own copy of resources' plain props,
    keyed ``(type, name, urn)``, exactly what :func:`plain_props` would make of what the engine sends
    (the validators then skip copying them through pulumi_policy's proxies)."""
    out: list[Policy] = []
    resource_props: _PropsCache = dict(known()) if known else {}
    stack_props: _PropsCache = dict(known()) if known else {}
    for spec in POLICIES:
        schema = (
            PolicyConfigSchema(properties=dict(spec.config_properties)) if spec.config_properties else None
        )
        if spec.resource_check is not None:
            out.append(
                ResourceValidationPolicy(
                    name=spec.name,
                    description=spec.description,
                    validate=_resource_validator(spec, resource_props),
                    enforcement_level=LEVELS[spec.enforcement],
                    config_schema=schema,
                )
            )
        else:
            out.append(
                StackValidationPolicy(
                    name=spec.name,
                    description=spec.description,
                    validate=_stack_validator(spec, stack_props),
                    enforcement_level=LEVELS[spec.enforcement],
                    config_schema=schema,
                )
            )
    return out


def pack_version(project_dir: Path | None = None) -> str:
    """The pack version from ``policies/PulumiPolicy.yaml`` (the only version source for Python packs)."""
    if project_dir is not None:
        f = project_dir / "policies" / "PulumiPolicy.yaml"
        if f.is_file():
            doc = yaml.safe_load(f.read_text(encoding="utf-8")) or {}
            if doc.get("version"):
                return str(doc["version"])
    return __version__


__all__ = ["LEVELS", "PACK_NAME", "build_policies", "pack_version", "plain_props"]
