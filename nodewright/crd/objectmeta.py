"""ObjectMeta as the API server decodes and checks it for a custom resource, on create and update.

Boundary: one ``metadata`` mapping in (edited in place: unknown fields dropped, ``null`` label and
annotation values stored as ``""``, a cluster-scoped object's namespace cleared), problems out
through ``add(path, message)``. Translated from k8s.io/apimachinery v0.35 ``pkg/api/validation/
objectmeta.go`` (``ValidateObjectMetaAccessor``, ``ValidateObjectMetaAccessorUpdate``,
``ValidateOwnerReferences``, ``ValidateFinalizers``, ``ValidateAnnotations``), ``pkg/apis/meta/v1/
validation`` (``ValidateLabels``) and the decoding in k8s.io/apiextensions-apiserver
``pkg/apiserver/schema/objectmeta/coerce.go`` (strict JSON into ``metav1.ObjectMeta``: a field of
the wrong type is an error, an unknown field a strict-decoding error, ``null`` into a string map
value is Go's zero value ``""``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from nodewright.crd.k8svalidation import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
)
from nodewright.crd.values import kind_of, show
from nodewright.errors import typo_hint

Add = Callable[[str, str], None]

# ObjectMeta's fields and the JSON type each decodes from (Go's metav1.ObjectMeta).
OBJECT_META_FIELDS: Final[dict[str, str]] = {
    "name": "string",
    "generateName": "string",
    "namespace": "string",
    "selfLink": "string",
    "uid": "string",
    "resourceVersion": "string",
    "generation": "integer",
    "creationTimestamp": "string",
    "deletionTimestamp": "string",
    "deletionGracePeriodSeconds": "integer",
    "labels": "map",
    "annotations": "map",
    "ownerReferences": "array",
    "finalizers": "array",
    "managedFields": "array",
}
OWNER_REFERENCE_FIELDS: Final[dict[str, str]] = {
    "apiVersion": "string",
    "kind": "string",
    "name": "string",
    "uid": "string",
    "controller": "boolean",
    "blockOwnerDeletion": "boolean",
}
ANNOTATIONS_MAX_BYTES: Final = 256 * 1024
# Fields the API server sets itself: an update that omits them keeps the live object's values.
SERVER_FIELDS: Final = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
    "managedFields",
)
IMMUTABLE_FIELDS: Final = (
    "name",
    "namespace",
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)
_ORPHAN: Final = "orphan"
_FOREGROUND: Final = "foregroundDeletion"


def _typed(add: Add, path: str, value: Any, want: str) -> bool:
    got = kind_of(value)
    ok = got == want or (want == "map" and got == "object")
    if not ok:
        fix = "; quote it" if want == "string" and got in ("integer", "number", "boolean") else ""
        add(path, f"must be of type {'object' if want == 'map' else want}, got {got} {show(value)}{fix}")
    return ok


def decode_metadata(add: Add, meta: Any) -> dict[str, Any] | None:
    """``meta`` as strict decoding into ObjectMeta leaves it (in place), or None when it is not an
    object. Every field of the wrong type and every unknown field is reported."""
    if not isinstance(meta, dict):
        add("metadata", f"must be of type object, got {kind_of(meta)}")
        return None
    for key in list(meta):
        want = OBJECT_META_FIELDS.get(key)
        at = f"metadata.{key}"
        if want is None:
            hint = typo_hint(key, sorted(OBJECT_META_FIELDS))
            add(at, f'unknown field "{key}"{hint}; ObjectMeta has no such field')
            del meta[key]
            continue
        value = meta[key]
        if value is None:  # null decodes to the zero value: absent
            del meta[key]
            continue
        if not _typed(add, at, value, want):
            del meta[key]
            continue
        if want == "map":
            for k in list(value):
                if value[k] is None:
                    value[k] = ""  # Go's json: null into a map[string]string value stores ""
                elif not isinstance(value[k], str):
                    add(
                        f"{at}[{k}]",
                        f"must be of type string, got {kind_of(value[k])} {show(value[k])}; quote it",
                    )
        elif key == "finalizers":
            for i, f in enumerate(value):
                if not isinstance(f, str):
                    add(f"{at}[{i}]", f"must be of type string, got {kind_of(f)} {show(f)}")
        elif key == "ownerReferences":
            for i, ref in enumerate(value):
                _decode_owner_reference(add, f"{at}[{i}]", ref)
    return meta


def _decode_owner_reference(add: Add, at: str, ref: Any) -> None:
    if not _typed(add, at, ref, "object"):
        return
    for key in list(ref):
        want = OWNER_REFERENCE_FIELDS.get(key)
        if want is None:
            hint = typo_hint(key, sorted(OWNER_REFERENCE_FIELDS))
            add(f"{at}.{key}", f'unknown field "{key}"{hint}; an OwnerReference has no such field')
            del ref[key]
        elif ref[key] is not None and not _typed(add, f"{at}.{key}", ref[key], want):
            del ref[key]


def _str(meta: dict[str, Any], key: str) -> str:
    value = meta.get(key)
    return value if isinstance(value, str) else ""


def check_metadata(add: Add, meta: Any, *, namespaced: bool) -> None:
    """ObjectMeta as the API server checks it on create (``ValidateObjectMetaAccessor``)."""
    if meta is None:
        add("metadata.name", 'required field "name" is missing; every object needs metadata.name')
        return
    given = isinstance(meta, dict) and meta.get("name") not in (None, "")
    decoded = decode_metadata(add, meta)
    if decoded is None:
        return
    generate = _str(decoded, "generateName")
    name = _str(decoded, "name")
    if generate:
        # validated as a prefix: a trailing "-" is allowed (NameIsDNSSubdomain with prefix=true)
        for err in is_dns1123_subdomain(generate[:-1] if generate.endswith("-") else generate):
            add("metadata.generateName", f"invalid generateName {show(generate)}: {err}")
    if name:
        for err in is_dns1123_subdomain(name):
            add("metadata.name", f"invalid name {show(name)}: {err}")
    elif not generate and not given:  # (a name of the wrong type is already reported)
        add(
            "metadata.name",
            'required field "name" is missing; every object needs metadata.name (or generateName)',
        )
    # else the API server generates the name: the prefix (at most 58 characters of it) and 5
    # random lowercase alphanumerics, valid whenever the generateName is
    if not namespaced:
        decoded.pop("namespace", None)  # rest.BeforeCreate clears it on a cluster-scoped object
    _check_common(add, decoded, namespaced=namespaced)
    _check_finalizers(add, decoded.get("finalizers") or [])


def check_metadata_update(add: Add, meta: Any, old: Any, *, namespaced: bool) -> None:
    """ObjectMeta of an update (``ValidateObjectMetaAccessorUpdate``) of the live object ``old``:
    server-set fields ``meta`` omits keep their live values (as ``kubectl apply`` sends them);
    name, namespace, uid, creation/deletion timestamps are immutable; labels, annotations and
    owner references are checked (finalizers only against additions while deleting)."""
    if meta is None:
        return
    decoded = decode_metadata(add, meta)
    if decoded is None or not isinstance(old, dict):
        return
    for key in SERVER_FIELDS:
        if key not in decoded and key in old:
            decoded[key] = old[key]
    if not namespaced:
        decoded.pop("namespace", None)
    for key in IMMUTABLE_FIELDS:
        if decoded.get(key) != old.get(key):
            add(
                f"metadata.{key}",
                f"field is immutable: {show(old.get(key))} in the base, {show(decoded.get(key))} now; "
                "a changed identity is a delete and a create",
            )
    if old.get("deletionTimestamp"):
        extra = sorted(set(decoded.get("finalizers") or []) - set(old.get("finalizers") or []))
        if extra:
            add(
                "metadata.finalizers",
                f"no new finalizers can be added if the object is being deleted, found new finalizers {extra}",
            )
    _check_common(add, decoded, namespaced=namespaced, update=True)


def _check_common(add: Add, meta: dict[str, Any], *, namespaced: bool, update: bool = False) -> None:
    namespace = _str(meta, "namespace")
    if namespaced and namespace and not update:
        for err in is_dns1123_label(namespace):
            add("metadata.namespace", f"invalid namespace {show(namespace)}: {err}")
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        add("metadata.generation", f"{generation} must be greater than or equal to 0")
    for k, v in (meta.get("labels") or {}).items():
        at = f"metadata.labels[{k}]"
        for err in is_qualified_name(k):
            add(at, f"invalid label key {show(k)}: {err}")
        if isinstance(v, str):
            for err in is_valid_label_value(v):
                add(at, f"invalid label value {show(v)}: {err}")
    annotations = meta.get("annotations") or {}
    size = 0
    for k, v in annotations.items():
        for err in is_qualified_name(k.lower()):
            add(f"metadata.annotations[{k}]", f"invalid annotation key {show(k)}: {err}")
        size += len(k.encode()) + (len(v.encode()) if isinstance(v, str) else 0)
    if size > ANNOTATIONS_MAX_BYTES:
        add(
            "metadata.annotations",
            f"annotations total {size} bytes, at most {ANNOTATIONS_MAX_BYTES} (256 KiB) are allowed",
        )
    _check_owner_references(add, meta.get("ownerReferences") or [])


def _check_owner_references(add: Add, refs: list[Any]) -> None:
    first_controller = ""
    for i, ref in enumerate(refs):
        if not isinstance(ref, dict):
            continue
        at = f"metadata.ownerReferences[{i}]"
        api_version = ref.get("apiVersion") or ""
        kind = ref.get("kind") or ""
        parts = api_version.split("/")
        version = "" if len(parts) > 2 else parts[-1]
        if not version:
            add(f"{at}.apiVersion", f"invalid apiVersion {show(api_version)}: version must not be empty")
        for field in ("kind", "name", "uid"):
            if not ref.get(field):
                add(f"{at}.{field}", f'required field "{field}" must not be empty')
        if api_version == "v1" and kind == "Event":
            add(at, "/v1, Kind=Event is disallowed from being an owner")
        if ref.get("controller") is True:
            current = f"{kind}/{ref.get('name') or ''}"
            if first_controller:
                add(
                    at,
                    'Only one reference can have Controller set to true. Found "true" in references for '
                    f"{first_controller} and {current}",
                )
            else:
                first_controller = current


def _check_finalizers(add: Add, finalizers: list[Any]) -> None:
    names = [f for f in finalizers if isinstance(f, str)]
    for i, f in enumerate(finalizers):
        if isinstance(f, str):
            for err in is_qualified_name(f):
                add(f"metadata.finalizers[{i}]", f"invalid finalizer {show(f)}: {err}")
    if _ORPHAN in names and _FOREGROUND in names:
        add("metadata.finalizers", f"finalizer {_ORPHAN} and {_FOREGROUND} cannot be both set")
