"""The cluster would reject it: NodePool / EC2NodeClass CRs checked against the shipped CRDs.

Pure function, no ``pulumi``: runs :func:`nodewright.crd.admit_object` (the same path every
command and the Pulumi program load through: structural schema, CEL rules, defaults, Karpenter's
runtime checks) on the CR's inputs, so a CR built some other way than from the stack's files
(where the program itself already stops with file and field) is still caught before ``up``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from nodewright import crd
from nodewright.policy.resources import EC2NODECLASS_CR, NODEPOOL_CR, ResourceView

_KINDS: Final = {NODEPOOL_CR: "NodePool", EC2NODECLASS_CR: "EC2NodeClass"}


def check_crd_valid(resource: ResourceView, config: Mapping[str, Any]) -> list[str]:
    """Every problem the API server (and Karpenter's runtime validation) would find in the CR."""
    kind = _KINDS.get(resource.type)
    if kind is None:
        return []
    body = dict(resource.props)
    body.setdefault("apiVersion", crd.API_VERSIONS[kind])
    body.setdefault("kind", kind)
    admitted = crd.admit_object(body, kind=kind, file=resource.name)
    rel = crd.selected().version
    return [
        f"{p.file}: {p.path or '<root>'}: {p.message} (Karpenter {rel} would reject the {kind})"
        for p in admitted.problems
    ]
