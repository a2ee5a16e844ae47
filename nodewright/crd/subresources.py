"""What the custom-resource handler does besides the schema walk: pruning alone (``status``) and
the scale subresource's bound.

Boundary: pure; problems out through ``add(path, message)``. Follows k8s.io/apiextensions-apiserver
v0.35 ``pkg/apiserver/schema/pruning`` with ``defaulting/prunenulls.go`` (decoding) and
``pkg/registry/customresource/validator.go`` ``ValidateScaleSpec``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from nodewright.crd.schema import MISSING, Schema
from nodewright.errors import typo_hint

Add = Callable[[str, str], None]
INT32_MAX: Final = 2**31 - 1


def prune(add: Add, value: Any, s: Schema, path: str) -> Any:
    """Structural pruning alone (k8s.io/apiextensions-apiserver ``schema/pruning``): unknown fields
    reported (strict field validation) and removed, non-nullable nulls without default removed;
    types are not checked."""
    if isinstance(value, dict):
        for key in list(value):
            sub = s.properties.get(key) or s.additional
            if sub is None:
                if not s.preserve_unknown:
                    hint = typo_hint(key, list(s.properties))
                    add(
                        (f"{path}.{key}" if path else key),
                        f'unknown field "{key}"{hint}; the CRD has no such field (strict field validation rejects it)',
                    )
                    del value[key]
                continue
            if value[key] is None and not sub.nullable and sub.default is MISSING:
                del value[key]
                continue
            at = (f"{path}.{key}" if path else key) if key in s.properties else f"{path}[{key}]"
            value[key] = prune(add, value[key], sub, at)
    elif isinstance(value, list) and s.items is not None:
        for i, item in enumerate(value):
            value[i] = prune(add, item, s.items, f"{path}[{i}]")
    return value


def check_scale(add: Add, obj: Mapping[str, Any], spec_replicas_path: str) -> None:
    """The scale subresource's bound on the replicas field (``ValidateScaleSpec``): an int32."""
    if not spec_replicas_path:
        return
    cur: Any = obj
    parts = spec_replicas_path.lstrip(".").split(".")
    for part in parts:
        if not isinstance(cur, Mapping) or part not in cur:
            return
        cur = cur[part]
    where = ".".join(parts)
    if type(cur) is not int:
        return  # a type error already reported by the schema
    if cur < 0:
        add(where, f"{cur} should be a non-negative integer (scale subresource)")
    elif cur > INT32_MAX:
        add(
            where,
            f"{cur} should be less than or equal to {INT32_MAX} (the scale subresource reads it as an int32)",
        )
