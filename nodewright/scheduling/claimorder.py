"""The order in which the scheduler tries its in-flight NodeClaims for a pod: fewest pods first,
ties in creation order (:class:`ClaimOrder`)."""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nodewright.scheduling.nodeclaim import InflightClaim


class ClaimOrder:
    """In-flight NodeClaims ordered by (pod count, creation index), as bitmasks of claim indices.

    Each pod count has one ``int`` whose bit *i* is claim *i*; a scan walks counts ascending and,
    within a count, indices ascending (lowest set bit first), skipping whole sets of claims with
    one AND-NOT instead of visiting them.
    """

    def __init__(self) -> None:
        self.buckets: dict[int, int] = {}
        self.counts: list[int] = []

    def add(self, claim: InflightClaim) -> None:
        self._insert(len(claim.pods), 1 << claim.index)

    def _insert(self, count: int, bit: int) -> None:
        mask = self.buckets.get(count)
        if mask is None:
            bisect.insort(self.counts, count)
            self.buckets[count] = bit
        else:
            self.buckets[count] = mask | bit

    def moved(self, claim: InflightClaim, old_count: int) -> None:
        bit = 1 << claim.index
        mask = self.buckets[old_count] & ~bit
        if mask:
            self.buckets[old_count] = mask
        else:
            del self.buckets[old_count]
            self.counts.remove(old_count)
        self._insert(len(claim.pods), bit)
