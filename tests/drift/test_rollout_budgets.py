"""Disruption budgets and rollout waves (nodewright.drift.rollout, nodewright.drift.cron).

Ported from kubernetes-sigs/karpenter v1.14.1 ``pkg/apis/v1/nodepool_budgets_test.go``
(Describe "Budgets"): each test names the upstream ``It``. The fake clock is 2000-06-15T12:30:30Z.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from nodewright.drift.cron import CronError, parse
from nodewright.drift.rollout import (
    MAX_INT32,
    BudgetError,
    allowed_by_budget,
    allowed_disruptions,
    budget_active,
    pool_budgets,
    rollout,
    scaled_value,
)

CLOCK = datetime(2000, 6, 15, 12, 30, 30, tzinfo=UTC)
REASONS = ("Empty", "Underutilized", "Drifted")
BUDGETS: list[dict[str, Any]] = [
    {"nodes": "10", "schedule": "* * * * *", "duration": "1h"},
    {"nodes": "100", "schedule": "* * * * *", "duration": "1h"},
    {"nodes": "100%", "schedule": "* * * * *", "duration": "1h"},
    {"reasons": ["Drifted", "Underutilized"], "nodes": "15", "schedule": "* * * * *", "duration": "1h"},
    {"reasons": ["Drifted"], "nodes": "5", "schedule": "* * * * *", "duration": "1h"},
    {"reasons": ["Underutilized", "Drifted", "Empty"], "nodes": "0", "schedule": "@weekly", "duration": "1h"},
]


@pytest.fixture
def budgets() -> list[dict[str, Any]]:
    return copy.deepcopy(BUDGETS)


def _must(budgets: list[dict[str, Any]], reason: str, at: datetime = CLOCK) -> int:
    allowed, errors = allowed_disruptions(budgets, at, 100, reason)
    assert errors == []
    return allowed


# -- Context("GetAllowedDisruptionsByReason") ----------------------------------------------------


def test_zero_for_all_reasons_when_a_budget_is_active_for_all(budgets: list[dict[str, Any]]) -> None:
    """It("should return 0 for all reasons if a budget is active for all reasons")."""
    budgets[5]["schedule"] = "* * * * *"
    for reason in REASONS:
        assert _must(budgets, reason) == 0


def test_maxint_when_no_budget_is_active(budgets: list[dict[str, Any]]) -> None:
    """It("should return MaxInt32 for all reasons when there are no active budgets")."""
    for b in budgets:
        b["schedule"], b["duration"] = "@yearly", "1h"
    for reason in REASONS:
        assert _must(budgets, reason) == MAX_INT32


def test_reason_budgets_ignored_when_inactive(budgets: list[dict[str, Any]]) -> None:
    """It("should ignore reason-defined budgets when inactive")."""
    budgets[3]["schedule"] = "@yearly"
    budgets[4]["schedule"] = "@yearly"
    for reason in REASONS:
        assert _must(budgets, reason) == 10


def test_budget_without_reasons_applies_to_all(budgets: list[dict[str, Any]]) -> None:
    """It("should return the budget for all disruption reasons when undefined")."""
    for reason in REASONS:
        assert _must(budgets[:1], reason) == 10


def test_minimum_budget_per_reason(budgets: list[dict[str, Any]]) -> None:
    """It("should get the minimum budget for each reason")."""
    budgets.append({"schedule": "* * * * *", "nodes": "4", "duration": "1h", "reasons": ["Empty"]})
    assert _must(budgets, "Empty") == 4
    assert _must(budgets, "Drifted") == 5
    assert _must(budgets, "Underutilized") == 10  # the reason-less budget wins


# -- Context("AllowedDisruptions") ---------------------------------------------------------------


def test_invalid_schedule_fails_closed(budgets: list[dict[str, Any]]) -> None:
    """It("should return zero values if a schedule is invalid")."""
    budgets[0]["schedule"] = "@wrongly"
    with pytest.raises(BudgetError):
        allowed_by_budget(budgets[0], CLOCK, 100)
    allowed, errors = allowed_disruptions(budgets[:1], CLOCK, 100)
    assert (allowed, len(errors)) == (0, 1)


def test_invalid_nodes_fails_closed(budgets: list[dict[str, Any]]) -> None:
    """It("should return zero values if a nodes value is invalid")."""
    budgets[0]["nodes"] = "1000a%"
    with pytest.raises(BudgetError):
        allowed_by_budget(budgets[0], CLOCK, 100)
    r = rollout(budgets[:1], drifted=3, nodes=100, at=CLOCK)
    assert r.allowed == 0 and r.blocked and r.waves is None
    assert "fails closed" in r.notes[0]


def test_maxint_when_inactive(budgets: list[dict[str, Any]]) -> None:
    """It("should return MaxInt32 when a budget is inactive")."""
    budgets[0]["schedule"], budgets[0]["duration"] = "@yearly", "1h"
    assert allowed_by_budget(budgets[0], CLOCK, 100) == MAX_INT32


def test_int_value_when_active(budgets: list[dict[str, Any]]) -> None:
    """It("should return the int value when a budget is active")."""
    assert allowed_by_budget(budgets[0], CLOCK, 100) == 10


def test_percent_value_when_active(budgets: list[dict[str, Any]]) -> None:
    """It("should return the string value when a budget is active")."""
    assert allowed_by_budget(budgets[2], CLOCK, 100) == 100


# -- Context("IsActive") -------------------------------------------------------------------------


def test_schedule_and_time_in_utc(budgets: list[dict[str, Any]]) -> None:
    """It("should always consider a schedule and time in UTC"): June 0 2000 00:00 at UTC+1."""
    at = datetime(2000, 5, 31, 0, 0, tzinfo=timezone(timedelta(hours=1)))  # Go normalises June 0 to May 31
    budgets[0]["schedule"], budgets[0]["duration"] = "@daily", "30m"
    assert budget_active(budgets[0], at) is False


def test_active_without_schedule_and_duration(budgets: list[dict[str, Any]]) -> None:
    """It("should return that a schedule is active when schedule and duration are nil")."""
    del budgets[0]["schedule"], budgets[0]["duration"]
    assert budget_active(budgets[0], CLOCK) is True


def test_active(budgets: list[dict[str, Any]]) -> None:
    """It("should return that a schedule is active")."""
    assert budget_active(budgets[0], CLOCK) is True


def test_inactive(budgets: list[dict[str, Any]]) -> None:
    """It("should return that a schedule is inactive")."""
    budgets[0]["schedule"] = "@yearly"
    assert budget_active(budgets[0], CLOCK) is False


def test_active_when_hit_in_the_middle_of_duration(budgets: list[dict[str, Any]]) -> None:
    """It("should return that a schedule is active when the schedule hit is in the middle of the duration")."""
    budgets[0]["schedule"], budgets[0]["duration"] = "@yearly", "24h"
    assert budget_active(budgets[0], datetime(1000, 1, 1, 12, 0, tzinfo=UTC)) is True


def test_active_when_duration_longer_than_recurrence(budgets: list[dict[str, Any]]) -> None:
    """It("should return that a schedule is active when the duration is longer than the recurrence")."""
    budgets[0]["schedule"], budgets[0]["duration"] = "@daily", "48h"
    assert budget_active(budgets[0], datetime(2024, 1, 7, tzinfo=UTC)) is True


def test_inactive_when_hit_after_duration(budgets: list[dict[str, Any]]) -> None:
    """It("should return that a schedule is inactive when the schedule hit is after the duration")."""
    budgets[0]["schedule"], budgets[0]["duration"] = "30 6 * * SUN", "6h"
    assert budget_active(budgets[0], datetime(2024, 1, 7, tzinfo=UTC)) is False


def test_cron_error_says_why(budgets: list[dict[str, Any]]) -> None:
    """It("should return an error indicating why the cron fails to parse")."""
    budgets[0]["schedule"], budgets[0]["duration"] = "0 0 * * tue-mon", "6h"
    with pytest.raises(BudgetError, match=r"beginning of range \(2\) beyond end of range \(1\)"):
        budget_active(budgets[0], datetime(2024, 1, 7, tzinfo=UTC))


# -- nodewright's own: rounding, rollout waves, cron ------------------------------------------------


@pytest.mark.parametrize(
    ("nodes", "total", "want"),
    [
        ("10%", 10, 1),
        ("5%", 10, 1),
        ("10%", 11, 2),
        ("10%", 0, 0),
        ("33%", 3, 1),
        ("50%", 3, 2),
        ("3", 100, 3),
    ],
)
def test_percentages_round_up(nodes: str, total: int, want: int) -> None:
    """intstr.GetScaledValueFromIntOrPercent(..., roundUp=true), as nodepool.go calls it."""
    assert scaled_value(nodes, total) == want


def test_default_budget_is_ten_percent() -> None:
    assert pool_budgets({}) == [{"nodes": "10%"}]
    assert pool_budgets({"disruption": {"budgets": []}}) == []
    r = rollout(pool_budgets({}), drifted=25, nodes=40, at=CLOCK)
    assert (r.allowed_per_wave, r.waves) == (4, 7)


def test_disrupting_nodes_consume_the_budget() -> None:
    """BuildDisruptionBudgetMapping: allowed - disrupting, floored at 0."""
    r = rollout([{"nodes": "3"}], drifted=6, nodes=10, disrupting=1, at=CLOCK)
    assert (r.allowed_per_wave, r.waves, r.blocked) == (2, 3, False)
    r = rollout([{"nodes": "1"}], drifted=6, nodes=10, disrupting=2, at=CLOCK)
    assert (r.allowed_per_wave, r.waves, r.blocked) == (0, None, True)


def test_unbounded_and_nothing_drifted() -> None:
    r = rollout([{"nodes": "100%", "schedule": "@yearly", "duration": "1h"}], drifted=5, nodes=5, at=CLOCK)
    assert (r.allowed_per_wave, r.waves) == (None, 1)
    assert rollout([{"nodes": "0"}], drifted=0, nodes=5, at=CLOCK).as_dict()["waves"] == 0


def test_scheduled_budgets_are_always_evaluated_at_the_one_time() -> None:
    """One clock: a scheduled budget is evaluated at ``at`` (default now), never left out; the
    rollout names its window. Semantics of Budget.IsActive (pkg/apis/v1/nodepool.go), as the
    upstream Describe "Budgets" tests above check them."""
    budgets = [{"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h"}, {"nodes": "2"}]
    monday_10 = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
    r = rollout(budgets, drifted=4, nodes=20, at=monday_10)
    assert r.blocked and r.notes == ()
    assert r.next_change == datetime(2026, 11, 23, 17, 0, tzinfo=UTC)
    assert r.as_dict()["windows"] == [
        {"budget": 0, "nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h", "active": True,
         "closesAt": "2026-11-23T17:00:00Z"}
    ]  # fmt: skip
    assert r.as_dict()["nextChange"] == "2026-11-23T17:00:00Z"
    closed = rollout(budgets, drifted=4, nodes=20, at=monday_10 + timedelta(hours=7))
    assert closed.waves == 2 and closed.windows[0].active is False
    assert closed.next_change == datetime(2026, 11, 24, 9, 0, tzinfo=UTC)
    saturday = rollout(budgets, drifted=4, nodes=20, at=datetime(2026, 11, 28, 12, tzinfo=UTC))
    assert saturday.next_change == datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
    assert "opens at 2026-11-30T09:00:00Z" in saturday.windows[0].describe()
    assert rollout(budgets, drifted=4, nodes=20).at is not None  # default: now, stated


def test_windows_join_touching_spans_and_skip_other_reasons() -> None:
    at = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
    touching = rollout(
        [{"nodes": "1", "schedule": "0 9,13 * * *", "duration": "4h"}], drifted=3, nodes=9, at=at
    )
    assert touching.next_change == datetime(2026, 11, 23, 17, 0, tzinfo=UTC)
    always = rollout([{"nodes": "1", "schedule": "* * * * *", "duration": "1h"}], drifted=3, nodes=9, at=at)
    assert always.windows[0].active and always.next_change is None
    assert "no end" in always.windows[0].describe()
    other = rollout(
        [{"nodes": "0", "schedule": "0 9 * * *", "duration": "8h", "reasons": ["Empty"]}],
        drifted=3,
        nodes=9,
        at=at,
    )
    assert other.windows == () and other.waves == 1


@pytest.mark.parametrize(
    ("spec", "after", "want"),
    [
        ("@hourly", datetime(2024, 1, 1, 10, 5, tzinfo=UTC), datetime(2024, 1, 1, 11, 0, tzinfo=UTC)),
        ("@monthly", datetime(2024, 1, 31, 10, 0, tzinfo=UTC), datetime(2024, 2, 1, tzinfo=UTC)),
        ("*/15 * * * *", datetime(2024, 1, 1, 10, 5, tzinfo=UTC), datetime(2024, 1, 1, 10, 15, tzinfo=UTC)),
        ("0 0 29 2 *", datetime(2025, 1, 1, tzinfo=UTC), datetime(2028, 2, 29, tzinfo=UTC)),
        ("0 0 13 * fri", datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 1, 5, tzinfo=UTC)),  # dom OR dow
        (
            "0 12 * jan-mar/2 *",
            datetime(2024, 1, 31, 13, 0, tzinfo=UTC),
            datetime(2024, 3, 1, 12, tzinfo=UTC),
        ),
    ],
)
def test_cron_next(spec: str, after: datetime, want: datetime) -> None:
    assert parse(spec).next(after) == want


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("* * * *", "expected exactly 5 fields"),
        ("60 * * * *", "above maximum"),
        ("* * 0 * *", "below minimum"),
        ("1-2-3 * * * *", "too many hyphens"),
        ("*/0 * * * *", "positive number"),
        ("@every 1h", "unrecognized descriptor"),
    ],
)
def test_cron_errors(spec: str, message: str) -> None:
    with pytest.raises(CronError, match=message):
        parse(spec)
