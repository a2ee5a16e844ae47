"""Pairing an update's values with the old object's, and the API server's equality for ratcheting.

Boundary: pure over values and :class:`~nodewright.crd.schema.Schema` nodes. Follows
k8s.io/apiserver v0.35 ``pkg/cel/common/equality.go`` (``CorrelatedObject``: object fields and map
entries pair by key, ``x-kubernetes-list-type: map`` items by their keys, other list items not at
all; ``CachedDeepEqual``).
"""

from __future__ import annotations

import json
from typing import Any, Final

from nodewright.crd.schema import Schema

ABSENT: Final = object()  # no correlated old value (a create, or a node the update cannot pair)


def same(a: Any, b: Any, s: Schema | None = None) -> bool:
    """The API server's equality for ratcheting (``CorrelatedObject.CachedDeepEqual``): exact types
    (``1`` is not ``true`` nor ``1.5``), objects by key, ``x-kubernetes-list-type: map`` lists by
    their keys (order does not matter), other lists item by item."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        if len(a) != len(b):
            return False
        for k, v in a.items():
            if k not in b:
                return False
            sub = (s.properties.get(k) or s.additional) if s is not None else None
            if not same(v, b[k], sub):
                return False
        return True
    if isinstance(a, list):
        if len(a) != len(b):
            return False
        if s is not None and s.list_type == "map" and s.list_map_keys:
            olds = map_list(b, s)
            return all(
                (o := olds.get(map_key(x, s), ABSENT)) is not ABSENT and same(x, o, s.items) for x in a
            )
        item = s.items if s is not None else None
        return all(same(x, y, item) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def map_key(item: Any, s: Schema) -> str:
    if not isinstance(item, dict):
        return ""
    return json.dumps([item.get(k) for k in s.list_map_keys])


def map_list(items: list[Any], s: Schema) -> dict[str, Any]:
    """The old items of an ``x-kubernetes-list-type: map`` list by their keys (the only lists whose
    items the API server pairs with old items); empty for other lists."""
    if s.list_type != "map" or not s.list_map_keys:
        return {}
    return {map_key(item, s): item for item in items if isinstance(item, dict)}
