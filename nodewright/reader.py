"""The one low-level reader of user bytes: YAML/JSON text to plain Python data, bounded and safe.

Every file nodewright reads (NodePools, EC2NodeClasses, cluster state, catalog files, cluster
info, claims files, stack config, fixtures) goes through here, so hostile input fails the same way
everywhere: one :class:`~nodewright.errors.InputError` naming the file (and the line where known),
never a traceback, a hang or a memory blow-up. The limits:

* size: at most :data:`MAX_BYTES` per file;
* nesting depth: at most :data:`~nodewright.decoding.MAX_DEPTH` levels (checked before building
  anything, so a deep document cannot exhaust the C stack of libyaml's composer or Python's
  recursion limit);
* YAML aliases: at most :data:`MAX_ALIASES` alias references and at most :data:`MAX_NODES` nodes
  once aliases are expanded (the "billion laughs" bomb is refused before it is built);
* numbers: integers of at most :data:`~nodewright.decoding.MAX_INT_DIGITS` digits, finite floats
  only (no ``.inf``, ``.nan``, ``1e400``): what Kubernetes' JSON decoding accepts;
* duplicate mapping keys are errors with their line, in YAML and in JSON (strict decoding in the
  API server refuses duplicate fields; Python's ``json`` would keep the last one silently).

libyaml's C loader and dumper are used when PyYAML has them (they are several times faster than
the pure-Python ones); the results are identical. Boundary: bytes to plain data and plain data
to text; what the data means (Kubernetes objects, validation) belongs to :mod:`nodewright.api`.
"""

from __future__ import annotations

import functools
import json
import math
import re
import sys
from pathlib import Path
from typing import Any, Final

import yaml

from nodewright import yamlfast
from nodewright.decoding import (
    _UNPROVEN,
    FAST_FROM,
    MAX_DEPTH,
    MAX_INT_DIGITS,
    _deeper_than,
    _duplicate_at,
    _DuplicateKey,
    _fast_loads,
    _json_constant,
    _json_float,
    _json_int,
    _json_loads,
    _line_col,
    _orjson,
    _pairs,
    _Refused,
    _stack_depth,
)
from nodewright.errors import InputError, clip

MAX_BYTES: Final = 512 * 1024 * 1024
MAX_ALIASES: Final = 10_000
MAX_NODES: Final = 2_000_000

HAS_LIBYAML: Final = bool(getattr(yaml, "__with_libyaml__", False))
_BaseLoader: Any = yaml.CSafeLoader if HAS_LIBYAML else yaml.SafeLoader
_BaseDumper: Any = yaml.CSafeDumper if HAS_LIBYAML else yaml.SafeDumper


# ---------------------------------------------------------------------------------------------
# reading files


def read_bytes(path: str | Path, *, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of ``path``, refusing more than ``max_bytes``; missing files are located errors."""
    p = Path(path)
    try:
        with p.open("rb") as f:
            data = f.read(max_bytes + 1)
    except FileNotFoundError as exc:
        raise InputError("no such file; check the path", file=str(path)) from exc
    except IsADirectoryError as exc:
        raise InputError("is a directory; give a YAML or JSON file", file=str(path)) from exc
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=str(path)) from exc
    if len(data) > max_bytes:
        raise InputError(
            f"file larger than {max_bytes // (1024 * 1024)} MiB; refusing to read it", file=str(path)
        )
    return data


def decode(data: bytes, *, file: str) -> str:
    """UTF-8 text (a byte-order mark is dropped), or a located error."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not UTF-8 text (bad byte at offset {exc.start}); give a YAML or JSON file", file=file
        ) from exc
    return text[1:] if text.startswith("\ufeff") else text


def read_text(path: str | Path, *, max_bytes: int = MAX_BYTES) -> str:
    """The UTF-8 text of ``path`` within the size limit."""
    return decode(read_bytes(path, max_bytes=max_bytes), file=str(path))


# ---------------------------------------------------------------------------------------------
# JSON


def load_json(text: str, *, file: str) -> Any:
    """One JSON document, within the limits, or a located error."""
    _check_size(text, file)
    try:
        return _json_loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", file=file
        ) from None
    except _Refused as exc:
        at = text.find(exc.literal) if exc.literal else -1
        where = f" at {_line_col(text, at)}" if at >= 0 else ""
        raise InputError(f"refusing the JSON{where}: {exc.message}", file=file) from None
    except _DuplicateKey as exc:
        raise _duplicate_error(text, exc.key, file) from None
    except (RecursionError, ValueError) as exc:
        raise InputError(f"invalid JSON: {clip(str(exc), 120)}", file=file) from None


# ---------------------------------------------------------------------------------------------
# YAML

# A cheap proof that a YAML text is shallow: block nesting needs indentation (or "- "/"? "
# prefixes), flow nesting needs "[" / "{" not immediately closed. When the proof fails the event
# stream is scanned exactly (about a seventh of the cost of loading).
_DEEP_PREFIX = re.compile(rf"^[ \t\-?]{{{MAX_DEPTH // 2 - 2},}}", re.M)
_FLOW_OPEN = re.compile(r"[\[{](?![\]}])")
_ANCHOR = re.compile(r"(?:^|[\s\[{,])&[^\s\[\]{},]", re.M)


def _needs_scan(text: str) -> bool:
    if _ANCHOR.search(text):
        return True  # anchors (hence aliases): count expansions exactly
    if _DEEP_PREFIX.search(text):
        return True
    if "[" in text or "{" in text:
        return len(_FLOW_OPEN.findall(text)) > MAX_DEPTH // 2
    return False


def _scan_events(text: str) -> None:
    """Depth, alias count and alias-expanded node count of every document, before composing."""
    depth = 0
    aliases = 0
    sizes: dict[str, int] = {}
    stack: list[list[Any]] = []  # [anchor, expanded size so far]
    total = 0

    def finish(size: int, anchor: str | None, line: int) -> None:
        nonlocal total
        if anchor:
            sizes[anchor] = size
        if stack:
            stack[-1][1] += size
            size = stack[-1][1]
        else:
            total += size
            size = total
        if size > MAX_NODES:
            raise _Refused(f"more than {MAX_NODES:,} nodes once aliases are expanded (an alias bomb?)", line)

    for ev in yaml.parse(text, Loader=_BaseLoader):
        line = ev.start_mark.line + 1 if ev.start_mark is not None else 0
        if isinstance(ev, yaml.ScalarEvent):
            finish(1, ev.anchor, line)
        elif isinstance(ev, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise _Refused(f"nesting deeper than {MAX_DEPTH} levels", line)
            stack.append([ev.anchor, 1])
        elif isinstance(ev, yaml.CollectionEndEvent):
            depth -= 1
            anchor, size = stack.pop()
            finish(size, anchor, line)
        elif isinstance(ev, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise _Refused(f"more than {MAX_ALIASES:,} aliases", line)
            finish(sizes.get(ev.anchor or "", 1), None, line)


class _Loader(_BaseLoader):  # type: ignore[misc]
    """Safe loader (C when available): duplicate keys and out-of-range numbers are errors."""


def _construct_mapping(loader: Any, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            duplicate = key in seen
            seen.add(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "a mapping key must be a scalar", key_node.start_mark
            ) from None
        if duplicate:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {clip(repr(key), 60)}", key_node.start_mark
            )
    loader.flatten_mapping(node)
    return dict(loader.construct_pairs(node, deep=deep))


def _construct_int(loader: Any, node: yaml.ScalarNode) -> int:
    digits = str(node.value).replace("_", "").lstrip("+-")
    if len(digits) > MAX_INT_DIGITS:
        raise yaml.constructor.ConstructorError(
            None,
            None,
            f"number {clip(str(node.value), 24)} out of range (more than {MAX_INT_DIGITS} digits)",
            node.start_mark,
        )
    value: int = yaml.SafeLoader.construct_yaml_int(loader, node)
    return value


def _construct_float(loader: Any, node: yaml.ScalarNode) -> float:
    value: float = yaml.SafeLoader.construct_yaml_float(loader, node)
    if not math.isfinite(value):
        raise yaml.constructor.ConstructorError(
            None,
            None,
            f"number {clip(str(node.value), 24)} out of range (not a finite float)",
            node.start_mark,
        )
    return value


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_Loader.add_constructor("tag:yaml.org,2002:float", _construct_float)


class _EmbeddedLoader(_BaseLoader):  # type: ignore[misc]
    """For YAML embedded in other documents (user data): PyYAML's safe semantics (a repeated key
    keeps the last value, as before), numbers bounded, C speed."""


_EmbeddedLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_EmbeddedLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)


class LimitError(yaml.YAMLError):
    """An embedded YAML document over a limit (size, depth, aliases): a :class:`yaml.YAMLError`,
    so callers that report invalid embedded YAML report this too."""


def safe_load_all(text: str) -> list[Any]:
    """``yaml.safe_load_all`` within the limits, for YAML embedded in user data (NodeConfig,
    cloud-config, OSC files). Raises :class:`yaml.YAMLError` (limits included), never anything else."""
    if len(text) > MAX_BYTES:
        raise LimitError(f"larger than {MAX_BYTES // (1024 * 1024)} MiB")
    try:
        if _needs_scan(text):
            _scan_events(text)
        return list(yaml.load_all(text, Loader=_EmbeddedLoader))
    except _Refused as exc:
        raise LimitError(exc.message) from None
    except (RecursionError, ValueError, TypeError) as exc:
        raise LimitError(clip(str(exc), 120)) from None


def safe_load(text: str) -> Any:
    """``yaml.safe_load`` within the limits (see :func:`safe_load_all`); the first document."""
    docs = safe_load_all(text)
    if len(docs) > 1:
        raise LimitError("expected a single document, found several")
    return docs[0] if docs else None


def _yaml_error(exc: yaml.YAMLError, file: str) -> InputError:
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
    what = getattr(exc, "problem", None) or (str(exc).splitlines() or ["unreadable"])[0]
    return InputError(f"invalid YAML{where}: {clip(str(what), 200)}", file=file)


def load_yaml_all(text: str, *, file: str) -> list[Any]:
    """Every YAML document of ``text`` (empty documents dropped), within the limits."""
    _check_size(text, file)
    try:
        if _needs_scan(text):
            _scan_events(text)
        return [d for d in yaml.load_all(text, Loader=_Loader) if d is not None]
    except _Refused as exc:
        where = f" at line {exc.line}" if exc.line else ""
        raise InputError(f"refusing the YAML{where}: {exc.message}", file=file) from None
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, file) from None
    except (RecursionError, ValueError, TypeError) as exc:
        raise InputError(f"invalid YAML: {clip(str(exc), 120)}", file=file) from None


def _duplicate_error(text: str, key: str, file: str, start: int = 0) -> InputError:
    at = _duplicate_at(text, key, start)
    where = f" in the object at {_line_col(text, at)}" if at >= 0 else ""
    return InputError(
        f"refusing the JSON: duplicate key {clip(repr(key), 60)}{where}; give each key once "
        "(the API server rejects duplicate fields)",
        file=file,
    )


def load_yaml(text: str, *, file: str) -> Any:
    """The single YAML document of ``text`` (None when empty); several documents are an error."""
    docs = load_yaml_all(text, file=file)
    if len(docs) > 1:
        raise InputError(f"expected one YAML document, found {len(docs)}", file=file)
    return docs[0] if docs else None


_JSON_START: Final = re.compile(rb"[ \t\r\n]*[\[{]")


def parse_bytes(data: bytes, *, file: str) -> list[Any]:
    """:func:`parse_text` of the UTF-8 ``data``; a big JSON text (a cluster state) is decoded
    straight from its bytes when :func:`~nodewright.decoding._fast_loads` proves the result."""
    if len(data) >= FAST_FROM and _JSON_START.match(data):
        value = _fast_loads(data)
        if value is not _UNPROVEN:
            return [value]
    return parse_text(decode(data, file=file), file=file)


def parse_text(text: str, *, file: str) -> list[Any]:
    """JSON or (multi-document) YAML text as raw documents; None documents dropped."""
    if text.lstrip()[:1] in ("{", "["):
        try:
            return [load_json(text, file=file)]
        except InputError as json_error:
            if any(m in json_error.message for m in ("nesting deeper", "out of range", "duplicate key")):
                raise
            if "Extra data" in json_error.message:
                several = _concatenated_json(text, file=file)
                if several is not None:
                    return several
            # YAML is a superset of JSON; a flow-style YAML file may still parse.
            try:
                return load_yaml_all(text, file=file)
            except InputError:
                raise json_error from None
    return load_yaml_all(text, file=file)


def _concatenated_json(text: str, *, file: str) -> list[Any] | None:
    """Several JSON values one after another (``kubectl cluster-info dump``), each within the
    limits, or None when the text is not that."""
    decoder = json.JSONDecoder(
        parse_int=_json_int, parse_float=_json_float, parse_constant=_json_constant, object_pairs_hook=_pairs
    )
    out: list[Any] = []
    pos = 0
    old = sys.getrecursionlimit()
    if sys.version_info < (3, 12):
        sys.setrecursionlimit(_stack_depth() + MAX_DEPTH + 20)
    try:
        while True:
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos >= len(text):
                break
            value, pos = decoder.raw_decode(text, pos)
            out.append(value)
    except _DuplicateKey as exc:
        raise _duplicate_error(text, exc.key, file, pos) from None
    except (json.JSONDecodeError, _Refused, RecursionError, ValueError):
        return None
    finally:
        sys.setrecursionlimit(old)
    if sys.version_info >= (3, 12) and any(_deeper_than(v, MAX_DEPTH) for v in out):
        return None
    return out


def load_file(path: str | Path) -> list[Any]:
    """Every document of a YAML or JSON file, within the limits."""
    return parse_text(read_text(path), file=str(path))


def _check_size(text: str, file: str) -> None:
    if len(text) > MAX_BYTES:
        raise InputError(
            f"input larger than {MAX_BYTES // (1024 * 1024)} MiB; refusing to read it", file=file
        )


# ---------------------------------------------------------------------------------------------
# writing


_RESOLVER: Final[Any] = yaml.resolver.Resolver()
_STR_TAG: Final = "tag:yaml.org,2002:str"


def _resolves_to_str(text: str) -> bool:
    """Whether PyYAML reads the plain scalar ``text`` back as a string (its resolver's regexes;
    short words remembered: outputs repeat them, e.g. 2,000 launch templates' NodeConfigs)."""
    return _short_resolves_to_str(text) if len(text) <= 256 else _resolve_str(text)


def _resolve_str(text: str) -> bool:
    return bool(_RESOLVER.resolve(yaml.ScalarNode, text, (True, False)) == _STR_TAG)


_short_resolves_to_str: Final = functools.lru_cache(maxsize=8192)(_resolve_str)


def dump_yaml(data: Any, *, sort_keys: bool = False, width: int | None = None) -> str:
    """Block-style YAML: :mod:`nodewright.yamlfast` for plain data (most outputs), else PyYAML's C
    dumper when available (the same text as PyYAML's pure-Python one). ``width``: where PyYAML
    folds long strings at their spaces (default 80; the fast path's words have no space to fold at)."""
    fast = yamlfast.dump_block(data, sort_keys=sort_keys, resolves_to_str=_resolves_to_str)
    if fast is not None:
        return fast
    text: str = yaml.dump(
        data,
        Dumper=_BaseDumper,
        sort_keys=sort_keys,
        allow_unicode=True,
        default_flow_style=False,
        width=width,
    )
    return text


def dump_json(data: Any, *, indent: int | None = 2) -> str:
    """JSON text (UTF-8 kept, key order kept): orjson when installed (the same text as the standard
    library's ``indent=2`` output, about 40x faster), else :func:`json.dumps`."""
    if _orjson is not None and indent in (2, None):
        try:
            raw: bytes = _orjson.dumps(data, option=_orjson.OPT_INDENT_2 if indent == 2 else 0)
            return raw.decode("utf-8")
        except (TypeError, ValueError):  # a non-str key, an int beyond 64 bits...: the slow path
            pass
    return json.dumps(data, indent=indent, ensure_ascii=False)
