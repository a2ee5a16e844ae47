"""Turning user files into validated API objects, reporting every problem with file and path.

``load_objects(paths)`` reads YAML/JSON (multi-document, ``kind: List`` unpacked). Karpenter's
kinds (NodePool, NodeClaim, EC2NodeClass, NodeOverlay) go through :func:`nodewright.crd.admit_object`, the one
validation path: the shipped CRDs of the Karpenter release passed in (``release=``) (schema, CEL rules, defaults,
as ``kubectl apply`` with strict field validation) and Karpenter's runtime checks; the pydantic
model is then built from the stored (defaulted) object, which the model also keeps
(``stored_body``/``written_body``) for hashing. Kubernetes kinds read from cluster state are built
by their lenient models. Every problem is collected into one
:class:`~nodewright.errors.InputErrors`. Unknown kinds are skipped with a warning; kinds other parts
of nodewright read themselves (OperatingSystemConfig, Secret, InstanceTypeCatalog) quietly.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

from pydantic import BaseModel, ValidationError

from nodewright import crd
from nodewright.api import validation
from nodewright.api.base import TopLevel
from nodewright.api.core import (
    CSINode,
    DaemonSet,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodDisruptionBudget,
    Secret,
    StorageClass,
)
from nodewright.api.documents import Document, load_documents
from nodewright.api.ec2nodeclass import EC2NodeClass
from nodewright.api.karpenter import NodeClaim, NodePool
from nodewright.api.nodeoverlay import NodeOverlay
from nodewright.api.pods import PodParts, build_pod
from nodewright.api.workloads import CapacityBuffer
from nodewright.crd import Release
from nodewright.errors import Collector, InputError, InputErrors, Problem, clip, typo_hint

log = logging.getLogger("nodewright")

T = TypeVar("T", bound=TopLevel)

# kind -> (accepted apiVersions, model, validator)
_Validator = Callable[[Any, Collector], None]
KINDS: dict[str, tuple[tuple[str, ...], type[TopLevel], _Validator | None]] = {
    "NodePool": (("karpenter.sh/v1",), NodePool, None),
    "NodeClaim": (("karpenter.sh/v1",), NodeClaim, None),
    "EC2NodeClass": (("karpenter.k8s.aws/v1",), EC2NodeClass, None),
    "NodeOverlay": (("karpenter.sh/v1alpha1",), NodeOverlay, None),
    "Pod": (("v1",), Pod, validation.check_pod_shape),
    "Node": (("v1",), Node, None),
    "DaemonSet": (("apps/v1",), DaemonSet, None),
    "PersistentVolumeClaim": (("v1",), PersistentVolumeClaim, None),
    "PersistentVolume": (("v1",), PersistentVolume, None),
    "StorageClass": (("storage.k8s.io/v1",), StorageClass, None),
    "CSINode": (("storage.k8s.io/v1",), CSINode, None),
    "Secret": (("v1",), Secret, None),
    "CapacityBuffer": (("autoscaling.x-k8s.io/v1beta1",), CapacityBuffer, None),
    "PodDisruptionBudget": (("policy/v1",), PodDisruptionBudget, None),
}
# Read by other modules from the raw documents; not an error, not a warning.
QUIET_KINDS = frozenset(
    {"OperatingSystemConfig", "InstanceTypeCatalog", "ConfigMap", "Namespace",
     # cluster state kept raw by nodewright.cluster (ClusterState.raw) and the snapshot's own record
     "Deployment", "ReplicaSet", "StatefulSet", "Job", "PodTemplate", "PodDisruptionBudget", "NodeOverlay",
     "CapacityBuffer", "ClusterSnapshot"}
)  # fmt: skip
# What a served retired version means (the live loader's wording; files get :func:`_version_hint`).
MIGRATION_HINT = {
    "karpenter.sh/v1beta1": "Karpenter v1.1+ serves only karpenter.sh/v1; migrate with Karpenter's v1 upgrade guide",
    "karpenter.k8s.aws/v1beta1": "Karpenter v1.1+ serves only karpenter.k8s.aws/v1; migrate with Karpenter's v1 upgrade guide",
}
# Kinds of other controllers a cluster state or a repository holds next to Karpenter's, by API
# group: skipped without a typo hint (EKS Auto Mode's NodeClass is not a misspelt EC2NodeClass).
FOREIGN_KINDS: dict[str, frozenset[str]] = {"eks.amazonaws.com": frozenset({"NodeClass", "NodeDiagnostic"})}
# Karpenter API groups whose older versions the release's CRDs no longer serve.
_KARPENTER_GROUPS = ("karpenter.sh/", "karpenter.k8s.aws/")


def checked_kind(kind: str) -> bool:
    """Whether loading validates objects of ``kind`` (a known model or one of the shipped CRDs)."""
    return kind in KINDS or kind in crd.API_VERSIONS


def _version_hint(kind: str, api_version: str, accepted: Sequence[str], release: Release | None) -> str:
    if api_version.startswith(_KARPENTER_GROUPS) and kind in crd.API_VERSIONS:
        rel = release or crd.release()
        return (
            f"the cluster (Karpenter v{rel.version}'s CRDs) serves only {crd.API_VERSIONS[kind]}; "
            "migrate with Karpenter's v1 upgrade guide"
        )
    return f"use apiVersion {accepted[0]}"


@dataclass
class Objects:
    """Every object read, by kind, in file order."""

    nodepools: list[NodePool] = field(default_factory=list)
    nodeclasses: list[EC2NodeClass] = field(default_factory=list)
    nodeclaims: list[NodeClaim] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    daemonsets: list[DaemonSet] = field(default_factory=list)
    pvcs: list[PersistentVolumeClaim] = field(default_factory=list)
    pvs: list[PersistentVolume] = field(default_factory=list)
    storageclasses: list[StorageClass] = field(default_factory=list)
    csinodes: list[CSINode] = field(default_factory=list)
    secrets: list[Secret] = field(default_factory=list)
    capacitybuffers: list[CapacityBuffer] = field(default_factory=list)
    nodeoverlays: list[NodeOverlay] = field(default_factory=list)
    pdbs: list[PodDisruptionBudget] = field(default_factory=list)
    documents: list[Document] = field(default_factory=list)
    raw: dict[str, list[Document]] = field(default_factory=dict)  # kinds read unbuilt (``raw_kinds``)
    # With a base (``load_objects(..., base=...)``): Karpenter objects by what applying them does.
    changes: dict[str, list[str]] = field(default_factory=dict)  # create/update/delete -> Kind/name

    def nodeclass(self, name: str) -> EC2NodeClass | None:
        for nc in self.nodeclasses:
            if nc.name == name:
                return nc
        return None


_BUCKET = {
    "NodePool": "nodepools",
    "EC2NodeClass": "nodeclasses",
    "NodeClaim": "nodeclaims",
    "Pod": "pods",
    "Node": "nodes",
    "DaemonSet": "daemonsets",
    "PersistentVolumeClaim": "pvcs",
    "PersistentVolume": "pvs",
    "StorageClass": "storageclasses",
    "CSINode": "csinodes",
    "Secret": "secrets",
    "CapacityBuffer": "capacitybuffers",
    "NodeOverlay": "nodeoverlays",
    "PodDisruptionBudget": "pdbs",
}


def _json_path(base: str, loc: Sequence[int | str]) -> str:
    out = base
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif out:
            out += f".{part}"
        else:
            out = str(part)
    return out


def _field_names(model: type[BaseModel], loc: Sequence[int | str]) -> list[str]:
    """The wire names of the fields valid at ``loc`` (for typo hints on unknown fields)."""
    current: Any = model
    for part in loc:
        if isinstance(part, int) or current is None:
            continue
        fields = getattr(current, "model_fields", None)
        if not fields:
            return []
        nxt = None
        for name, info in fields.items():
            if part in (name, info.alias):
                nxt = info.annotation
                break
        current = _unwrap_model(nxt)
    fields = getattr(current, "model_fields", None) or {}
    return [info.alias or name for name, info in fields.items()]


def _unwrap_model(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _unwrap_model(arg)
        if found is not None:
            return found
    return None


def _problems_from(exc: ValidationError, *, model: type[BaseModel], doc: Document) -> list[Problem]:
    problems: list[Problem] = []
    for err in exc.errors():
        loc = list(err["loc"])
        kind = err["type"]
        if kind == "extra_forbidden":
            name = str(loc[-1])
            known = _field_names(model, loc[:-1])
            msg = f'unknown field "{name}"{typo_hint(name, known)}; Karpenter\'s CRD has no such field'
        elif kind == "missing":
            msg = f'required field "{loc[-1]}" is missing'
        elif kind == "literal_error":
            msg = f"unsupported value {err.get('input')!r}: {err['msg']}"
        else:
            msg = (
                f"{err['msg']} (got {clip(repr(err.get('input')), 80)})"
                if "input" in err
                else str(err["msg"])
            )
        problems.append(Problem(file=doc.file, path=_json_path(doc.path, loc), message=msg))
    return problems


def build(doc: Document, model: type[T], *, release: Release | None = None) -> T:
    """One document as ``model``; raises InputErrors naming file and path on a bad shape.

    Karpenter's kinds go through :func:`nodewright.crd.admit_object` first (the one validation
    path), and the model is built from the stored (defaulted) object.
    """
    kind = getattr(model.model_fields.get("kind"), "default", None)
    if isinstance(kind, str) and kind in crd.API_VERSIONS:
        admitted = crd.admit_object(doc.body, kind=kind, file=doc.file, path=doc.path, rel=release)
        if not admitted.ok:
            raise InputErrors(admitted.problems)
        obj, problems = _build_lenient(Document(file=doc.file, path=doc.path, body=admitted.body), model)
        if obj is not None:
            obj.set_bodies(doc.body, admitted.body)
    else:
        obj, problems = _build_lenient(doc, model)
    if problems or obj is None:
        raise InputErrors(problems)
    return obj


def _strip(body: Any, loc: Sequence[int | str]) -> None:
    """Remove the value at ``loc`` from a nested dict/list (for retrying past unknown fields)."""
    cur = body
    for part in loc[:-1]:
        try:
            cur = cur[part]
        except (KeyError, IndexError, TypeError):
            return
    if isinstance(cur, dict):
        cur.pop(loc[-1], None)


def _build_lenient(doc: Document, model: type[T]) -> tuple[T | None, list[Problem]]:
    """Build ``model``; on unknown fields only, report them and build without them anyway so the
    semantic rules can still report everything else in the same pass."""
    try:
        obj = model.model_validate(doc.body)
    except ValidationError as exc:
        problems = _problems_from(exc, model=model, doc=doc)
        errors = exc.errors()
        if any(e["type"] != "extra_forbidden" for e in errors):
            return None, problems
        body = copy.deepcopy(dict(doc.body))
        for e in errors:
            _strip(body, list(e["loc"]))
        try:
            obj = model.model_validate(body)
        except ValidationError:
            return None, problems
        obj.set_origin(doc.file, doc.path)
        return obj, problems
    obj.set_origin(doc.file, doc.path)
    return obj, []


def object_key(doc: Document) -> tuple[str, str, str]:
    """How the API server names an object: kind, namespace (namespaced kinds only), name."""
    namespaced = doc.kind not in crd.API_VERSIONS or crd.crd(doc.kind).scope == "Namespaced"
    meta = doc.body.get("metadata")
    namespace = meta.get("namespace") if namespaced and isinstance(meta, Mapping) else None
    return doc.kind, str(namespace or ""), doc.name


def base_index(docs: Iterable[Document]) -> dict[tuple[str, str, str], Document]:
    """The base's Karpenter objects by :func:`object_key` (the first of a repeated name wins)."""
    out: dict[tuple[str, str, str], Document] = {}
    for doc in docs:
        if doc.kind in crd.API_VERSIONS and doc.name:
            out.setdefault(object_key(doc), doc)
    return out


def _show_key(key: tuple[str, str, str]) -> str:
    kind, namespace, name = key
    return f"{kind}/{namespace}/{name}" if namespace else f"{kind}/{name}"


def unbound_pods(body: Mapping[str, Any]) -> bool:
    """A cheap test on a raw Pod: not bound to a node (only those can be pending)."""
    spec = body.get("spec")
    return not ((type(spec) is dict or isinstance(spec, Mapping)) and spec.get("nodeName"))


_UNIQUE_NAMES: Final = frozenset({"NodePool", "EC2NodeClass", "NodeClaim", "Node", "NodeOverlay"})
"""The kinds whose names must be unique in an input (a repeated name is an error)."""


def objects_from_documents(
    docs: Iterable[Document],
    *,
    kinds: Collection[str] | None = None,
    pods_where: Callable[[Mapping[str, Any]], bool] | None = None,
    raw_kinds: Collection[str] = (),
    base: Iterable[Document] | None = None,
    release: Release | None = None,
) -> Objects:
    """Build and validate every known object; collect every problem before raising.

    ``base``: the objects as they are in the cluster (e.g. the base branch's files). A Karpenter
    object whose kind and name (namespace where namespaced) are in the base is admitted as an
    update of it (transition rules, ratcheting, immutable fields); the others are creates, and
    base objects absent here are deletes (listed in ``Objects.changes``, never an error).
    Karpenter's kinds are admitted by ``release``'s CRDs (None: the default release).

    ``kinds`` limits the work to the kinds a caller reads (others are skipped unbuilt, quietly);
    ``pods_where`` keeps only the Pods whose raw body passes it (the rest are never built), so a
    command reading a few fields of a big cluster pays for what it reads. ``raw_kinds`` (with the
    right apiVersion) are kept as documents in ``Objects.raw`` for readers robust to any shape.
    """
    out = Objects()
    problems: list[Problem] = []
    seen: dict[tuple[str, str, str], Document] = {}
    olds = base_index(base) if base is not None else None
    pod_parts: PodParts = {}
    pod_shape = validation.PodShapes()
    documents_append = out.documents.append
    for doc in docs:
        documents_append(doc)
        # Document.kind, inline: this loop sees every document of a cluster state (40,000s)
        kind = doc.body.get("kind", "")
        if type(kind) is not str:
            kind = str(kind)
        if not kind:
            problems.append(
                Problem(
                    file=doc.file,
                    path=doc.at("kind"),
                    message="missing kind; every object needs apiVersion and kind",
                )
            )
            continue
        if kind in raw_kinds and doc.api_version in KINDS[kind][0]:
            out.raw.setdefault(kind, []).append(doc)
            continue
        if kinds is not None and kind in KINDS and kind not in kinds:
            continue
        if pods_where is not None and kind == "Pod" and not pods_where(doc.body):
            continue
        if kind not in KINDS:
            if kind not in QUIET_KINDS and kind not in FOREIGN_KINDS.get(doc.api_version.split("/")[0], ()):
                log.warning(
                    "%s:%s: ignoring unknown kind %s %r%s",
                    doc.file,
                    doc.path or "<root>",
                    kind,
                    doc.name,
                    typo_hint(kind, [*KINDS, *QUIET_KINDS]),
                )
            continue
        versions, model, validator = KINDS[kind]
        if kind in crd.API_VERSIONS and not (release or crd.release()).ships(kind):
            rel = release or crd.release()
            problems.append(
                Problem(
                    file=doc.file,
                    path=doc.at("kind"),
                    message=f"Karpenter v{rel.version} does not serve {kind} (its CRDs have no such kind); "
                    "select a release that does with --karpenter-version",
                )
            )
            continue
        if doc.api_version not in versions:
            hint = _version_hint(kind, doc.api_version, versions, release)
            problems.append(
                Problem(
                    file=doc.file,
                    path=doc.at("apiVersion"),
                    message=f'unsupported apiVersion "{doc.api_version}" for {kind}; {hint}',
                )
            )
            continue
        if kind in crd.API_VERSIONS:
            old = None
            if olds is not None:
                key = object_key(doc)
                old_doc = olds.get(key)
                old = old_doc.body if old_doc is not None else None
                out.changes.setdefault("update" if old is not None else "create", []).append(_show_key(key))
            admitted = crd.admit_object(
                doc.body, kind=kind, file=doc.file, path=doc.path, old=old, rel=release
            )
            if not admitted.ok:
                problems.extend(admitted.problems)
                continue
            obj, shape_problems = _build_lenient(
                Document(file=doc.file, path=doc.path, body=admitted.body), model
            )
            if obj is not None:
                obj.set_bodies(doc.body, admitted.body)
        elif model is Pod:
            obj, shape_problems = build_pod(doc, pod_parts, lambda d: _build_lenient(d, Pod))
        else:
            obj, shape_problems = _build_lenient(doc, model)
        problems.extend(shape_problems)
        if obj is None:
            continue
        if validator is not None:
            c = Collector(doc.file)
            if isinstance(obj, Pod):
                pod_shape(obj, c)
            else:
                validator(obj, c)
            problems.extend(c.problems)
        if kind in _UNIQUE_NAMES:
            meta = getattr(obj, "metadata", None)
            ident = (kind, getattr(meta, "namespace", None) or "", getattr(meta, "name", "") or "")
            first = seen.get(ident) if ident[2] else None
            if first is not None:
                problems.append(
                    Problem(
                        file=doc.file,
                        path=doc.at("metadata.name"),
                        message=f'duplicate {kind} "{ident[2]}" (first at {first.file}:{first.path or "<root>"}); names must be unique',
                    )
                )
                continue
            seen[ident] = doc
        getattr(out, _BUCKET[kind]).append(obj)
    if olds is not None:
        present = {object_key(d) for d in out.documents if d.kind in crd.API_VERSIONS}
        gone = [_show_key(k) for k in olds if k not in present]
        if gone:
            out.changes["delete"] = gone
    if problems:
        if len(problems) == 1:
            p = problems[0]
            raise InputError(p.message, file=p.file, path=p.path)
        raise InputErrors(problems)
    return out


KARPENTER_GROUPS = ("karpenter.sh/", "karpenter.k8s.aws/")
KARPENTER_KINDS = frozenset({"NodePool", "EC2NodeClass", "NodeClaim"})
"""apiVersion prefixes and kinds of Karpenter's own objects (what ``validate --skip-foreign`` keeps:
a NodePool with a wrong or missing apiVersion is still reported)."""


def load_objects(
    paths: Iterable[str | Path],
    *,
    kinds: Collection[str] | None = None,
    pods_where: Callable[[Mapping[str, Any]], bool] | None = None,
    raw_kinds: Collection[str] = (),
    base: Iterable[str | Path] | None = None,
    only_karpenter: bool = False,
    release: Release | None = None,
) -> Objects:
    """Read, build and validate every object in ``paths`` (see module docstring and
    :func:`objects_from_documents` for ``kinds``, ``pods_where``, ``raw_kinds``; ``base``: files
    of the objects as they are in the cluster, making each object with a base an update).

    ``only_karpenter`` drops, unread, every document whose apiVersion is not Karpenter's (a
    repository's other YAML: workflows, stack configs, other manifests), as a pre-commit hook
    handed every staged YAML file needs."""
    docs = load_documents(paths)
    if only_karpenter:
        docs = [d for d in docs if d.api_version.startswith(KARPENTER_GROUPS) or d.kind in KARPENTER_KINDS]
    base_docs = load_documents(base) if base is not None else None
    return objects_from_documents(
        docs, kinds=kinds, pods_where=pods_where, raw_kinds=raw_kinds, base=base_docs, release=release
    )


def load_nodepools(paths: Iterable[str | Path], *, release: Release | None = None) -> Objects:
    """Like :func:`load_objects`, but an input without any NodePool is an error."""
    paths = list(paths)
    objs = load_objects(paths, release=release)
    if not objs.nodepools:
        names = ", ".join(str(p) for p in paths)
        raise InputError(
            "no NodePool (apiVersion karpenter.sh/v1, kind NodePool) found", file=names or "<input>"
        )
    return objs
