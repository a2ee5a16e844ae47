"""Standard 5-field cron schedules, as Karpenter parses disruption-budget schedules.

Karpenter (``pkg/apis/v1/nodepool.go`` ``Budget.IsActive``) parses ``TZ=UTC <schedule>`` with
robfig/cron v3's ``ParseStandard`` and asks for ``Next(t)``. This module translates that parser's
rules (fields minute, hour, day of month, month, day of week; ``*``/``?``, ranges, steps, lists,
month and weekday names; the ``@yearly``/``@annually``/``@monthly``/``@weekly``/``@daily``/
``@midnight``/``@hourly`` descriptors; day-of-month OR day-of-week when both are restricted) and its
``Next`` search (at most five years ahead), in UTC. Errors carry robfig's wording.

Boundary: pure; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

STAR: Final = 1 << 63  # robfig's starBit: the field was "*" or "?"


class CronError(ValueError):
    """An invalid schedule (robfig/cron's message)."""


@dataclass(frozen=True)
class _Bounds:
    low: int
    high: int
    names: dict[str, int]


_MINUTE: Final = _Bounds(0, 59, {})
_HOUR: Final = _Bounds(0, 23, {})
_DOM: Final = _Bounds(1, 31, {})
_MONTH: Final = _Bounds(
    1,
    12,
    {
        m: i + 1
        for i, m in enumerate(
            ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        )
    },
)
_DOW: Final = _Bounds(0, 6, {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])})


def _bits(low: int, high: int, step: int) -> int:
    if step == 1:
        return ~(~0 << (high + 1)) & (~0 << low)
    out = 0
    for i in range(low, high + 1, step):
        out |= 1 << i
    return out


def _all(b: _Bounds) -> int:
    return _bits(b.low, b.high, 1) | STAR


def _number(expr: str, b: _Bounds) -> int:
    if expr.lower() in b.names:
        return b.names[expr.lower()]
    try:
        value = int(expr, 10)
    except ValueError as exc:
        raise CronError(f"failed to parse int from {expr}") from exc
    if value < 0:
        raise CronError(f"negative number ({value}) not allowed: {expr}")
    return value


def _range(expr: str, b: _Bounds) -> int:
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    extra = 0
    if low_and_high[0] in ("*", "?"):
        start, end, extra = b.low, b.high, STAR
    else:
        start = _number(low_and_high[0], b)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _number(low_and_high[1], b)
        else:
            raise CronError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _number(range_and_step[1], b)
        if single:  # "N/step" means N-max/step
            end = b.high
        if step > 1:
            extra = 0
    else:
        raise CronError(f"too many slashes: {expr}")
    if start < b.low:
        raise CronError(f"beginning of range ({start}) below minimum ({b.low}): {expr}")
    if end > b.high:
        raise CronError(f"end of range ({end}) above maximum ({b.high}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")
    return _bits(start, end, step) | extra


def _field(expr: str, b: _Bounds) -> int:
    out = 0
    for part in expr.split(","):
        out |= _range(part, b)
    return out


@dataclass(frozen=True)
class Schedule:
    """A parsed schedule: one bit set per allowed value of each field (plus :data:`STAR`)."""

    minute: int
    hour: int
    dom: int
    month: int
    dow: int

    def _day_matches(self, t: datetime) -> bool:
        dom_match = bool(1 << t.day & self.dom)
        dow_match = bool(1 << ((t.weekday() + 1) % 7) & self.dow)
        if self.dom & STAR or self.dow & STAR:
            return dom_match and dow_match
        return dom_match or dow_match

    def next(self, t: datetime) -> datetime | None:
        """The first activation strictly after ``t`` (UTC), or None if none within five years."""
        t = t.astimezone(UTC)
        t = t.replace(microsecond=0) + timedelta(seconds=1)  # round up to the next second
        added = False
        year_limit = t.year + 5
        while True:  # robfig's WRAP label
            if t.year > year_limit:
                return None
            wrapped = False
            while not (1 << t.month & self.month):
                if not added:
                    added = True
                    t = t.replace(day=1, hour=0, minute=0, second=0)
                t = (t.replace(day=1) + timedelta(days=32)).replace(day=1)
                if t.month == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not self._day_matches(t):
                if not added:
                    added = True
                    t = t.replace(hour=0, minute=0, second=0)
                t += timedelta(days=1)
                if t.day == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not (1 << t.hour & self.hour):
                if not added:
                    added = True
                    t = t.replace(minute=0, second=0)
                t += timedelta(hours=1)
                if t.hour == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not (1 << t.minute & self.minute):
                if not added:
                    added = True
                    t = t.replace(second=0)
                t += timedelta(minutes=1)
                if t.minute == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            while t.second != 0:  # the standard parser's seconds field is "0"
                added = True
                t += timedelta(seconds=1)
                if t.second == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            return t


_DESCRIPTORS: Final = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}


def parse(spec: str) -> Schedule:
    """Parse a standard cron spec (what a budget's ``schedule`` holds)."""
    spec = spec.strip()
    if spec.startswith("TZ=") or spec.startswith("CRON_TZ="):
        spec = spec.split(None, 1)[1] if " " in spec else ""
    if not spec:
        raise CronError("empty spec string")
    if spec.startswith("@"):
        if spec not in _DESCRIPTORS:
            raise CronError(f"unrecognized descriptor: {spec}")
        spec = _DESCRIPTORS[spec]
    fields = spec.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: {fields}")
    return Schedule(
        minute=_field(fields[0], _MINUTE),
        hour=_field(fields[1], _HOUR),
        dom=_field(fields[2], _DOM),
        month=_field(fields[3], _MONTH),
        dow=_field(fields[4], _DOW),
    )
