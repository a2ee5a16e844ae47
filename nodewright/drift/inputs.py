"""Reading NodePools and EC2NodeClasses for hashing and drift, as given (no CRD defaulting).

Boundary: files -> raw :class:`~nodewright.api.documents.Document` objects by kind. Hashing works
on what the user wrote (the lead's pydantic models fill CRD defaults, which the hash must not see
unless asked), so these readers keep the raw bodies.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from nodewright.api.documents import Document, load_documents
from nodewright.drift.nodeclasshash import NodeClassHash, hash_nodeclass
from nodewright.drift.nodepoolhash import NodePoolHash, hash_nodepool
from nodewright.errors import InputError, InputErrors, NodewrightError, Problem

log = logging.getLogger("nodewright")

KNOWN_KINDS: Final = frozenset(
    {
        "NodePool",
        "EC2NodeClass",
        "NodeClaim",
        "Pod",
        "Node",
        "DaemonSet",
        "PersistentVolumeClaim",
        "PersistentVolume",
        "StorageClass",
        "CSINode",
        "Secret",
        "OperatingSystemConfig",
    }
)


def read_documents(paths: Iterable[str | Path]) -> list[Document]:
    """Every document of the files; unknown kinds are dropped with a warning."""
    docs = []
    for doc in load_documents(paths):
        if doc.kind not in KNOWN_KINDS:
            log.warning("%s:%s: kind %r is not used here; ignored", doc.file, doc.path or "<root>", doc.kind)
            continue
        docs.append(doc)
    return docs


def of_kind(docs: Iterable[Document], kind: str) -> list[Document]:
    return [d for d in docs if d.kind == kind]


def hash_documents(
    paths: Iterable[str | Path], *, crd_defaults: bool = False, ca_bundle: str | None = None
) -> list[NodePoolHash | NodeClassHash]:
    """``nodewright hash``: the hash of every NodePool, then of every EC2NodeClass, in file order.

    EC2NodeClass hashes include the cluster CA bundle (``ca_bundle``, the cluster info's
    ``caBundle``). Every bad object is reported (one line each), not just the first.
    """
    paths = list(paths)
    docs = read_documents(paths)
    pools, classes = of_kind(docs, "NodePool"), of_kind(docs, "EC2NodeClass")
    if not pools and not classes:
        raise InputError(
            "no NodePool (apiVersion karpenter.sh/v1, kind NodePool) or EC2NodeClass found; "
            "give the file that holds them with -f",
            file=", ".join(str(p) for p in paths) or "<input>",
        )
    if classes and ca_bundle is None:
        log.warning(
            "EC2NodeClass hashes include the cluster CA bundle since Karpenter v1.12; without --cluster-info "
            "they are computed with an empty one and differ from the in-cluster value"
        )
    out: list[NodePoolHash | NodeClassHash] = []
    problems: list[Problem] = []
    for doc in [*pools, *classes]:
        try:
            if doc.kind == "NodePool":
                out.append(hash_nodepool(doc, crd_defaults=crd_defaults))
            else:
                out.append(hash_nodeclass(doc, ca_bundle=ca_bundle))
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


__all__ = ["NodewrightError", "hash_documents", "of_kind", "read_documents"]
