"""Hypothesis laws of the requirements algebra (value semantics over a probe universe)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nodewright.algebra.requirements import Requirement, Requirements

KEY = "k"
UNIVERSE = ["a", "b", "c", "0", "1", "2", "3", "5", "8", "13", "-1", "+4", "007", "99"]
PROBES = [*UNIVERSE, *(str(i) for i in range(-3, 16))]
value_sets = st.lists(st.sampled_from(UNIVERSE), max_size=5)
ints = st.integers(min_value=-3, max_value=15)
min_values = st.none() | st.integers(min_value=1, max_value=3)


@st.composite
def requirements(draw: st.DrawFn) -> Requirement:
    op = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"]))
    mv = draw(min_values)
    if op in ("Gt", "Lt", "Gte", "Lte"):
        return Requirement.new(KEY, op, [str(draw(ints))], min_values=mv)
    return Requirement.new(KEY, op, draw(value_sets), min_values=mv)


@st.composite
def combined(draw: st.DrawFn) -> Requirement:
    """A requirement that may itself be an intersection (two bounds, values and bounds...)."""
    r = draw(requirements())
    for extra in draw(st.lists(requirements(), max_size=2)):
        r = r.intersection(extra)
    return r


def members(r: Requirement) -> frozenset[str]:
    return frozenset(v for v in PROBES if r.has(v))


@given(combined(), combined())
def test_algebra_law_intersection_is_conjunction(a: Requirement, b: Requirement) -> None:
    assert members(a.intersection(b)) == members(a) & members(b)


@given(combined(), combined())
def test_algebra_law_intersection_commutative(a: Requirement, b: Requirement) -> None:
    assert a.intersection(b) == b.intersection(a)
    assert members(a.intersection(b)) == members(b.intersection(a))


@given(combined(), combined(), combined())
def test_algebra_law_intersection_associative(a: Requirement, b: Requirement, c: Requirement) -> None:
    left = a.intersection(b).intersection(c)
    right = a.intersection(b.intersection(c))
    assert members(left) == members(right)
    assert left.is_empty() == right.is_empty()
    assert left.min_values == right.min_values


@given(combined())
def test_algebra_law_intersection_idempotent(a: Requirement) -> None:
    assert a.intersection(a) == a
    fresh = Requirement(
        a.key, complement=a.complement, values=a.values, gte=a.gte, lte=a.lte, min_values=a.min_values
    )
    assert a.intersection(fresh) == a


@given(combined(), combined())
def test_algebra_law_has_intersection_matches_intersection(a: Requirement, b: Requirement) -> None:
    assert a.has_intersection(b) == (not a.intersection(b).is_empty())
    assert a.has_intersection(b) == b.has_intersection(a)


@given(value_sets)
def test_algebra_law_in_subset_of_exists(values: list[str]) -> None:
    r_in = Requirement.new(KEY, "In", values)
    exists = Requirement.new(KEY, "Exists")
    assert r_in.intersection(exists) == r_in
    assert members(r_in) <= members(exists)


@given(value_sets)
def test_algebra_law_complement(values: list[str]) -> None:
    r_in = Requirement.new(KEY, "In", values)
    r_not = Requirement.new(KEY, "NotIn", values)
    assert r_in.intersection(r_not).is_empty()
    assert members(r_in) | members(r_not) == frozenset(PROBES)
    assert not members(r_in) & members(r_not)
    assert members(Requirement.new(KEY, "DoesNotExist")) == frozenset()


@given(ints, st.integers(min_value=-10, max_value=20))
def test_algebra_law_bounds_match_integers(n: int, m: int) -> None:
    v = str(m)
    assert Requirement.new(KEY, "Gt", [str(n)]).has(v) == (m > n)
    assert Requirement.new(KEY, "Lt", [str(n)]).has(v) == (m < n)
    assert Requirement.new(KEY, "Gte", [str(n)]).has(v) == (m >= n)
    assert Requirement.new(KEY, "Lte", [str(n)]).has(v) == (m <= n)
    assert not Requirement.new(KEY, "Gt", [str(n)]).has("abc")


@given(st.lists(combined(), max_size=3), st.lists(combined(), max_size=3))
def test_algebra_law_compatible_consistent_with_intersects(
    xs: list[Requirement], ys: list[Requirement]
) -> None:
    a = Requirements(xs)
    b = Requirements(ys)
    everything = frozenset({KEY})
    assert a.compatible(b, allow_undefined=everything) == a.intersects(b)
    if a.compatible(b) is None:
        assert a.intersects(b) is None
    assert a.is_compatible(b) == (a.compatible(b) is None)
    assert a.has_intersection(b) == (a.intersects(b) is None)


@given(st.lists(combined(), min_size=1, max_size=4))
def test_algebra_law_add_is_fold_of_intersection(xs: list[Requirement]) -> None:
    expected = xs[0]
    for r in xs[1:]:
        expected = r.intersection(expected)
    assert Requirements(xs).get(KEY) == expected
