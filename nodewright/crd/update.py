"""An update as the API server admits it: the new object against the one stored in the cluster.

Boundary: two raw objects in (the new one, and the old one as read from a file: it is admitted as
stored first, pruned and defaulted), the new object as stored and every problem out. Follows
k8s.io/apiextensions-apiserver v0.35 ``pkg/registry/customresource/strategy.go``
(``PrepareForUpdate``, ``ValidateUpdate``) with CRDValidationRatcheting on (the default since
Kubernetes 1.30, GA in 1.33): ObjectMeta as an update (immutable identity), schema and CEL
problems of a value unchanged from the old object are not errors (``pkg/apiserver/validation/
ratcheting.go``; an unchanged invalid field stays allowed), transition rules (``oldSelf``) run
wherever the old value can be paired (object fields and map entries by key, items of
``x-kubernetes-list-type: map`` lists by their keys; ``pkg/apiserver/schema/cel/validation.go``)
and are never ratcheted, list-set/map uniqueness is checked only when the old object passed it,
and the scale bound always applies.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nodewright.crd.admission import Admitted, run
from nodewright.crd.releases import Release


def admit_update(
    body: Mapping[str, Any],
    old: Mapping[str, Any],
    *,
    kind: str,
    file: str = "<input>",
    path: str = "",
    rel: Release | None = None,
) -> Admitted:
    """``body`` as the API server would store it as an update of ``old``, and every problem."""
    stored, old_walk = run(old, kind=kind, file="<base>", rel=rel)
    admitted, _ = run(
        body,
        kind=kind,
        file=file,
        path=path,
        rel=rel,
        old=stored.body,
        old_list_ok=not old_walk.list_problems,
    )
    return admitted
