"""Karpenter's own API decides: the shipped CRDs validate and default every Karpenter object.

Public API: :func:`admit_object` (the one function every loader calls: structural schema, CEL
rules and defaults as the API server applies them, then Karpenter's runtime checks),
:class:`Admitted`, the release table (:data:`RELEASES`, :func:`release`, :func:`choose_release`,
:class:`KarpenterChoice`, :func:`supported_versions`) and :func:`crd`. Modules: ``releases`` (which
release, which CRD folder, which hash versions), ``schema`` (CRD -> compiled schema tree),
``celrules`` (CEL programs and the Kubernetes extension functions), ``admission`` (prune, default,
validate), ``update`` (an update: ratcheting, transition rules), ``ratchet`` (pairing old and new
values, equality), ``subresources`` (status pruning, the scale bound), ``objectmeta`` (ObjectMeta
on create and update), ``regex`` (Go RE2 patterns), ``values`` (JSON-like value helpers),
``runtime`` (Karpenter's RuntimeValidate), ``k8svalidation`` (name/label syntax).
Nothing here knows about pydantic models, files or the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from nodewright.crd.admission import Admitted, admit
from nodewright.crd.releases import (
    DEFAULT_VERSION,
    RELEASES,
    KarpenterChoice,
    Release,
    check_gates,
    choose_release,
    default_release,
    release,
    supported_versions,
)
from nodewright.crd.runtime import ec2nodeclass_problems, nodeoverlay_problems, nodepool_problems
from nodewright.crd.schema import crd
from nodewright.crd.update import admit_update

# kind -> apiVersion the shipped CRDs serve.
API_VERSIONS: Final[dict[str, str]] = {
    "NodePool": "karpenter.sh/v1",
    "NodeClaim": "karpenter.sh/v1",
    "EC2NodeClass": "karpenter.k8s.aws/v1",
    "NodeOverlay": "karpenter.sh/v1alpha1",
    "OperatingSystemConfig": "extensions.gardener.cloud/v1alpha1",
    "CapacityBuffer": "autoscaling.x-k8s.io/v1beta1",
}


def admit_object(
    body: Mapping[str, Any],
    *,
    kind: str,
    file: str = "<input>",
    path: str = "",
    rel: Release | None = None,
    runtime: bool = True,
    old: Mapping[str, Any] | None = None,
) -> Admitted:
    """``body`` as the cluster would store it, and every problem: the API server's (CRD schema,
    CEL rules) and, when it would be accepted, Karpenter's runtime checks (``runtime=False``
    skips them, e.g. for objects read back from a cluster). With ``old`` (the object in the
    cluster, e.g. from the base branch) ``body`` is admitted as an update of it
    (:func:`nodewright.crd.update.admit_update`: transition rules, ratcheting, immutable fields)."""
    if old is not None:
        admitted = admit_update(body, old, kind=kind, file=file, path=path, rel=rel)
    else:
        admitted = admit(body, kind=kind, file=file, path=path, rel=rel)
    if admitted.ok and runtime:
        if kind == "NodePool":
            admitted.problems.extend(nodepool_problems(admitted.body, file=file, base=path))
        elif kind == "EC2NodeClass":
            admitted.problems.extend(ec2nodeclass_problems(admitted.body, file=file, base=path))
        elif kind == "NodeOverlay":
            admitted.problems.extend(nodeoverlay_problems(admitted.body, file=file, base=path))
    return admitted


__all__ = [
    "API_VERSIONS",
    "DEFAULT_VERSION",
    "RELEASES",
    "Admitted",
    "KarpenterChoice",
    "Release",
    "admit",
    "admit_object",
    "admit_update",
    "check_gates",
    "choose_release",
    "crd",
    "default_release",
    "release",
    "supported_versions",
]
