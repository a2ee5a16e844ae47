"""Facts kept from one reconcile to the next and patched by the objects that left and came equal
the facts derived from scratch:

* :class:`nodewright.scheduling.identity.Derived` gives the facts of exactly the objects asked
  about, whatever came and went before;
* :class:`nodewright.disruption.candidates.PoolTally` moves its per-pool node counts by the facts
  that left and came;
* a :class:`~nodewright.scheduling.identity.Successor` (a list that says what left and came since
  the list before it) gives the same facts and patches as comparing the lists;
* :func:`nodewright.disruption.claimbound.claim_bounds` patched from the previous reconcile's room
  facts holds the room, sums and per-node counts a build from scratch holds.
"""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from nodewright.disruption.candidates import PoolTally
from nodewright.disruption.claimbound import ClaimBounds, claim_bounds
from nodewright.scheduling.identity import Derived, Successor, by_identity, patchable
from nodewright.scheduling.instancetypes import ResourceSpace

edits = st.lists(st.tuples(st.sampled_from(["drop", "add", "swap"]), st.integers(0, 40)), max_size=6)


def _edit(objs: list[Any], ops: list[tuple[str, int]], make: Any) -> list[Any]:
    out = list(objs)
    for op, at in ops:
        if op == "drop" and out:
            out.pop(at % len(out))
        elif op == "add":
            out.insert(at % (len(out) + 1), make(at))
        elif out:
            out[at % len(out)] = make(at)
    return out


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.integers(0, 5), max_size=20), steps=st.lists(edits, min_size=1, max_size=5))
def test_derived_facts_are_those_of_the_objects_asked_about(values: list[int], steps: list[Any]) -> None:
    def make(v: int) -> Any:
        return SimpleNamespace(v=v % 6)

    def derive(o: Any) -> int | None:
        return o.v if o.v % 2 else None  # the even ones have no fact

    facts: Derived[Any, int] = Derived(derive)
    objs = [make(v) for v in values]
    for ops in steps:
        objs = _edit(objs, ops, make)
        got = dict(facts.facts(objs))
        assert got == {id(o): o.v for o in objs if o.v % 2}


def _successor(before: list[Any], after: list[Any]) -> Successor[Any]:
    """``after`` as a Successor of ``before``, with what left and came found by identity."""
    was, now = by_identity(before), by_identity(after)
    return Successor(
        after, before, [was[i] for i in was.keys() - now.keys()], [now[i] for i in now.keys() - was.keys()]
    )


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.integers(0, 5), max_size=20),
    steps=st.lists(st.tuples(edits, st.sampled_from(["successor", "list", "skip"])), min_size=1, max_size=6),
)
def test_successors_give_the_facts_and_patches_a_comparison_gives(
    values: list[int], steps: list[Any]
) -> None:
    """Successors of the list last asked about, plain lists, and successors of a list never asked
    about (a skipped step) all give the facts of exactly the objects asked about, and ``patchable``
    the same patch as without the successor."""

    def make(v: int) -> Any:
        return SimpleNamespace(v=v % 6)

    def derive(o: Any) -> int | None:
        return o.v if o.v % 2 else None

    facts: Derived[Any, int] = Derived(derive)
    objs: list[Any] = [make(v) for v in values]
    facts.facts(objs)
    for ops, how in steps:
        nxt = _edit(objs, ops, make)
        if how == "skip":  # a successor of a list in between, never shown to ``facts``
            nxt = _successor(_edit(objs, ops[:1], make), nxt)
        elif how == "successor":
            nxt = _successor(objs, nxt)
        expect = {id(o): o.v for o in nxt if o.v % 2}
        before = by_identity(objs)
        want = patchable(before, nxt)
        got_patch = patchable(before, nxt, objs)
        if want is None:
            assert got_patch is None or how == "successor"  # a known step is patched at any size
        if got_patch is not None and want is not None:
            assert got_patch[0] == want[0]
            assert {*map(id, got_patch[1])} == {*map(id, want[1])}
            assert {*map(id, got_patch[2])} == {*map(id, want[2])}
        held, gone, came = facts.changes(nxt)
        assert dict(held) == expect
        was, now = by_identity(objs), by_identity(nxt)
        assert sorted(gone) == sorted(o.v for i, o in was.items() if i not in now and o.v % 2)
        assert sorted(came) == sorted(o.v for i, o in now.items() if i not in was and o.v % 2)
        objs = nxt
    assert dict(facts.facts(list(objs))) == {id(o): o.v for o in objs if o.v % 2}


def test_a_successor_keeps_one_step() -> None:
    """Making a successor of a successor drops the older one's predecessor (no chain of every
    earlier list is kept alive), and a successor that does not add up is not trusted."""
    a = [object() for _ in range(3)]
    b = Successor(a[1:], a, [a[0]], [])
    c = Successor([*b, object()], b, [], [])  # says nothing came, yet one did
    assert b.before is None and (b.gone, b.came) == ((), ())
    facts: Derived[Any, bool] = Derived(lambda _o: True)
    facts.facts(b)
    assert len(facts.facts(c)) == 3  # compared, not patched


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.integers(0, 7), max_size=20), steps=st.lists(edits, min_size=1, max_size=5))
def test_pool_counts_moved_by_what_left_and_came_are_a_fresh_count(
    values: list[int], steps: list[Any]
) -> None:
    """:class:`PoolTally` (the budgets' node counts per pool, moved each reconcile by the facts of
    the state nodes that left and came) counts what a count from scratch counts."""

    def make(v: int) -> Any:
        return SimpleNamespace(v=v % 8)

    def derive(o: Any) -> tuple[str, bool] | None:
        return None if o.v == 0 else (f"pool-{o.v % 3}", o.v >= 5)  # 0: a node no budget counts

    tally = PoolTally()
    tally.derived = Derived(derive)
    objs = [make(v) for v in values]
    for ops in steps:
        objs = _edit(objs, ops, make)
        facts = [f for f in map(derive, {id(o): o for o in objs}.values()) if f is not None]
        num = Counter(p for p, _ in facts)
        busy = Counter(p for p, b in facts if b)
        assert tally.counts(objs) == (dict(num), dict(busy))


RESOURCES = ("cpu", "memory", "pods")
SPACE = ResourceSpace(RESOURCES)
rooms = st.dictionaries(st.sampled_from(RESOURCES), st.integers(-2, 9), min_size=1, max_size=3)


def _node(name: str, remaining: dict[str, int]) -> Any:
    return SimpleNamespace(name=name, remaining=remaining, state=SimpleNamespace(memo={}))


def _facts(b: ClaimBounds, asked: list[tuple[int, ...]]) -> Any:
    return b.room, b.total, b.cap, [b.holds(least) for least in asked]


@settings(max_examples=200, deadline=None)
@given(
    before=st.lists(rooms, min_size=12, max_size=24),  # few changes of many: the patch is taken
    ops=st.lists(st.tuples(st.sampled_from(["drop", "add", "swap"]), st.integers(0, 40)), max_size=3),
    fresh=st.lists(rooms, min_size=6, max_size=6),
    asked=st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(1, 3)), min_size=1, max_size=3
    ),
)
def test_claim_bounds_patched_from_the_last_reconcile_are_a_fresh_build(
    before: list[dict[str, int]], ops: list[tuple[str, int]], fresh: list[dict[str, int]], asked: list[Any]
) -> None:
    templates: list[Any] = []
    names = iter(range(1000))
    nodes = [_node(f"n{next(names)}", dict(r)) for r in before]
    previous = claim_bounds(nodes, SPACE, templates, None)
    for least in asked:  # the least requests the last reconcile asked are carried over
        previous.holds(least)
    now = _edit(nodes, ops, lambda at: _node(f"n{next(names)}", dict(fresh[at % len(fresh)])))
    patched = claim_bounds(now, SPACE, templates, previous)
    assert _facts(patched, asked) == _facts(claim_bounds(now, SPACE, templates, None), asked)
