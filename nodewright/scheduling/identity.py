"""Whether two sequences hold the very same objects in the same order, and which objects one holds
that another does not: how the facts kept between rounds (a forecast's many reconciles) tell that
what they were derived from has not changed, or which part has."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
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


def patchable(before: Mapping[int, T], objs: Sequence[T]) -> tuple[dict[int, T], list[T], list[T]] | None:
    """``objs`` by identity and the objects that left and came since ``before`` (see
    :func:`changed`), when patching what was derived from ``before`` pays: no object twice and at
    most a quarter of them changed (else None: derive it again)."""
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

    def facts(self, objs: Sequence[T]) -> Mapping[int, V]:
        """The facts of ``objs`` that are not ``None``, by identity (read it before the next call)."""
        return self.changes(objs)[0]

    def changes(self, objs: Sequence[T]) -> tuple[Mapping[int, V], list[V], list[V]]:
        """:meth:`facts`, with the facts of the objects that left and came since the last call."""
        now = by_identity(objs)
        held, facts, derive = self._held, self._facts, self._derive
        gone: list[V] = []
        came: list[V] = []
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
