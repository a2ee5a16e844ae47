"""Properties of the NodeRegistrationHealthy tracker (ring buffer 4, threshold 0.5)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nodewright.health import HEALTHY, UNHEALTHY, UNKNOWN, Tracker


@given(st.lists(st.booleans(), max_size=20))
def test_status_is_a_function_of_the_last_four_results(results: list[bool]) -> None:
    t = Tracker()
    for r in results:
        t.update("np", r)
    last = results[-4:]
    expected = UNKNOWN if not last else UNHEALTHY if last.count(False) >= 2 else HEALTHY
    assert t.status("np") == expected
    assert t.buffer("np") == last


@given(st.lists(st.booleans(), max_size=8), st.booleans())
def test_dry_run_predicts_update(results: list[bool], nxt: bool) -> None:
    t = Tracker()
    for r in results:
        t.update("np", r)
    predicted = t.dry_run("np", nxt)
    t.update("np", nxt)
    assert t.status("np") == predicted
