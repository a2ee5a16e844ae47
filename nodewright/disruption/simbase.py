"""Incremental ``SimulateScheduling``: one provisioning round's preparation per reconcile, shared by
every simulation of that reconcile.

A simulation differs from the cluster as it is only by its candidates: they are marked for
deletion, so they leave the existing nodes and their currently reschedulable pods join the pods
to schedule. :class:`SimBase` prepares the round once for the unchanged cluster (pods to
schedule, NodePools, instance types, resource space, topology's cluster side, the scheduler's
templates and existing nodes) and :meth:`SimBase.round` derives a simulation's round from it by
leaving the candidates out (:meth:`Scheduler.over`, :meth:`Topology.over`) and adding their pods
in the order a round built from scratch lists them. Per-node facts survive between reconciles
(:class:`~nodewright.scheduling.nodememo.NodeMemo`).

A simulation the base cannot express exactly falls back to a round built from scratch (returns
``None``): a candidate holding reserved capacity (the NodePools' instance types would change) or a
candidate's pod requesting a resource outside the round's resource space.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, compress, repeat
from operator import add, attrgetter, is_, is_not, sub
from typing import TYPE_CHECKING, Any, Final, Literal

from nodewright import labels
from nodewright.algebra.resources import requests_for_pod
from nodewright.api.core import Node, Pod
from nodewright.cluster.state import ClusterState
from nodewright.disruption.candidates import Candidate
from nodewright.disruption.claimbound import ClaimBounds, claim_bounds, fits_times
from nodewright.disruption.deleting import deleting_pod_keys, mark_deleting
from nodewright.scheduling import podutil
from nodewright.scheduling.existingnode import StateNode
from nodewright.scheduling.identity import same_objects
from nodewright.scheduling.plan import Round, pod_data, prepare_round
from nodewright.scheduling.poddata import PodData
from nodewright.scheduling.schedbase import SchedulerBase
from nodewright.scheduling.scheduler import Scheduler, SchedulerOptions
from nodewright.scheduling.topology import Topology, topology_owners
from nodewright.scheduling.topologybase import TopologyBase
from nodewright.scheduling.topologydomains import DomainUniverse

if TYPE_CHECKING:
    from nodewright.disruption.simulate import SimContext


_NODE: Final = attrgetter("node")
_NAME: Final = attrgetter("name")


def carry_entries(cache: dict[int, tuple[Pod, Any]], rebound: Sequence[tuple[Pod, Pod]]) -> None:
    """Give each pod that moved (its old and new object, equal but for the node name) the moving
    entry its old object has in ``cache`` (``SimCache.pod_entries``): none of the entry's facts
    reads the node name, so the new object's would be derived alike."""
    for p, q in rebound:
        got = cache.get(id(p))
        if got is None or got[0] is not p:
            continue
        entry = got[1]
        if isinstance(entry, tuple):
            d, ok = entry
            moved = d.fresh()
            moved.pod = moved.current = q
            entry = (moved, ok)
        cache[id(q)] = (q, entry)


def universe_for(rnd: Round, ctx: SimContext) -> DomainUniverse:
    """Give ``rnd`` the forecast's domain universe and type cache (rebuilt when the pools or their
    instance types change)."""
    cache = ctx.cache
    # the pools and their types' sequences themselves (kept alive by the key; the same sequence
    # is compared by identity, another one element by element)
    ukey = tuple((np.name, np, rnd.types_by_pool[np.name]) for np in rnd.pools)
    if cache.universe is None or not _same_key(cache.universe_key, ukey):
        cache.universe_key, cache.universe = ukey, rnd.domain_universe()
    rnd.universe, rnd.type_cache = cache.universe, cache.type_cache
    return cache.universe


def _same_key(
    before: tuple[object, ...] | None, now: tuple[tuple[str, object, Sequence[object]], ...]
) -> bool:
    if before is None or len(before) != len(now):
        return False
    for was, (name, np, types) in zip(before, now, strict=True):
        assert isinstance(was, tuple)
        if was[0] != name or was[1] is not np:
            return False
        if not same_objects(was[2], types):
            return False
    return True


class _Same:
    """Equal only to a wrapper of the very same object (PdbLimits has no value equality)."""

    __slots__ = ("obj",)

    def __init__(self, obj: object) -> None:
        self.obj = obj

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.obj is self.obj

    def __hash__(self) -> int:
        return id(self.obj)


@dataclass(slots=True)
class _Sums:
    """For the first ``i`` candidates of one list (``cands``), with the deleting nodes: the sum and
    per-resource least of the requests of their currently reschedulable pods, and how many, at
    ``need[i]``, ``least[i]``, ``count[i]``; ``left``: their state nodes; ``bad``: the index of the
    first candidate with no answer."""

    cands: list[Candidate]
    left: list[StateNode]
    need: list[tuple[int, ...]]
    least: list[tuple[int, ...] | None]
    count: list[int]
    bad: int | None = None


@dataclass(frozen=True, slots=True)
class _Bundle:
    """Pods a simulation schedules together (one node's moving pods, or the pending ones): their
    PodData, Pods, keys and topology owners, in order."""

    datas: list[PodData]
    pods: list[Pod]
    keys: frozenset[str]
    owners: list[Pod]

    @staticmethod
    def of(datas: list[PodData]) -> _Bundle:
        pods = [d.pod for d in datas]
        return _Bundle(datas, pods, frozenset(d.key for d in datas), topology_owners(pods))


class SimBase:
    """The shared preparation of one reconcile's simulations (see the module docstring)."""

    def __init__(
        self, cluster: ClusterState, ctx: SimContext, state_nodes: Sequence[StateNode] | None = None
    ) -> None:
        self.cluster = cluster
        self.ctx = ctx
        rnd = prepare_round(
            nodepools=ctx.nodepools,
            cluster=cluster,
            catalog_for=ctx.catalog_for,
            options=ctx.options,
            state_nodes=None if state_nodes is None else _as_list(state_nodes),
            kept=ctx.cache.round_kept,
        )
        self.universe = universe_for(rnd, ctx)
        self.rnd = rnd
        # every Node and NodeClaim is in a state node, marked when either is deleting: without a
        # marked one, no pod is a deleting node's
        self.deleting_keys = deleting_pod_keys(cluster, ctx.cache.deleting) if rnd.deleting else set()
        states = rnd.state_nodes
        self.position = dict(zip(map(id, states), range(len(states)), strict=True))
        with_node = list(compress(states, map(is_not, map(_NODE, states), repeat(None))))
        self.by_node_name = dict(zip(map(_NAME, with_node), with_node, strict=True))
        deleting = rnd.deleting
        # the pods a round schedules: the pending (and virtual) ones first, then per deleting node
        self.prefix = [d for d in rnd.datas if not d.pod.spec.node_name]
        # the pending pods among them (every other pod a round schedules is bound: none pending)
        self.pending = {d.key for d in self.prefix if podutil.is_provisionable(d.pod)}
        self.moving: dict[str, list[PodData]] = {sn.name: [] for sn in deleting}
        for d in rnd.datas:
            if d.pod.spec.node_name:
                self.moving[d.pod.spec.node_name].append(d)
        self.deleting = [self.position[id(sn)] for sn in deleting]
        self.moving_now: dict[str, list[tuple[PodData, bool]]] = {}
        self.marked: dict[str, Node] = {}  # candidates' Nodes marked for deletion
        self.reschedulable: dict[str, bool] = {}
        self.topology = TopologyBase(
            nodes=[s.node for s in rnd.active if s.node is not None],
            all_nodes=cluster.nodes,
            cluster_pods=cluster.pods,
            affinity_pods=cluster.affinity_pods(),
            kept=ctx.cache.topo_nodes,
        )
        self.scheduler = SchedulerBase(
            nodepools=rnd.pools,
            instance_types=rnd.types_by_pool,
            state_nodes=rnd.active,
            daemonset_pods=rnd.ds_pods,
            space=rnd.space,
            volumes=rnd.volumes,
            min_values_policy=ctx.options.min_values_policy,
            type_cache=rnd.type_cache,
            memo=ctx.cache.node_memo,
        )
        self.options = SchedulerOptions(
            preference_policy=ctx.options.preference_policy,
            min_values_policy=ctx.options.min_values_policy,
            reserved_fallback=ctx.options.reserved_fallback,
        )
        self._names = frozenset(rnd.space.names)
        # what a node's moving pods depend on besides its pods (kept on the StateNode, which an
        # unchanged node carries to the next reconcile); volumes: per round, not kept
        self._memo_key: tuple[object, ...] | None = (
            None
            if rnd.volumes is not None
            else (tuple(rnd.space.names), ctx.options, _Same(ctx.pdbs), ctx.now)
        )
        self._bounds: ClaimBounds | None = None
        self._prefix: _Bundle | None = None
        self._sums: _Sums | None = None
        self.asks: dict[str, tuple[tuple[int, ...], tuple[int, ...], int]] = {}

    def _currently_reschedulable(self, pod: Pod) -> bool:
        got = self.reschedulable.get(pod.key)
        if got is None:
            got = self.reschedulable[pod.key] = self.ctx.pdbs.is_currently_reschedulable(pod, self.ctx.now)
        return got

    def _moving(self, sn: StateNode) -> list[tuple[PodData, bool]] | None:
        """The PodData of ``sn``'s reschedulable pods, each with whether it is currently
        reschedulable (None: a pod outside the round's resource space)."""
        got = self.moving_now.get(sn.name)
        if got is not None:
            return got
        key = self._memo_key
        kept = sn.memo.get("simbase") if key is not None else None
        if isinstance(kept, tuple) and kept[0] == key:
            # the same pods under the same resources, options, PDBs and clock (an unchanged node)
            mine: list[tuple[PodData, bool]] = kept[1]
            self.moving_now[sn.name] = mine
            return mine
        datas = self.moving.get(sn.name)
        if datas is None and key is not None:
            # a changed node (it received pods): its other pods as they were on it before
            entries = self._pod_entries(sn.pods, key)
            if entries is None:
                return None
            self.moving[sn.name] = [d for d, _ in entries]
            self.moving_now[sn.name] = entries
            sn.memo["simbase"] = (key, entries)
            return entries
        if datas is None:
            datas = []
            for p in sn.pods:
                got_data = self._pod_data(p)
                if got_data is False:
                    return None
                if got_data is not None:
                    datas.append(got_data)
            self.moving[sn.name] = datas
        got = self.moving_now[sn.name] = [(d, self._currently_reschedulable(d.pod)) for d in datas]
        if key is not None:
            sn.memo["simbase"] = (key, got)
        return got

    def _pod_data(self, p: Pod) -> PodData | Literal[False] | None:
        """``p``'s PodData when it is reschedulable (None: it is not, or invalid; False: it asks
        for a resource outside the round's resource space)."""
        if not podutil.is_reschedulable(p):
            return None
        requests = requests_for_pod(p)
        if not requests.keys() <= self._names:
            return False
        rnd = self.rnd
        d = pod_data(p, space=rnd.space, options=rnd.options, volumes=rnd.volumes, requests=requests)
        return d if isinstance(d, PodData) else None

    def _pod_entries(self, pods: Sequence[Pod], key: tuple[object, ...]) -> list[tuple[PodData, bool]] | None:
        """:meth:`_moving`'s entries of ``pods``, each pod's kept (per Pod object) while the round's
        resources, options, PDBs and clock are the same (``key``)."""
        kept = self.ctx.cache
        cache = kept.pod_entries
        if kept.pod_entries_key != key or len(cache) > 2 * len(self.cluster.pods) + 1024:
            cache.clear()  # (bounded: entries of pods long gone are dropped together)
            kept.pod_entries_key = key
        out: list[tuple[PodData, bool]] = []
        for p in pods:
            got = cache.get(id(p))
            if got is None or got[0] is not p:
                d = self._pod_data(p)
                got = cache[id(p)] = (
                    p,
                    d if d is None or d is False else (d, self._currently_reschedulable(p)),
                )
            if got[1] is False:
                return None
            if got[1] is not None:
                out.append(got[1])
        return out

    def _left(self, candidates: Sequence[Candidate]) -> list[StateNode] | None:
        """The candidates' state nodes (None: a simulation the base cannot express)."""
        left: list[StateNode] = []
        for c in candidates:
            sn = self.by_node_name.get(c.name)
            if sn is None or sn.node is None or sn.marked_for_deletion():
                return None
            node_labels = sn.node.metadata.labels
            if node_labels.get(labels.CAPACITY_RESERVATION_ID) and (
                node_labels.get(labels.CAPACITY_TYPE) == labels.CAPACITY_TYPE_RESERVED
            ):
                return None  # the NodePools' reserved offerings would change
            left.append(sn)
        return left

    def needs_more_claims(self, candidates: Sequence[Candidate], limit: int) -> bool:
        """True when the simulation without ``candidates`` certainly needs more than ``limit`` new
        NodeClaims or leaves a bound pod unscheduled, by resource arithmetic alone: in some
        resource, the pods it must move (the candidates' and the deleting nodes' currently
        reschedulable pods) ask for more than the room the other existing nodes have now plus
        ``limit`` times the largest allocatable of any NodePool's instance type. Existing nodes only
        fill up during a solve and a NodeClaim never holds more than its type's allocatable, so
        such a solve cannot place them all with ``limit`` NodeClaims. False: no answer."""
        sums = self._sums_for(candidates)
        if sums is None:
            return False
        bounds = self._bounds
        if bounds is None:
            cache = self.ctx.cache
            scheduler = self.scheduler
            bounds = self._bounds = cache.bounds = claim_bounds(
                scheduler.existing, self.rnd.space, scheduler.templates, cache.bounds
            )
        k = len(candidates)
        left = sums.left[:k]
        need, least, count = sums.need[k], sums.least[k], sums.count[k]
        if least is None:
            return False
        free = list(bounds.total)
        room = bounds.room
        for sn in left:
            mine = room.get(sn.name)
            if mine is not None:
                free = list(map(sub, free, mine))
        cap = bounds.cap
        if any(n > f + limit * c for n, f, c in zip(need, free, cap, strict=True)):
            return True
        # by count: a node holds at most as many of them as it has room for pods of ``least``
        per_node, held = bounds.holds(least)
        held -= sum(per_node.get(sn.name, 0) for sn in left)
        return count > held + limit * fits_times(least, cap)

    def _sums_for(self, candidates: Sequence[Candidate]) -> _Sums | None:
        """The moving pods' sums of the deleting nodes and the first candidates, for a prefix of
        ``candidates`` (multi-node consolidation asks about prefixes of one list: kept and extended
        while the candidates asked about begin with those summed). None: no answer (a candidate
        the base cannot express, or a pod outside the round's resource space)."""
        sums = self._sums
        k = len(candidates)
        if sums is None or not all(map(is_, candidates[: len(sums.cands)], sums.cands[:k])):
            sums = self._sums = self._sums_start()
            if sums is None:
                return None
        for c in candidates[len(sums.cands) : k]:
            if sums.bad is not None:
                break
            got = self._left([c])
            asks = self._asks(got[0]) if got else None
            if got is None or asks is None:
                sums.bad = len(sums.cands)
                sums.cands.append(c)
                continue
            sn = got[0]
            sums.cands.append(c)
            sums.left.append(sn)
            need, least, count = sums.need[-1], sums.least[-1], sums.count[-1]
            if asks[2]:
                need = tuple(map(add, need, asks[0]))
                least = asks[1] if least is None else tuple(map(min, least, asks[1]))
                count += asks[2]
            sums.need.append(need)
            sums.least.append(least)
            sums.count.append(count)
        if sums.bad is not None and sums.bad < k:
            return None
        return sums

    def _sums_start(self) -> _Sums | None:
        """The deleting nodes' part of every sum (None: one asks outside the resource space)."""
        dims = len(self.rnd.space.names)
        need: tuple[int, ...] = (0,) * dims
        least: tuple[int, ...] | None = None
        count = 0
        states = self.rnd.state_nodes
        for i in self.deleting:
            got = self._asks(states[i])
            if got is None:
                return None
            if got[2]:
                need = tuple(map(add, need, got[0]))
                least = got[1] if least is None else tuple(map(min, least, got[1]))
                count += got[2]
        return _Sums([], [], [need], [least], [count])

    def _asks(self, sn: StateNode) -> tuple[tuple[int, ...], tuple[int, ...], int] | None:
        """Of ``sn``'s currently reschedulable pods: the sum and the per-resource least of their
        requests, and how many (None: a pod outside the round's resource space)."""
        got = self.asks.get(sn.name)
        if got is None:
            moving = self._moving(sn)
            if moving is None:
                return None
            kept = sn.memo.get("simbase.asks")
            if isinstance(kept, tuple) and kept[0] is moving:
                got = kept[1]  # the node's moving pods as kept on its StateNode
            else:
                vecs = [d.vec for d, ok in moving if ok]
                dims = len(self.rnd.space.names)
                got = (
                    tuple(map(sum, zip(*vecs, strict=True))) if vecs else (0,) * dims,
                    tuple(map(min, zip(*vecs, strict=True))) if vecs else (0,) * dims,
                    len(vecs),
                )
                sn.memo["simbase.asks"] = (moving, got)
            self.asks[sn.name] = got
        return got

    def _prefix_bundle(self) -> _Bundle:
        got = self._prefix
        if got is None:
            got = self._prefix = _Bundle.of(self.prefix)
        return got

    def _bundle(self, sn: StateNode) -> _Bundle | None:
        """The pods ``sn`` moves in a simulation (its currently reschedulable ones), as a round
        takes them (None: a pod outside the round's resource space); kept on the StateNode with
        its moving pods."""
        moving = self._moving(sn)
        if moving is None:
            return None
        kept = sn.memo.get("simbase.bundle")
        if isinstance(kept, tuple) and kept[0] is moving:
            got: _Bundle = kept[1]
            return got
        got = _Bundle.of([d for d, ok in moving if ok])
        sn.memo["simbase.bundle"] = (moving, got)
        return got

    def round(self, candidates: Sequence[Candidate]) -> tuple[list[PodData], Scheduler, set[str]] | None:
        """The pods to schedule, the scheduler of a simulation without ``candidates``, and the keys
        of the pending pods among those pods."""
        left = self._left(candidates)
        if left is None:
            return None
        order = sorted([*self.deleting, *(self.position[id(sn)] for sn in left)])
        bundles = [self._prefix_bundle()]
        states = self.rnd.state_nodes
        for i in order:
            got = self._bundle(states[i])
            if got is None:
                return None
            bundles.append(got)
        # the scheduler copies a pod before it changes it: the bundles' PodData are shared
        datas = list(chain.from_iterable(b.datas for b in bundles))
        left_out: dict[str, Node] = {}
        for sn in left:
            marked = self.marked.get(sn.name)
            if marked is None and sn.node is not None:
                marked = self.marked[sn.name] = mark_deleting(sn.node)
            if marked is not None:
                left_out[sn.name] = marked
        topology = Topology.over(
            self.topology,
            batch_pods=list(chain.from_iterable(b.pods for b in bundles)),
            batch_keys=bundles[0].keys.union(*(b.keys for b in bundles[1:])),
            owners=list(chain.from_iterable(b.owners for b in bundles)),
            left_out=left_out,
            universe=self.universe,
            preference_policy=self.ctx.options.preference_policy,
        )
        excluded = self.scheduler.indexes_of(left_out)
        return datas, Scheduler.over(self.scheduler, topology, self.options, excluded), self.pending


def _as_list(state_nodes: Sequence[StateNode]) -> list[StateNode]:
    """``state_nodes`` as a list: itself when it is one (read only: a round never changes it, and a
    :class:`~nodewright.scheduling.identity.Successor` keeps what it says of its predecessor)."""
    return state_nodes if isinstance(state_nodes, list) else list(state_nodes)
