"""Instance-type filtering for NodeClaims, fast: bitmask sets over a template's instance types.

Karpenter's ``filterInstanceTypesByRequirements`` keeps an instance type when it is compatible
with the NodeClaim's requirements, has an available offering compatible with them, and its
allocatable fits the NodeClaim's requests plus the daemon overhead of its group. Here a set of
instance types is a Python ``int`` bitmask (bit *i* = the template's *i*-th type):

* resource fit is the AND, over requested resources, of precomputed "allocatable >= x" suffix
  masks found by bisection (``O(resources * log types)`` instead of a scan of every type);
* requirement/offering compatibility is memoised per projection of the requirements on the keys
  instance types and offerings define (a NodeClaim's hostname never splits the memo);
* NodePool limits use "capacity <= remaining" prefix masks the same way.

The error when nothing remains is :class:`InstanceTypeFilterError` with Karpenter's exact texts.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from operator import add as _add
from typing import Final

from nodewright import labels
from nodewright.algebra.requirements import ALLOW_UNDEFINED_WELL_KNOWN, Requirement, Requirements
from nodewright.algebra.resources import (
    CPU,
    ResourceList,
    add,
    max_resources,
    min_resources,
    resource_list_str,
)
from nodewright.catalog.model import InstanceType, Offering

_OFFERING_KEYS: Final = (labels.ZONE, labels.CAPACITY_TYPE, labels.CAPACITY_RESERVATION_ID)
_ONE_MILLION_CPU_MILLI: Final = 1_000_000_000
_UNPRICED: Final = float("inf")


_BY_MASK_MAX: Final = 4_096


class ResourceSpace:
    """A fixed order of resource names; resource lists become tuples of ints in that order."""

    __slots__ = ("index", "names")

    def __init__(self, names: Sequence[str]) -> None:
        self.names: tuple[str, ...] = tuple(sorted(set(names)))
        self.index: dict[str, int] = {n: i for i, n in enumerate(self.names)}

    def vec(self, rl: Mapping[str, int]) -> tuple[int, ...]:
        out = [0] * len(self.names)
        idx = self.index
        for k, v in rl.items():
            out[idx[k]] = v
        return tuple(out)


_FEW: Final = 48  # masks this small: a direct max beats walking the sorted thresholds


def _max_of(vecs: Sequence[tuple[int, ...]], dims: int) -> list[int]:
    return [max((v[d] for v in vecs), default=0) for d in range(dims)]


def _few_bits(mask: int) -> list[int]:
    """Indices of the set bits of a sparse mask (lowest-bit loop: O(set bits), not O(width))."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def vec_add(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    if len(a) != len(b):
        raise ValueError(f"resource vectors of {len(a)} and {len(b)} resources")
    return tuple(map(_add, a, b))


def iter_bits(mask: int) -> list[int]:
    """Indices of the set bits, ascending."""
    if not mask:
        return []
    bits = bin(mask)[:1:-1]
    return [i for i, c in enumerate(bits) if c == "1"]


@dataclass(frozen=True, slots=True)
class CompatEntry:
    """Compatibility of every type of a template with one projection of requirements."""

    compat: int  # it.Requirements.Intersects(reqs) == nil
    offering: int  # has an available offering compatible with reqs


@dataclass(slots=True)
class Launch:
    """The offering a launch would pick for one instance type under given requirements."""

    price: float
    offering: Offering | None


class TypeIndex:
    """One template's instance types, with the masks the scheduler filters by."""

    def __init__(self, types: Sequence[InstanceType], space: ResourceSpace) -> None:
        self.types: tuple[InstanceType, ...] = tuple(types)
        self.space = space
        n = len(self.types)
        self.all: int = (1 << n) - 1
        self.alloc: list[tuple[int, ...]] = [space.vec(it.allocatable()) for it in self.types]
        self.capacity: list[tuple[int, ...]] = [space.vec(it.capacity) for it in self.types]
        self.nonneg: int = 0
        for i, a in enumerate(self.alloc):
            if min(a, default=0) >= 0:
                self.nonneg |= 1 << i
        self._alloc_sorted, self._alloc_suffix, self._alloc_order = self._threshold_masks(
            self.alloc, suffix=True
        )
        self._cap_sorted, self._cap_prefix, self._cap_order = self._threshold_masks(
            self.capacity, suffix=False
        )
        keys: set[str] = set(_OFFERING_KEYS)
        for it in self.types:
            keys.update(it.requirements.keys())
        self.keys: tuple[str, ...] = tuple(sorted(keys))
        self._compat: dict[tuple[Requirement | None, ...], CompatEntry] = {}
        self._launch: dict[object, dict[int, Launch]] = {}
        self._fit_cache: dict[tuple[int, ...], int] = {}
        self._price_order: dict[object, list[int]] = {}
        # per (price order key, options mask): the options in that order (callers do not change it)
        self._by_mask: dict[tuple[object, int], list[int]] = {}

    @staticmethod
    def _threshold_masks(
        vecs: list[tuple[int, ...]], *, suffix: bool
    ) -> tuple[list[list[int]], list[list[int]], list[list[int]]]:
        dims = len(vecs[0]) if vecs else 0
        sorted_vals: list[list[int]] = []
        masks: list[list[int]] = []
        orders: list[list[int]] = []
        for d in range(dims):
            order = sorted(range(len(vecs)), key=lambda i: (vecs[i][d], i))
            sorted_vals.append([vecs[i][d] for i in order])
            orders.append(order)
            acc = 0
            m = [0] * (len(order) + 1)
            if suffix:  # m[k] = types at sorted positions >= k
                for k in range(len(order) - 1, -1, -1):
                    acc |= 1 << order[k]
                    m[k] = acc
            else:  # m[k] = types at sorted positions < k
                for k, i in enumerate(order):
                    acc |= 1 << i
                    m[k + 1] = acc
            masks.append(m)
        return sorted_vals, masks, orders

    # -- resources -------------------------------------------------------------------------------
    def fit_mask(self, total: tuple[int, ...]) -> int:
        """Types whose allocatable fits ``total`` (Karpenter ``resources.Fits``)."""
        cached = self._fit_cache.get(total)
        if cached is not None:
            return cached
        mask = self.nonneg
        for d, v in enumerate(total):
            if v > 0:
                mask &= self._alloc_suffix[d][bisect.bisect_left(self._alloc_sorted[d], v)]
                if not mask:
                    break
        if len(self._fit_cache) > 200_000:
            self._fit_cache.clear()
        self._fit_cache[total] = mask
        return mask

    def within_limits_mask(self, remaining: Mapping[str, int]) -> int:
        """Types whose capacity does not exceed ``remaining`` for any limited resource."""
        mask = self.all
        for name, rem in remaining.items():
            d = self.space.index.get(name)
            if d is None:
                if rem < 0:
                    return 0
                continue
            mask &= self._cap_prefix[d][bisect.bisect_right(self._cap_sorted[d], rem)]
        return mask

    def _max_over(self, mask: int, sorted_vals: list[list[int]], orders: list[list[int]]) -> list[int]:
        out = []
        for vals, order in zip(sorted_vals, orders, strict=True):
            k = len(order) - 1
            while k >= 0 and not (mask >> order[k]) & 1:
                k -= 1
            out.append(vals[k] if k >= 0 else 0)
        return out

    def max_capacity(self, mask: int) -> ResourceList:
        """Per resource, the largest capacity among the types of ``mask`` (subtract-max)."""
        if mask.bit_count() <= _FEW:
            vals = _max_of([self.capacity[i] for i in _few_bits(mask)], len(self.space.names))
        else:
            vals = self._max_over(mask, self._cap_sorted, self._cap_order)
        return dict(zip(self.space.names, vals, strict=True))

    def max_alloc(self, mask: int) -> tuple[int, ...]:
        """Per resource, the largest allocatable among the types of ``mask`` (a fit upper bound)."""
        if mask.bit_count() <= _FEW:
            return tuple(_max_of([self.alloc[i] for i in _few_bits(mask)], len(self.space.names)))
        return tuple(self._max_over(mask, self._alloc_sorted, self._alloc_order))

    # -- requirements ----------------------------------------------------------------------------
    def project(self, reqs: Requirements) -> tuple[Requirement | None, ...]:
        return tuple(reqs.get(k) if reqs.has(k) else None for k in self.keys)

    def compat(self, reqs: Requirements) -> CompatEntry:
        key = self.project(reqs)
        entry = self._compat.get(key)
        if entry is None:
            compat = offering = 0
            for i, it in enumerate(self.types):
                if it.requirements.has_intersection(reqs):
                    compat |= 1 << i
                for o in it.offerings:
                    if o.available and reqs.is_compatible(
                        o.requirements, allow_undefined=ALLOW_UNDEFINED_WELL_KNOWN
                    ):
                        offering |= 1 << i
                        break
            entry = CompatEntry(compat=compat, offering=offering)
            self._compat[key] = entry
        return entry

    def launches(self, reqs: Requirements, exclude: frozenset[str] = frozenset()) -> dict[int, Launch]:
        """Per type index: the cheapest available offering compatible with ``reqs`` (memoised),
        skipping reserved offerings of the reservation IDs in ``exclude`` (used up)."""
        key = self.project(reqs)
        table = self._launch.get((key, exclude) if exclude else key)
        if table is None:
            table = {}
            self._launch[(key, exclude) if exclude else key] = table
        return table

    def launch(
        self, i: int, reqs: Requirements, table: dict[int, Launch], exclude: frozenset[str] = frozenset()
    ) -> Launch:
        got = table.get(i)
        if got is None:
            best: Offering | None = None
            for o in self.types[i].offerings:
                if not o.available or (exclude and o.reservation_id in exclude):
                    continue
                if not reqs.is_compatible(o.requirements, allow_undefined=ALLOW_UNDEFINED_WELL_KNOWN):
                    continue
                if best is None or (o.price, o.zone, o.capacity_type) < (
                    best.price,
                    best.zone,
                    best.capacity_type,
                ):
                    best = o
            got = Launch(price=best.price if best is not None else _UNPRICED, offering=best)
            table[i] = got
        return got

    def order_by_price(
        self, mask: int, reqs: Requirements, exclude: frozenset[str] = frozenset()
    ) -> list[int]:
        """Karpenter ``OrderByPrice``: cheapest compatible available offering first, ties by name
        (reserved offerings of the reservation IDs in ``exclude`` do not count). The list is kept:
        read it, do not change it."""
        key = self.project(reqs)
        memo_key = (key, exclude) if exclude else key
        order = self._price_order.get(memo_key)
        if order is None:
            table = self.launches(reqs, exclude)
            order = sorted(
                range(len(self.types)),
                key=lambda i: (self.launch(i, reqs, table, exclude).price, self.types[i].name),
            )
            self._price_order[memo_key] = order
        got = self._by_mask.get((memo_key, mask))
        if got is None:
            bits = bin(mask)[:1:-1]  # bits[i] is bit i: a string test beats shifting a wide mask
            n = len(bits)
            got = [i for i in order if i < n and bits[i] == "1"]
            if len(self._by_mask) >= _BY_MASK_MAX:
                self._by_mask.clear()
            self._by_mask[(memo_key, mask)] = got
        return got


# -- minValues -------------------------------------------------------------------------------------
def satisfies_min_values(
    reqs: Requirements, types: Sequence[InstanceType]
) -> tuple[int, dict[str, int], str | None]:
    """Karpenter ``InstanceTypes.SatisfiesMinValues`` over ``types`` in order."""
    keys = [r.key for r in reqs.values() if r.min_values is not None]
    if not keys:
        return 0, {}, None
    values: dict[str, set[str]] = {k: set() for k in keys}
    incompatible: dict[str, int] = {}
    for n, it in enumerate(types, 1):
        for k in keys:
            r = it.requirements.get(k)
            if not r.complement:
                values[k].update(r.values)
        incompatible = {}
        for k in keys:
            need = reqs.get(k).min_values or 0
            if len(values[k]) < need:
                incompatible[k] = len(values[k])
        if not incompatible:
            return n, {}, None
    if not types:
        incompatible = {k: 0 for k in keys if (reqs.get(k).min_values or 0) > 0}
        if not incompatible:
            return 0, {}, None
    names = " ".join(sorted(incompatible))
    return len(types), incompatible, f"minValues requirement is not met for label(s) (label(s)=[{names}])"


# -- the error -------------------------------------------------------------------------------------
@dataclass(slots=True)
class InstanceTypeFilterError:
    """Why every instance type was filtered out; ``str()`` is Karpenter's text (built lazily)."""

    requirements: Requirements
    pod_requests: ResourceList
    requirements_met: bool = False
    fits: bool = False
    has_offering: bool = False
    requirements_and_fits: bool = False
    requirements_and_offering: bool = False
    fits_and_offering: bool = False
    min_values_error: str | None = None
    min_daemon: ResourceList = field(default_factory=dict)
    max_daemon: ResourceList = field(default_factory=dict)

    def track_daemon_overhead(self, overhead: ResourceList) -> None:
        if not self.max_daemon:
            self.min_daemon = overhead
            self.max_daemon = overhead
            return
        self.min_daemon = min_resources(self.min_daemon, overhead)
        self.max_daemon = max_resources(self.max_daemon, overhead)

    def _resources(self) -> str:
        if not self.min_daemon:
            return resource_list_str(self.pod_requests)
        lo = resource_list_str(add(self.min_daemon, self.pod_requests))
        hi = resource_list_str(add(self.max_daemon, self.pod_requests))
        return lo if lo == hi else f"min={lo}, max={hi}"

    def __str__(self) -> str:
        suffix = f", requirements={self.requirements}, resources={self._resources()}"
        if self.min_values_error is not None:
            return self.min_values_error + suffix
        r, f, o = self.requirements_met, self.fits, self.has_offering
        if not r and not f and not o:
            msg = "no instance type met the scheduling requirements or had enough resources or had a required offering"
        elif not r and not f:
            msg = "no instance type met the scheduling requirements or had enough resources"
        elif not r and not o:
            msg = "no instance type met the scheduling requirements or had a required offering"
        elif not f and not o:
            msg = "no instance type had enough resources or had a required offering"
        elif not r:
            msg = "no instance type met all requirements"
        elif not f:
            text = "no instance type has enough resources" + suffix
            if self.pod_requests.get(CPU, 0) >= _ONE_MILLION_CPU_MILLI:
                text += " (CPU request >= 1 Million, m vs M typo?)"
            return text
        elif not o:
            msg = "no instance type has the required offering"
        elif self.requirements_and_fits:
            msg = "no instance type which met the scheduling requirements and had enough resources, had a required offering"
        elif self.fits_and_offering:
            msg = "no instance type which had enough resources and the required offering met the scheduling requirements"
        elif self.requirements_and_offering:
            msg = "no instance type which met the scheduling requirements and the required offering had the required resources"
        else:
            msg = "no instance type met the requirements/resources/offering tuple"
        return msg + suffix
