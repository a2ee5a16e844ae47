"""A TOML writer that produces what ``github.com/pelletier/go-toml/v2`` ``Marshal`` produces.

Karpenter re-marshals Bottlerocket settings with go-toml v2; to match its output byte for byte we
write the same layout: key/values before sub-tables, map keys sorted, typed structs in declaration
order (callers pass an ordered :class:`Struct`), literal ``'strings'`` unless they need escapes,
bare keys when ``[A-Za-z0-9_-]+`` else quoted, ``[a.b]`` headers for every table (intermediate ones
included), one blank line between sibling tables, arrays of tables as ``[[a.b]]``.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from typing import Any

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


class Struct(dict[str, Any]):
    """A Go struct: fields keep insertion (declaration) order instead of being sorted."""


def encode_key(key: str) -> str:
    if key and all(c in _BARE for c in key):
        return key
    if "'" in key or "\n" in key or any(ord(c) < 0x20 or ord(c) == 0x7F for c in key if c != "\t"):
        return _quoted(key)
    return f"'{key}'"


def _quoted(value: str) -> str:
    out = ['"']
    for ch in value:
        o = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\u{o:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def encode_string(value: str) -> str:
    if "'" in value or any((ord(c) < 0x20 and c != "\t") or ord(c) == 0x7F for c in value):
        return _quoted(value)
    return f"'{value}'"


def _is_table(value: Any) -> bool:
    return isinstance(value, Mapping)


def _is_array_table(value: Any) -> bool:
    return isinstance(value, list) and len(value) > 0 and all(isinstance(v, Mapping) for v in value)


def encode_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if value == math.trunc(value) and abs(value) < 1e16:
            return f"{value:.1f}"
        return repr(value)
    if isinstance(value, str):
        return encode_string(value)
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            return value.isoformat()
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(encode_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        items = _ordered(value)
        return "{" + ", ".join(f"{encode_key(k)} = {encode_value(v)}" for k, v in items) + "}"
    raise TypeError(f"cannot encode {type(value).__name__} as TOML")


def _ordered(table: Mapping[str, Any]) -> list[tuple[str, Any]]:
    items = [(k, v) for k, v in table.items() if v is not None]
    return items if isinstance(table, Struct) else sorted(items, key=lambda kv: kv[0])


def _header(path: list[str]) -> str:
    return ".".join(encode_key(k) for k in path)


def _encode_table(out: list[str], path: list[str], table: Mapping[str, Any], *, header: str | None) -> None:
    if header is not None:
        out.append(header)
    items = _ordered(table)
    kvs = [(k, v) for k, v in items if not (_is_table(v) or _is_array_table(v))]
    subs = [(k, v) for k, v in items if _is_table(v) or _is_array_table(v)]
    for k, v in kvs:
        out.append(f"{encode_key(k)} = {encode_value(v)}\n")
    for index, (k, v) in enumerate(subs):
        if index > 0 or kvs:
            out.append("\n")
        sub = [*path, k]
        if _is_array_table(v):
            for element in v:
                _encode_table(out, sub, element, header=f"[[{_header(sub)}]]\n")
        else:
            _encode_table(out, sub, v, header=f"[{_header(sub)}]\n")


def dumps(document: Mapping[str, Any]) -> str:
    """The document as go-toml v2 ``Marshal`` writes it."""
    out: list[str] = []
    _encode_table(out, [], document, header=None)
    return "".join(out)
