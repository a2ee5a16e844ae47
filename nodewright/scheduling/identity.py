"""Whether two sequences hold the very same objects in the same order, and which objects one holds
that another does not: how the facts kept between rounds (a forecast's many reconciles) tell that
what they were derived from has not changed, or which part has."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import is_
from typing import Generic, TypeVar

T = TypeVar("T")
V = TypeVar("V")


def same_objects(a: Sequence[object], b: Sequence[object]) -> bool:
    """``a`` and ``b`` are the same sequence, or hold the same objects (by identity) in order."""
    return a is b or (len(a) == len(b) and all(map(is_, a, b)))


def by_identity(objs: Sequence[T]) -> dict[int, T]:
    """``objs`` keyed by identity (the caller keeps the dict, and so the objects, alive while it
    compares later sequences against it: ids are not reused)."""
    return dict(zip(map(id, objs), objs, strict=True))


def changed(before: Mapping[int, T], now: Mapping[int, T]) -> tuple[list[T], list[T]]:
    """The objects of ``before`` not in ``now`` and those of ``now`` not in ``before`` (both
    :func:`by_identity` maps), in no particular order: for patches whose result does not depend
    on the order they are applied in."""
    return [before[i] for i in before.keys() - now.keys()], [now[i] for i in now.keys() - before.keys()]


class Successor(list[T]):
    """A list its maker says was made from the list ``before`` by removing the objects ``gone`` and
    adding the objects ``came`` (by identity; positions aside). What was derived from ``before`` is
    then patched by them (:func:`step`) instead of comparing every element. The maker keeps one
    step only: making the next successor of this list drops this one's ``before``."""

    __slots__ = ("before", "came", "gone")

    def __init__(self, items: Iterable[T], before: list[T], gone: Sequence[T], came: Sequence[T]) -> None:
        super().__init__(items)
        self.before: list[T] | None = before
        self.gone: Sequence[T] = gone
        self.came: Sequence[T] = came
        if type(before) is Successor:
            before.before, before.gone, before.came = None, (), ()


def step(held: Mapping[int, T], seen: object, objs: Sequence[T]) -> tuple[Sequence[T], Sequence[T]] | None:
    """The objects that left and came since ``seen`` when ``objs`` says it succeeds ``seen`` (a
    :class:`Successor`) and that agrees with ``held`` (``seen``'s objects by identity): each that
    left is held, none that came is, and the count adds up. None: compare the elements instead."""
    if type(objs) is not Successor or objs.before is not seen or seen is None:
        return None
    gone, came = objs.gone, objs.came
    if (
        len(held) - len(gone) + len(came) != len(objs)
        or len({*map(id, gone)}) != len(gone)
        or len({*map(id, came)}) != len(came)
        or any(held.get(id(o)) is not o for o in gone)
        or any(id(o) in held for o in came)
    ):
        return None
    return gone, came


def patchable(
    before: Mapping[int, T], objs: Sequence[T], seen: object = None
) -> tuple[dict[int, T], list[T], list[T]] | None:
    """``objs`` by identity and the objects that left and came since ``before`` (see
    :func:`changed`), when patching what was derived from ``before`` pays: no object twice and at
    most a quarter of them changed (else None: derive it again). ``seen``: the sequence ``before``
    was made of, when known (a :class:`Successor` of it is patched without a comparison)."""
    known = step(before, seen, objs)
    if known is not None:
        now = dict(before)
        for o in known[0]:
            del now[id(o)]
        for o in known[1]:
            now[id(o)] = o
        return now, list(known[0]), list(known[1])
    now = by_identity(objs)
    if len(now) != len(objs):
        return None
    gone, came = changed(before, now)
    if 4 * (len(gone) + len(came)) > len(objs):
        return None
    return now, gone, came


class Derived(Generic[T, V]):
    """Per object (by identity), a fact derived once, for objects that are never changed in place,
    kept between calls over changing collections; the objects are held while asked about, so
    their ids are not reused. Facts that are ``None`` are not kept."""

    def __init__(self, derive: Callable[[T], V | None]) -> None:
        self._derive = derive
        self._held: dict[int, T] = {}
        self._facts: dict[int, V] = {}
        self._seen: Sequence[T] | None = None  # the sequence last asked about (a Successor's before)

    def facts(self, objs: Sequence[T]) -> Mapping[int, V]:
        """The facts of ``objs`` that are not ``None``, by identity (read it before the next call)."""
        return self.changes(objs)[0]

    def changes(self, objs: Sequence[T]) -> tuple[Mapping[int, V], list[V], list[V]]:
        """:meth:`facts`, with the facts of the objects that left and came since the last call."""
        held, facts, derive = self._held, self._facts, self._derive
        gone: list[V] = []
        came: list[V] = []
        known = step(held, self._seen, objs)
        self._seen = objs
        if known is not None:
            for obj in known[0]:
                del held[id(obj)]
                was = facts.pop(id(obj), None)
                if was is not None:
                    gone.append(was)
            for obj in known[1]:
                held[id(obj)] = obj
                fact = derive(obj)
                if fact is not None:
                    facts[id(obj)] = fact
                    came.append(fact)
            return facts, gone, came
        now = by_identity(objs)
        for i in now.keys() - held.keys():
            held[i] = obj = now[i]
            fact = derive(obj)
            if fact is not None:
                facts[i] = fact
                came.append(fact)
        if len(held) != len(now):
            for i in held.keys() - now.keys():
                del held[i]
                was = facts.pop(i, None)
                if was is not None:
                    gone.append(was)
        return facts, gone, came
