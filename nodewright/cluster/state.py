"""The :class:`ClusterState` value and loading it from files (``nodewright cluster snapshot`` or kubectl).

Boundary: the one place that turns cluster state files (a ``List``, the API's typed lists, a
directory such as ``kubectl cluster-info dump --output-directory``, ``-`` for stdin) into a
:class:`ClusterState`; drift, health and planning read state files through :func:`load_cluster`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Mapping
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
    StorageClass,
)
from nodewright.api.documents import Document
from nodewright.api.ec2nodeclass import EC2NodeClass
from nodewright.api.karpenter import NodeClaim, NodePool
from nodewright.api.loading import Objects, load_objects
from nodewright.api.workloads import CapacityBuffer, Deployment, Job, PodTemplate, ReplicaSet, StatefulSet

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
    # workloads and buffers: the pods their controllers would create are inputs of ``plan``
    deployments: tuple[Deployment, ...] = ()
    replicasets: tuple[ReplicaSet, ...] = ()
    statefulsets: tuple[StatefulSet, ...] = ()
    jobs: tuple[Job, ...] = ()
    podtemplates: tuple[PodTemplate, ...] = ()
    capacitybuffers: tuple[CapacityBuffer, ...] = ()
    # NodeClaims kept as raw documents (``load_cluster(..., raw_nodeclaims=True)``): readers robust
    # to any shape (drift, health) skip building 10,000 models they would dump back to mappings
    raw_nodeclaims: tuple[Document, ...] = ()
    raw_nodes: tuple[Document, ...] = ()  # likewise Nodes (``raw_nodes=True``)
    _node_index: dict[str, Node] = field(default_factory=dict, compare=False, repr=False)

    def node(self, name: str) -> Node | None:
        if not self._node_index and self.nodes:
            self._node_index.update({n.metadata.name: n for n in self.nodes})
        return self._node_index.get(name)

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
        deployments=tuple(objs.deployments),
        replicasets=tuple(objs.replicasets),
        statefulsets=tuple(objs.statefulsets),
        jobs=tuple(objs.jobs),
        podtemplates=tuple(objs.podtemplates),
        capacitybuffers=tuple(objs.capacitybuffers),
        raw_nodeclaims=tuple(objs.raw.get("NodeClaim", ())),
        raw_nodes=tuple(objs.raw.get("Node", ())),
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
) -> ClusterState:
    """Read cluster state files: a ``List`` or typed lists (``NodeList``...), a directory, ``-``.

    Items of kind Pod, Node, DaemonSet, NodeClaim, NodePool, EC2NodeClass, PVC, PV, StorageClass
    and CSINode are used; other kinds are ignored with a warning. Malformed objects are errors
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
    )
    state = cluster_from_objects(objs, source=source or ", ".join(str(p) for p in paths))
    if not any(d.kind in _STATE_KINDS for d in objs.documents):
        log.warning("%s", state.empty_note())
    return state


def resolve_cluster(
    spec: str, *, base_dir: Path | None = None, kubeconfig: str | None = None, context: str | None = None
) -> ClusterState:
    """``live`` (the cluster the kubeconfig/context points at) or a state file path (relative to ``base_dir``)."""
    if spec == LIVE:
        from nodewright.cluster.live import load_live

        state = load_live(kubeconfig=kubeconfig, context=context)
        if state.empty:
            log.warning("%s", state.empty_note())
        return state
    path = Path(spec) if base_dir is None or spec == "-" else base_dir / spec
    return load_cluster(path, source=spec)


LIVE = "live"
"""The ``clusterState`` value (stack config) that reads the live cluster instead of a file."""
