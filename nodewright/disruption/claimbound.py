"""The room facts behind the claim bound of a reconcile's simulations (see
:meth:`nodewright.disruption.simbase.SimBase.needs_more_claims`), kept from one reconcile to the
next.

Per existing node its room now (nothing when a resource is overcommitted, as ``fits`` says),
their sum, per resource the largest allocatable of any template's type, and per least request
how many such requests each node has room for. Consecutive reconciles of a forecast share most
existing nodes (the very same objects), so :func:`claim_bounds` patches the previous reconcile's
facts by the nodes that left and came: integer sums and per-node entries, equal to a build from
scratch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import add, attrgetter, sub
from typing import Final

from nodewright.scheduling.existingnode import ExistingNode
from nodewright.scheduling.identity import by_identity, patchable
from nodewright.scheduling.instancetypes import ResourceSpace
from nodewright.scheduling.nodeclaim import Template

UNBOUNDED: Final = 1 << 62
_NAME: Final = attrgetter("name")
_KEEP_HELD: Final = 8  # the least requests carried to the next reconcile (those asked last)

Vec = tuple[int, ...]


def fits_times(least: Vec, room: Vec) -> int:
    """How many requests of ``least`` fit in ``room`` (every pod asks for one ``pods``, so this is
    finite; a request of nothing would fit without bound)."""
    return min((r // q for q, r in zip(least, room, strict=True) if q > 0), default=UNBOUNDED)


@dataclass
class ClaimBounds:
    key: tuple[object, ...]  # the resource space's names and the templates (held)
    by_id: dict[int, ExistingNode]  # the existing nodes, by identity (held: ids are not reused)
    names: set[str]  # their names, when unique (else nothing is patched)
    room: dict[str, Vec]
    total: Vec
    cap: Vec
    held: dict[Vec, tuple[dict[str, int], int]] = field(default_factory=dict)
    asked: list[Vec] = field(default_factory=list)  # the least requests asked, oldest first
    seen: Sequence[ExistingNode] | None = None  # the existing nodes it was derived from (held)

    def holds(self, least: Vec) -> tuple[dict[str, int], int]:
        """How many pods asking ``least`` each existing node has room for, and their sum."""
        got = self.held.get(least)
        if got is None:
            per_node = {name: k for name, vec in self.room.items() if (k := fits_times(least, vec))}
            got = self.held[least] = (per_node, sum(per_node.values()))
        if least in self.asked:
            self.asked.remove(least)
        self.asked.append(least)
        return got


def _room(n: ExistingNode, space: ResourceSpace, names: tuple[str, ...], known: frozenset[str]) -> Vec | None:
    kept = n.state.memo.get("simbase.room")
    if isinstance(kept, tuple) and kept[0] is n and kept[1] == names:
        vec: Vec | None = kept[2]  # the same scheduler node (shared between reconciles) in the same space
        return vec
    vec = (
        None
        if any(v < 0 for v in n.remaining.values())
        # a pod asks only for the round's resources (else it has no base): the rest is no room
        else space.vec({k: v for k, v in n.remaining.items() if k in known})
    )
    n.state.memo["simbase.room"] = (n, names, vec)
    return vec


def claim_bounds(
    existing: Sequence[ExistingNode],
    space: ResourceSpace,
    templates: Sequence[Template],
    previous: ClaimBounds | None,
) -> ClaimBounds:
    """The room facts of ``existing`` (the scheduler's existing nodes), patched from ``previous``
    when it was derived in the same resource space from mostly the same nodes."""
    names = tuple(space.names)
    known = frozenset(names)
    key = (names, templates)
    if previous is not None and previous.key[0] == names and previous.key[1] is templates and previous.names:
        got = _patched(previous, existing, space, names, known)
        if got is not None:
            return got
    room: dict[str, Vec] = {}
    total = [0] * len(names)
    for n in existing:
        vec = _room(n, space, names, known)
        if vec is None:
            continue
        room[n.name] = vec
        total = list(map(add, total, vec))
    cap = [0] * len(names)
    for tmpl in templates:
        cap = list(map(max, cap, tmpl.types.max_alloc(tmpl.types.all)))
    all_names = set(map(_NAME, existing))
    unique = all_names if len(all_names) == len(existing) else set()
    return ClaimBounds(key, by_identity(existing), unique, room, tuple(total), tuple(cap), seen=existing)


def _patched(
    prev: ClaimBounds,
    existing: Sequence[ExistingNode],
    space: ResourceSpace,
    names: tuple[str, ...],
    known: frozenset[str],
) -> ClaimBounds | None:
    diff = patchable(prev.by_id, existing, prev.seen)
    if diff is None:
        return None
    now, gone, came = diff
    node_names = set(prev.names)
    room = dict(prev.room)
    total = prev.total
    lost: dict[str, Vec] = {}
    for n in gone:
        node_names.discard(n.name)
        vec = room.pop(n.name, None)  # names are unique: the entry is this node's
        if vec is not None:
            lost[n.name] = vec
            total = tuple(map(sub, total, vec))
    fresh: dict[str, Vec] = {}
    for n in came:
        if n.name in node_names:
            return None  # two nodes of one name: built from scratch
        node_names.add(n.name)
        vec = _room(n, space, names, known)
        if vec is not None:
            room[n.name] = fresh[n.name] = vec
            total = tuple(map(add, total, vec))
    out = ClaimBounds((names, prev.key[1]), now, node_names, room, total, prev.cap, seen=existing)
    for least in prev.asked[-_KEEP_HELD:]:
        per_node, held = prev.held[least]
        per_node = dict(per_node)
        for name in lost:
            held -= per_node.pop(name, 0)
        for name, vec in fresh.items():
            k = fits_times(least, vec)
            if k:
                per_node[name] = k
                held += k
        out.held[least] = (per_node, held)
        out.asked.append(least)
    return out
