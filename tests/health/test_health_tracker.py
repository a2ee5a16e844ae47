"""Upstream tracker truths (pkg/state/nodepoolhealth/suite_test.go)."""

from __future__ import annotations

from nodewright.health import BUFFER_SIZE, HEALTHY, THRESHOLD_FALSE, UNHEALTHY, UNKNOWN, RingBuffer, Tracker


def test_constants() -> None:
    assert BUFFER_SIZE == 4 and THRESHOLD_FALSE == 0.5


def test_empty_is_unknown() -> None:
    assert Tracker().status("np") == UNKNOWN


def test_one_success_is_healthy() -> None:
    t = Tracker()
    t.update("np", True)
    assert t.status("np") == HEALTHY


def test_two_failures_are_unhealthy() -> None:
    t = Tracker()
    t.update("np", False)
    t.update("np", False)
    assert t.status("np") == UNHEALTHY


def test_one_failure_alone_is_still_healthy() -> None:
    t = Tracker()
    t.update("np", False)
    assert t.status("np") == HEALTHY  # 1/4 < 0.5: the denominator is the buffer size, not the count


def test_set_unhealthy_then_success_stays_unhealthy() -> None:
    t = Tracker()
    t.set_status("np", UNHEALTHY)
    assert t.buffer("np") == [False, False]
    t.update("np", True)
    assert t.status("np") == UNHEALTHY


def test_set_healthy_then_failure_is_healthy_but_dry_run_false_is_unhealthy() -> None:
    t = Tracker()
    t.set_status("np", HEALTHY)
    assert t.buffer("np") == [True]
    t.update("np", False)
    assert t.status("np") == HEALTHY
    assert t.dry_run("np", False) == UNHEALTHY
    assert t.buffer("np") == [True, False]  # dry run does not record


def test_ring_buffer_drops_oldest() -> None:
    t = Tracker()
    for v in (False, False, True, True, True):
        t.update("np", v)
    assert t.buffer("np") == [False, True, True, True]
    assert t.status("np") == HEALTHY


def test_reset_and_set_unknown_clear() -> None:
    t = Tracker()
    t.update("np", False)
    t.set_status("np", UNKNOWN)
    assert t.status("np") == UNKNOWN
    t.update("np", True)
    t.reset("np")
    assert t.buffer("np") == []


def test_pools_are_independent() -> None:
    t = Tracker()
    t.update("a", False)
    t.update("a", False)
    assert t.status("b") == UNKNOWN


def test_ring_buffer_copy_is_independent() -> None:
    b = RingBuffer(items=[True])
    c = b.copy()
    c.insert(False)
    assert b.items() == [True] and c.items() == [True, False]
