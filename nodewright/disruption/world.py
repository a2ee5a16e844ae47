"""The forecast's cluster as commands change it, and its state nodes kept up to date.

Building the state nodes (``build_state_nodes``) walks every pod; a completed command changes
only its candidates (they leave), the nodes that receive pods and the nodes it launched. After
:meth:`World.complete` the next state reuses every other :class:`StateNode` object as it was (so
the per-node memos of the forecast hit on identity) and rebuilds only the changed ones, with their
pods in cluster order. Anything it cannot follow exactly (a marked node, a NodeClaim without a
Node, a launched node whose name or provider ID an existing one already uses) drops the state,
which the next reconcile rebuilds from scratch.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter, is_
from typing import TYPE_CHECKING, Any, Final, cast

from nodewright import labels
from nodewright.algebra.resources import format_resource_list
from nodewright.api.core import Condition, Node, Pod
from nodewright.api.karpenter import NodeClaim
from nodewright.cluster.state import ClusterState
from nodewright.disruption.methods import DRIFTED
from nodewright.scheduling import podutil
from nodewright.scheduling.existingnode import StateNode, build_state_nodes

if TYPE_CHECKING:
    from nodewright.disruption.simulate import Replacement

EPOCH: Final = "1970-01-01T00:00:00Z"

_NODE: Final = attrgetter("node")
_NAME: Final = attrgetter("name")


@dataclass
class _PodIndex:
    """Positions in the world's pod list: per node name ("" for pods without one) and of the pods
    with an affinity stanza (kept while pods only change their node)."""

    on: dict[str, set[int]]
    affinity: set[int]

    @classmethod
    def of(cls, pods: Sequence[Pod]) -> _PodIndex:
        on: dict[str, set[int]] = {}
        affinity: set[int] = set()
        for i, p in enumerate(pods):
            on.setdefault(p.spec.node_name or "", set()).add(i)
            if p.spec.affinity is not None:
                affinity.add(i)
        return cls(on, affinity)


@dataclass
class World:
    base: ClusterState
    nodes: list[Node]
    claims: list[NodeClaim]
    pods: list[Pod]
    made: int = 0
    _state: list[StateNode] | None = field(default=None, repr=False)
    _index: _PodIndex | None = field(default=None, repr=False)
    _claim_names: dict[int, tuple[NodeClaim, str]] = field(default_factory=dict, repr=False)

    def cluster(self) -> ClusterState:
        pods = tuple(self.pods)
        views: dict[str, tuple[tuple[Pod, ...], tuple[Pod, ...]]] = {}
        idx = self._index
        if idx is not None:
            views["unbound"] = (pods, tuple(pods[i] for i in sorted(idx.on.get("", ()))))
            views["affinity"] = (pods, tuple(pods[i] for i in sorted(idx.affinity)))
        return dataclasses.replace(
            self.base,
            nodes=tuple(self.nodes),
            nodeclaims=tuple(self.claims),
            pods=pods,
            _node_index={},
            _views=views,
        )

    def state(self, cluster: ClusterState) -> list[StateNode]:
        """The state nodes of ``cluster`` (this world's current objects)."""
        if self._state is None:
            self._state = build_state_nodes(cluster.nodes, cluster.nodeclaims, cluster.pods)
        return self._state

    def forget(self) -> None:
        """The objects changed in a way :meth:`complete` does not follow."""
        self._state = None

    def complete(
        self,
        names: Collection[str],
        claim_names: Collection[str],
        target_of: Mapping[str, str],
        origins: Collection[str],
        launched: Collection[str],
    ) -> None:
        """A command completed: the candidates ``names`` (and their NodeClaims) leave, the placed
        pods (``target_of``: pod key -> node, bound now to one of ``origins`` or pending: "") bind
        to their new nodes, the candidates' other reschedulable pods wait as pending, the rest of
        their pods leave with them. ``launched``: the nodes the command launched (already
        appended). Only the pods of ``origins`` and ``names`` are visited (:class:`_PodIndex`)."""
        prev = self._state
        self.nodes = self._without(prev, names, launched)
        claim_name = self._claim_name
        self.claims = [c for c in self.claims if claim_name(c) not in claim_names]
        idx = self._index
        if idx is None:
            idx = self._index = _PodIndex.of(self.pods)
        pods: list[Pod | None] = list(self.pods)
        on = idx.on
        dropped = False
        visit = sorted(i for n in {*origins, *names} for i in on.get(n, ()))
        for i in visit:
            p = pods[i]
            assert p is not None
            bound = p.spec.node_name or ""
            target = target_of.get(p.key)
            q: Pod | None = p
            if target is not None and target not in names:
                q = _bind(p, target)
            elif bound in names:
                # the node's other pods leave with it; those that need a home wait as pending
                q = _unbind(p) if podutil.is_reschedulable(p) else None
            pods[i] = q
            now = "" if q is None else (q.spec.node_name or "")
            if q is None or now != bound:
                on[bound].discard(i)
                if q is None:
                    dropped = True
                    idx.affinity.discard(i)
                else:
                    on.setdefault(now, set()).add(i)
        for n in names:
            on.pop(n, None)
        # the nodes whose pods change: those that receive pods and those placed pods leave
        pods_of: dict[str, list[Pod]] = {}
        for t in (*target_of.values(), *origins, *launched):
            if t and t not in names and t not in pods_of:
                pods_of[t] = [q for i in sorted(on.get(t, ())) if (q := pods[i]) is not None]
        self.pods = [q for q in pods if q is not None] if dropped else cast("list[Pod]", pods)
        if dropped:
            self._index = None  # positions moved: rebuilt on the next command
        self._state = None if prev is None else self._next(prev, names, claim_names, pods_of, launched)

    def _without(
        self, prev: list[StateNode] | None, names: Collection[str], launched: Collection[str]
    ) -> list[Node]:
        """The nodes not named in ``names``; read from the state's names when the state's nodes are
        the world's first nodes, in order (the rest: ``launched``)."""
        nodes = self.nodes
        if (
            prev is None
            or len(nodes) != len(prev) + len(launched)
            or not all(map(is_, map(_NODE, prev), nodes))
        ):
            return [n for n in nodes if n.metadata.name not in names]
        keep = [name not in names for name in map(_NAME, prev)]
        keep.extend(n.metadata.name not in names for n in nodes[len(prev) :])
        return list(compress(nodes, keep))

    def _claim_name(self, claim: NodeClaim) -> str:
        """``claim.metadata.name``, kept per NodeClaim object (reading it from each of many NodeClaims
        is slow in a large heap)."""
        got = self._claim_names.get(id(claim))
        if got is None or got[0] is not claim:
            got = self._claim_names[id(claim)] = (claim, claim.metadata.name)  # holds the claim: no id reuse
        return got[1]

    def _next(
        self,
        prev: list[StateNode],
        names: Collection[str],
        claim_names: Collection[str],
        pods_of: Mapping[str, list[Pod]],
        launched: Collection[str],
    ) -> list[StateNode] | None:
        out: list[StateNode] = []
        provider_ids: set[str] = set()
        for sn in prev:
            node = sn.node
            if node is None:
                return None  # a NodeClaim without a Node: rebuilt from scratch
            name = sn.name
            if name in names:
                continue
            ids = sn.memo.get("world")
            if ids is None:  # its NodeClaim's name and its provider ID (the objects do not change)
                claim = sn.nodeclaim
                ids = sn.memo["world"] = (
                    claim.metadata.name if claim is not None else None,
                    node.spec.provider_id or "",
                )
            if ids[0] is not None and ids[0] in claim_names:
                return None
            provider_ids.add(ids[1])
            got = pods_of.get(name)
            out.append(
                sn if got is None else StateNode(name=name, node=node, nodeclaim=sn.nodeclaim, pods=got)
            )
        kept = len(out)
        if len(self.nodes) != kept + len(launched):
            return None
        claims = {c.status.provider_id: c for c in self.claims[len(self.claims) - len(launched) :]}
        taken = set(map(_NAME, out))
        for node in self.nodes[kept:]:
            name = node.metadata.name
            claim = claims.get(node.spec.provider_id or "")
            if (
                name in taken
                or node.spec.provider_id in provider_ids
                or claim is None
                or name not in launched
            ):
                return None
            out.append(StateNode(name=name, node=node, nodeclaim=claim, pods=list(pods_of.get(name, []))))
        if not all(map(is_, map(_NODE, out), self.nodes)):
            return None
        return out


def drifted_claim(claim: NodeClaim, at: str) -> NodeClaim:
    """``claim`` with ``Drifted=True`` since ``at`` (an existing ``Drifted=True`` is kept: drift
    goes oldest first)."""
    current = claim.condition(DRIFTED)
    if current is not None and current.status == "True":
        return claim
    conds = [c for c in claim.status.conditions if c.type != DRIFTED]
    conds.append(Condition(type=DRIFTED, status="True", reason="Drifted", last_transition_time=at))
    return claim.model_copy(update={"status": claim.status.model_copy(update={"conditions": conds})})


def state_notes(cluster: ClusterState) -> list[str]:
    """What the forecast says about the cluster state it was given."""
    out = []
    if cluster.pods and not cluster.pdbs:
        out.append(
            "the cluster state lists no PodDisruptionBudgets: none is taken into account "
            "(`nodewright cluster snapshot` and `kubectl get poddisruptionbudgets -A -o json` include them)"
        )
    return out


def _bind(p: Pod, node: str) -> Pod:
    if p.spec.node_name == node:
        return p
    spec = p.spec.model_copy(update={"node_name": node})
    status = p.status.model_copy(update={"phase": "Running", "conditions": []})
    return p.model_copy(update={"spec": spec, "status": status})


def _unbind(p: Pod) -> Pod:
    spec = p.spec.model_copy(update={"node_name": None})
    cond = Condition(type="PodScheduled", status="False", reason="Unschedulable")
    status = p.status.model_copy(update={"phase": "Pending", "conditions": [cond]})
    return p.model_copy(update={"spec": spec, "status": status})


def replacement_objects(name: str, rep: Replacement, *, up: bool, at: str) -> tuple[NodeClaim, Node | None]:
    """The NodeClaim ``name`` a forecast launches for ``rep`` (launched at ``at``) and, when ``up``
    (initialized), its Ready Node."""
    got = rep.launch()
    node_labels: dict[str, str] = {
        k: v for k, v in rep.requirements.labels(include_restricted=True).items() if k != labels.HOSTNAME
    }
    cap: dict[str, str] = {}
    alloc: dict[str, str] = {}
    if got is not None:
        it, o = got
        node_labels.update(
            {labels.INSTANCE_TYPE: it.name, labels.ZONE: o.zone, labels.CAPACITY_TYPE: o.capacity_type}
        )
        if o.reservation_id:
            node_labels[labels.CAPACITY_RESERVATION_ID] = o.reservation_id
        cap, alloc = format_resource_list(it.capacity), format_resource_list(it.allocatable())
    node_labels[labels.NODEPOOL] = rep.pool
    conds: list[dict[str, Any]] = [{"type": "Launched", "status": "True", "lastTransitionTime": at}]
    if up:
        conds.append({"type": "Initialized", "status": "True", "lastTransitionTime": EPOCH})
    claim = NodeClaim.model_validate(
        {
            "metadata": {"name": name, "labels": node_labels},
            "spec": {"requirements": []},
            "status": {
                "capacity": cap,
                "allocatable": alloc,
                "conditions": conds,
                "providerID": f"forecast://{name}",
                **({"nodeName": name} if up else {}),
            },
        }
    )
    if not up:
        return claim, None
    node = Node.model_validate(
        {
            "metadata": {
                "name": name,
                "labels": {**node_labels, labels.HOSTNAME: name, labels.NODE_INITIALIZED: "true"},
            },
            "spec": {"providerID": f"forecast://{name}"},
            "status": {
                "capacity": cap,
                "allocatable": alloc,
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }
    )
    return claim, node
