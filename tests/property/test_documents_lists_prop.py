"""Properties of the document reader's list handling (nodewright/api/documents.py).

* several JSON values printed one after another (``kubectl cluster-info dump``) read back as the
  same documents, whatever the indentation and separators;
* a typed list (``NodeList``, ``PodList``...) yields its items in order, each with the list's kind
  (minus ``List``) and apiVersion unless the item names its own.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from nodewright.api.documents import documents_from_text
from nodewright.reader import parse_text

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12)
values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=3),
    max_leaves=8,
)
objects = st.dictionaries(names, values, min_size=1, max_size=4)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(objects, min_size=2, max_size=5),
    st.sampled_from([None, 1, 2]),
    st.sampled_from(["\n", "", " \n\n"]),
)
def test_concatenated_json_reads_back(docs: list[dict[str, Any]], indent: int | None, sep: str) -> None:
    text = sep.join(json.dumps(d, indent=indent) for d in docs)
    assert parse_text(text, file="dump") == docs


item_kinds = st.sampled_from(["Node", "Pod", "DaemonSet", "NodePool", "EC2NodeClass", "PersistentVolume"])


@settings(max_examples=100, deadline=None)
@given(
    item_kinds,
    st.lists(st.tuples(names, st.booleans()), max_size=6),
    st.sampled_from(["v1", "karpenter.sh/v1"]),
)
def test_typed_list_items_take_the_list_kind(
    kind: str, items: list[tuple[str, bool]], api_version: str
) -> None:
    body = {
        "apiVersion": api_version,
        "kind": f"{kind}List",
        "metadata": {},
        "items": [
            {"metadata": {"name": n}, **({"kind": "Other", "apiVersion": "x/v9"} if own else {})}
            for n, own in items
        ],
    }
    docs = documents_from_text(json.dumps(body), file="list.json")
    assert [d.name for d in docs] == [n for n, _ in items]
    for d, (_, own) in zip(docs, items, strict=True):
        assert (d.kind, d.api_version) == (("Other", "x/v9") if own else (kind, api_version))
    assert [d.path for d in docs] == [f"items[{i}]" for i in range(len(items))]
