"""The cluster side of a :class:`~nodewright.scheduling.topology.Topology`, derived once and shared
by every round over the same cluster (a disruption forecast's simulations of one reconcile).

It holds the active nodes whose labels seed group domains, where each bound pod runs (every Node
of the cluster, deleting ones included), and, computed on first use, the pods topology counts
(scheduled, not terminal, not terminating, on a known node) and the bound pods with required
anti-affinity terms. A round subtracts its own batch (those pods are being scheduled, so they
are not counted) and the nodes it leaves out, instead of recounting the cluster.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING, Final

from nodewright.algebra.requirements import Requirements
from nodewright.scheduling.identity import by_identity, same_objects

if TYPE_CHECKING:
    from nodewright.algebra.taints import TaintLike
    from nodewright.api.core import Node, Pod, PodAffinityTerm


_NAME: Final = attrgetter("name")


@dataclass(slots=True)
class TopoNode:
    name: str
    labels: Mapping[str, str]
    taints: Sequence[TaintLike]
    _requirements: Requirements | None = None

    @property
    def requirements(self) -> Requirements:
        if self._requirements is None:
            self._requirements = Requirements.from_labels(self.labels)
        return self._requirements

    @classmethod
    def of(cls, node: Node) -> TopoNode:
        return cls(node.metadata.name, node.metadata.labels, node.spec.taints)


@dataclass(frozen=True, slots=True)
class CountedPod:
    key: str
    labels: Mapping[str, str]
    node: TopoNode


def namespace_of(pod: Pod) -> str:
    return pod.metadata.namespace or "default"


def countable(pod: Pod) -> bool:
    """Not ``IgnoredForTopology``: scheduled, not terminal, not terminating."""
    return (
        bool(pod.spec.node_name)
        and pod.status.phase not in ("Failed", "Succeeded")
        and pod.metadata.deletion_timestamp is None
    )


def required_anti_affinity(pod: Pod) -> list[PodAffinityTerm]:
    affinity = pod.spec.affinity
    if affinity is None or affinity.pod_anti_affinity is None:
        return []
    return list(affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution)


class TopoViews:
    """Each Node object's :class:`TopoNode`, kept between bases over changing clusters (Nodes are
    never changed in place); the Nodes are held, so their ids are not reused (those no longer
    asked about are let go once they outnumber the rest)."""

    def __init__(self) -> None:
        self._views: dict[int, TopoNode] = {}
        self._held: dict[int, Node] = {}

    def views(self, nodes: Sequence[Node]) -> list[TopoNode]:
        """The views of ``nodes``, in order (made for Nodes not seen before)."""
        now = by_identity(nodes)
        views, held = self._views, self._held
        for i in now.keys() - views.keys():
            views[i] = TopoNode.of(now[i])
            held[i] = now[i]
        if len(held) > 2 * len(now) + 64:
            for i in held.keys() - now.keys():
                del views[i], held[i]
        return list(map(views.__getitem__, now.keys() if len(now) == len(nodes) else map(id, nodes)))


class TopologyBase:
    """See the module docstring. ``nodes``: the active nodes; ``all_nodes`` (default ``nodes``):
    every Node, to find where a pod runs; ``namespaces``: namespaces known beside the pods';
    ``affinity_pods``: those of ``cluster_pods`` with an affinity stanza, in order, when known."""

    def __init__(
        self,
        *,
        nodes: Iterable[Node] = (),
        all_nodes: Iterable[Node] | None = None,
        cluster_pods: Iterable[Pod] = (),
        namespaces: Iterable[str] = (),
        affinity_pods: Sequence[Pod] | None = None,
        kept: TopoViews | None = None,
    ) -> None:
        """``kept``: each Node object's TopoNode from earlier bases (see :class:`TopoViews`). The
        nodes' views are made when first read (a round whose pods ask nothing of topology never
        reads them)."""
        self._sources: tuple[Sequence[Node], Sequence[Node] | None, TopoViews | None] | None = (
            nodes if isinstance(nodes, Sequence) else list(nodes),
            all_nodes if all_nodes is None or isinstance(all_nodes, Sequence) else list(all_nodes),
            kept,
        )
        self._nodes: dict[str, TopoNode] = {}
        self._lookup: dict[str, TopoNode] = {}
        self.pods = cluster_pods if isinstance(cluster_pods, Sequence) else list(cluster_pods)
        self._extra_namespaces = set(namespaces)
        self._namespaces: set[str] | None = None
        self._counted: dict[str, list[CountedPod]] | None = None
        self._inverse: list[tuple[Pod, TopoNode]] | None = None
        self._affinity_pods = affinity_pods

    @property
    def nodes(self) -> dict[str, TopoNode]:
        """The active nodes by name."""
        if self._sources is not None:
            self._views()
        return self._nodes

    @property
    def lookup(self) -> dict[str, TopoNode]:
        """Where a pod runs: an active node by its name, else the first Node of that name."""
        if self._sources is not None:
            self._views()
        return self._lookup

    def _views(self) -> None:
        assert self._sources is not None
        nodes, all_nodes, kept = self._sources
        self._sources = None
        if kept is not None:
            views = kept.views(nodes)
            self._nodes = dict(zip(map(_NAME, views), views, strict=True))
            self._lookup = dict(self._nodes)
            every = all_nodes if all_nodes is not None else nodes
            if not same_objects(every, nodes):
                others = kept.views(every)[::-1]
                self._lookup = {**dict(zip(map(_NAME, others), others, strict=True)), **self._nodes}
            return
        for node in nodes:
            t = TopoNode.of(node)
            self._nodes[t.name] = t
        self._lookup = dict(self._nodes)
        for api_node in all_nodes or ():
            name = api_node.metadata.name
            if name not in self._lookup:
                self._lookup[name] = TopoNode.of(api_node)

    def namespaces(self) -> set[str]:
        if self._namespaces is None:
            self._namespaces = {namespace_of(p) for p in self.pods} | self._extra_namespaces
        return self._namespaces

    def counted(self) -> dict[str, list[CountedPod]]:
        """Per namespace, in cluster order, the pods a group may count."""
        if self._counted is None:
            out: dict[str, list[CountedPod]] = {}
            lookup = self.lookup
            for pod in self.pods:
                bound = lookup.get(pod.spec.node_name or "")
                if bound is not None and countable(pod):
                    out.setdefault(namespace_of(pod), []).append(
                        CountedPod(pod.key, pod.metadata.labels, bound)
                    )
            self._counted = out
        return self._counted

    def inverse(self) -> list[tuple[Pod, TopoNode]]:
        """In cluster order, the bound, non-terminal pods with required anti-affinity terms, and
        their nodes."""
        if self._inverse is None:
            out = []
            with_affinity = self._affinity_pods
            if with_affinity is None:
                with_affinity = [p for p in self.pods if p.spec.affinity is not None]
            lookup = self.lookup if with_affinity else {}
            for pod in with_affinity:
                bound = lookup.get(pod.spec.node_name or "")
                if (
                    bound is not None
                    and pod.status.phase not in ("Failed", "Succeeded")
                    and required_anti_affinity(pod)
                ):
                    out.append((pod, bound))
            self._inverse = out
        return self._inverse
