"""Cost-driven packing of one class of interchangeable pods onto instance types.

A *class* is a set of pods any of which may share a NodeClaim with any other (same NodePool,
requirements, tolerations, volume topology; see :mod:`.strategy`). Its pods come as *shapes*
(equal request vectors). :func:`pack` returns bins (one future NodeClaim each):

1. while pods remain: if the whole remaining demand fits one type, the cheapest such type takes
   it all; otherwise the covering LP (:mod:`.lp`, HiGHS) over the remaining demand names the type
   carrying most of the optimal cost, and ``floor(x)`` (at least one) bins of it are filled;
2. a bin is filled resource-balanced: first a proportional slice of every remaining shape (the
   largest fraction of the remaining demand the bin holds), so each bin mirrors the remaining
   cpu:memory mix; then "dot product" greedy tops it up: repeatedly the shape whose requests best
   align with the bin's remaining room (each resource normalised by the bin's size), in chunks
   that shrink as the room does, so no resource is left stranded;
3. every bin then takes the cheapest type its load fits, and a bin whose load two cheaper types
   hold together is split at that price cliff.

NodePool limits enter the LP as rows and are charged per bin. Deterministic: ties break on
shape order and type index; HiGHS runs single-threaded. Boundary: integer vectors and prices,
no scheduling objects.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from nodewright.costplan.lp import cover_lp

T = TypeVar("T")
_EPS = 1e-9


@dataclass(frozen=True, slots=True)
class BinType:
    index: int  # the caller's type id
    cap: tuple[int, ...]  # what a NodeClaim of this type offers the class's pods
    price: float
    capacity: tuple[int, ...] = ()  # what it charges against NodePool limits (same dims)


@dataclass(slots=True)
class Shape(Generic[T]):
    vec: tuple[int, ...]
    items: list[T]


@dataclass(slots=True)
class Bin(Generic[T]):
    type: BinType
    items: list[T] = field(default_factory=list)
    load: tuple[int, ...] = ()


@dataclass(kw_only=True)
class PoolLimits:
    """Remaining NodePool limits: per dim (charged with ``BinType.capacity``) and node count."""

    remaining: dict[int, int] = field(default_factory=dict)
    nodes: int | None = None

    def admits(self, t: BinType) -> bool:
        if self.nodes is not None and self.nodes <= 0:
            return False
        return all(t.capacity[d] <= rem for d, rem in self.remaining.items())

    def copy(self) -> PoolLimits:
        return PoolLimits(remaining=dict(self.remaining), nodes=self.nodes)

    def charge_all(self, types: Sequence[BinType]) -> bool:
        """Charge every type; False (and a state to discard) when that breaks a limit."""
        for t in types:
            if not self.admits(t):
                return False
            self.charge(t)
        return True

    def charge(self, t: BinType) -> None:
        if self.nodes is not None:
            self.nodes -= 1
        for d in self.remaining:
            self.remaining[d] -= t.capacity[d]


def _fits(v: Sequence[int], cap: Sequence[int]) -> bool:
    return all(a <= b for a, b in zip(v, cap, strict=True))


class Packer(Generic[T]):
    """See the module docstring."""

    def __init__(
        self,
        shapes: Sequence[Shape[T]],
        types: Sequence[BinType],
        *,
        limits: PoolLimits | None = None,
        deadline: float | None = None,
    ) -> None:
        self.shapes = sorted(shapes, key=lambda s: tuple(-x for x in s.vec))
        # a type that holds none of the shapes is no candidate
        self.types = sorted(
            (t for t in types if any(_fits(s.vec, t.cap) for s in self.shapes)),
            key=lambda t: (t.price, t.index),
        )
        self.limits = limits or PoolLimits()
        self.deadline = deadline
        self.dims = len(self.shapes[0].vec) if self.shapes else 0
        self._vec_of = {id(it): s.vec for s in self.shapes for it in s.items}

    # -- helpers -------------------------------------------------------------------------------
    def vec_of(self, item: T) -> tuple[int, ...]:
        return self._vec_of[id(item)]

    def cheapest_fitting(self, load: Sequence[int]) -> BinType | None:
        for t in self.types:
            if _fits(load, t.cap) and self.limits.admits(t):
                return t
        return None

    def _best_type(self, demand: Sequence[int]) -> tuple[BinType, int] | None:
        """The type covering the remaining mix cheapest when used alone: price x the number of
        its NodeClaims the mix needs on its binding resource (a node must hold both a pod's cpu
        and its memory, which the aggregate LP ignores: it would buy cpu on ``t4g.nano`` and
        memory on ``x2gd``). Returns it and how many full bins of it the mix needs."""
        best: tuple[float, int, BinType, float] | None = None
        for t in self.types:
            if not self.limits.admits(t):
                continue
            need = 0.0
            for d in range(self.dims):
                if demand[d] > 0:
                    if t.cap[d] <= 0:
                        need = math.inf
                        break
                    need = max(need, demand[d] / t.cap[d])
            if math.isinf(need) or need <= 0:
                continue
            key = (t.price * need, t.index, t, need)
            if best is None or key[:2] < best[:2]:
                best = key
        if best is None:
            return None
        return best[2], max(1, int(best[3] + _EPS))

    def fill(self, t: BinType, counts: list[int]) -> Bin[T]:
        cap = t.cap
        room = list(cap)
        inv2 = [1.0 / (c * c) if c > 0 else 0.0 for c in cap]
        taken = [0] * len(self.shapes)
        vecs = [s.vec for s in self.shapes]
        # a proportional slice of what remains first (the bin mirrors the remaining mix), then
        # the greedy tops the room up
        demand = [sum(n * v[d] for n, v in zip(counts, vecs, strict=True)) for d in range(self.dims)]
        frac = min((cap[d] / demand[d] for d in range(self.dims) if demand[d] > 0), default=1.0)
        if frac < 1.0:
            for s, n in enumerate(counts):
                taken[s] = int(frac * n)
                for d in range(self.dims):
                    room[d] -= taken[s] * vecs[s][d]
        while True:
            best, best_score = -1, -1.0
            for s, v in enumerate(vecs):
                if counts[s] - taken[s] <= 0:
                    continue
                ok = True
                score = 0.0
                for d in range(self.dims):
                    x = v[d]
                    if x > room[d]:
                        ok = False
                        break
                    score += x * room[d] * inv2[d]
                if ok and score > best_score + _EPS:
                    best, best_score = s, score
            if best < 0:
                break
            v = vecs[best]
            fit = min((room[d] // v[d] for d in range(self.dims) if v[d] > 0), default=1)
            k = max(1, min(counts[best] - taken[best], fit // 4 if fit >= 8 else 1))
            taken[best] += k
            for d in range(self.dims):
                room[d] -= k * v[d]
        out: Bin[T] = Bin(type=t)
        for s, k in enumerate(taken):
            if k:
                start = len(self.shapes[s].items) - counts[s]
                out.items.extend(self.shapes[s].items[start : start + k])
                counts[s] -= k
        out.load = tuple(c - r for c, r in zip(cap, room, strict=True))
        return out

    # -- the loop ------------------------------------------------------------------------------
    def pack(self) -> list[Bin[T]] | None:
        """Bins holding every item, or None when some item fits no admissible type."""
        counts = [len(s.items) for s in self.shapes]
        bins: list[Bin[T]] = []
        while any(counts):
            demand = [0] * self.dims
            for s, n in zip(self.shapes, counts, strict=True):
                if n:
                    for d in range(self.dims):
                        demand[d] += n * s.vec[d]
            whole = self.cheapest_fitting(demand)
            if whole is not None:
                bins.append(self.fill(whole, counts))
                self.limits.charge(whole)
                continue
            got = self._best_type(demand)
            if got is None:
                return None
            t, n = got
            for _ in range(n):
                if not self.limits.admits(t):
                    break
                b = self.fill(t, counts)
                if not b.items:  # none of the remaining shapes fits it: never again
                    self.types = [x for x in self.types if x is not t]
                    break
                bins.append(b)
                self.limits.charge(t)
                if not any(counts):
                    break
        return self.reprice(bins)

    def reprice(self, bins: list[Bin[T]]) -> list[Bin[T]]:
        """Each bin on the cheapest type its load fits; split at a price cliff when cheaper."""
        out: list[Bin[T]] = []
        for b in bins:
            t = self._cheapest_unlimited(b.load) or b.type
            b.type = t
            split = self._split(b)
            out.extend(split if split is not None else [b])
        return out

    def _cheapest_unlimited(self, load: Sequence[int]) -> BinType | None:
        for t in self.types:
            if _fits(load, t.cap):
                return t
        return None

    def _split(self, b: Bin[T]) -> list[Bin[T]] | None:
        if len(b.items) < 2 or self.limits.nodes is not None or self.limits.remaining:
            return None
        vec_of = self._vec_of
        order = sorted(b.items, key=lambda it: tuple(-x for x in vec_of[id(it)]))
        halves: list[list[T]] = [[], []]
        loads = [[0] * self.dims, [0] * self.dims]
        for it in order:
            v = vec_of[id(it)]
            i = 0 if sum(loads[0]) <= sum(loads[1]) else 1
            halves[i].append(it)
            for d in range(self.dims):
                loads[i][d] += v[d]
        t0, t1 = self._cheapest_unlimited(loads[0]), self._cheapest_unlimited(loads[1])
        if t0 is None or t1 is None or t0.price + t1.price >= b.type.price - _EPS:
            return None
        return [
            Bin(type=t0, items=halves[0], load=tuple(loads[0])),
            Bin(type=t1, items=halves[1], load=tuple(loads[1])),
        ]


def pack(
    shapes: Sequence[Shape[T]],
    types: Sequence[BinType],
    *,
    limits: PoolLimits | None = None,
    deadline: float | None = None,
) -> list[Bin[T]] | None:
    """See the module docstring."""
    return Packer(shapes, types, limits=limits, deadline=deadline).pack()


def lower_bound(shapes: Sequence[Shape[T]], types: Sequence[BinType]) -> float:
    """The covering LP's optimum for the shapes' total demand (a lower bound on any packing)."""
    if not shapes:
        return 0.0
    dims = len(shapes[0].vec)
    demand = [sum(len(s.items) * s.vec[d] for s in shapes) for d in range(dims)]
    return cover_lp([t.price for t in types], [t.cap for t in types], demand).value


def shapes_of(items: Sequence[T], vec: Mapping[int, tuple[int, ...]]) -> list[Shape[T]]:
    """Group ``items`` by their vector (``vec[id(item)]``), in first-seen order."""
    by: dict[tuple[int, ...], Shape[T]] = {}
    for it in items:
        v = vec[id(it)]
        s = by.get(v)
        if s is None:
            s = by[v] = Shape(vec=v, items=[])
        s.items.append(it)
    return list(by.values())
