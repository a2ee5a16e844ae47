"""The cluster would reject it: NodePool / EC2NodeClass CRs checked against the shipped CRDs.

Pure functions, no ``pulumi``: :func:`check_crd_valid` runs :func:`nodewright.crd.admit_object`
(the same path every command and the Pulumi program load through: structural schema, CEL rules,
defaults, Karpenter's runtime checks) on the CR's inputs, so a CR built some other way than from
the stack's files (where the program itself already stops with file and field) is still caught
before ``up``. :func:`check_crd_update` admits the CR as an update of the same CR in the base
branch's preview (policy config ``base``: a ``nodewright preview -o json`` file): what only an
update can break (transition rules such as an immutable ``nodeClassRef`` group/kind or a NodePool
switching between static and dynamic, immutable metadata), which a create-time check cannot see.

The release is the stack's: the ``karpenterVersion`` the program's NodePool/NodeClass components
declare (:func:`stack_release`), so these are stack policies (a resource policy sees one resource,
never the stack's release).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from nodewright import crd, reader
from nodewright.errors import NodewrightError
from nodewright.policy.resources import (
    EC2NODECLASS_CR,
    NODECLASS_COMPONENT,
    NODEPOOL_COMPONENT,
    NODEPOOL_CR,
    ResourceView,
)

_KINDS: Final = {NODEPOOL_CR: "NodePool", EC2NODECLASS_CR: "EC2NodeClass"}


def _body(props: Mapping[str, Any], kind: str) -> dict[str, Any]:
    body = dict(props)
    body.setdefault("apiVersion", crd.API_VERSIONS[kind])
    body.setdefault("kind", kind)
    return body


def stack_release(resources: Sequence[ResourceView]) -> crd.Release:
    """The Karpenter release the stack's program declared (its components' ``karpenterVersion``);
    the default release for resources built without nodewright's components."""
    for r in resources:
        if r.type in (NODEPOOL_COMPONENT, NODECLASS_COMPONENT):
            version = r.props.get("karpenterVersion")
            if isinstance(version, str) and version:
                return crd.release(version, source=r.name)
    return crd.default_release()


def check_crd_valid(resource: ResourceView, config: Mapping[str, Any], *, release: crd.Release) -> list[str]:
    """Every problem the API server (and Karpenter's runtime validation) would find in the CR."""
    kind = _KINDS.get(resource.type)
    if kind is None:
        return []
    admitted = crd.admit_object(_body(resource.props, kind), kind=kind, file=resource.name, rel=release)
    return [
        f"{p.file}: {p.path or '<root>'}: {p.message} (Karpenter {release.version} would reject the {kind})"
        for p in admitted.problems
    ]


def check_crds_valid(resources: Sequence[ResourceView], config: Mapping[str, Any]) -> list[tuple[str, str]]:
    """:func:`check_crd_valid` on every CR of the stack, with the stack's release."""
    release = stack_release(resources)
    return [(r.urn, m) for r in resources for m in check_crd_valid(r, config, release=release)]


@functools.lru_cache(maxsize=4)
def _base_crs(path: str, mtime_ns: int) -> dict[tuple[str, str], dict[str, Any]]:
    """The CRs of a base preview document by (type, metadata.name)."""
    doc = reader.load_json(reader.read_text(path), file=path)
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for r in doc.get("resources") or [] if isinstance(doc, dict) else []:
        if isinstance(r, dict) and r.get("type") in _KINDS and isinstance(r.get("inputs"), dict):
            name = (r["inputs"].get("metadata") or {}).get("name")
            if isinstance(name, str):
                out.setdefault((r["type"], name), r["inputs"])
    return out


def base_crs(path: str) -> dict[tuple[str, str], dict[str, Any]]:
    """The CRs of the base preview at ``path`` (re-read when the file changes)."""
    return _base_crs(path, Path(path).stat().st_mtime_ns)


def check_crd_update(resource: ResourceView, config: Mapping[str, Any], *, release: crd.Release) -> list[str]:
    """What the API server would refuse when the CR replaces the base branch's CR of the same name
    (only the problems an update adds: a create-time problem is ``karpenter-crd-valid``'s)."""
    kind = _KINDS.get(resource.type)
    base = str(config.get("base") or "")
    if kind is None or not base:
        return []
    try:
        olds = base_crs(base)
    except (NodewrightError, OSError) as exc:
        return [f"{resource.name}: could not read the base preview {base!r}: {exc}"]
    body = _body(resource.props, kind)
    name = (body.get("metadata") or {}).get("name")
    old = olds.get((resource.type, name)) if isinstance(name, str) else None
    if old is None:
        return []  # a create
    created = {
        (p.path, p.message) for p in crd.admit(body, kind=kind, file=resource.name, rel=release).problems
    }
    updated = crd.admit_update(body, _body(old, kind), kind=kind, file=resource.name, rel=release)
    return [
        f"{p.file}: {p.path or '<root>'}: {p.message} (Karpenter {release.version} would reject this update of "
        f"the {kind} {name!r} in the base; to change it, delete and recreate the {kind} under a new name)"
        for p in updated.problems
        if (p.path, p.message) not in created
    ]


def check_crds_update(resources: Sequence[ResourceView], config: Mapping[str, Any]) -> list[tuple[str, str]]:
    """:func:`check_crd_update` on every CR of the stack, with the stack's release."""
    if not config.get("base"):
        return []
    release = stack_release(resources)
    return [(r.urn, m) for r in resources for m in check_crd_update(r, config, release=release)]
