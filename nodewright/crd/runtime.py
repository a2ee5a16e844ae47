"""Karpenter's runtime checks: what keeps an admitted NodePool from becoming Ready.

Boundary: an object the API server accepted (the admitted, defaulted mapping) in, problems out.
Translates kubernetes-sigs/karpenter v1.14.1 ``pkg/apis/v1/nodepool_validation.go``
(``NodePool.RuntimeValidate``: ``validateLabels``, ``validateTaints``, ``validateRequirements``,
``validateRequirementsNodePoolKeyDoesNotExist``) and ``nodeclaim_validation.go``
(``ValidateRequirement``, ``validateWellKnownValues``); each message is upstream's text. Karpenter
sets the NodePool's ``ValidationSucceeded`` condition to False and never launches from it, so
nodewright reports these as errors. Plus one consequence of the name: every node is labelled
``karpenter.sh/nodepool=<name>`` / ``karpenter.k8s.aws/ec2nodeclass=<name>`` (labels.go), and a
label value is at most 63 characters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from nodewright import labels
from nodewright.crd.k8svalidation import go_list, is_qualified_name, is_valid_label_value
from nodewright.errors import Problem

_UPSTREAM: Final = "Karpenter's RuntimeValidate keeps the NodePool not Ready"
INT_OPERATORS: Final = ("Gt", "Lt", "Gte", "Lte")
# WellKnownValuesForRequirements: core (capacity type) plus the AWS provider (instance tenancy).
WELL_KNOWN_VALUES: Final[Mapping[str, frozenset[str]]] = {
    labels.CAPACITY_TYPE: frozenset(
        {labels.CAPACITY_TYPE_ON_DEMAND, labels.CAPACITY_TYPE_SPOT, labels.CAPACITY_TYPE_RESERVED}
    ),
    labels.INSTANCE_TENANCY: frozenset({"dedicated", "default"}),
}
_TAINT_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute", "")


def _atoi(text: str) -> int | None:
    """Go ``strconv.Atoi`` on a 64-bit platform: optional sign, decimal digits, int64 range."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def requirement_errors(req: Mapping[str, Any]) -> list[str]:
    """``ValidateRequirement`` (nodeclaim_validation.go): what is wrong with one NodePool, NodeClaim
    or pod requirement, in upstream's order and words."""
    errs: list[str] = []
    key = labels.normalize(str(req.get("key", "")))
    op = str(req.get("operator", ""))
    values = [str(v) for v in req.get("values") or []]
    min_values = req.get("minValues")
    if op not in labels.OPERATORS:
        errs.append(f"key {key} has an unsupported operator {op} not in {go_list(sorted(labels.OPERATORS))}")
    restricted = labels.restricted_label_error(key)
    if restricted:
        errs.append(restricted)
    known = WELL_KNOWN_VALUES.get(key)
    if known is not None and key in labels.WELL_KNOWN_LABELS and op == "In":
        valid = [v for v in values if v in known]
        invalid = [v for v in values if v not in known]
        if not valid:
            errs.append(
                f"no valid values found in {go_list(values)} for {key}, expected one of: "
                f"{go_list(sorted(known))}, got: {go_list(invalid)}"
            )
        elif isinstance(min_values, int) and len(valid) < min_values:
            errs.append(
                f"not enough valid values found in {go_list(values)} for {key}, expected at least "
                f"{min_values} valid values from: {go_list(sorted(known))}, got: {len(valid)}"
            )
    errs.extend(f"key {key} is not a qualified name, {e}" for e in is_qualified_name(key))
    for v in values:
        errs.extend(f"invalid value {v} for key {key}, {e}" for e in is_valid_label_value(v))
    if op == "In" and not values:
        errs.append(f"key {key} with operator {op} must have a value defined")
    if op == "In" and isinstance(min_values, int) and len(values) < min_values:
        errs.append(
            f"key {key} with operator {op} must have at least minimum number of values defined in 'values' field"
        )
    if op in INT_OPERATORS:
        parsed = _atoi(values[0]) if len(values) == 1 else None
        if parsed is None or parsed < 0:
            errs.append(f"key {key} with operator {op} must have a single positive integer value")
    return errs


def _taints(
    taints: Any, field: str, where: str, seen: dict[tuple[str, str], str], out: list[tuple[str, str]]
) -> None:
    for i, t in enumerate(taints or []):
        if not isinstance(t, Mapping):
            continue
        at = f"{where}.{field}[{i}]"
        key, value, effect = str(t.get("key", "")), str(t.get("value") or ""), str(t.get("effect", ""))
        for e in is_qualified_name(key):
            out.append((f"{at}.key", f"invalid value: {e} in {field}"))
        if value:
            for e in is_qualified_name(value):
                out.append((f"{at}.value", f"invalid value: {e} in {field}"))
        if effect not in _TAINT_EFFECTS:
            out.append((f"{at}.effect", f"invalid value: {effect!r} in {field}"))
        pair = (key, effect)
        if pair in seen:
            out.append(
                (at, f"duplicate taint Key/Effect pair {key}={effect} (first at {seen[pair]}); remove one")
            )
        else:
            seen[pair] = at


def nodepool_problems(body: Mapping[str, Any], *, file: str, base: str) -> list[Problem]:
    """``NodePool.RuntimeValidate`` on an admitted NodePool, plus the name-as-label-value check."""
    found: list[tuple[str, str]] = []
    spec = body.get("spec") or {}
    template = spec.get("template") or {}
    tspec = template.get("spec") or {}
    meta = template.get("metadata") or {}
    w = "spec.template"
    for key, value in sorted((meta.get("labels") or {}).items()):
        at = f"{w}.metadata.labels[{key}]"
        if key == labels.NODEPOOL:
            found.append((at, f"invalid key name {key!r} in labels, restricted"))
        found.extend((at, f"invalid key name {key!r} in labels, {e!r}") for e in is_qualified_name(key))
        found.extend(
            (at, f"invalid value: {value} for label[{key}], {e}") for e in is_valid_label_value(str(value))
        )
        restricted = labels.restricted_label_error(key)
        if restricted:
            found.append((at, f"invalid key name {key!r} in labels, {restricted}"))
    seen: dict[tuple[str, str], str] = {}
    _taints(tspec.get("taints"), "taints", f"{w}.spec", seen, found)
    _taints(tspec.get("startupTaints"), "startupTaints", f"{w}.spec", seen, found)
    for i, req in enumerate(tspec.get("requirements") or []):
        if not isinstance(req, Mapping):
            continue
        at = f"{w}.spec.requirements[{i}]"
        for e in requirement_errors(req):
            found.append((at, f"invalid value: {e} in requirements, restricted"))
        if req.get("key") == labels.NODEPOOL:
            found.append((f"{at}.key", f"invalid key: {labels.NODEPOOL!r} in requirements, restricted"))
    found.extend(_name_as_label(body, labels.NODEPOOL))
    return _problems(
        found, file=file, base=base, suffix=f"; {_UPSTREAM} (pkg/apis/v1/nodepool_validation.go)"
    )


# WellKnownResources (pkg/apis/v1/labels.go): capacity a NodeOverlay may not change.
WELL_KNOWN_RESOURCES: Final = frozenset({"cpu", "memory", "ephemeral-storage", "pods"})
_OVERLAY_UPSTREAM: Final = (
    "; Karpenter's RuntimeValidate sets the NodeOverlay's ValidationSucceeded to False and ignores it "
    "(pkg/apis/v1alpha1/nodeoverlay_validation.go)"
)


def nodeoverlay_problems(body: Mapping[str, Any], *, file: str, base: str) -> list[Problem]:
    """``NodeOverlay.RuntimeValidate`` on an admitted NodeOverlay: each requirement through
    ``ValidateRequirement`` (NotIn also needs a value), no capacity for a well-known resource."""
    found: list[tuple[str, str]] = []
    spec = body.get("spec") or {}
    for i, req in enumerate(spec.get("requirements") or []):
        if not isinstance(req, Mapping):
            continue
        at = f"spec.requirements[{i}]"
        plain = {k: v for k, v in req.items() if k != "minValues"}
        for e in requirement_errors(plain):
            found.append((at, f"invalid value: {e} in requirements, restricted"))
        if req.get("operator") == "NotIn" and not req.get("values"):
            found.append((at, f"key {req.get('key')} with operator NotIn must have a value defined"))
    for name in sorted(spec.get("capacity") or {}):
        if name in WELL_KNOWN_RESOURCES:
            found.append((f"spec.capacity[{name}]", f"invalid capacity: {name} in resource, restricted"))
    return _problems(found, file=file, base=base, suffix=_OVERLAY_UPSTREAM)


def ec2nodeclass_problems(body: Mapping[str, Any], *, file: str, base: str) -> list[Problem]:
    """An EC2NodeClass has no runtime validation upstream beyond its CRD; only its name as a label value."""
    return _problems(_name_as_label(body, labels.EC2NODECLASS), file=file, base=base, suffix="")


def _name_as_label(body: Mapping[str, Any], label: str) -> list[tuple[str, str]]:
    name = (body.get("metadata") or {}).get("name")
    if isinstance(name, str) and name and is_valid_label_value(name):
        return [
            (
                "metadata.name",
                f"name {name!r} cannot be the value of the {label} label Karpenter puts on every node "
                f"({'; '.join(is_valid_label_value(name))}); use at most 63 characters",
            )
        ]
    return []


def _problems(found: list[tuple[str, str]], *, file: str, base: str, suffix: str) -> list[Problem]:
    def at(path: str) -> str:
        return f"{base}.{path}" if base else path

    return [Problem(file=file, path=at(p), message=m + suffix) for p, m in found]
