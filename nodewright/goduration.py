"""Go's ``time.ParseDuration`` and ``Duration.String``, ported exactly (byte-wise, with overflow checks).

Boundary: pure string <-> nanoseconds. Callers attach the file/field to a :class:`DurationError`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final

_UNITS: Final[dict[bytes, int]] = {
    b"ns": 1,
    b"us": 1_000,
    "µs".encode(): 1_000,  # U+00B5 micro sign
    "μs".encode(): 1_000,  # U+03BC Greek small letter mu
    b"ms": 1_000_000,
    b"s": 1_000_000_000,
    b"m": 60 * 1_000_000_000,
    b"h": 3600 * 1_000_000_000,
}
_MAX: Final = 1 << 63

NEVER: Final = "Never"


class DurationError(ValueError):
    """Go's own error text for a bad duration (``time: invalid duration "30x"``...)."""


def _quote(b: bytes) -> str:
    return '"' + b.decode("utf-8", errors="replace") + '"'


def _leading_int(s: bytes) -> tuple[int, bytes]:
    x = 0
    i = 0
    while i < len(s) and 0x30 <= s[i] <= 0x39:
        if x > _MAX // 10:
            raise OverflowError
        x = x * 10 + (s[i] - 0x30)
        if x > _MAX:
            raise OverflowError
        i += 1
    return x, s[i:]


def _leading_fraction(s: bytes) -> tuple[int, float, bytes]:
    x = 0
    scale = 1.0
    overflow = False
    i = 0
    while i < len(s) and 0x30 <= s[i] <= 0x39:
        if not overflow:
            if x > (_MAX - 1) // 10:
                overflow = True
            else:
                y = x * 10 + (s[i] - 0x30)
                if y > _MAX:
                    overflow = True
                else:
                    x = y
                    scale *= 10
        i += 1
    return x, scale, s[i:]


def parse_duration(text: str) -> int:
    """``time.ParseDuration``: nanoseconds, or :class:`DurationError` with Go's message."""
    orig = text.encode("utf-8")
    s = orig
    neg = False
    if s and s[0:1] in (b"-", b"+"):
        neg = s[0:1] == b"-"
        s = s[1:]
    if s == b"0":
        return 0
    if not s:
        raise DurationError(f"time: invalid duration {_quote(orig)}")
    d = 0
    while s:
        if not (s[0] == 0x2E or 0x30 <= s[0] <= 0x39):
            raise DurationError(f"time: invalid duration {_quote(orig)}")
        pl = len(s)
        try:
            v, s = _leading_int(s)
        except OverflowError:
            raise DurationError(f"time: invalid duration {_quote(orig)}") from None
        pre = pl != len(s)
        post = False
        f, scale = 0, 1.0
        if s and s[0] == 0x2E:
            s = s[1:]
            pl = len(s)
            f, scale, s = _leading_fraction(s)
            post = pl != len(s)
        if not pre and not post:
            raise DurationError(f"time: invalid duration {_quote(orig)}")
        i = 0
        while i < len(s) and not (s[i] == 0x2E or 0x30 <= s[i] <= 0x39):
            i += 1
        if i == 0:
            raise DurationError(f"time: missing unit in duration {_quote(orig)}")
        u, s = s[:i], s[i:]
        unit = _UNITS.get(u)
        if unit is None:
            raise DurationError(f"time: unknown unit {_quote(u)} in duration {_quote(orig)}")
        if v > _MAX // unit:
            raise DurationError(f"time: invalid duration {_quote(orig)}")
        v *= unit
        if f > 0:
            v += int(float(f) * (float(unit) / scale))
            if v > _MAX:
                raise DurationError(f"time: invalid duration {_quote(orig)}")
        d += v
        if d > _MAX:
            raise DurationError(f"time: invalid duration {_quote(orig)}")
    if neg:
        return -d
    if d > _MAX - 1:
        raise DurationError(f"time: invalid duration {_quote(orig)}")
    return d


def _fmt_frac(v: int, prec: int) -> tuple[str, int]:
    digits = ""
    printed = False
    for _ in range(prec):
        digit = v % 10
        printed = printed or digit != 0
        if printed:
            digits = str(digit) + digits
        v //= 10
    return ("." + digits if printed else ""), v


def format_duration(ns: int) -> str:
    """``time.Duration.String`` (``720h0m0s``, ``1.5s``, ``0s``)."""
    if ns == 0:
        return "0s"
    neg = ns < 0
    u = -ns if neg else ns
    if u < 1_000_000_000:
        if u < 1_000:
            out = f"{u}ns"
        elif u < 1_000_000:
            frac, whole = _fmt_frac(u, 3)
            out = f"{whole}{frac}µs"
        else:
            frac, whole = _fmt_frac(u, 6)
            out = f"{whole}{frac}ms"
    else:
        frac, u = _fmt_frac(u, 9)
        out = f"{u % 60}{frac}s"
        u //= 60
        if u > 0:
            out = f"{u % 60}m" + out
            u //= 60
            if u > 0:
                out = f"{u}h" + out
    return ("-" if neg else "") + out


def parse_rfc3339(value: object) -> datetime | None:
    """An RFC 3339 timestamp (``metav1.Time``) as an aware datetime; None when absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)
