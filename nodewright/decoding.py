"""The limits of the reader (:mod:`nodewright.reader`) and its bounded JSON decoder.

Nesting depth and integer length are refused while decoding (the C decoder's recursion is
bounded, a number's digits are checked as it is parsed); a JSON object repeating a key is
refused, found without a Python call per object in the common case. A big text (a cluster
state) is first decoded by jiter (the pydantic project's JSON parser, in Rust), which shares
repeated strings; its result is kept only when it is provably the standard decoder's
(:func:`_fast_loads`).
:func:`nodewright.reader.load_json` turns what is raised here into one located
:class:`~nodewright.errors.InputError`.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any, Final

from nodewright.errors import clip

MAX_DEPTH: Final = 200
MAX_INT_DIGITS: Final = 40

_orjson: Any
try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a dependency; keep working without it
    _orjson = None


class _Refused(Exception):
    """A limit was hit while scanning; carries the message and the 1-based line (0: unknown)."""

    def __init__(self, message: str, line: int = 0, literal: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.literal = literal


def _stack_depth() -> int:
    frame: Any = sys._getframe()
    depth = 0
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return depth


def _deeper_than(data: Any, limit: int) -> bool:
    """Whether ``data`` nests deeper than ``limit`` (iterative: never recurses itself)."""
    stack = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values() if isinstance(v, dict | list))
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node if isinstance(v, dict | list))
    return False


class _DuplicateKey(Exception):
    """A JSON object repeats a key (``at``: offset of the object's ``{`` when known, else -1)."""

    def __init__(self, key: str, at: int = -1) -> None:
        super().__init__(key)
        self.key = key
        self.at = at


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook``: a dict, refusing a repeated key (strict decoding in the API server
    rejects duplicate fields; Python's ``json`` would keep the last one silently)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return out


def _duplicate_at(text: str, key: str, start: int = 0) -> int:
    """Offset of the ``{`` of the first object repeating ``key`` (the pure-Python scanner, run only
    on this error path, tells where each object starts)."""
    import json.decoder
    import json.scanner

    decoding: Any = json.decoder  # JSONObject and py_make_scanner are not in the type stubs
    scanning: Any = json.scanner
    decoder: Any = json.JSONDecoder()

    def parse_object(s_and_end: tuple[str, int], strict: bool, scan_once: Any, *rest: Any) -> Any:
        opened = s_and_end[1] - 1

        def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            try:
                return _pairs(pairs)
            except _DuplicateKey as exc:
                raise _DuplicateKey(exc.key, opened) from None

        return decoding.JSONObject(s_and_end, strict, scan_once, None, hook, {})

    decoder.parse_object = parse_object
    decoder.scan_once = scanning.py_make_scanner(decoder)
    try:
        while start < len(text) and text[start].isspace():
            start += 1
        decoder.raw_decode(text, start)
    except _DuplicateKey as exc:
        return exc.at
    except (ValueError, RecursionError):
        return -1
    return -1


def _json_loads(text: str, *, fast_from: int | None = None) -> Any:
    """``json.loads`` refusing nesting deeper than MAX_DEPTH and repeated keys.

    The text is decoded without an ``object_pairs_hook`` (a Python call per object is a third of
    the decoding of a big cluster state), then :func:`_may_repeat_keys` proves, in C, that no
    object lost a key; only when it cannot (or the text does not decode) is it decoded again with
    the hook, which finds the repeated key or raises the same error as always. Texts of at least
    ``fast_from`` characters (default :data:`FAST_FROM`) try :func:`_fast_loads` first."""
    if len(text) >= (FAST_FROM if fast_from is None else fast_from):
        data = _fast_loads(text)
        if data is not _UNPROVEN:
            return data
    try:
        data = _json_decode(text, None)
    except Exception:  # the hooked decoder raises the error it always raised (duplicates first)
        return _json_decode(text, _pairs)
    if _may_repeat_keys(text, data):
        return _json_decode(text, _pairs)
    return data


def _json_decode(text: str, hook: Any) -> Any:
    """On CPython 3.11 the C decoder counts its nesting against the recursion limit, so lowering
    the limit for the call bounds the depth at no cost; newer interpreters count C recursion
    separately, so the result is walked instead."""
    kwargs: dict[str, Any] = {
        "parse_int": _json_int,
        "parse_float": _json_float,
        "parse_constant": _json_constant,
        "object_pairs_hook": hook,
    }
    if sys.version_info < (3, 12):
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(_stack_depth() + MAX_DEPTH + 20)
        try:
            return json.loads(text, **kwargs)
        except RecursionError:
            raise _Refused(f"nesting deeper than {MAX_DEPTH} levels") from None
        finally:
            sys.setrecursionlimit(old)
    try:
        data = json.loads(text, **kwargs)
    except RecursionError:
        raise _Refused(f"nesting deeper than {MAX_DEPTH} levels") from None
    if _deeper_than(data, MAX_DEPTH):
        raise _Refused(f"nesting deeper than {MAX_DEPTH} levels")
    return data


_ESCAPED_COLON: Final = re.compile(r"\\u003[aA]")
_ESCAPED_COLON_BYTES: Final = re.compile(rb"\\u003[aA]")

FAST_FROM: Final = 1 << 20
"""Texts from this many characters (a cluster state, not a NodePool file) try :func:`_fast_loads`."""

_UNPROVEN: Final = object()
_UNCOUNTED: Final = bytes(b for b in range(256) if b not in b":l\\")
"""Every byte but ``:``, ``l`` and ``\\``: deleting them (one C pass) leaves what the proof counts."""
_WRAP: Final = 254 - MAX_DEPTH
"""orjson refuses to encode data nested deeper than 254; the decoded data inside this many lists
encodes exactly when it nests at most MAX_DEPTH deep."""


def _fast_loads(text: str | bytes) -> Any:
    """``text`` decoded by jiter (its string cache shares repeated values: a 42 MB cluster state
    decodes in two thirds of the time and memory of ``json.loads``), or ``_UNPROVEN`` unless the
    result is provably what the standard decoder gives. jiter refuses what it cannot read (NaN,
    lone surrogates, deep nesting) and then the standard decoder answers as always; the result,
    encoded again by orjson (C) inside ``_WRAP`` lists, must encode (no nesting deeper than
    MAX_DEPTH, no integer beyond 64 bits, so none longer than MAX_INT_DIGITS), keep every key
    (as many colons, none escaped: :func:`_may_repeat_keys` says why that proves it) and hold no
    float that overflowed to infinity: those encode as ``null``, two ``l`` more than the text has
    (a ``l`` written ``\\u006c`` also adds one, and is merely not proven); a backslash sends the
    text to the escaped-colon search. The text is best the file's UTF-8 bytes (jiter checks them;
    colons and ``l`` are ASCII, so they count the same): that spares decoding them."""
    if _orjson is None:
        return _UNPROVEN
    try:
        from jiter import from_json

        raw = text if isinstance(text, bytes) else text.encode("utf-8")
        data = from_json(raw, allow_inf_nan=False, cache_mode="all")
        wrapped: Any = data
        for _ in range(_WRAP):
            wrapped = [wrapped]
        encoded = _orjson.dumps(wrapped)
    except Exception:  # any refusal: the standard decoder says why, as always
        return _UNPROVEN
    mine, theirs = raw.translate(None, _UNCOUNTED), encoded.translate(None, _UNCOUNTED)
    if b"\\" in mine and _ESCAPED_COLON_BYTES.search(raw):
        return _UNPROVEN
    kept_every_key = mine.count(b":") == theirs.count(b":")
    finite = mine.count(b"l") == theirs.count(b"l")
    return data if kept_every_key and finite else _UNPROVEN


def _may_repeat_keys(text: str, data: Any) -> bool:
    """False when ``data`` (``text`` decoded, the last of repeated keys winning) provably kept
    every key of ``text``. Outside strings a JSON text has one ``:`` per key; inside, its strings'
    colons, which decode one for one unless written ``\\u003a``. The decoded data, encoded again
    (orjson, C), has one ``:`` per kept key plus its strings' colons. So without escaped colons
    the two counts are equal exactly when no key was dropped; True (not proven) otherwise."""
    if _orjson is None:
        return True
    try:
        encoded = _orjson.dumps(data)
    except (TypeError, ValueError):  # orjson.JSONEncodeError is a TypeError; big ints, surrogates
        return True
    return bool(_ESCAPED_COLON.search(text)) or encoded.count(b":") != text.count(":")


def _line_col(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {line} column {col}"


def _json_int(s: str) -> int:
    if len(s.lstrip("-")) > MAX_INT_DIGITS:
        raise _Refused(f"number {clip(s, 24)} out of range (more than {MAX_INT_DIGITS} digits)", literal=s)
    return int(s)


def _json_float(s: str) -> float:
    value = float(s)
    if not math.isfinite(value):
        raise _Refused(f"number {clip(s, 24)} out of range (not a finite float)", literal=s)
    return value


def _json_constant(s: str) -> Any:
    raise _Refused(f"{s} is not a JSON number; use a finite number")
