"""Reading NodePools and EC2NodeClasses for hashing and drift, through the one loading path.

Boundary: files -> :class:`~nodewright.api.documents.Document` objects by kind, after
:func:`nodewright.api.loading.load_objects` validated every object of the files against the
Karpenter release's CRDs passed in (``release``). Each document's body is the object as the cluster stores it
(CRD defaults applied: what Karpenter hashes) or, with ``as_written=True``, exactly as written.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from nodewright import crd
from nodewright.api.base import TopLevel
from nodewright.api.documents import Document
from nodewright.api.loading import Objects, load_objects
from nodewright.drift.nodeclasshash import NodeClassHash, hash_nodeclass
from nodewright.drift.nodepoolhash import NodePoolHash, hash_nodepool
from nodewright.errors import InputError, InputErrors, NodewrightError, Problem

log = logging.getLogger("nodewright")


def as_documents(objs: Sequence[TopLevel], *, as_written: bool = False) -> list[Document]:
    """Validated objects back as documents: stored (defaulted) bodies, or as written."""
    out: list[Document] = []
    for obj in objs:
        body = obj.written_body if as_written else obj.stored_body
        if body is None:
            body = obj.to_k8s()
        out.append(Document(file=obj.origin_file, path=obj.origin_path(), body=body))
    return out


def read_objects(paths: Iterable[str | Path], *, release: crd.Release) -> Objects:
    """Every object of the files, validated by ``release``'s CRDs (the one loading path)."""
    return load_objects(paths, release=release)


def read_kind(
    paths: Iterable[str | Path], kind: str, *, release: crd.Release, as_written: bool = False
) -> list[Document]:
    """The validated NodePools or EC2NodeClasses of the files, as documents."""
    objs = read_objects(paths, release=release)
    items: Sequence[TopLevel] = objs.nodepools if kind == "NodePool" else objs.nodeclasses
    return as_documents(items, as_written=as_written)


def defaulted_nodepool_hash(
    body: Mapping[str, Any], *, release: crd.Release, file: str = "<input>", path: str = ""
) -> str:
    """The hash Karpenter stamps on ``body``: of the NodePool as the cluster stores it (validated by
    ``release``'s CRD, defaults applied). Raises InputErrors when the cluster would reject it."""
    admitted = crd.admit_object(body, kind="NodePool", file=file, path=path, runtime=False, rel=release)
    if not admitted.ok:
        raise InputErrors(admitted.problems)
    return hash_nodepool(Document(file=file, path=path, body=admitted.body), release=release).hash


def hash_documents(
    paths: Iterable[str | Path],
    *,
    as_written: bool = False,
    crd_defaults: bool | None = None,
    ca_bundle: str | None = None,
    release: crd.Release,
) -> list[NodePoolHash | NodeClassHash]:
    """``nodewright hash``: the hash of every NodePool, then of every EC2NodeClass, in file order.

    By default the hash of the object as the cluster stores it (CRD defaults applied), which is
    what Karpenter stamps; ``as_written=True`` hashes the file's text as is. ``crd_defaults`` is
    the old spelling (True = the default now; False = as written). Hashes and versions are
    ``release``'s: its EC2NodeClass hash includes the cluster CA bundle (``ca_bundle``, the cluster
    info's ``caBundle``) when it is v5 (Karpenter >= v1.12). Every bad object is reported.
    """
    paths = list(paths)
    if crd_defaults is not None:
        as_written = not crd_defaults
    objs = read_objects(paths, release=release)
    pools = as_documents(objs.nodepools, as_written=as_written)
    classes = as_documents(objs.nodeclasses, as_written=as_written)
    if not pools and not classes:
        raise InputError(
            "no NodePool (apiVersion karpenter.sh/v1, kind NodePool) or EC2NodeClass found; "
            "give the file that holds them with -f",
            file=", ".join(str(p) for p in paths) or "<input>",
        )
    if classes and ca_bundle is None and release.ec2nodeclass_hash_ca_bundle:
        log.warning(
            "EC2NodeClass hashes include the cluster CA bundle since Karpenter v1.12; without --cluster-info "
            "they are computed with an empty one and differ from the in-cluster value"
        )
    out: list[NodePoolHash | NodeClassHash] = []
    problems: list[Problem] = []
    for doc in pools:
        try:
            out.append(hash_nodepool(doc, release=release))
        except InputErrors as exc:
            problems.extend(exc.problems)
        except InputError as exc:
            problems.append(exc.problem)
    for doc in classes:
        try:
            out.append(hash_nodeclass(doc, ca_bundle=ca_bundle, release=release))
        except InputErrors as exc:
            problems.extend(exc.problems)
        except InputError as exc:
            problems.append(exc.problem)
    if len(problems) == 1:
        p = problems[0]
        raise InputError(p.message, file=p.file, path=p.path)
    if problems:
        raise InputErrors(problems)
    return out


__all__ = [
    "NodewrightError",
    "as_documents",
    "defaulted_nodepool_hash",
    "hash_documents",
    "read_kind",
    "read_objects",
]
