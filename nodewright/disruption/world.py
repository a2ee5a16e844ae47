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
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import attrgetter, is_, is_not, not_
from typing import TYPE_CHECKING, Any, Final, cast

from nodewright import labels
from nodewright.algebra.resources import format_resource_list
from nodewright.api.base import replaced
from nodewright.api.core import Condition, Node, Pod
from nodewright.api.karpenter import NodeClaim
from nodewright.cluster.state import ClusterState, has_daemonset_owner
from nodewright.disruption.methods import DRIFTED
from nodewright.scheduling import podutil
from nodewright.scheduling.existingnode import StateNode, build_state_nodes
from nodewright.scheduling.identity import Successor

if TYPE_CHECKING:
    from nodewright.disruption.simulate import Replacement

EPOCH: Final = "1970-01-01T00:00:00Z"

_NODE: Final = attrgetter("node")
_NAME: Final = attrgetter("name")


@dataclass
class _PodIndex:
    """Positions in the world's pod list: per node name ("" for pods without one), of the pods
    with an affinity stanza and of those a DaemonSet owns (kept while pods only change their node
    or leave: a pod that leaves leaves a hole, so positions do not move)."""

    on: dict[str, set[int]]
    affinity: set[int]
    daemons: set[int]

    @classmethod
    def of(cls, pods: Sequence[Pod | None]) -> _PodIndex:
        on: dict[str, set[int]] = {}
        affinity: set[int] = set()
        daemons: set[int] = set()
        for i, p in enumerate(pods):
            if p is None:
                continue
            on.setdefault(p.spec.node_name or "", set()).add(i)
            if p.spec.affinity is not None:
                affinity.add(i)
            if has_daemonset_owner(p):
                daemons.add(i)
        return cls(on, affinity, daemons)


@dataclass
class World:
    base: ClusterState
    nodes: list[Node]
    claims: list[NodeClaim]
    pods: list[Pod | None]  # in cluster order; None: a pod that left (positions stay)
    made: int = 0
    _state: list[StateNode] | None = field(default=None, repr=False)
    _index: _PodIndex | None = field(default=None, repr=False)
    _claim_names: dict[int, tuple[NodeClaim, str]] = field(default_factory=dict, repr=False)
    _counts: _StateIds | None = field(default=None, repr=False)
    _holes: int = field(default=0, repr=False)  # how many pods left (None in ``pods``)
    # the last completed command's pods that moved to another node, each with its new object,
    # when that differs from the old one only in ``spec.nodeName``
    rebound: list[tuple[Pod, Pod]] = field(default_factory=list, repr=False)

    def cluster(self) -> ClusterState:
        slots = self.pods
        if self._holes:
            pods = cast("tuple[Pod, ...]", tuple(compress(slots, map(is_not, slots, repeat(None)))))
        else:
            pods = cast("tuple[Pod, ...]", tuple(slots))
        views: dict[str, tuple[tuple[Pod, ...], tuple[Pod, ...]]] = {}
        idx = self._index
        if idx is not None:
            for name, at in (
                ("unbound", idx.on.get("", ())),
                ("affinity", idx.affinity),
                ("daemons", idx.daemons),
            ):
                views[name] = (pods, tuple(cast("Pod", slots[i]) for i in sorted(at)))
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
        at = self._positions(prev, launched)
        self.nodes = self._without(prev, at, names)
        self.claims = self._claims_without(prev, at, names, claim_names, len(launched))
        idx = self._index
        if idx is None:
            idx = self._index = _PodIndex.of(self.pods)
        # changed in place (a pod that leaves leaves a hole: positions do not move); every cluster
        # view holds its own tuple of the pods
        pods = self.pods
        on = idx.on
        rebound: list[tuple[Pod, Pod]] = []
        visit = sorted(i for n in {*origins, *names} for i in on.get(n, ()))
        for i in visit:
            p = pods[i]
            assert p is not None
            bound = p.spec.node_name or ""
            target = target_of.get(p.key)
            q: Pod | None = p
            if target is not None and target not in names:
                q = _bind(p, target)
                if q is not p and _binds_as_is(p):
                    rebound.append((p, q))
            elif bound in names:
                # the node's other pods leave with it; those that need a home wait as pending
                q = _unbind(p) if podutil.is_reschedulable(p) else None
            pods[i] = q
            now = "" if q is None else (q.spec.node_name or "")
            if q is None or now != bound:
                on[bound].discard(i)
                if q is None:
                    idx.affinity.discard(i)
                    idx.daemons.discard(i)
                    self._holes += 1
                else:
                    on.setdefault(now, set()).add(i)
        for n in names:
            on.pop(n, None)
        # the nodes whose pods change: those that receive pods and those placed pods leave
        pods_of: dict[str, list[Pod]] = {}
        for t in (*target_of.values(), *origins, *launched):
            if t and t not in names and t not in pods_of:
                pods_of[t] = [q for i in sorted(on.get(t, ())) if (q := pods[i]) is not None]
        self.rebound = rebound
        self._state = (
            None
            if prev is None or at is None
            else self._next(prev, at, names, claim_names, pods_of, launched)
        )

    def _positions(self, prev: list[StateNode] | None, launched: Collection[str]) -> dict[str, int] | None:
        """Each state node's position by name, when the state's Nodes are the world's first Nodes in
        order (the rest: ``launched``) and no two share a name (else None: the state is rebuilt)."""
        nodes = self.nodes
        if (
            prev is None
            or len(nodes) != len(prev) + len(launched)
            or not all(map(is_, map(_NODE, prev), nodes))
        ):
            return None
        at = dict(zip(map(_NAME, prev), range(len(prev)), strict=True))
        return at if len(at) == len(prev) else None

    def _without(
        self, prev: list[StateNode] | None, at: dict[str, int] | None, names: Collection[str]
    ) -> list[Node]:
        """The nodes not named in ``names`` (found by the state's positions when known)."""
        nodes = self.nodes
        if prev is None or at is None:
            return [n for n in nodes if n.metadata.name not in names]
        out = list(nodes[: len(prev)])
        for i in sorted((at[n] for n in names if n in at), reverse=True):
            del out[i]
        out.extend(n for n in nodes[len(prev) :] if n.metadata.name not in names)
        return out

    def _claims_without(
        self,
        prev: list[StateNode] | None,
        at: dict[str, int] | None,
        names: Collection[str],
        claim_names: Collection[str],
        launched: int,
    ) -> list[NodeClaim]:
        """The NodeClaims not named in ``claim_names``. When the state's NodeClaims are the world's
        (but the ``launched`` last ones, not named) and those named are all the leaving nodes',
        they are dropped by identity."""
        if prev is not None and at is not None:
            ids = self._ids_of(prev)
            tail = self.claims[len(self.claims) - launched :] if launched else []
            leaving = [prev[at[n]] for n in names if n in at]
            targets = {
                id(sn.nodeclaim)
                for sn in leaving
                if sn.nodeclaim is not None and self._ids(sn)[0] in claim_names
            }
            if (
                len(self.claims) == sum(ids.claims.values()) + launched
                and len(targets) == sum(ids.claims[n] for n in set(claim_names))
                and not any(self._claim_name(c) in claim_names for c in tail)
            ):
                out = list(compress(self.claims, map(not_, map(targets.__contains__, map(id, self.claims)))))
                if len(out) == len(self.claims) - len(targets):
                    return out
        claim_name = self._claim_name
        return [c for c in self.claims if claim_name(c) not in claim_names]

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
        at: dict[str, int],
        names: Collection[str],
        claim_names: Collection[str],
        pods_of: Mapping[str, list[Pod]],
        launched: Collection[str],
    ) -> list[StateNode] | None:
        """The next state: ``prev`` (whose Nodes were the world's first, every state node with a
        Node, see :meth:`_positions`) without the nodes ``names``, with new state nodes for those
        whose pods changed and for the ``launched``; None when a check fails (rebuilt)."""
        ids = self._ids_of(prev)
        gone = sorted((at[n] for n in names if n in at), reverse=True)
        # counted on in place: kept again only with the state they count
        self._counts = None
        claims_left, pids_left = ids.claims, ids.provider_ids
        for i in gone:
            cname, pid = self._ids(prev[i])
            if cname is not None:
                _less(claims_left, cname)
            _less(pids_left, pid)
        if any(claims_left[n] > 0 for n in claim_names):
            return None  # a NodeClaim leaves while its Node stays
        out = list(prev)
        left = [prev[i] for i in gone]
        came: list[StateNode] = []
        for name, got in pods_of.items():
            j = at.get(name)
            if j is not None and name not in names:
                sn = prev[j]
                out[j] = StateNode(name=name, node=sn.node, nodeclaim=sn.nodeclaim, pods=got)
                left.append(sn)
                came.append(out[j])
        for i in gone:
            del out[i]
        kept = len(out)
        if len(self.nodes) != kept + len(launched):
            return None
        claims = {c.status.provider_id: c for c in self.claims[len(self.claims) - len(launched) :]}
        for node in self.nodes[kept:]:
            name = node.metadata.name
            raw_pid = node.spec.provider_id
            claim = claims.get(raw_pid or "")
            if (
                (name in at and name not in names)
                or (raw_pid is not None and pids_left[raw_pid] > 0)
                or claim is None
                or name not in launched
            ):
                return None
            out.append(StateNode(name=name, node=node, nodeclaim=claim, pods=list(pods_of.get(name, []))))
        if not all(map(is_, map(_NODE, out), self.nodes)):
            return None
        for sn in out[kept:]:
            cname, pid = self._ids(sn)
            if cname is not None:
                claims_left[cname] += 1
            pids_left[pid] += 1
        came.extend(out[kept:])
        state = Successor(out, prev, left, came)  # what is kept of ``prev`` is patched by these
        self._counts = _StateIds(state, claims_left, pids_left)
        return state

    @staticmethod
    def _ids(sn: StateNode) -> tuple[str | None, str]:
        """``sn``'s NodeClaim's name and its Node's provider ID (the objects do not change)."""
        got: tuple[str | None, str] | None = sn.memo.get("world")
        if got is None:
            claim, node = sn.nodeclaim, sn.node
            got = sn.memo["world"] = (
                claim.metadata.name if claim is not None else None,
                (node.spec.provider_id or "") if node is not None else "",
            )
        return got

    def _ids_of(self, state: list[StateNode]) -> _StateIds:
        """How many of ``state``'s nodes have each NodeClaim name and provider ID (kept from the
        last :meth:`_next`, whose result ``state`` is; else counted)."""
        got = self._counts
        if got is not None and got.state is state:
            return got
        ids = [self._ids(sn) for sn in state]
        return _StateIds(state, Counter(c for c, _ in ids if c is not None), Counter(p for _, p in ids))


def _less(counts: Counter[str], key: str) -> None:
    """One ``key`` fewer; a count that is no longer positive goes (as ``+counts`` drops it)."""
    n = counts[key] - 1
    if n > 0:
        counts[key] = n
    else:
        counts.pop(key, None)


@dataclass
class _StateIds:
    state: list[StateNode]  # the state they count (held: compared by identity)
    claims: Counter[str]
    provider_ids: Counter[str]


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


def _binds_as_is(p: Pod) -> bool:
    """Whether :func:`_bind` changes nothing of ``p`` but its node name (its status already is)."""
    return p.status.phase == "Running" and not p.status.conditions


def _bind(p: Pod, node: str) -> Pod:
    if p.spec.node_name == node:
        return p
    spec = replaced(p.spec, {"node_name": node})
    status = replaced(p.status, {"phase": "Running", "conditions": []})
    return replaced(p, {"spec": spec, "status": status})


def _unbind(p: Pod) -> Pod:
    spec = replaced(p.spec, {"node_name": None})
    cond = Condition(type="PodScheduled", status="False", reason="Unschedulable")
    status = replaced(p.status, {"phase": "Pending", "conditions": [cond]})
    return replaced(p, {"spec": spec, "status": status})


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
