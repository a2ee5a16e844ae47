"""``NodePool.Hash()`` (hash version v3): the ``karpenter.sh/nodepool-hash`` Karpenter stamps.

Boundary: turns a NodePool (a raw mapping as read from YAML/JSON, a :class:`Document`, or the
lead's pydantic ``NodePool``) into the Go value of its ``spec.template`` (a thin adapter: only the
hashed fields are read) and hashes it with :mod:`nodewright.drift.hashstructure`. Bad hashed
fields (a duration like ``30x``, a label value that is not a string, no ``spec.template``) raise
:class:`~nodewright.errors.InputError` naming the file and the field.

This function hashes the mapping it is given. Callers that want what Karpenter stamps pass the
object as the cluster stores it (CRD defaults applied by :func:`nodewright.crd.admit_object`;
every command and the Pulumi program do, see :mod:`nodewright.drift.inputs`); on a raw mapping an
absent ``expireAfter`` hashes as absent (equal to ``Never``, what the golden vectors say), and
``crd_defaults=True`` inserts only its ``720h`` default.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from nodewright.crd import Release, regex
from nodewright.drift.gotypes import NODE_CLAIM_TEMPLATE
from nodewright.drift.hashstructure import KARPENTER_OPTIONS, GoTimeValue, hash_value
from nodewright.errors import Collector, InputError
from nodewright.goduration import NEVER, DurationError, parse_duration

log = logging.getLogger("nodewright")

DEFAULT_EXPIRE_AFTER: Final = "720h"
TAINT_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")

# CRD patterns (OpenAPI patterns are searched, not fully matched: kept verbatim).
# Compiled with RE2 as the API server does (``$`` only at the very end of the text).
_EXPIRE_AFTER_PATTERN: Final = r"^(([0-9]+(s|m|h))+)|(Never)$"
_TGP_PATTERN: Final = r"^([0-9]+(s|m|h))+$"

_TEMPLATE_KEYS: Final = frozenset({"metadata", "spec"})
_META_KEYS: Final = frozenset({"labels", "annotations"})
_SPEC_KEYS: Final = frozenset(
    {"taints", "startupTaints", "requirements", "nodeClassRef", "terminationGracePeriod", "expireAfter"}
)


@dataclass(frozen=True, kw_only=True)
class NodePoolHash:
    """What Karpenter stamps on a NodePool: ``karpenter.sh/nodepool-hash`` and its version."""

    name: str
    hash: str
    version: str

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "hash": self.hash, "version": self.version}


@dataclass(frozen=True, kw_only=True)
class Origin:
    """Where an object came from, for error lines."""

    file: str = "<input>"
    path: str = ""

    def at(self, sub: str) -> str:
        if not self.path:
            return sub
        return f"{self.path}.{sub}" if sub else self.path


def raw_body(obj: Any) -> Mapping[str, Any]:
    """``as_mapping(obj)[0]`` without the origin: a plain dict or a Document's dict body is
    returned at once (loops over 10,000s of NodeClaims and Nodes)."""
    if type(obj) is dict:
        return obj
    body = getattr(obj, "body", None)
    if type(body) is dict:
        return body
    return as_mapping(obj)[0]


def as_mapping(obj: Any) -> tuple[Mapping[str, Any], Origin]:
    """A raw mapping and its origin from a mapping, a Document, or a pydantic model."""
    if isinstance(obj, Mapping):
        return obj, Origin()
    body = getattr(obj, "body", None)
    if isinstance(body, Mapping):
        return body, Origin(file=str(getattr(obj, "file", "<input>")), path=str(getattr(obj, "path", "")))
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        raw = dump(by_alias=True, exclude_unset=True, mode="json")
        file = getattr(obj, "origin_file", None)
        path_fn = getattr(obj, "origin_path", None)
        path = path_fn() if callable(path_fn) else ""
        return raw, Origin(file=file if isinstance(file, str) else "<input>", path=str(path or ""))
    raise TypeError(f"cannot read a NodePool from {type(obj).__name__}")


def _duration(
    value: Any, *, field: str, pattern: str, never_ok: bool, c: Collector, where: str
) -> int | None:
    """Nanoseconds of a Go duration field (``None`` for Never / absent); problems go to ``c``."""
    if value is None:
        return None
    if not isinstance(value, str):
        c.add(where, f"{field} must be a duration string such as 720h, got {value!r}")
        return None
    if never_ok and value == NEVER:
        return None
    hint = "use a Go duration of whole hours, minutes or seconds such as 720h, 30m or 90s"
    if never_ok:
        hint += ", or Never"
    try:
        ns = parse_duration(value)
    except DurationError as exc:
        c.add(where, f"invalid duration {value!r} ({exc}); {hint}")
        return None
    if not regex.search(pattern, value):
        c.add(where, f"invalid duration {value!r}: Karpenter's CRD accepts only {pattern}; {hint}")
        return None
    return ns


def _string_map(value: Any, *, c: Collector, where: str) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        c.add(where, f"must be a mapping of strings, got {type(value).__name__}")
        return None
    out: dict[str, str] = {}
    for k, v in value.items():
        if not isinstance(k, str) or not isinstance(v, str):
            c.add(f"{where}.{k}", f"keys and values must be strings, got {v!r}; quote the value")
            continue
        out[k] = v
    return out


def _time(value: Any, *, c: Collector, where: str) -> GoTimeValue | None:
    if value is None:
        return None
    if not isinstance(value, str):
        c.add(where, f"must be an RFC 3339 timestamp, got {value!r}")
        return None
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        c.add(where, f"invalid RFC 3339 timestamp {value!r}; use the form 2024-01-02T15:04:05Z")
        return None
    if t.tzinfo is None:
        c.add(where, f"timestamp {value!r} has no zone; append Z or an offset")
        return None
    epoch = int(t.timestamp() // 1)
    # metav1.Time decodes into Local; Karpenter's image runs with Local = UTC (offset 0).
    return GoTimeValue(unix_seconds=epoch, nanos=t.microsecond * 1000, offset_seconds=0)


def _metav1_time(t: GoTimeValue | None) -> dict[str, Any] | None:
    """A ``*metav1.Time`` value: nil, or the struct holding its embedded ``time.Time``."""
    return None if t is None else {"Time": t}


def _taints(value: Any, *, c: Collector, where: str) -> list[dict[str, Any]] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        c.add(where, f"must be a list of taints, got {type(value).__name__}")
        return None
    out: list[dict[str, Any]] = []
    for i, t in enumerate(value):
        at = f"{where}[{i}]"
        if not isinstance(t, Mapping):
            c.add(at, "a taint must be a mapping with key, value and effect")
            continue
        key, val, effect = t.get("key"), t.get("value", ""), t.get("effect")
        if not isinstance(key, str) or not key:
            c.add(f"{at}.key", "a taint needs a non-empty string key")
        if val is None:
            val = ""
        if not isinstance(val, str):
            c.add(f"{at}.value", f"must be a string, got {val!r}; quote it")
        if effect not in TAINT_EFFECTS:
            c.add(f"{at}.effect", f"effect must be one of {', '.join(TAINT_EFFECTS)}, got {effect!r}")
        out.append(
            {
                "Key": key if isinstance(key, str) else "",
                "Value": val if isinstance(val, str) else "",
                "Effect": effect if isinstance(effect, str) else "",
                "TimeAdded": _metav1_time(_time(t.get("timeAdded"), c=c, where=f"{at}.timeAdded")),
            }
        )
    return out


def _warn_unknown(m: Mapping[str, Any], known: frozenset[str], *, origin: Origin, where: str) -> None:
    for k in m:
        if k not in known:
            log.warning(
                "%s:%s: unknown field %r is not part of Karpenter's NodeClaimTemplate (the API server prunes it; not hashed)",
                origin.file,
                f"{where}.{k}",
                k,
            )


def template_value(
    template: Any, *, origin: Origin | None = None, where: str = "spec.template", crd_defaults: bool = False
) -> dict[str, Any]:
    """The Go ``NodeClaimTemplate`` value of a raw ``spec.template`` mapping (validated)."""
    origin = origin or Origin()
    c = Collector(origin.file)
    w = origin.at(where)
    if not isinstance(template, Mapping):
        raise InputError(
            f"spec.template must be a mapping, got {type(template).__name__}", file=origin.file, path=w
        )
    _warn_unknown(template, _TEMPLATE_KEYS, origin=origin, where=w)
    meta = template.get("metadata")
    spec = template.get("spec")
    go_meta: dict[str, Any] = {}
    if meta is not None:
        if not isinstance(meta, Mapping):
            c.add(f"{w}.metadata", "must be a mapping with labels and annotations")
        else:
            _warn_unknown(meta, _META_KEYS, origin=origin, where=f"{w}.metadata")
            go_meta["Labels"] = _string_map(meta.get("labels"), c=c, where=f"{w}.metadata.labels")
            go_meta["Annotations"] = _string_map(
                meta.get("annotations"), c=c, where=f"{w}.metadata.annotations"
            )
    go_spec: dict[str, Any] = {}
    if spec is not None and not isinstance(spec, Mapping):
        c.add(f"{w}.spec", "must be a mapping")
        spec = None
    if spec is not None:
        _warn_unknown(spec, _SPEC_KEYS, origin=origin, where=f"{w}.spec")
        s = f"{w}.spec"
        go_spec["Taints"] = _taints(spec.get("taints"), c=c, where=f"{s}.taints")
        go_spec["StartupTaints"] = _taints(spec.get("startupTaints"), c=c, where=f"{s}.startupTaints")
        reqs = spec.get("requirements")
        if reqs is not None:
            if not isinstance(reqs, list):
                c.add(f"{s}.requirements", "must be a list of node selector requirements")
            go_spec["Requirements"] = [None] * len(reqs) if isinstance(reqs, list) else []
        ref = spec.get("nodeClassRef")
        if ref is not None:
            if not isinstance(ref, Mapping):
                c.add(f"{s}.nodeClassRef", "must be a mapping with group, kind and name")
            else:
                go_ref: dict[str, Any] = {}
                for go_name, key in (("Kind", "kind"), ("Name", "name"), ("Group", "group")):
                    v = ref.get(key, "")
                    if v is None:
                        v = ""
                    if not isinstance(v, str):
                        c.add(f"{s}.nodeClassRef.{key}", f"must be a string, got {v!r}")
                        continue
                    go_ref[go_name] = v
                go_spec["NodeClassRef"] = go_ref
        tgp = _duration(
            spec.get("terminationGracePeriod"),
            field="terminationGracePeriod",
            pattern=_TGP_PATTERN,
            never_ok=False,
            c=c,
            where=f"{s}.terminationGracePeriod",
        )
        if tgp is not None:
            go_spec["TerminationGracePeriod"] = {"Duration": tgp}
        raw_expire = spec.get("expireAfter")
        if raw_expire is None and crd_defaults:
            raw_expire = DEFAULT_EXPIRE_AFTER
        exp = _duration(
            raw_expire,
            field="expireAfter",
            pattern=_EXPIRE_AFTER_PATTERN,
            never_ok=True,
            c=c,
            where=f"{s}.expireAfter",
        )
        if exp is not None:
            go_spec["ExpireAfter"] = {"Duration": exp, "Raw": b""}
    elif crd_defaults:
        go_spec["ExpireAfter"] = {"Duration": parse_duration(DEFAULT_EXPIRE_AFTER), "Raw": b""}
    c.raise_if_any()
    return {"ObjectMeta": go_meta, "Spec": go_spec}


def template_hash(template: Any, *, origin: Origin | None = None, crd_defaults: bool = False) -> str:
    """The decimal ``karpenter.sh/nodepool-hash`` of a raw ``spec.template`` mapping."""
    value = template_value(template, origin=origin, crd_defaults=crd_defaults)
    return str(hash_value(value, NODE_CLAIM_TEMPLATE, KARPENTER_OPTIONS))


def nodepool_template(nodepool: Any) -> tuple[Mapping[str, Any], Origin]:
    """``spec.template`` of a NodePool (any accepted input form) and the NodePool's origin."""
    body, origin = as_mapping(nodepool)
    spec = body.get("spec")
    if not isinstance(spec, Mapping):
        raise InputError(
            "a NodePool needs spec.template (spec is missing); add spec.template.spec.nodeClassRef",
            file=origin.file,
            path=origin.at("spec"),
        )
    template = spec.get("template")
    if template is None:
        raise InputError(
            "a NodePool needs spec.template; add spec.template.spec with nodeClassRef and requirements",
            file=origin.file,
            path=origin.at("spec.template"),
        )
    return template, origin


def nodepool_name(nodepool: Any) -> str:
    body, _ = as_mapping(nodepool)
    meta = body.get("metadata")
    return str(meta.get("name", "")) if isinstance(meta, Mapping) else ""


def nodepool_hash(nodepool: Any, *, crd_defaults: bool = False) -> str:
    """``NodePool.Hash()``: the decimal hash of ``spec.template`` (requirements excluded)."""
    template, origin = nodepool_template(nodepool)
    return template_hash(template, origin=origin, crd_defaults=crd_defaults)


def hash_nodepool(nodepool: Any, *, release: Release, crd_defaults: bool = False) -> NodePoolHash:
    """The annotation pair ``release``'s Karpenter stamps on ``nodepool``."""
    return NodePoolHash(
        name=nodepool_name(nodepool),
        hash=nodepool_hash(nodepool, crd_defaults=crd_defaults),
        version=release.nodepool_hash_version,
    )
