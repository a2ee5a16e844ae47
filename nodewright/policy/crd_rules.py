"""The cluster would reject it: NodePool / EC2NodeClass CRs checked against the shipped CRDs.

Pure function, no ``pulumi``: runs :func:`nodewright.crd.admit_object` (the same path every
command and the Pulumi program load through: structural schema, CEL rules, defaults, Karpenter's
runtime checks) on the CR's inputs, so a CR built some other way than from the stack's files
(where the program itself already stops with file and field) is still caught before ``up``.

The release is the stack's: the ``karpenterVersion`` the program's NodePool/NodeClass components
declare (:func:`stack_release`), so these are stack policies (a resource policy sees one resource,
never the stack's release).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from nodewright import crd
from nodewright.policy.resources import (
    EC2NODECLASS_CR,
    NODECLASS_COMPONENT,
    NODEPOOL_COMPONENT,
    NODEPOOL_CR,
    ResourceView,
)

_KINDS: Final = {NODEPOOL_CR: "NodePool", EC2NODECLASS_CR: "EC2NodeClass"}


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
    body = dict(resource.props)
    body.setdefault("apiVersion", crd.API_VERSIONS[kind])
    body.setdefault("kind", kind)
    admitted = crd.admit_object(body, kind=kind, file=resource.name, rel=release)
    return [
        f"{p.file}: {p.path or '<root>'}: {p.message} (Karpenter {release.version} would reject the {kind})"
        for p in admitted.problems
    ]


def check_crds_valid(resources: Sequence[ResourceView], config: Mapping[str, Any]) -> list[tuple[str, str]]:
    """:func:`check_crd_valid` on every CR of the stack, with the stack's release."""
    release = stack_release(resources)
    return [(r.urn, m) for r in resources for m in check_crd_valid(r, config, release=release)]
