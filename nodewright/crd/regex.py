"""Regular expressions as Go's ``regexp`` (RE2) runs them: CRD ``pattern``s and the CEL regex library.

Boundary: pattern text in, a compiled RE2 program out (the ``google-re2`` binding of Google's RE2,
the engine Go's ``regexp`` reimplements). Python's ``re`` differs where it matters for validation:
its ``$`` also matches before a trailing newline (``"5\\n"`` would pass ``^[0-9]+$``), its ``\\d``
and ``\\w`` are Unicode unless told otherwise, and it accepts constructs RE2 refuses (lookaround,
backreferences). RE2's ``$`` without the ``m`` flag matches only at the very end of the text, as
Go's does; its classes are ASCII. A pattern RE2 cannot compile is an error naming it.
"""

from __future__ import annotations

import functools
from typing import Any

import re2

_OPTIONS: Any = re2.Options()
_OPTIONS.log_errors = False  # a bad pattern is our error, not a line on stderr


class PatternError(ValueError):
    """A pattern RE2 (hence the API server) cannot compile."""


@functools.lru_cache(maxsize=1024)
def compile_re2(pattern: str) -> Any:
    """``pattern`` compiled with RE2 (cached); :class:`PatternError` when RE2 refuses it."""
    try:
        return re2.compile(pattern, options=_OPTIONS)
    except re2.error as exc:
        raise PatternError(f"invalid regular expression {pattern!r}: {exc}") from None


def search(pattern: str, text: str) -> bool:
    """Go's ``regexp.MatchString(pattern, text)``: whether ``pattern`` matches anywhere in ``text``."""
    return compile_re2(pattern).search(text) is not None


def find(text: str, pattern: str) -> str:
    """Go's ``FindString``: the leftmost match, or ``""``."""
    m = compile_re2(pattern).search(text)
    return str(m.group(0)) if m else ""


def find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    """Go's ``FindAllString(text, limit)``: successive non-overlapping matches; an empty match right
    after a previous match is skipped (Go's rule; Python's ``finditer`` keeps it); ``limit < 0``: all."""
    out: list[str] = []
    prev_end = -1
    for m in compile_re2(pattern).finditer(text):
        if limit >= 0 and len(out) >= limit:
            break
        start, end = m.span()
        if start == end and start == prev_end:
            continue
        out.append(str(m.group(0)))
        prev_end = end
    return out
