"""The :class:`ClusterState` value and loading it from files (``nodewright cluster snapshot`` or kubectl).

Boundary: the one place that turns cluster state files (a ``List``, the API's typed lists, a
directory such as ``kubectl cluster-info dump --output-directory``, ``-`` for stdin) into a
:class:`ClusterState`; drift, health and planning read state files through :func:`load_cluster`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nodewright.api.core import (
    CSINode,
    DaemonSet,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodDisruptionBudget,
    StorageClass,
)
from nodewright.api.documents import Document
from nodewright.api.ec2nodeclass import EC2NodeClass
from nodewright.api.karpenter import NodeClaim, NodePool
from nodewright.api.loading import Objects, load_objects
from nodewright.api.nodeoverlay import NodeOverlay
from nodewright.cluster.controller import SNAPSHOT_API_VERSION, SNAPSHOT_KIND
from nodewright.cluster.kinds import BY_KIND, RAW_KINDS
from nodewright.crd import Release
from nodewright.errors import InputError

log = logging.getLogger("nodewright")


@dataclass(frozen=True, kw_only=True)
class ClusterState:
    """A snapshot of the objects of one cluster, in the order they were listed."""

    source: str = "<cluster>"
    pods: tuple[Pod, ...] = ()
    nodes: tuple[Node, ...] = ()
    daemonsets: tuple[DaemonSet, ...] = ()
    nodeclaims: tuple[NodeClaim, ...] = ()
    nodepools: tuple[NodePool, ...] = ()
    nodeclasses: tuple[EC2NodeClass, ...] = ()
    pvcs: tuple[PersistentVolumeClaim, ...] = ()
    pvs: tuple[PersistentVolume, ...] = ()
    storageclasses: tuple[StorageClass, ...] = ()
    csinodes: tuple[CSINode, ...] = ()
    nodeoverlays: tuple[NodeOverlay, ...] = ()
    pdbs: tuple[PodDisruptionBudget, ...] = ()
    # NodeClaims kept as raw documents (``load_cluster(..., raw_nodeclaims=True)``): readers robust
    # to any shape (drift, health) skip building 10,000 models they would dump back to mappings
    raw_nodeclaims: tuple[Document, ...] = ()
    raw_nodes: tuple[Document, ...] = ()  # likewise Nodes (``raw_nodes=True``)
    # Kinds of kinds.RAW_KINDS (Deployments, ReplicaSets, ..., NodeOverlays, CapacityBuffers) as
    # documents, by kind: read with :meth:`raw`
    raw_objects: Mapping[str, tuple[Document, ...]] = field(default_factory=dict)
    # From the snapshot's ClusterSnapshot item: kinds the cluster did not serve, and the running
    # Karpenter controller (namespace/name) with its settings (stack config keys: featureGates...)
    skipped_kinds: tuple[str, ...] = ()
    karpenter_controller: str | None = None
    karpenter_settings: Mapping[str, object] = field(default_factory=dict)
    _node_index: dict[str, Node] = field(default_factory=dict, compare=False, repr=False)
    # views of ``pods`` by name, each with the pods tuple it was taken from (a copy made with other
    # pods shares this dict but never reads a stale view); a caller that keeps them may hand them in
    _views: dict[str, tuple[tuple[Pod, ...], tuple[Pod, ...]]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def node(self, name: str) -> Node | None:
        if not self._node_index and self.nodes:
            self._node_index.update({n.metadata.name: n for n in self.nodes})
        return self._node_index.get(name)

    def raw(self, kind: str) -> tuple[Document, ...]:
        """The documents of one kind of ``kinds.RAW_KINDS`` (e.g. ``"Deployment"``), in listed order."""
        return self.raw_objects.get(kind, ())

    def unbound_pods(self) -> tuple[Pod, ...]:
        """The pods without a node, in listed order."""
        return self._view("unbound", lambda p: not p.spec.node_name)

    def affinity_pods(self) -> tuple[Pod, ...]:
        """The pods with an affinity stanza, in listed order."""
        return self._view("affinity", lambda p: p.spec.affinity is not None)

    def daemon_pods(self) -> tuple[Pod, ...]:
        """The pods with a DaemonSet among their owners, in listed order."""
        return self._view(
            "daemons", lambda p: any(o.kind == "DaemonSet" for o in p.metadata.owner_references)
        )

    def _view(self, name: str, keep: Callable[[Pod], bool]) -> tuple[Pod, ...]:
        got = self._views.get(name)
        if got is not None and got[0] is self.pods:
            return got[1]
        view = tuple(p for p in self.pods if keep(p))
        self._views[name] = (self.pods, view)
        return view

    def pods_on(self, node_name: str) -> list[Pod]:
        return [p for p in self.pods if p.spec.node_name == node_name]

    @property
    def empty(self) -> bool:
        """No node and no pod: almost certainly the wrong file, context or namespace."""
        return not self.nodes and not self.pods and not self.raw_nodes

    def empty_note(self) -> str:
        return (
            f"{self.source}: the cluster state has no nodes and no pods; drift impact and pool health "
            "are empty (wrong file or kube context? capture it with `nodewright cluster snapshot`)"
        )


def has_daemonset_owner(pod: Pod) -> bool:
    """A DaemonSet is among the pod's owners (any API version): :meth:`ClusterState.daemon_pods`."""
    return any(o.kind == "DaemonSet" for o in pod.metadata.owner_references)


def _raw_and_record(documents: Sequence[Document]) -> dict[str, object]:
    """The raw kinds and the ``ClusterSnapshot`` record among ``documents`` (ClusterState fields)."""
    raw: dict[str, list[Document]] = {}
    out: dict[str, object] = {}
    for doc in documents:
        kind = doc.body.get("kind", "")  # Document.kind, inline: every document passes here
        if type(kind) is not str:
            kind = str(kind)
        if kind in RAW_KINDS:
            if doc.api_version != BY_KIND[kind].api_version:
                log.warning(
                    "%s:%s: ignoring %s %r of apiVersion %s (nodewright reads %s)",
                    doc.file, doc.path or "<root>", kind, doc.name, doc.api_version, BY_KIND[kind].api_version,
                )  # fmt: skip
                continue
            raw.setdefault(kind, []).append(doc)
        elif kind == SNAPSHOT_KIND and doc.api_version == SNAPSHOT_API_VERSION:
            out.update(_record(doc))
    out["raw_objects"] = {k: tuple(v) for k, v in raw.items()}
    return out


def _record(doc: Document) -> dict[str, object]:
    body = doc.body
    skipped = body.get("skippedKinds") or []
    if not isinstance(skipped, list) or not all(
        isinstance(s, Mapping) and isinstance(s.get("kind"), str) for s in skipped
    ):
        raise InputError(
            "expected a list of {kind, apiVersion, reason}", file=doc.file, path=doc.at("skippedKinds")
        )
    karpenter = body.get("karpenter") or {}
    settings = karpenter.get("settings") if isinstance(karpenter, Mapping) else None
    controller = karpenter.get("controller") if isinstance(karpenter, Mapping) else None
    if not isinstance(settings or {}, Mapping) or not isinstance(controller, str | None):
        raise InputError(
            "expected {controller: namespace/name, settings: {featureGates: ...}}",
            file=doc.file,
            path=doc.at("karpenter"),
        )
    return {
        "skipped_kinds": tuple(str(s["kind"]) for s in skipped),
        "karpenter_controller": controller,
        "karpenter_settings": dict(settings or {}),
    }


def cluster_from_objects(objs: Objects, *, source: str = "<cluster>") -> ClusterState:
    return ClusterState(
        source=source,
        pods=tuple(objs.pods),
        nodes=tuple(objs.nodes),
        daemonsets=tuple(objs.daemonsets),
        nodeclaims=tuple(objs.nodeclaims),
        nodepools=tuple(objs.nodepools),
        nodeclasses=tuple(objs.nodeclasses),
        pvcs=tuple(objs.pvcs),
        pvs=tuple(objs.pvs),
        storageclasses=tuple(objs.storageclasses),
        csinodes=tuple(objs.csinodes),
        nodeoverlays=tuple(objs.nodeoverlays),
        pdbs=tuple(objs.pdbs),
        raw_nodeclaims=tuple(objs.raw.get("NodeClaim", ())),
        raw_nodes=tuple(objs.raw.get("Node", ())),
        **_raw_and_record(objs.documents),  # type: ignore[arg-type]
    )


# a state listing none of these is almost certainly the wrong file (workloads alone are a what-if)
_STATE_KINDS = frozenset({"Node", "Pod", "Deployment", "ReplicaSet", "StatefulSet", "Job", "CapacityBuffer"})


def load_cluster(
    path: str | Path | Iterable[str | Path],
    *,
    source: str | None = None,
    kinds: Collection[str] | None = None,
    pods_where: Callable[[Mapping[str, Any]], bool] | None = None,
    raw_nodeclaims: bool = False,
    raw_nodes: bool = False,
    release: Release | None = None,
) -> ClusterState:
    """Read cluster state files: a ``List`` or typed lists (``NodeList``...), a directory, ``-``.

    Items of kind Pod, Node, DaemonSet, NodeClaim, NodePool, EC2NodeClass, PVC, PV, StorageClass
    CSINode, NodeOverlay and PodDisruptionBudget are used; other kinds are ignored with a warning. Malformed objects are errors
    naming file and path. A state without nodes and pods is a warning naming the file.

    For large states a reader may build only what it uses: ``kinds`` (the kinds to build),
    ``pods_where`` (a test on a raw Pod: others are never built) and ``raw_nodeclaims`` (NodeClaims
    kept as documents in ``raw_nodeclaims``) go to :func:`~nodewright.api.loading.load_objects`.
    """
    paths = [path] if isinstance(path, str | Path) else list(path)
    objs = load_objects(
        paths,
        kinds=kinds,
        pods_where=pods_where,
        raw_kinds=(*(["NodeClaim"] if raw_nodeclaims else []), *(["Node"] if raw_nodes else [])),
        release=release,
    )
    state = cluster_from_objects(objs, source=source or ", ".join(str(p) for p in paths))
    if not any(d.kind in _STATE_KINDS for d in objs.documents):
        log.warning("%s", state.empty_note())
    return state


def resolve_cluster(
    spec: str,
    *,
    base_dir: Path | None = None,
    kubeconfig: str | None = None,
    context: str | None = None,
    release: Release | None = None,
) -> ClusterState:
    """``live`` (the cluster the kubeconfig/context points at) or a state file path (relative to ``base_dir``)."""
    if spec == LIVE:
        from nodewright.cluster.live import load_live

        state = load_live(kubeconfig=kubeconfig, context=context)
        if state.empty:
            log.warning("%s", state.empty_note())
        return state
    path = Path(spec) if base_dir is None or spec == "-" else base_dir / spec
    return load_cluster(path, source=spec, release=release)


LIVE = "live"
"""The ``clusterState`` value (stack config) that reads the live cluster instead of a file."""
