"""What a scheduling base keeps of its existing nodes between bases over changing clusters.

:class:`NodeMemo` keeps each node's derived facts, keyed by the identity of its Node, NodeClaim and
bound pods (disruption forecasts rebuild the state every reconcile while most nodes stay as they
were), and the last base's existing nodes (:class:`Nodes`): a base over mostly the same state
nodes is patched by those that left and came (:func:`patched`) instead of being derived again
(:func:`built`), with the same result.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter
from typing import Any, Final

from nodewright import labels
from nodewright.algebra.resources import ResourceList, add, parse_resource_list, requests_for_pods, subtract
from nodewright.api.core import Pod, Taint
from nodewright.api.karpenter import NodePool
from nodewright.catalog.model import InstanceType
from nodewright.scheduling.existingnode import ExistingNode, StateNode, daemon_compatible_with_node
from nodewright.scheduling.fitindex import FitIndex, fit_leaf
from nodewright.scheduling.identity import Successor, by_identity, patchable, same_objects
from nodewright.scheduling.nodeclaim import Template
from nodewright.scheduling.volumes import VolumeIndex, VolumeUsage

NODES: Final = "nodes"
ORDER: Final = attrgetter("order")  # the scheduler's order: initialized first, then by name


@dataclass(slots=True)
class _Facts:
    """One state node's derived facts, valid while its Node, NodeClaim and pods are the same objects."""

    node: object
    nodeclaim: object
    pods: tuple[Pod, ...]
    ids: tuple[int, ...]
    taints: list[Taint]
    labels: dict[str, str]
    capacity: ResourceList
    pool: str | None = None  # its karpenter.sh/nodepool label
    daemon_requests: ResourceList | None = None
    existing: ExistingNode | None = None
    # the daemonset pods (by their key object, see NodeMemo.daemons) ``existing`` was built with
    daemons: object = None
    charge: ResourceList | None = None  # what the node takes from its NodePool's limits


class NodeMemo:
    """Per node name, the facts of its last state (see the module docstring)."""

    def __init__(self) -> None:
        self._by_name: dict[str, _Facts] = {}
        # the daemonset pods of the last base, as their JSON (one object while they stay equal)
        self.daemons: tuple[str, ...] | None = None
        # per NodePool: the charges of its nodes at the last base and their sum
        self.taken: dict[str, tuple[list[ResourceList], ResourceList]] = {}
        self.limits: dict[str, tuple[NodePool, ResourceList]] = {}
        self.fit: FitIndex | None = None  # the last base's
        self.nodes: Nodes | None = None  # the last shared base's existing nodes
        # the last base's existing nodes and how many of them define each requirement key
        self.node_keys: tuple[list[ExistingNode], Counter[str]] = ([], Counter())
        # the last templates built, by what they derive from
        self.templates: dict[
            tuple[object, ...],
            tuple[
                list[Template],
                tuple[Sequence[NodePool], dict[str, Sequence[InstanceType]]],
                tuple[list[InstanceType], list[InstanceType], Any],
            ],
        ] = {}

    def facts(self, sn: StateNode) -> _Facts:
        mine = sn.memo.get("schedbase")
        if isinstance(mine, _Facts):
            return mine
        sn.memo["schedbase"] = got = self._facts(sn)
        return got

    def _facts(self, sn: StateNode) -> _Facts:
        got = self._by_name.get(sn.name)
        ids = tuple(map(id, sn.pods))
        if got is not None and got.node is sn.node and got.nodeclaim is sn.nodeclaim and got.ids == ids:
            return got
        got = self._by_name[sn.name] = _fresh(sn, ids)
        return got


def limits_of(memo: NodeMemo | None, np: NodePool) -> ResourceList:
    """The NodePool's limits, parsed (kept per NodePool object; never changed in place)."""
    got = memo.limits.get(np.name) if memo is not None else None
    if got is None or got[0] is not np:
        got = (np, parse_resource_list(np.spec.limits))
        if memo is not None:
            memo.limits[np.name] = got
    return got[1]


def node_keys(
    memo: NodeMemo | None,
    existing: list[ExistingNode],
    delta: tuple[list[ExistingNode], list[ExistingNode], list[ExistingNode]] | None = None,
) -> dict[str, int]:
    """How many of ``existing`` define each requirement key; with ``memo`` (a shared base's nodes,
    never changed in place), counted from the last base's by the nodes that left and came (those
    of ``delta`` when it was patched from that base's nodes: see Nodes)."""
    if memo is None:
        return dict(Counter(chain.from_iterable(n.requirements for n in existing)))
    before, counts = memo.node_keys
    if delta is not None and delta[0] is before and before:
        counts = Counter(counts)
        counts.subtract(chain.from_iterable(_requirement_keys(n, True) for n in delta[1]))
        counts.update(chain.from_iterable(_requirement_keys(n, True) for n in delta[2]))
        counts = +counts  # keys no node defines any more are dropped, as a fresh count has them
    elif len(before) + len(existing) < 64 or not before:
        counts = Counter(chain.from_iterable(_requirement_keys(n, True) for n in existing))
    else:
        now = dict(zip(map(id, existing), existing, strict=True))
        then = dict(zip(map(id, before), before, strict=True))
        counts = Counter(counts)
        counts.subtract(
            chain.from_iterable(_requirement_keys(then[i], True) for i in then.keys() - now.keys())
        )
        counts.update(chain.from_iterable(_requirement_keys(now[i], True) for i in now.keys() - then.keys()))
        counts = +counts  # keys no node defines any more are dropped, as a fresh count has them
    memo.node_keys = (existing, counts)  # holds the nodes: their ids are not reused
    return dict(counts)


def _taken(memo: NodeMemo | None, pool: str, charges: list[ResourceList]) -> ResourceList:
    """The sum of ``charges`` (kept per NodePool while they are the very same charge objects)."""
    if memo is not None:
        got = memo.taken.get(pool)
        if got is not None and same_objects(got[0], charges):
            return got[1]
    acc = add(*charges)
    if memo is not None:
        memo.taken[pool] = (charges, acc)  # holds the charges: their ids are not reused
    return acc


def _requirement_keys(node: ExistingNode, kept: bool) -> Iterable[str]:
    """The keys of ``node``'s requirements; ``kept``: a shared base's node (never changed in
    place), whose keys are kept on its state node for a later base over the same node object."""
    if not kept:
        return node.requirements
    got = node.state.memo.get("requirement.keys")
    if isinstance(got, tuple) and got[0] is node:
        keys: tuple[str, ...] = got[1]
        return keys
    keys = tuple(node.requirements)
    node.state.memo["requirement.keys"] = (node, keys)
    return keys


def same_types(
    before: Mapping[str, Sequence[InstanceType]],
    now: Mapping[str, Sequence[InstanceType]],
    nodepools: Sequence[NodePool],
) -> bool:
    return all(same_objects(before.get(np.name, ()), now.get(np.name, ())) for np in nodepools)


def _fresh(sn: StateNode, ids: tuple[int, ...] = ()) -> _Facts:
    return _Facts(
        node=sn.node,
        nodeclaim=sn.nodeclaim,
        pods=tuple(sn.pods),  # kept alive with the entry, so their ids are not reused
        ids=ids,
        taints=sn.taints(),
        labels=(node_labels := sn.labels()),
        capacity=sn.capacity(),
        pool=node_labels.get(labels.NODEPOOL),
    )


@dataclass(slots=True)
class Nodes:
    """A base's existing nodes as derived from its state nodes, kept (NodeMemo.nodes) so that the
    next base over mostly the same state nodes is patched: only the state nodes that left and came
    are visited."""

    key: tuple[object, ...]  # the daemonset pods and the limited NodePools they were derived under
    by_sn: dict[int, StateNode]  # the state nodes, by identity (held: their ids are not reused)
    node_of: dict[int, ExistingNode]  # per state node (by identity), its ExistingNode
    existing: list[ExistingNode]  # in the scheduler's order
    charges: dict[int, tuple[str, ResourceList]]
    taken: dict[str, ResourceList]  # per limited NodePool, the sum of its nodes' charges
    remaining: dict[str, ResourceList]  # the limits minus ``taken``
    unique: bool  # no two nodes share an order key (a patch finds each by bisection)
    # the fit index's inputs: how many nodes have each remaining resource, their names, the leaves
    keys: Counter[str]
    dims: tuple[str, ...]
    leaves: list[tuple[int, ...]]
    # when patched: the nodes it was patched from, and those that left and came
    delta: tuple[list[ExistingNode], list[ExistingNode], list[ExistingNode]] | None = None
    seen: Sequence[StateNode] | None = None  # the state nodes it was derived from (held)


@dataclass(slots=True)
class Each:
    """How one state node becomes an existing node of a base (see :func:`_node`)."""

    memo: NodeMemo | None
    daemons_key: object
    volumes: VolumeIndex | None
    daemonset_pods: Sequence[Pod]
    limits: dict[str, ResourceList]


def _node(sn: StateNode, each: Each) -> tuple[ExistingNode, str | None, ResourceList | None]:
    """``sn``'s ExistingNode, its NodePool and (for a limited pool) what it takes from its limits."""
    memo, volumes = each.memo, each.volumes
    facts = memo.facts(sn) if memo is not None else _fresh(sn)
    node = facts.existing
    if node is None or facts.daemons is not each.daemons_key or volumes is not None:
        # the same node under the same daemonset pods keeps its ExistingNode (never changed in
        # place: solves copy on write)
        daemons = [
            p for p in each.daemonset_pods if daemon_compatible_with_node(p, facts.taints, facts.labels)
        ]
        daemon_requests = requests_for_pods(daemons) if daemons else {}
        if node is None or facts.daemon_requests != daemon_requests or volumes is not None:
            node = ExistingNode(
                sn,
                daemon_requests=daemon_requests,
                volume_usage=VolumeUsage(volumes, sn.name, sn.active_pods()),
            )
        if memo is not None and volumes is None:
            facts.existing, facts.daemon_requests, facts.daemons = node, daemon_requests, each.daemons_key
    pool = facts.pool
    if pool is None or pool not in each.limits:
        return node, pool, None
    charge = facts.charge
    if charge is None:
        charge = facts.charge = {**facts.capacity, NODES: 1000}
    return node, pool, charge


def built(key: tuple[object, ...], state_nodes: Sequence[StateNode], each: Each) -> Nodes:
    existing: list[ExistingNode] = []
    node_of: dict[int, ExistingNode] = {}
    charges: dict[int, tuple[str, ResourceList]] = {}
    by_pool: dict[str, list[ResourceList]] = {}
    for sn in state_nodes:
        node, pool, charge = _node(sn, each)
        existing.append(node)
        node_of[id(sn)] = node
        if charge is not None:
            assert pool is not None
            charges[id(node)] = (pool, charge)
            got = by_pool.get(pool)
            if got is None:
                by_pool[pool] = [charge]
            else:
                got.append(charge)
    # a pool's limits minus its nodes' capacities, subtracted at once (over the limits' keys)
    remaining = dict(each.limits)
    taken: dict[str, ResourceList] = {}
    for pool, pool_charges in by_pool.items():
        taken[pool] = _taken(each.memo, pool, pool_charges)
        remaining[pool] = subtract(remaining[pool], taken[pool])
    existing.sort(key=ORDER)
    unique = len(set(map(ORDER, existing))) == len(existing)
    keys = Counter(chain.from_iterable(n.remaining for n in existing))
    dims = tuple(sorted(keys))
    leaves = [fit_leaf(n.remaining, dims) for n in existing]
    state = by_identity(state_nodes)
    return Nodes(
        key, state, node_of, existing, charges, taken, remaining, unique, keys, dims, leaves, seen=state_nodes
    )


def patched(
    prev: Nodes | None, key: tuple[object, ...], state_nodes: Sequence[StateNode], each: Each
) -> Nodes | None:
    """``prev`` patched by the state nodes that left and came: the same nodes, order, charges and
    remaining limits :func:`built` gives (sums of integers; a sorted list of unique keys), or None
    when a build is as cheap or the patch cannot tell (nodes sharing an order key)."""
    if prev is None or not prev.unique or prev.key != key:
        return None
    diff = patchable(prev.by_sn, state_nodes, prev.seen)
    if diff is None:
        return None
    now, gone, came = diff
    existing = list(prev.existing)
    leaves = list(prev.leaves)
    keys = Counter(prev.keys)
    node_of = dict(prev.node_of)
    charges = dict(prev.charges)
    taken = dict(prev.taken)
    touched: set[str] = set()
    left: list[ExistingNode] = []
    new: list[ExistingNode] = []
    for sn in gone:
        node = node_of.pop(id(sn))
        left.append(node)
        i = bisect_left(existing, node.order, key=ORDER)
        if i == len(existing) or existing[i] is not node:
            return None
        del existing[i], leaves[i]
        keys.subtract(node.remaining.keys())
        was = charges.pop(id(node), None)
        if was is not None:
            taken[was[0]] = {k: v - was[1].get(k, 0) for k, v in taken[was[0]].items()}
            touched.add(was[0])
    for sn in came:
        node, pool, charge = _node(sn, each)
        i = bisect_left(existing, node.order, key=ORDER)
        if i < len(existing) and existing[i].order == node.order:
            return None
        existing.insert(i, node)
        new.append(node)
        leaves.insert(i, fit_leaf(node.remaining, prev.dims))
        keys.update(node.remaining.keys())
        node_of[id(sn)] = node
        if charge is not None:
            assert pool is not None
            charges[id(node)] = (pool, charge)
            taken[pool] = add(taken.get(pool, {}), charge)
            touched.add(pool)
    remaining = dict(prev.remaining)
    for pool in touched:
        remaining[pool] = subtract(each.limits[pool], taken[pool])
    keys = +keys  # the resources no node has any more are dropped, as a fresh count has them
    dims = tuple(sorted(keys))
    if dims != prev.dims:
        leaves = [fit_leaf(n.remaining, dims) for n in existing]
    return Nodes(
        key,
        now,
        node_of,
        # what the claim bound (and anyone holding the previous list) patches by
        Successor(existing, prev.existing, left, new),
        charges,
        taken,
        remaining,
        True,
        keys,
        dims,
        leaves,
        (prev.existing, left, new),
        seen=state_nodes,
    )
