"""ObjectMeta as the API server checks it when an object is created (name, labels, annotations).

Boundary: one ``metadata`` mapping in (edited in place: unknown fields dropped, a cluster-scoped
object's namespace cleared), problems out through ``add(path, message)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from nodewright.crd.k8svalidation import is_dns1123_subdomain, is_qualified_name, is_valid_label_value
from nodewright.crd.values import kind_of, show
from nodewright.errors import typo_hint

OBJECT_META_FIELDS: Final = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    }
)
ANNOTATIONS_MAX_BYTES: Final = 256 * 1024


def check_metadata(add: Callable[[str, str], None], meta: Any, *, namespaced: bool) -> None:
    """ObjectMeta as the API server checks it on create (name, labels, annotations)."""
    if meta is None:
        add("metadata.name", 'required field "name" is missing; every object needs metadata.name')
        return
    if not isinstance(meta, dict):
        add("metadata", f"must be of type object, got {kind_of(meta)}")
        return
    for key in list(meta):
        if key not in OBJECT_META_FIELDS:
            hint = typo_hint(key, sorted(OBJECT_META_FIELDS))
            add(f"metadata.{key}", f'unknown field "{key}"{hint}; ObjectMeta has no such field')
            del meta[key]
    name = meta.get("name")
    if name is None or name == "":
        if not meta.get("generateName"):
            add("metadata.name", 'required field "name" is missing; every object needs metadata.name')
    elif not isinstance(name, str):
        add("metadata.name", f"must be of type string, got {kind_of(name)} {show(name)}; quote it")
    else:
        for err in is_dns1123_subdomain(name):
            add("metadata.name", f"invalid name {show(name)}: {err}")
    if not namespaced:
        # The API server clears a namespace on a cluster-scoped object (rest.BeforeCreate).
        meta.pop("namespace", None)
    for field_name in ("labels", "annotations"):
        m = meta.get(field_name)
        if m is None:
            meta.pop(field_name, None)
            continue
        if not isinstance(m, dict):
            add(f"metadata.{field_name}", f"must be of type object, got {kind_of(m)}")
            continue
        size = 0
        for k, v in m.items():
            at = f"metadata.{field_name}[{k}]"
            for err in is_qualified_name(k):
                add(at, f"invalid key {show(k)}: {err}")
            if not isinstance(v, str):
                add(at, f"must be of type string, got {kind_of(v)} {show(v)}; quote the value")
                continue
            if field_name == "labels":
                for err in is_valid_label_value(v):
                    add(at, f"invalid label value {show(v)}: {err}")
            size += len(k) + len(v)
        if field_name == "annotations" and size > ANNOTATIONS_MAX_BYTES:
            add("metadata.annotations", f"annotations total {size} bytes, at most {ANNOTATIONS_MAX_BYTES}")
