"""Hypothesis properties of Kubernetes quantities: round trips and exact arithmetic."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from nodewright.algebra.quantity import Quantity, format_milli, parse_quantity

millis = st.integers(min_value=-(10**24), max_value=10**24)
nanos = st.integers(min_value=-(10**24), max_value=10**24).map(lambda n: Fraction(n, 10**9))
formats = st.sampled_from(["BinarySI", "DecimalSI", "DecimalExponent"])


@given(millis, st.booleans())
def test_algebra_prop_format_milli_round_trips(milli: int, binary: bool) -> None:
    assert parse_quantity(format_milli(milli, binary=binary)).milli == milli


@given(nanos, formats)
def test_algebra_prop_parse_format_identity(amount: Fraction, fmt: str) -> None:
    q = Quantity(amount, fmt)  # type: ignore[arg-type]
    assert parse_quantity(str(q)) == q


@given(nanos, nanos)
def test_algebra_prop_addition_exact(a: Fraction, b: Fraction) -> None:
    qa, qb = Quantity(a), Quantity(b)
    assert (qa + qb).amount == a + b
    assert parse_quantity(str(qa + qb)) == parse_quantity(str(qa)) + parse_quantity(str(qb))
    assert (qa + qb) - qb == qa


@given(
    st.integers(min_value=0, max_value=10**12), st.sampled_from(["", "m", "k", "Ki", "Mi", "Gi", "M", "G"])
)
def test_algebra_prop_milli_is_ceil(n: int, suffix: str) -> None:
    q = parse_quantity(f"{n}{suffix}")
    assert q.milli * 1 >= q.amount * 1000 > q.milli - 1


@given(
    st.integers(min_value=1, max_value=10**6),
    st.sampled_from(["", "k", "M", "G", "T", "Ki", "Mi", "Gi", "Ti"]),
)
def test_algebra_prop_gib_ceil_is_the_smallest_covering_size(n: int, suffix: str) -> None:
    """``to_gib_ceil`` (the provider's ``volumeSize``): the fewest whole GiB holding the quantity."""
    from nodewright.algebra.quantity import to_gib_ceil

    size = parse_quantity(f"{n}{suffix}").amount
    gib = to_gib_ceil(f"{n}{suffix}")
    assert gib * 2**30 >= size > (gib - 1) * 2**30
    if suffix == "Gi":
        assert gib == n
