"""Policy-pack configuration as the Pulumi engine resolves it (``--policy-pack-config FILE``).

Boundary: pure. Reimplements the engine side (``pkg/resource/analyzer/config.go``) that the Python
SDK leaves out: the ``all`` key, the shorthand ``"policy": "advisory"``, per-policy
``enforcementLevel``, defaults from each policy's config schema, and schema validation, so the
in-process preview configures the pack exactly as ``pulumi preview --policy-pack-config`` would.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nodewright import reader
from nodewright.errors import Collector, InputError
from nodewright.policy.catalog import ENFORCEMENT_LEVELS, POLICIES, PolicySpec


@dataclass(frozen=True, kw_only=True)
class ResolvedPolicyConfig:
    enforcement: str
    properties: dict[str, Any]


_TYPES: dict[str, tuple[type, ...]] = {
    "integer": (int,),
    "number": (int, float),
    "string": (str,),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def _validate(value: Any, schema: Mapping[str, Any], path: str, errors: Collector) -> None:
    typ = schema.get("type")
    if isinstance(typ, str):
        ok = isinstance(value, _TYPES.get(typ, (object,)))
        if typ in ("integer", "number") and isinstance(value, bool):
            ok = False
        if typ == "integer" and isinstance(value, float) and value.is_integer():
            ok = True
        if not ok:
            errors.add(path, f"expected {typ}, got {type(value).__name__} {value!r}")
            return
    if "enum" in schema and value not in schema["enum"]:
        errors.add(path, f"{value!r} is not one of {schema['enum']}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.add(path, f"{value} is below the minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.add(path, f"{value} is above the maximum {schema['maximum']}")
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(value):
            _validate(item, schema["items"], f"{path}[{i}]", errors)


def resolve_config(
    user: Mapping[str, Any] | None,
    *,
    policies: tuple[PolicySpec, ...] = POLICIES,
    file: str = "<policy config>",
) -> dict[str, ResolvedPolicyConfig]:
    """Per policy: the effective enforcement level and config properties (schema defaults filled)."""
    user = dict(user or {})
    errors = Collector(file)
    known = {p.name for p in policies}
    all_level = user.pop("all", None)
    if all_level is not None and all_level not in ENFORCEMENT_LEVELS:
        errors.add("all", f"{all_level!r} is not an enforcement level ({', '.join(ENFORCEMENT_LEVELS)})")
        all_level = None
    for key in sorted(user):
        if key not in known:
            errors.add(key, f"no policy named {key!r} in the pack; known: {', '.join(sorted(known))}")
    out: dict[str, ResolvedPolicyConfig] = {}
    for p in policies:
        level: str = all_level or p.enforcement
        props: dict[str, Any] = {k: v["default"] for k, v in p.config_properties.items() if "default" in v}
        given = user.get(p.name)
        if isinstance(given, str):
            if given not in ENFORCEMENT_LEVELS:
                errors.add(p.name, f"{given!r} is not an enforcement level ({', '.join(ENFORCEMENT_LEVELS)})")
            else:
                level = given
        elif isinstance(given, Mapping):
            for k, v in given.items():
                if k == "enforcementLevel":
                    if v not in ENFORCEMENT_LEVELS:
                        errors.add(f"{p.name}.enforcementLevel", f"{v!r} is not an enforcement level")
                    else:
                        level = str(v)
                elif k not in p.config_properties:
                    allowed = ", ".join(["enforcementLevel", *sorted(p.config_properties)])
                    errors.add(f"{p.name}.{k}", f"unknown property; {p.name} takes {allowed}")
                else:
                    _validate(v, p.config_properties[k], f"{p.name}.{k}", errors)
                    props[k] = v
        elif given is not None:
            errors.add(p.name, "expected an enforcement level or an object")
        out[p.name] = ResolvedPolicyConfig(enforcement=level, properties=props)
    errors.raise_if_any()
    return out


def load_config_file(path: Path) -> dict[str, Any]:
    """Read a ``--policy-pack-config`` JSON file."""
    data = reader.load_json(reader.read_text(path), file=str(path))
    if not isinstance(data, dict):
        raise InputError("expected a JSON object of policy name -> config", file=str(path))
    return data
