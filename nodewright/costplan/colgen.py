"""Column generation for one class of pods: the set-cover LP over instance-type *patterns*.

A pattern is one NodeClaim's content: an instance type and how many pods of each shape it holds
(every resource within the type's room). The master LP (HiGHS, :func:`.lp.cover_lp`)

    min Σ_j price_j x_j   s.t.   Σ_j a_js x_j >= n_s  (each shape s),   x >= 0

starts from each candidate type's single-shape patterns and one resource-balanced pattern, and
grows by pricing: with the row duals y_s, a greedy multi-dimensional knapsack per type (shapes by
dual value per unit of the type's room) proposes the pattern of most value; one whose value
exceeds its price joins the master. Unlike the aggregate covering LP, every column is a packing
one node can host, so the LP can mix types of different cpu:memory ratios (cpu-heavy pods on
compute types, memory-heavy ones on memory types) and still be realised.

Rounding and repair: ``floor(x_j)`` NodeClaims of each pattern, then the pods left over go through
the greedy packer (:mod:`.packing`). Candidate types are pruned first: per shape, only types
within ``_KEEP`` of that shape's cheapest price per pod are kept, and a type dominated by a
cheaper one with at least its room is dropped. Deterministic; bounded by a deadline.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Final, TypeVar

from nodewright.costplan.lp import cover_lp
from nodewright.costplan.packing import Bin, BinType, Packer, Shape

T = TypeVar("T")

_KEEP: Final = 1.25
_ROUNDS: Final = 40
_EPS: Final = 1e-7


def _fit_count(v: Sequence[int], room: Sequence[int]) -> int:
    return min((r // x for x, r in zip(v, room, strict=True) if x > 0), default=0)


def _prune(shapes: Sequence[Shape[T]], types: Sequence[BinType]) -> list[BinType]:
    keep: set[int] = set()
    for s in shapes:
        per_pod = [(t.price / k, t.index) for t in types if (k := _fit_count(s.vec, t.cap)) > 0]
        if not per_pod:
            continue
        best = min(per_pod)[0]
        keep.update(i for c, i in per_pod if c <= _KEEP * best + 1e-12)
    cands = sorted((t for t in types if t.index in keep), key=lambda t: (t.price, t.index))
    out: list[BinType] = []
    for t in cands:  # drop t when a cheaper-or-equal kept type has at least its room
        if not any(all(a >= b for a, b in zip(o.cap, t.cap, strict=True)) for o in out):
            out.append(t)
    return out


def _knapsack(
    shapes: Sequence[Shape[T]], t: BinType, duals: Sequence[float], counts: Sequence[int]
) -> tuple[int, ...]:
    """Greedy: shapes by dual value per unit of room used (room normalised per resource)."""
    dims = len(t.cap)
    order = sorted(
        (s for s in range(len(shapes)) if duals[s] > 0 and counts[s] > 0),
        key=lambda s: (
            -duals[s] / max(1e-12, max(shapes[s].vec[d] / t.cap[d] for d in range(dims) if t.cap[d] > 0)),
            s,
        ),
    )
    room = list(t.cap)
    a = [0] * len(shapes)
    for s in order:
        k = min(counts[s], _fit_count(shapes[s].vec, room))
        if k <= 0:
            continue
        a[s] = k
        for d in range(dims):
            room[d] -= k * shapes[s].vec[d]
    return tuple(a)


def colgen_pack(
    shapes: Sequence[Shape[T]], types: Sequence[BinType], *, deadline: float | None = None
) -> list[Bin[T]] | None:
    """Bins for every item (see the module docstring), or None when the LP finds nothing."""
    shapes = sorted(shapes, key=lambda s: tuple(-x for x in s.vec))  # the Packer's order
    counts = [len(s.items) for s in shapes]
    cands = _prune(shapes, types)
    if not cands or not any(counts):
        return None
    cols: dict[tuple[int, tuple[int, ...]], BinType] = {}
    packer = Packer(shapes, cands)
    shape_of = {s.vec: i for i, s in enumerate(shapes)}
    for t in cands:
        for s, sh in enumerate(shapes):
            fit = min(counts[s], _fit_count(sh.vec, t.cap))
            if fit > 0:
                single = [0] * len(shapes)
                single[s] = fit
                cols[(t.index, tuple(single))] = t
        balanced = packer.fill(t, list(counts))  # one resource-balanced pattern
        if balanced.items:
            pattern = [0] * len(shapes)
            for it in balanced.items:
                pattern[shape_of[packer.vec_of(it)]] += 1
            cols[(t.index, tuple(pattern))] = t
    demand = [float(n) for n in counts]
    res = None
    for _ in range(_ROUNDS):
        keys = sorted(cols)
        res = cover_lp([cols[k].price for k in keys], [k[1] for k in keys], demand)
        if math.isinf(res.value) or (deadline is not None and time.monotonic() > deadline):
            break
        added = 0
        for t in cands:
            best = _knapsack(shapes, t, res.duals, counts)
            value = sum(y * n for y, n in zip(res.duals, best, strict=True))
            if value > t.price * (1 + _EPS) + _EPS and (t.index, best) not in cols:
                cols[(t.index, best)] = t
                added += 1
        if not added:
            break
    if res is None or math.isinf(res.value):
        return None
    keys = sorted(cols)
    left = [list(s.items) for s in shapes]
    bins: list[Bin[T]] = []
    for k, x in sorted(zip(keys, res.x, strict=True), key=lambda kx: (-kx[1], kx[0])):
        t = cols[k]
        for _ in range(int(x + 1e-6)):
            b: Bin[T] = Bin(type=t)
            load = [0] * len(t.cap)
            for s, n in enumerate(k[1]):
                take = min(n, len(left[s]))
                b.items.extend(left[s][:take])
                del left[s][:take]
                for d in range(len(load)):
                    load[d] += take * shapes[s].vec[d]
            if not b.items:
                break
            b.load = tuple(load)
            bins.append(b)
    rest = [Shape(vec=s.vec, items=left[i]) for i, s in enumerate(shapes) if left[i]]
    if rest:
        more = Packer(rest, types, deadline=deadline).pack()
        if more is None:
            return None
        bins.extend(more)
    return Packer(shapes, types).reprice(bins)
