"""Candidate lists kept between reconciles (:mod:`nodewright.disruption.filtered`) equal what a
fresh pass gives, whether the next list says what left and came (a ``Successor``) or not: the
filter keeps the same candidates in the same order and leaves the same notes, and the savings
order is ``sorted``'s, ties and all."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from test_kept_facts import _edit, _successor, edits

from nodewright.disruption.filtered import SAVINGS, Filtered, Sorted
from nodewright.scheduling.identity import Successor


class _Maker:
    """Candidates: ``unique`` savings keys, equal ``ratios`` (told apart by name), or ``exact``
    ties (equal ratio and name: sorted() keeps list order)."""

    def __init__(self, mode: str) -> None:
        self.n = 0
        self.mode = mode

    def __call__(self, v: int) -> Any:
        self.n += 1
        ratio = v + self.n / 1000 if self.mode == "unique" else float(v % 3)
        name = "same" if self.mode == "exact" and v % 4 == 0 else f"n{self.n:03d}"
        return SimpleNamespace(savings_key=(-ratio, name), claim_name=f"c{self.n}", v=v)


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(st.integers(0, 60), max_size=25),
    steps=st.lists(st.tuples(edits, st.booleans()), min_size=1, max_size=6),
    mode=st.sampled_from(["unique", "ratios", "exact"]),
)
def test_kept_filter_and_order_equal_a_fresh_pass(
    values: list[int], steps: list[tuple[list[tuple[str, int]], bool]], mode: str
) -> None:
    make = _Maker(mode)
    judged: dict[int, tuple[bool, str | None]] = {}

    def judge(c: Any) -> tuple[bool, str | None]:
        return c.v % 5 != 1, (f"note {c.v}" if c.v % 2 else None)

    kept_notes: dict[str, str] = {}
    fresh_notes: dict[str, str] = {}

    def verdict(c: Any) -> tuple[bool, str | None]:
        got = judged.setdefault(id(c), judge(c))
        if got[1] is not None:
            kept_notes[c.claim_name] = got[1]
        return got

    def say(c: Any, note: str) -> None:
        kept_notes[c.claim_name] = note

    filtered, order = Filtered(), Sorted()
    cands: list[Any] = [make(v) for v in values]
    held = list(cands)  # keeps every candidate alive: ids are not reused
    for ops, lineage in [([], False), *steps]:
        nxt = _edit(cands, ops, make)
        held.extend(nxt)
        if lineage:
            nxt = _successor(cands, nxt)
        # a method writes its own note over the filter's between reconciles
        for c in nxt[:1]:
            kept_notes[c.claim_name] = fresh_notes[c.claim_name] = "a method's note"
        got = filtered.run(nxt, verdict, say)
        want = [c for c in nxt if judge(c)[0]]
        for c in nxt:
            if judge(c)[1] is not None:
                fresh_notes[c.claim_name] = judge(c)[1]  # type: ignore[assignment]
        assert got == want and all(map(lambda a, b: a is b, got, want))
        assert kept_notes == fresh_notes
        sorted_now = order.sort(got)
        assert [id(c) for c in sorted_now] == [id(c) for c in sorted(got, key=SAVINGS)]
        assert [*map(id, order.sort(got))] == [*map(id, sorted_now)]  # the same list again
        cands = nxt


def test_a_tie_that_comes_is_ordered_as_sorted_orders_it() -> None:
    """Two candidates with equal savings keys: ``sorted`` keeps their list order; a candidate that
    comes with the key of one already placed is not placed by bisection (it would go first)."""

    def cand(ratio: float, name: str) -> Any:
        return SimpleNamespace(savings_key=(-ratio, name))

    a, b, c = cand(2.0, "x"), cand(1.0, "y"), cand(2.0, "x")
    order = Sorted()
    first = [a, b]
    assert order.sort(first) == [a, b]
    got = order.sort(Successor([a, b, c], first, [], [c]))
    assert [*map(id, got)] == [*map(id, sorted([a, b, c], key=SAVINGS))] == [id(a), id(c), id(b)]
