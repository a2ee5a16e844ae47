"""Property tests of the cron port (nodewright/drift/cron.py) against a brute-force minute scan.

For random standard specs and start times: ``next(t)`` is after ``t``, on a whole minute, matches
the spec (day of month OR day of week when both are restricted, AND when either is ``*``, as
robfig/cron), and no earlier minute after ``t`` matches (checked minute by minute over a window).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from nodewright.drift.cron import parse

FIELDS = {"minute": (0, 59), "hour": (0, 23), "dom": (1, 31), "month": (1, 12), "dow": (0, 6)}


@st.composite
def field(draw: st.DrawFn, name: str) -> tuple[str, set[int] | None]:
    lo, hi = FIELDS[name]
    kind = draw(st.sampled_from(["star", "list", "range", "step"]))
    if kind == "star":
        return "*", None
    if kind == "list":
        values = sorted(draw(st.sets(st.integers(lo, hi), min_size=1, max_size=4)))
        return ",".join(map(str, values)), set(values)
    a = draw(st.integers(lo, hi))
    b = draw(st.integers(a, hi))
    if kind == "range":
        return f"{a}-{b}", set(range(a, b + 1))
    step = draw(st.integers(1, 10))
    return f"{a}-{b}/{step}", set(range(a, b + 1, step))


def _matches(t: datetime, sets: dict[str, set[int] | None]) -> bool:
    def ok(name: str, value: int) -> bool:
        allowed = sets[name]
        return allowed is None or value in allowed

    if not (ok("minute", t.minute) and ok("hour", t.hour) and ok("month", t.month)):
        return False
    dom, dow = ok("dom", t.day), ok("dow", (t.weekday() + 1) % 7)
    if sets["dom"] is None or sets["dow"] is None:
        return dom and dow
    return dom or dow


@settings(max_examples=150, deadline=None)
@given(
    st.tuples(*(field(n) for n in FIELDS)),
    st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2030, 12, 31)),
)
def test_next_is_the_first_matching_minute(
    parts: tuple[tuple[str, set[int] | None], ...], start: datetime
) -> None:
    spec = " ".join(p[0] for p in parts)
    sets = dict(zip(FIELDS, (p[1] for p in parts), strict=True))
    t = start.replace(tzinfo=UTC)
    got = parse(spec).next(t)
    if got is None:  # nothing within five years (e.g. Feb 30); then no minute of the window matches
        cursor = (t + timedelta(minutes=1)).replace(second=0, microsecond=0)
        for _ in range(3000):
            assert not _matches(cursor, sets), spec
            cursor += timedelta(minutes=1)
        return
    assert got > t and got.second == 0 and got.microsecond == 0
    assert _matches(got, sets), (spec, t, got)
    cursor = (t + timedelta(minutes=1)).replace(second=0, microsecond=0)
    for _ in range(3000):
        if cursor >= got:
            break
        assert not _matches(cursor, sets), (spec, t, cursor, got)
        cursor += timedelta(minutes=1)
