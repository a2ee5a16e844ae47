"""Reserved-capacity bookkeeping across a scheduling round (Karpenter ``reservationmanager.go``).

Each reservation ID has a capacity (the minimum ``reservationCapacity`` any instance type reports
for it). A simulated NodeClaim (by hostname) reserves every compatible reserved offering it could
launch into; reserving is idempotent per hostname, releasing gives the capacity back.
:class:`LaunchLedger` then accounts the launches themselves: a NodeClaim that holds reservations
launches into one of them, and any other NodeClaim may take a reserved offering only while its
reservation has capacity left (an over-committed reservation is not launched into at price 0).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from nodewright import labels
from nodewright.catalog.model import InstanceType, Offering


def consume_reservations(types: Sequence[InstanceType], used: Mapping[str, int]) -> Sequence[InstanceType]:
    """The types with reserved capacity already taken by running nodes deducted; an offering whose
    reservation is used up becomes unavailable (as the cloud provider reports it). Nothing used:
    ``types`` itself (later rounds over the same catalog then see the very same sequence)."""
    if not used:
        return types
    out = []
    for it in types:
        if not any(o.reservation_id in used for o in it.offerings):
            out.append(it)
            continue
        offerings = []
        for o in it.offerings:
            n = used.get(o.reservation_id or "", 0)
            if n and o.reservation_capacity is not None:
                left = max(0, o.reservation_capacity - n)
                o = replace(o, reservation_capacity=left, available=o.available and left > 0)
            offerings.append(o)
        out.append(replace(it, offerings=tuple(offerings)))
    return out


class ReservationManager:
    """Remaining capacity per reservation ID and what each hostname holds."""

    def __init__(self, instance_types: Iterable[InstanceType]) -> None:
        self._capacity: dict[str, int] = {}
        self._held: dict[str, set[str]] = {}
        for it in instance_types:
            for o in it.offerings:
                if o.capacity_type != labels.CAPACITY_TYPE_RESERVED or o.reservation_id is None:
                    continue
                cap = o.reservation_capacity or 0
                prev = self._capacity.get(o.reservation_id)
                self._capacity[o.reservation_id] = cap if prev is None else min(prev, cap)

    def capacities(self) -> dict[str, int]:
        """Remaining capacity per reservation ID (what no hostname holds)."""
        return dict(self._capacity)

    def _rid(self, offering: Offering) -> str:
        rid = offering.reservation_id or ""
        if rid not in self._capacity:
            # upstream panics: every offering asked about comes from the round's instance types
            raise KeyError(f"reservation {rid!r} is not tracked")
        return rid

    def remaining(self, offering: Offering) -> int:
        return self._capacity[self._rid(offering)]

    def has_reservation(self, hostname: str, offering: Offering) -> bool:
        return (offering.reservation_id or "") in self._held.get(hostname, ())

    def can_reserve(self, hostname: str, offering: Offering) -> bool:
        rid = self._rid(offering)
        if rid in self._held.get(hostname, ()):
            return True
        return self._capacity[rid] > 0

    def reserve(self, hostname: str, offerings: Iterable[Offering]) -> None:
        held = self._held.setdefault(hostname, set())
        for o in offerings:
            rid = self._rid(o)
            if rid in held:
                continue
            if self._capacity[rid] <= 0:
                raise ValueError(f"reservation {rid!r} has no capacity left for {hostname}")
            self._capacity[rid] -= 1
            held.add(rid)

    def release(self, hostname: str, *offerings: Offering) -> None:
        """Give back what ``hostname`` holds of ``offerings`` (nothing held: a no-op)."""
        held = self._held.get(hostname)
        for o in offerings:
            rid = o.reservation_id or ""
            if held and rid in held:
                held.discard(rid)
                self._capacity[rid] = self._capacity.get(rid, 0) + 1


class LaunchLedger:
    """Reservation capacity as the round's NodeClaims launch, one instance each.

    Holders (claims that reserved offerings) are settled first: each launches into one of the
    reservations it holds, which the round's bookkeeping guarantees has room. Then the others
    launch, and a reservation with no capacity left is excluded from their offerings.
    """

    def __init__(self, instance_types: Iterable[InstanceType]) -> None:
        self._left = ReservationManager(instance_types).capacities()

    def exhausted(self) -> frozenset[str]:
        return frozenset(rid for rid, n in self._left.items() if n <= 0)

    def launch(self, offering: Offering | None) -> None:
        if offering is not None and offering.reservation_id is not None:
            rid = offering.reservation_id
            self._left[rid] = self._left.get(rid, 0) - 1
