"""A per-resource diff of two preview documents, as ``pulumi preview --diff`` summarises it.

Boundary: pure over two ``nodewright preview -o json`` documents (the base branch's and the PR's).
Each custom resource (components are grouping only) is ``create`` (only in the PR), ``delete``
(only in the base), ``update`` (changed input paths), ``replace`` (a changed path the provider
cannot update in place), or ``same``. Replace-on-change properties per resource type follow the
providers' schemas (pulumi-aws marks them ``forceNew``/replaceOnChanges; Kubernetes objects are
replaced when their identity — apiVersion, kind, name, namespace — or a Secret's ``type``
changes). Each changed leaf carries its old and new value (:class:`ValueChange`), shortened
(:data:`VALUE_WIDTH` characters, then ``…``) and never a secret: secret inputs, values the one
redactor (:mod:`nodewright.redact`) finds a secret in, and user data (shown in its own section,
decoded and redacted) print as ``[secret]`` or are left out. A launch template's user data is
compared through the documents' ``userData`` section instead.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from nodewright import redact
from nodewright.policy.resources import LAUNCH_TEMPLATE

# Top-level input properties whose change replaces the resource (provider semantics).
REPLACE_ON: Final[Mapping[str, frozenset[str]]] = {
    LAUNCH_TEMPLATE: frozenset({"name", "namePrefix"}),
    "aws:iam/instanceProfile:InstanceProfile": frozenset({"name", "namePrefix", "path"}),
    "aws:ec2/instance:Instance": frozenset(
        {
            "ami",
            "availabilityZone",
            "subnetId",
            "launchTemplate",
            "instanceMarketOptions",
            "keyName",
            "privateIp",
            "placementGroup",
            "tenancy",
            "hostId",
            "ebsBlockDevices",
            "ephemeralBlockDevices",
            "networkInterfaces",
            "cpuOptions",
            "associatePublicIpAddress",
        }
    ),
}
_K8S_IDENTITY: Final = frozenset({"apiVersion", "kind", "metadata.name", "metadata.namespace"})
CHANGES: Final = ("create", "update", "replace", "delete")


VALUE_WIDTH: Final = 40
"""A value longer than this prints as its first characters and ``…``."""
MAX_VALUES: Final = 50
"""Changed leaves kept per resource in the document (the comment shows fewer)."""
ABSENT: Final = "(none)"


@dataclass(frozen=True, kw_only=True)
class ValueChange:
    """One changed input leaf: its path and its old and new values, shortened and redacted."""

    path: str
    before: str
    after: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "before": self.before, "after": self.after}

    def text(self) -> str:
        return f"{self.path}: {self.before} → {self.after}"


@dataclass(frozen=True, kw_only=True)
class ResourceChange:
    type: str
    name: str
    op: str  # create | update | replace | delete | same
    fields: tuple[str, ...] = ()  # changed input paths (update/replace)
    replace_because: tuple[str, ...] = ()
    values: tuple[ValueChange, ...] = ()  # old -> new per changed leaf (at most MAX_VALUES)
    more_values: int = 0  # changed leaves left out of ``values``

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "name": self.name, "op": self.op}
        if self.fields:
            out["fields"] = list(self.fields)
        if self.replace_because:
            out["replaceBecause"] = list(self.replace_because)
        if self.values:
            out["values"] = [v.as_dict() for v in self.values]
        if self.more_values:
            out["moreValues"] = self.more_values
        return out


def _flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping) and value:
        for k in sorted(value):
            yield from _flatten(value[k], f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(value, list) and value:
        for i, v in enumerate(value):
            yield from _flatten(v, f"{prefix}[{i}]")
    else:
        yield prefix, value


def changed_paths(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """Leaf paths whose value differs (added, removed or changed), sorted."""
    return [p for p, _, _ in changed_values(before, after)]


def changed_values(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """(path, old, new) of every leaf whose value differs, sorted by path; absent is :data:`_MISSING`."""
    a, b = dict(_flatten(before)), dict(_flatten(after))
    return [
        (p, a.get(p, _MISSING), b.get(p, _MISSING))
        for p in sorted(set(a) | set(b))
        if a.get(p, _MISSING) != b.get(p, _MISSING)
    ]


_MISSING: Final = object()


def _leaf_key(path: str) -> str:
    return path.rsplit(".", 1)[-1].split("[")[0] or path


def show_value(path: str, value: Any, *, secret: bool = False) -> str:
    """A value as the diff prints it: short, one line, ``[secret]`` when it is or holds a secret."""
    if value is _MISSING:
        return ABSENT
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    if secret or value == redact.REDACTED:
        return redact.REDACTED
    # the redactor recognises secrets by content and by field name (caBundle, token, ...)
    if redact.contains_secret(text) or redact.contains_secret(json.dumps({_leaf_key(path): text})):
        return redact.REDACTED
    text = " ".join(text.split())
    return text if len(text) <= VALUE_WIDTH else text[: VALUE_WIDTH - 1] + "…"


def _show_pair(path: str, old: Any, new: Any, *, secret: bool) -> tuple[str, str]:
    """Both values shown; two long strings sharing a long start are shown from a little before
    where they differ (``…150313-v1 → …150313``), so the cut never hides the change."""
    if not secret and isinstance(old, str) and isinstance(new, str) and max(len(old), len(new)) > VALUE_WIDTH:
        common = next(
            (i for i, (x, y) in enumerate(zip(old, new, strict=False)) if x != y), min(len(old), len(new))
        )
        if common > 12:
            a, b = show_value(path, old), show_value(path, new)
            if redact.REDACTED in (a, b):
                return a, b
            start = common - 8
            return show_value(path, "…" + old[start:]), show_value(path, "…" + new[start:])
    return show_value(path, old, secret=secret), show_value(path, new, secret=secret)


def _values(
    before: Mapping[str, Any], after: Mapping[str, Any], secret: frozenset[str]
) -> tuple[tuple[ValueChange, ...], int]:
    out: list[ValueChange] = []
    changed = changed_values(before, after)
    for path, old, new in changed[:MAX_VALUES]:
        hidden = path in secret or any(path.startswith(s + ".") or path.startswith(s + "[") for s in secret)
        shown_old, shown_new = _show_pair(path, old, new, secret=hidden)
        out.append(ValueChange(path=path, before=shown_old, after=shown_new))
    return tuple(out), max(0, len(changed) - MAX_VALUES)


def _top(path: str) -> str:
    return path.split(".")[0].split("[")[0]


def _replace_reasons(typ: str, paths: list[str]) -> list[str]:
    if typ.startswith("kubernetes:"):
        identity = _K8S_IDENTITY | ({"type"} if typ == "kubernetes:core/v1:Secret" else frozenset())
        return sorted({p for p in paths if p in identity or _top(p) in identity})
    keys = REPLACE_ON.get(typ, frozenset())
    return sorted({_top(p) for p in paths if _top(p) in keys})


def _summarise(paths: list[str], limit: int = 6) -> tuple[str, ...]:
    """Changed paths folded to their first two segments (``tags.team``, ``metadataOptions.httpTokens``)."""
    out: list[str] = []
    for p in paths:
        short = ".".join(p.split(".")[:2])
        if short not in out:
            out.append(short)
    return tuple(out[:limit] + ([f"... ({len(out) - limit} more)"] if len(out) > limit else []))


def diff_documents(base: Mapping[str, Any], head: Mapping[str, Any]) -> list[ResourceChange]:
    """Every custom resource of either document with its change, in (type, name) order."""

    def index(doc: Mapping[str, Any]) -> dict[tuple[str, str], Mapping[str, Any]]:
        return {(r["type"], r["name"]): r for r in doc.get("resources", []) if r.get("custom", True)}

    def user_data(doc: Mapping[str, Any]) -> dict[str, str]:
        return {u["launchTemplate"]: u["content"] for u in doc.get("userData", [])}

    before, after = index(base), index(head)
    ud_before, ud_after = user_data(base), user_data(head)
    out: list[ResourceChange] = []
    for key in sorted(set(before) | set(after)):
        typ, name = key
        if key not in before:
            out.append(ResourceChange(type=typ, name=name, op="create"))
            continue
        if key not in after:
            out.append(ResourceChange(type=typ, name=name, op="delete"))
            continue
        b_in, a_in = before[key].get("inputs") or {}, after[key].get("inputs") or {}
        paths = changed_paths(b_in, a_in)
        secret = frozenset([*before[key].get("secretInputs", []), *after[key].get("secretInputs", [])])
        if typ == LAUNCH_TEMPLATE:  # user data has its own section (decoded, redacted, diffed)
            b_in = {k: v for k, v in b_in.items() if k != "userData"}
            a_in = {k: v for k, v in a_in.items() if k != "userData"}
        values, more = _values(b_in, a_in, secret)
        if typ == LAUNCH_TEMPLATE and ud_before.get(name) != ud_after.get(name):
            paths = sorted({*paths, "userData"})
        if not paths:
            out.append(ResourceChange(type=typ, name=name, op="same"))
            continue
        reasons = _replace_reasons(typ, paths)
        out.append(
            ResourceChange(
                type=typ,
                name=name,
                op="replace" if reasons else "update",
                fields=_summarise(paths),
                replace_because=tuple(reasons),
                values=values,
                more_values=more,
            )
        )
    return out


def counts(changes: list[ResourceChange]) -> dict[str, int]:
    """Changes per op, ``same`` included."""
    out = {op: 0 for op in (*CHANGES, "same")}
    for c in changes:
        out[c.op] += 1
    return out
