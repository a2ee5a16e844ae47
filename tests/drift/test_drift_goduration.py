"""Go's time.ParseDuration / Duration.String, ported byte for byte."""

from __future__ import annotations

import pytest

from nodewright.goduration import DurationError, format_duration, parse_duration

S = 1_000_000_000


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("0", 0),
        ("720h", 720 * 3600 * S),
        ("1h30m", 5400 * S),
        ("1.5h", 5400 * S),
        ("+5s", 5 * S),
        ("-1m", -60 * S),
        (".5s", S // 2),
        ("5.s", 5 * S),
        ("1ms", 1_000_000),
        ("1us", 1_000),
        ("1µs", 1_000),
        ("1μs", 1_000),
        ("1ns", 1),
        ("9223372036854775807ns", (1 << 63) - 1),
        ("-9223372036854775808ns", -(1 << 63)),
        ("1h1h", 2 * 3600 * S),
    ],
)
def test_parse(text: str, ns: int) -> None:
    assert parse_duration(text) == ns


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("30x", 'time: unknown unit "x" in duration "30x"'),
        ("", 'time: invalid duration ""'),
        ("1", 'time: missing unit in duration "1"'),
        (".", 'time: invalid duration "."'),
        ("h", 'time: invalid duration "h"'),
        ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
        ("3000000h", 'time: invalid duration "3000000h"'),
        ("1d", 'time: unknown unit "d" in duration "1d"'),
    ],
)
def test_parse_errors_are_gos(text: str, message: str) -> None:
    with pytest.raises(DurationError) as err:
        parse_duration(text)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (0, "0s"),
        (720 * 3600 * S, "720h0m0s"),
        (S + S // 2, "1.5s"),
        (1_500_000, "1.5ms"),
        (1_500, "1.5µs"),
        (7, "7ns"),
        (-90 * S, "-1m30s"),
    ],
)
def test_format(ns: int, text: str) -> None:
    assert format_duration(ns) == text
