"""The :class:`ClusterState` value and loading it from ``kubectl get -o json`` files."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from nodewright.api.core import (
    CSINode,
    DaemonSet,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    StorageClass,
)
from nodewright.api.karpenter import NodeClaim, NodePool
from nodewright.api.loading import Objects, load_objects


@dataclass(frozen=True, kw_only=True)
class ClusterState:
    """A snapshot of the objects of one cluster, in the order they were listed."""

    source: str = "<cluster>"
    pods: tuple[Pod, ...] = ()
    nodes: tuple[Node, ...] = ()
    daemonsets: tuple[DaemonSet, ...] = ()
    nodeclaims: tuple[NodeClaim, ...] = ()
    nodepools: tuple[NodePool, ...] = ()
    pvcs: tuple[PersistentVolumeClaim, ...] = ()
    pvs: tuple[PersistentVolume, ...] = ()
    storageclasses: tuple[StorageClass, ...] = ()
    csinodes: tuple[CSINode, ...] = ()
    _node_index: dict[str, Node] = field(default_factory=dict, compare=False, repr=False)

    def node(self, name: str) -> Node | None:
        if not self._node_index and self.nodes:
            self._node_index.update({n.metadata.name: n for n in self.nodes})
        return self._node_index.get(name)

    def pods_on(self, node_name: str) -> list[Pod]:
        return [p for p in self.pods if p.spec.node_name == node_name]


def cluster_from_objects(objs: Objects, *, source: str = "<cluster>") -> ClusterState:
    return ClusterState(
        source=source,
        pods=tuple(objs.pods),
        nodes=tuple(objs.nodes),
        daemonsets=tuple(objs.daemonsets),
        nodeclaims=tuple(objs.nodeclaims),
        nodepools=tuple(objs.nodepools),
        pvcs=tuple(objs.pvcs),
        pvs=tuple(objs.pvs),
        storageclasses=tuple(objs.storageclasses),
        csinodes=tuple(objs.csinodes),
    )


def load_cluster(path: str | Path | Iterable[str | Path]) -> ClusterState:
    """Read a cluster state file (or several) in the ``kubectl get -A -o json`` List format.

    Items of kind Pod, Node, DaemonSet, NodeClaim, NodePool (and PVC, PV, StorageClass, CSINode
    where present) are used; other kinds are ignored with a warning. Malformed objects are
    errors naming file and path.
    """
    paths = [path] if isinstance(path, str | Path) else list(path)
    return cluster_from_objects(load_objects(paths), source=", ".join(str(p) for p in paths))
