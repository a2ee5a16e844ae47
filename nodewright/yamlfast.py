"""A fast path for :func:`nodewright.reader.dump_yaml`: block-style YAML of plain JSON-like data, the
same text PyYAML's ``SafeDumper`` (``default_flow_style=False``, ``allow_unicode=True``, indent 2)
writes, at a fraction of its cost (PyYAML builds a node object per scalar and asks its resolver
twice per node; a 20,000-pod ``plan -o yaml`` has 1.7 million scalars).

It handles exactly what it can write byte for byte: dicts, lists, ``str``, ``int``, ``bool``,
``float`` and ``None``, where every string is empty or a "simple" word (an ASCII letter or digit,
then letters, digits, ``.``, ``_``, ``/`` and ``-``; keys of at most 128 characters, as a YAML
simple key) and no dict or list appears twice (PyYAML would write an anchor and an alias).
Anything else returns ``None`` and the caller uses PyYAML for the whole document.
``tests/test_yamlfast.py`` checks the equality with hypothesis and on real outputs.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable
from typing import Any, Final, cast

_SIMPLE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/\-]*\Z")
_MAX_KEY: Final = 128


class _NotSimple(Exception):
    """The data is outside the fast path."""


def _float_text(value: float) -> str:
    """PyYAML's ``SafeRepresenter.represent_float``."""
    if value != value:
        return ".nan"
    if value == math.inf:
        return ".inf"
    if value == -math.inf:
        return "-.inf"
    text = repr(value).lower()
    if "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    return text


_WORD: Final = re.compile(r"[\x21-\x7e]+\Z")
"""Printable ASCII without whitespace: never folded, never escaped, plain or single-quoted."""
_LEADING_INDICATORS: Final = frozenset("#,[]{}&*!|>'\"%@`")


def _block_value(text: str, resolves_to_str: Callable[[str], bool]) -> str:
    """A string written as a block mapping value or sequence item, as libyaml's emitter chooses its
    style (``yaml_emitter_analyze_scalar`` / ``select_scalar_style``) for printable ASCII without
    whitespace: plain unless an indicator forbids it or the plain text would read back as another
    type, else single-quoted (quotes doubled). Anything else is outside the fast path."""
    if text == "":
        return "''"
    if _WORD.match(text) is None:
        raise _NotSimple
    indicator = (
        text[0] in _LEADING_INDICATORS
        or (len(text) == 1 and text in "?:-")
        or text.endswith(":")
        or text.startswith(("---", "..."))
    )
    if not indicator and resolves_to_str(text):
        return text
    return "'" + text.replace("'", "''") + "'"


def dump_block(data: Any, *, sort_keys: bool, resolves_to_str: Callable[[str], bool]) -> str | None:
    """``data`` as block YAML, or None when it is outside the fast path (see the module docstring).

    ``resolves_to_str(s)``: whether PyYAML's resolver reads the plain scalar ``s`` back as a string
    (otherwise it is written single-quoted, as PyYAML does).
    """
    if not isinstance(data, dict | list) or type(data) not in (dict, list):
        return None
    out: list[str] = []
    seen: set[int] = set()
    scalars: dict[str, str] = {}  # str value -> its text (documents repeat their words)
    keys: dict[str, str] = {}  # str key -> its text

    def key_text(value: Any) -> str:
        cached = keys.get(value) if type(value) is str else None
        if cached is None:
            cached = scalar(value, key=True)
            keys[value] = cached
        return cached

    def scalar(value: Any, *, key: bool = False) -> str:
        t = type(value)
        if t is str:
            if key:
                if _SIMPLE.match(value) is None or len(value) > _MAX_KEY:
                    raise _NotSimple
                return value if resolves_to_str(value) else f"'{value}'"
            cached = scalars.get(value)
            if cached is None:
                cached = _block_value(value, resolves_to_str)
                scalars[value] = cached
            return cached
        if key:
            raise _NotSimple
        if t is bool:
            return "true" if value else "false"
        if t is int:
            return str(value)
        if value is None:
            return "null"
        if t is float:
            return _float_text(value)
        raise _NotSimple

    def items(mapping: dict[Any, Any]) -> list[tuple[Any, Any]]:
        pairs = list(mapping.items())
        if sort_keys:
            with contextlib.suppress(TypeError):
                pairs = sorted(pairs)
        return pairs

    def enter(container: dict[Any, Any] | list[Any]) -> None:
        ident = id(container)
        if ident in seen:
            raise _NotSimple
        seen.add(ident)

    def mapping(value: dict[Any, Any], indent: str, first_prefix: str) -> None:
        """Lines of a non-empty mapping; the first line starts with ``first_prefix`` (``- `` in a list)."""
        prefix = first_prefix
        for k, v in items(value):
            ks = key_text(k)
            tv = type(v)
            if tv is dict:
                if v:
                    enter(v)
                    out.append(f"{prefix}{ks}:\n")
                    mapping(v, indent + "  ", indent + "  ")
                else:
                    out.append(f"{prefix}{ks}: {{}}\n")
            elif tv is list:
                if v:
                    enter(v)
                    out.append(f"{prefix}{ks}:\n")
                    sequence(v, indent)
                else:
                    out.append(f"{prefix}{ks}: []\n")
            else:
                out.append(f"{prefix}{ks}: {scalar(v)}\n")
            prefix = indent

    def scalars_of(value: list[Any]) -> list[str] | None:
        """The texts of a list of scalars (None when it holds a container)."""
        if type(value[0]) in (dict, list):
            return None
        try:
            cached = [scalars.get(v) for v in value]  # a container is unhashable: TypeError
        except TypeError:
            return None
        if None not in cached:
            return cast(list[str], cached)
        texts: list[str] = []
        for v, text in zip(value, cached, strict=True):
            if text is None:
                if type(v) in (dict, list):
                    return None
                text = scalar(v)
            texts.append(text)
        return texts

    def sequence(value: list[Any], indent: str) -> None:
        """Lines of a non-empty sequence whose dashes stand at ``indent``."""
        texts = scalars_of(value)
        if texts is not None:  # one line per item, joined at once
            dash = indent + "- "
            out.append(dash + ("\n" + dash).join(texts) + "\n")
            return
        for v in value:
            tv = type(v)
            if tv is dict:
                if v:
                    enter(v)
                    mapping(v, indent + "  ", indent + "- ")
                else:
                    out.append(f"{indent}- {{}}\n")
            elif tv is list:
                if v:
                    enter(v)
                    nested(v, indent)
                else:
                    out.append(f"{indent}- []\n")
            else:
                out.append(f"{indent}- {scalar(v)}\n")

    def nested(value: list[Any], indent: str) -> None:
        """A non-empty list inside a list: ``- - a`` then ``  - b`` (PyYAML's compact form)."""
        start = len(out)
        sequence(value, indent + "  ")
        first = out[start]
        out[start] = indent + "- " + first[len(indent) + 2 :]

    try:
        enter(data)
        if isinstance(data, dict):
            if not data:
                return "{}\n"
            mapping(data, "", "")
        else:
            if not data:
                return "[]\n"
            sequence(data, "")
    except (_NotSimple, RecursionError):
        return None
    return "".join(out)
