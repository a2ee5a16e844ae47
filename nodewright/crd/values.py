"""JSON-like values as the API server sees them: copying, type names and short display.

Boundary: pure helpers for :mod:`nodewright.crd.admission` and :mod:`nodewright.crd.objectmeta`.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Mapping
from typing import Any, Final

_orjson: Any
try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a dependency
    _orjson = None
_ORJSON_OPTS: Final = (
    (_orjson.OPT_PASSTHROUGH_DATETIME | _orjson.OPT_PASSTHROUGH_DATACLASS) if _orjson is not None else 0
)


def _json_default(value: Any) -> Any:
    if isinstance(value, _dt.date):
        return plain(value)
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(type(value).__name__)


def plain(value: Any) -> Any:
    """A JSON-like deep copy: mapping keys as strings, YAML timestamps as RFC 3339 strings."""
    if isinstance(value, dict) and _orjson is not None:
        # fastest path (orjson, ~3x the stdlib): str keys only (others raise), dates, times and
        # dataclasses handed to _json_default as below. orjson writes NaN/inf as null where the
        # stdlib raises: any null in the text goes the stdlib way, so the result is always its own.
        try:
            text = _orjson.dumps(value, default=_json_default, option=_ORJSON_OPTS)
        except TypeError:
            text = b"null"
        if b"null" not in text:
            return _orjson.loads(text)
    if isinstance(value, dict):
        try:  # fast path (C): JSON turns int/bool keys into strings as sigs.k8s.io/yaml does
            return json.loads(json.dumps(value, default=_json_default, allow_nan=False))
        except (TypeError, ValueError):
            pass
    if isinstance(value, Mapping):
        return {k if isinstance(k, str) else _key_str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.UTC)
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, _dt.date):
        return value.isoformat()
    return value


def _key_str(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


_KINDS_BY_TYPE: Final[dict[type, str]] = {
    str: "string",
    int: "integer",
    bool: "boolean",
    float: "number",
    dict: "object",
    list: "array",
    type(None): "null",
}


def kind_of(value: Any) -> str:
    found = _KINDS_BY_TYPE.get(type(value))
    if found is not None:
        return found
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def show(value: Any) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."
