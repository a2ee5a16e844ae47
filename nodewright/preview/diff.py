"""A per-resource diff of two preview documents, as ``pulumi preview --diff`` summarises it.

Boundary: pure over two ``nodewright preview -o json`` documents (the base branch's and the PR's).
Each custom resource (components are grouping only) is ``create`` (only in the PR), ``delete``
(only in the base), ``update`` (changed input paths), ``replace`` (a changed path the provider
cannot update in place), or ``same``. Replace-on-change properties per resource type follow the
providers' schemas (pulumi-aws marks them ``forceNew``/replaceOnChanges; Kubernetes objects are
replaced when their identity — apiVersion, kind, name, namespace — or a Secret's ``type``
changes). Secret inputs show as ``[secret]`` on both sides; a launch template's user data is
compared through the documents' ``userData`` section (decoded, redacted) instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

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


@dataclass(frozen=True, kw_only=True)
class ResourceChange:
    type: str
    name: str
    op: str  # create | update | replace | delete | same
    fields: tuple[str, ...] = ()  # changed input paths (update/replace)
    replace_because: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "name": self.name, "op": self.op}
        if self.fields:
            out["fields"] = list(self.fields)
        if self.replace_because:
            out["replaceBecause"] = list(self.replace_because)
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
    a, b = dict(_flatten(before)), dict(_flatten(after))
    return sorted(p for p in set(a) | set(b) if a.get(p, _MISSING) != b.get(p, _MISSING))


_MISSING: Final = object()


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
        paths = changed_paths(before[key].get("inputs") or {}, after[key].get("inputs") or {})
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
            )
        )
    return out


def counts(changes: list[ResourceChange]) -> dict[str, int]:
    """Changes per op, ``same`` included."""
    out = {op: 0 for op in (*CHANGES, "same")}
    for c in changes:
        out[c.op] += 1
    return out
