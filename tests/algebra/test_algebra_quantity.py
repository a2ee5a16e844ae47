"""Kubernetes quantity parsing, rounding and canonical formatting."""

from __future__ import annotations

from fractions import Fraction

import pytest

from nodewright.algebra.quantity import Quantity, QuantityError, format_milli, is_quantity, parse_quantity

EXPECTED = "expected a number with an optional suffix (m, Ki, Mi, Gi, k, M, G, ...)"


@pytest.mark.parametrize(
    ("text", "milli", "canonical"),
    [
        ("100m", 100, "100m"),
        ("1.5Gi", 1536 * 2**20 * 1000, "1536Mi"),
        ("2e3", 2_000_000, "2e3"),
        ("1E-3", 1, "1e-3"),
        ("+1", 1000, "1"),
        (".5", 500, "500m"),
        ("1.", 1000, "1"),
        ("1.G", 10**12, "1G"),
        ("0", 0, "0"),
        ("-0", 0, "0"),
        ("000100m", 100, "100m"),
        ("1Ki", 1024_000, "1Ki"),
        ("1Mi", 2**20 * 1000, "1Mi"),
        ("1Gi", 2**30 * 1000, "1Gi"),
        ("1Ti", 2**40 * 1000, "1Ti"),
        ("1Pi", 2**50 * 1000, "1Pi"),
        ("1Ei", 2**60 * 1000, "1Ei"),
        ("1n", 1, "1n"),
        ("1u", 1, "1u"),
        ("1k", 10**6, "1k"),
        ("1M", 10**9, "1M"),
        ("1G", 10**12, "1G"),
        ("1T", 10**15, "1T"),
        ("1P", 10**18, "1P"),
        ("1E", 10**21, "1E"),
        ("1000", 10**6, "1k"),
        ("1100m", 1100, "1100m"),
        ("1536", 1536_000, "1536"),
        ("0.1Ki", 102_400, "102400m"),
        ("512Ki", 512 * 1024_000, "512Ki"),
        ("2048Mi", 2 * 2**30 * 1000, "2Gi"),
        ("1000Ki", 1_024_000_000, "1000Ki"),
        ("-1Ki", -1024_000, "-1Ki"),
        ("12e-1", 1200, "1200e-3"),
        ("1e21", 10**24, "1e21"),
        ("1.5", 1500, "1500m"),
    ],
)
def test_algebra_parse_valid(text: str, milli: int, canonical: str) -> None:
    q = parse_quantity(text)
    assert q.milli == milli
    assert str(q) == canonical
    assert parse_quantity(canonical) == q


def test_algebra_parse_yaml_numbers() -> None:
    assert parse_quantity(3).milli == 3000
    assert parse_quantity(0.5).milli == 500
    assert str(parse_quantity(1.5e9)) == "1500M"
    assert parse_quantity(1e-05).milli == 1


def test_algebra_quantity_passthrough() -> None:
    q = parse_quantity("1Gi")
    assert parse_quantity(q) is q


def test_algebra_milli_rounds_up() -> None:
    assert parse_quantity("1n").milli == 1
    assert parse_quantity("1500u").milli == 2
    assert parse_quantity("-1500u").milli == -2  # away from zero, as MilliValue
    assert parse_quantity("1001m").value == 2
    assert parse_quantity("1000m").value == 1


def test_algebra_sub_nano_rounds_up_at_parse() -> None:
    # ParseQuantity keeps nano precision and rounds finer values away from zero.
    assert parse_quantity("1e-12").amount == Fraction(1, 10**9)
    assert str(parse_quantity("0.1n")) == "1n"


def test_algebra_value_equality_ignores_format() -> None:
    assert parse_quantity("1Ki") == parse_quantity("1024")
    assert hash(parse_quantity("1k")) == hash(parse_quantity("1e3"))
    assert parse_quantity("1k") < parse_quantity("1Ki")


def test_algebra_quantity_arithmetic() -> None:
    q = parse_quantity("1Gi") + parse_quantity("512Mi")
    assert str(q) == "1536Mi"
    assert str(parse_quantity("1") - parse_quantity("1500m")) == "-500m"
    assert str(-parse_quantity("1Ki")) == "-1Ki"
    assert parse_quantity("0").is_zero()


def test_algebra_from_milli() -> None:
    assert str(Quantity.from_milli(10 * 2**20 * 1000, binary=True)) == "10Mi"
    assert repr(Quantity.from_milli(1500)) == "Quantity('1500m')"


@pytest.mark.parametrize(
    ("milli", "binary", "text"),
    [
        (1100, False, "1100m"),
        (10 * 2**20 * 1000, True, "10Mi"),
        (1500, True, "1500m"),
        (1000 * 1000, True, "1k"),  # under 1Ki, Kubernetes prints binary values as decimal
        (1024 * 1000, True, "1Ki"),
        (1024 * 1000, False, "1024"),
        (0, True, "0"),
        (2000, False, "2"),
        (2_000_000, False, "2k"),
        (2**70 * 1000, True, "1024Ei"),
        (10**25, False, "10000E"),
    ],
)
def test_algebra_format_milli(milli: int, binary: bool, text: str) -> None:
    assert format_milli(milli, binary=binary) == text


def test_algebra_is_quantity() -> None:
    assert is_quantity("1Gi")
    assert not is_quantity("1.5.3Gi")


# -- malformed input: one test per case -------------------------------------------------------


def _error(value: object) -> str:
    with pytest.raises(QuantityError) as info:
        parse_quantity(value)  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError)
    return str(info.value)


def test_algebra_reject_double_dot() -> None:
    assert _error("1.5.3Gi") == f'invalid quantity "1.5.3Gi": {EXPECTED}'


def test_algebra_reject_unknown_suffix_ib() -> None:
    assert _error("1iB") == f'invalid quantity "1iB": unknown suffix "iB"; {EXPECTED}'


def test_algebra_reject_empty() -> None:
    assert _error("") == f'invalid quantity "": empty string; {EXPECTED}'


def test_algebra_reject_suffix_only() -> None:
    assert _error("Gi") == f'invalid quantity "Gi": suffix "Gi" without a number; {EXPECTED}'


def test_algebra_reject_lone_dot() -> None:
    assert _error(".") == f'invalid quantity ".": {EXPECTED}'


def test_algebra_reject_words() -> None:
    assert _error("abc") == f'invalid quantity "abc": {EXPECTED}'


def test_algebra_reject_dangling_exponent() -> None:
    assert 'unknown suffix "e"' in _error("1e")


def test_algebra_reject_lowercase_ki() -> None:
    assert 'unknown suffix "ki"' in _error("1ki")


def test_algebra_reject_kib() -> None:
    assert 'unknown suffix "Kib"' in _error("1Kib")


def test_algebra_reject_trailing_space() -> None:
    assert _error("1 ").startswith('invalid quantity "1 "')


def test_algebra_reject_leading_space() -> None:
    assert _error(" 1").startswith('invalid quantity " 1"')


def test_algebra_reject_double_sign() -> None:
    assert _error("--1").startswith('invalid quantity "--1"')


def test_algebra_reject_huge_exponent() -> None:
    assert "exponent 1001 out of range" in _error("1e1001")


def test_algebra_reject_fractional_binary_exponent_mix() -> None:
    assert _error("1Gi3").startswith('invalid quantity "1Gi3"')


def test_algebra_reject_bool() -> None:
    assert "a boolean is not a quantity" in _error(True)


def test_algebra_reject_nan() -> None:
    assert "not a finite number" in _error(float("nan"))


def test_algebra_reject_infinity() -> None:
    assert "not a finite number" in _error(float("inf"))


def test_algebra_reject_none() -> None:
    assert "a NoneType is not a quantity" in _error(None)
