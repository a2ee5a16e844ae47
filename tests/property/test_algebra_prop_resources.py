"""Hypothesis properties of resource-list arithmetic."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nodewright.algebra.resources import (
    add,
    fits,
    format_resource_list,
    max_resources,
    parse_resource_list,
    subtract,
)

names = st.sampled_from(["cpu", "memory", "pods", "nvidia.com/gpu", "ephemeral-storage"])
lists = st.dictionaries(names, st.integers(min_value=0, max_value=10**15), max_size=5)


@given(lists, lists)
def test_algebra_prop_add_subtract_inverse(a: dict[str, int], b: dict[str, int]) -> None:
    assert subtract(add(a, b), b) == {k: a.get(k, 0) for k in add(a, b)}


@given(lists, lists)
def test_algebra_prop_add_commutative(a: dict[str, int], b: dict[str, int]) -> None:
    assert add(a, b) == add(b, a)


@given(lists, lists)
def test_algebra_prop_fits_sum(a: dict[str, int], b: dict[str, int]) -> None:
    assert fits(a, add(a, b))
    assert fits(a, max_resources(a, b))


@given(lists)
def test_algebra_prop_format_round_trip(a: dict[str, int]) -> None:
    assert parse_resource_list(format_resource_list(a)) == a
