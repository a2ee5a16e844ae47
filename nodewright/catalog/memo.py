"""Answers about a catalog that depend on a NodePool's requirements only through the catalog's keys.

Boundary: a process-wide memo, nothing else. An intersection (``has_intersection``) looks only at
keys both sides define, and an offering's compatibility only at the offering's keys; so a question
asked of every type and offering of a catalog has the same answer for any two requirement sets
that agree on the keys the catalog's types and offerings define (pools differing in name or team
labels). A large stack's many alike pools are then answered once. The memo holds each catalog's
types, so their ids (the key) cannot be reused while it lives; it keeps a few catalogs at most.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from nodewright.algebra.requirements import Requirements
from nodewright.catalog.model import InstanceType

T = TypeVar("T")

_Entry = tuple[tuple[InstanceType, ...], frozenset[str], dict[Any, Any]]
_MEMO: dict[tuple[int, ...], _Entry] = {}
_MAX_CATALOGS = 4


def by_catalog_keys(
    tag: str, types: Sequence[InstanceType], reqs: Requirements, compute: Callable[[], T]
) -> T:
    """``compute()`` once per (``tag``, catalog, ``reqs`` on the catalog's keys); see the module doc.

    ``compute`` must look at ``reqs`` only through intersections with the types' and offerings'
    requirements. The answer is shared: callers copy it before changing it.
    """
    ident = tuple(map(id, types))
    entry = _MEMO.get(ident)
    if entry is None:
        defined = {k for it in types for k in it.requirements}
        defined.update(k for it in types for o in it.offerings for k in o.requirements)
        if len(_MEMO) >= _MAX_CATALOGS:
            _MEMO.clear()
        entry = _MEMO[ident] = (tuple(types), frozenset(defined), {})
    _, keys, answers = entry
    sig = (tag, frozenset((k, reqs.get(k)) for k in reqs if k in keys))
    if sig not in answers:
        answers[sig] = compute()
    out: T = answers[sig]
    return out
