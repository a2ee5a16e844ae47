"""Candidate lists kept between the reconciles of a forecast. When a list says what left and came
since the one handled before (:class:`~nodewright.scheduling.identity.Successor`):

* :class:`Filtered` (a method's filter) judges only what came, and says the notes of the others
  again (a note is a write of one NodeClaim's message: said in any order, they leave the same
  notes); otherwise it judges every candidate (each once per candidate object all the same, by the
  caller's verdict);
* :class:`Sorted` (by savings) removes what left and places what came, by bisection, where the
  order is total (no two keys equal, none NaN); otherwise it sorts."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from itertools import pairwise
from operator import attrgetter
from typing import Final

from nodewright.disruption.candidates import Candidate
from nodewright.scheduling.identity import Successor, by_identity, step

Verdict = Callable[[Candidate], tuple[bool, str | None]]
"""Whether the filter keeps a candidate and its note; it says the note itself."""


class Filtered:
    """See the module docstring."""

    def __init__(self) -> None:
        self._seen: Sequence[Candidate] | None = None  # the list last filtered (held)
        self._held: dict[int, Candidate] = {}  # its candidates, by identity
        self._kept: set[int] = set()  # those the filter keeps
        self._noted: dict[int, tuple[Candidate, str]] = {}  # those with a note, and the note
        self._out: list[Candidate] = []

    def run(
        self, cands: Sequence[Candidate], verdict: Verdict, say: Callable[[Candidate, str], None]
    ) -> list[Candidate]:
        """The candidates of ``cands`` the filter keeps, in order, each note said."""
        known = step(self._held, self._seen, cands)
        held, kept, noted = self._held, self._kept, self._noted
        gone: list[Candidate] = []
        if known is None:
            held, kept, noted = by_identity(cands), set(), {}
            fresh: Sequence[Candidate] = cands
        else:
            fresh = known[1]
            gone = [c for c in known[0] if id(c) in kept]
            for c in known[0]:
                del held[id(c)]
                kept.discard(id(c))
                noted.pop(id(c), None)
            for c, said in noted.values():
                say(c, said)
        for c in fresh:
            ok, note = verdict(c)
            held[id(c)] = c
            if ok:
                kept.add(id(c))
            if note is not None:
                noted[id(c)] = (c, note)
        out = [c for c in cands if id(c) in kept]
        if known is not None:
            out = Successor(out, self._out, gone, [c for c in known[1] if id(c) in kept])
        self._seen, self._held, self._kept, self._noted, self._out = cands, held, kept, noted, out
        return out


SAVINGS: Final = attrgetter("savings_key")
"""The savings order's key: the ratio descending, then the node's name."""


class Sorted:
    """See the module docstring."""

    def __init__(self) -> None:
        self._seen: Sequence[Candidate] | None = None  # the list last sorted (held)
        self._held: dict[int, Candidate] = {}
        self._order: list[Candidate] = []

    def sort(self, cands: Sequence[Candidate]) -> list[Candidate]:
        """``sorted(cands, key=SAVINGS)`` (the list returned is shared: read it only)."""
        if cands is self._seen:
            return self._order
        known = step(self._held, self._seen, cands)
        out = self._placed(*known) if known is not None else None
        if known is None or out is None:
            out = sorted(cands, key=SAVINGS)
            total = all(a.savings_key < b.savings_key for a, b in pairwise(out))
            self._held = by_identity(cands) if total else {}
            self._seen = cands if total else None
        else:
            for c in known[0]:
                del self._held[id(c)]
            for c in known[1]:
                self._held[id(c)] = c
            self._seen = cands
        self._order = out
        return out

    def _placed(self, gone: Sequence[Candidate], came: Sequence[Candidate]) -> list[Candidate] | None:
        out = list(self._order)
        for c in gone:
            i = bisect_left(out, c.savings_key, key=SAVINGS)
            if i == len(out) or out[i] is not c:
                return None
            del out[i]
        for c in came:
            key = c.savings_key
            i = bisect_left(out, key, key=SAVINGS)
            if key[0] != key[0] or (i < len(out) and not key < out[i].savings_key):
                return None  # NaN or a tie: no total order to place it by
            out.insert(i, c)
        return out
