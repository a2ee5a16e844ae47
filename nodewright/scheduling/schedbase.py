"""What a scheduling round derives before its first pod (Karpenter ``NewScheduler``), kept apart so
that many solves over the same cluster can share it.

A :class:`SchedulerBase` holds the templates (each NodePool with its filtered instance types and
daemon overhead groups), the NodePools' remaining limits and the existing nodes in the scheduler's
order (initialized first, then by name) with their fit index and requirement-key counts.
:meth:`nodewright.scheduling.scheduler.Scheduler.over` starts a solve from it with some nodes left
out (a disruption simulation's candidates): the left-out nodes are closed in a copy of the fit
index, their capacity is given back to their NodePool's limits and their requirement keys are
uncounted, which is what a base built without them holds. A solve clones an existing node the
first time it places a pod on it (copy on write), so the base is never changed.

:class:`NodeMemo` keeps each node's derived facts between bases over changing clusters, keyed by
the identity of its Node, NodeClaim and bound pods (disruption forecasts rebuild the state every
reconcile while most nodes stay as they were).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter
from typing import Any, Final

from nodewright import labels
from nodewright.algebra.requirements import ALLOW_UNDEFINED_WELL_KNOWN, Requirements
from nodewright.algebra.resources import ResourceList, add, parse_resource_list, requests_for_pods, subtract
from nodewright.algebra.taints import tolerates
from nodewright.api.core import Pod, Taint
from nodewright.api.karpenter import NodePool
from nodewright.catalog.model import InstanceType
from nodewright.scheduling.existingnode import ExistingNode, FitIndex, StateNode, daemon_compatible_with_node
from nodewright.scheduling.hostports import HostPortUsage, host_ports
from nodewright.scheduling.identity import same_objects
from nodewright.scheduling.instancetypes import ResourceSpace, TypeIndex, iter_bits, satisfies_min_values
from nodewright.scheduling.nodeclaim import DaemonGroup, Template, template_requirements
from nodewright.scheduling.podrequirements import pod_requirements
from nodewright.scheduling.preferences import remove_required_node_affinity_term
from nodewright.scheduling.volumes import VolumeIndex, VolumeUsage

log = logging.getLogger("nodewright")

NODES: Final = "nodes"
_ORDER: Final = attrgetter("order")  # the scheduler's order: initialized first, then by name
BEST_EFFORT: Final = "BestEffort"


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


def _limits(memo: NodeMemo | None, np: NodePool) -> ResourceList:
    """The NodePool's limits, parsed (kept per NodePool object; never changed in place)."""
    got = memo.limits.get(np.name) if memo is not None else None
    if got is None or got[0] is not np:
        got = (np, parse_resource_list(np.spec.limits))
        if memo is not None:
            memo.limits[np.name] = got
    return got[1]


def _node_keys(memo: NodeMemo | None, existing: list[ExistingNode]) -> dict[str, int]:
    """How many of ``existing`` define each requirement key; with ``memo`` (a shared base's nodes,
    never changed in place), counted from the last base's by the nodes that left and came."""
    if memo is None:
        return dict(Counter(chain.from_iterable(n.requirements for n in existing)))
    before, counts = memo.node_keys
    if len(before) + len(existing) < 64 or not before:
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


def _same_types(
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


def preferences_tolerating(pod: Pod) -> Pod:
    from nodewright.scheduling.preferences import tolerate_prefer_no_schedule_taints

    relaxed = tolerate_prefer_no_schedule_taints(pod)
    return relaxed if relaxed is not None else pod


class SchedulerBase:
    """See the module docstring."""

    def __init__(
        self,
        *,
        nodepools: Sequence[NodePool],
        instance_types: Mapping[str, Sequence[InstanceType]],
        state_nodes: Sequence[StateNode],
        daemonset_pods: Sequence[Pod],
        space: ResourceSpace,
        volumes: VolumeIndex | None = None,
        min_values_policy: str = "Strict",
        type_cache: dict[tuple[object, ...], TypeIndex | None] | None = None,
        memo: NodeMemo | None = None,
    ) -> None:
        """``type_cache``: where each NodePool's filtered :class:`TypeIndex` is kept between rounds
        over the same NodePools, instance types and resource space (its memos are pure). ``memo``:
        node facts kept between bases (its existing nodes are then shared: solves must copy on
        write, which :meth:`Scheduler.over` does)."""
        self.space = space
        self.shared = memo is not None
        self.relax_min_values = min_values_policy == BEST_EFFORT
        self.tolerate_prefer_no_schedule = any(
            t.effect == "PreferNoSchedule" for np in nodepools for t in np.spec.template.spec.taints
        )
        kept = None
        tkey: tuple[object, ...] = ()
        daemons_key: object = None
        if memo is not None:
            daemons_key = tuple(p.model_dump_json() for p in daemonset_pods)
            if daemons_key != memo.daemons:
                memo.daemons = daemons_key
            daemons_key = memo.daemons
            tkey = (
                tuple((np.name, id(np)) for np in nodepools),
                tuple(space.names),
                self.relax_min_values,
                daemons_key,
            )
            kept = memo.templates.get(tkey)
            # and the very same instance types per NodePool (compared by identity, in C)
            if kept is not None and not _same_types(kept[1][1], instance_types, nodepools):
                kept = None
        if kept is not None:
            self.templates, _, (self.all_types, self.reserved_types, self.allow_undefined) = kept
        else:
            self._type_facts(nodepools, instance_types)
            self.templates = self._templates(nodepools, instance_types, daemonset_pods, type_cache)
            if memo is not None:
                # the key's objects stay alive with the entry, so their ids are not reused
                memo.templates = {
                    tkey: (
                        self.templates,
                        (nodepools, dict(instance_types)),
                        (self.all_types, self.reserved_types, self.allow_undefined),
                    )
                }
        self.remaining: dict[str, ResourceList] = {
            np.name: _limits(memo, np) for np in nodepools if np.spec.limits
        }
        existing: list[ExistingNode] = []
        # per existing node: its NodePool (when limited) and what it takes from the pool's limits
        charges: dict[int, tuple[str, ResourceList]] = {}
        by_pool: dict[str, list[ResourceList]] = {}
        for sn in state_nodes:
            facts = memo.facts(sn) if memo is not None else _fresh(sn)
            node = facts.existing
            if node is None or facts.daemons is not daemons_key or volumes is not None:
                # the same node under the same daemonset pods keeps its ExistingNode (never changed
                # in place: solves copy on write)
                daemons = [
                    p for p in daemonset_pods if daemon_compatible_with_node(p, facts.taints, facts.labels)
                ]
                daemon_requests = requests_for_pods(daemons) if daemons else {}
                if node is None or facts.daemon_requests != daemon_requests or volumes is not None:
                    node = ExistingNode(
                        sn,
                        daemon_requests=daemon_requests,
                        volume_usage=VolumeUsage(volumes, sn.name, sn.active_pods()),
                    )
                if memo is not None and volumes is None:
                    facts.existing, facts.daemon_requests, facts.daemons = node, daemon_requests, daemons_key
            existing.append(node)
            pool = facts.pool
            if pool is not None and pool in self.remaining:
                charge = facts.charge
                if charge is None:
                    charge = facts.charge = {**facts.capacity, NODES: 1000}
                charges[id(node)] = (pool, charge)
                got = by_pool.get(pool)
                if got is None:
                    by_pool[pool] = [charge]
                else:
                    got.append(charge)
        # a pool's limits minus its nodes' capacities, subtracted at once (over the limits' keys)
        for pool, pool_charges in by_pool.items():
            self.remaining[pool] = subtract(self.remaining[pool], _taken(memo, pool, pool_charges))
        existing.sort(key=_ORDER)
        self.existing = existing
        # per existing node (by identity): its NodePool and what it takes from the pool's limits
        self.charges = charges
        # a shared base's nodes are never changed in place (solves copy on write)
        self.fit = FitIndex(existing, kept=self.shared, previous=memo.fit if memo is not None else None)
        if memo is not None:
            memo.fit = self.fit  # a base's index is never changed: solves work on copies
        # how many existing nodes define each requirement key: a pod requiring (In/Exists/Gt/Lt) a
        # key no node defines is refused by every node's requirements check (Requirements.is_compatible
        # with no undefined keys allowed), so none of them is tried
        self.node_keys: dict[str, int] = _node_keys(memo, existing)
        self._by_node_name: dict[str, int] | None = None

    def _type_facts(
        self, nodepools: Sequence[NodePool], instance_types: Mapping[str, Sequence[InstanceType]]
    ) -> None:
        # NodePools of one NodeClass share their type objects: each distinct type once
        self.all_types = list(
            {id(it): it for np in nodepools for it in instance_types.get(np.name, ())}.values()
        )
        # the types a ReservationManager tracks (it reads nothing else)
        self.reserved_types = [
            it
            for it in self.all_types
            if any(
                o.capacity_type == labels.CAPACITY_TYPE_RESERVED and o.reservation_id is not None
                for o in it.offerings
            )
        ]
        provider_keys: set[str] = set()
        for it in self.all_types:
            provider_keys.update(it.requirements.keys())
        self.allow_undefined = ALLOW_UNDEFINED_WELL_KNOWN | provider_keys

    def indexes_of(self, node_names: Collection[str]) -> list[int]:
        """Positions of the existing nodes that have a Node named in ``node_names``."""
        if self._by_node_name is None:
            self._by_node_name = {n.name: i for i, n in enumerate(self.existing) if n.state.node is not None}
        got = (self._by_node_name.get(name) for name in node_names)
        return sorted(i for i in got if i is not None)

    def _templates(
        self,
        nodepools: Sequence[NodePool],
        instance_types: Mapping[str, Sequence[InstanceType]],
        daemonset_pods: Sequence[Pod],
        type_cache: dict[tuple[object, ...], TypeIndex | None] | None,
    ) -> list[Template]:
        templates: list[Template] = []
        self._indexes: dict[tuple[object, ...], TypeIndex] = {}
        for np in nodepools:
            its = instance_types.get(np.name, ())
            if not its:
                continue
            reqs = template_requirements(np)
            space = self.space
            key = (np.name, id(np), tuple(its), tuple(space.names), self.relax_min_values)
            if type_cache is not None and key in type_cache:
                index = type_cache[key]
            else:
                index = self._template_types(np, reqs, its, space)
                if type_cache is not None:
                    type_cache[key] = index
            if index is None:
                continue
            tmpl = Template(index=len(templates), nodepool=np, requirements=reqs, types=index, groups=[])
            tmpl.allow_undefined = self.allow_undefined
            tmpl.groups = self._daemon_groups(tmpl, daemonset_pods)
            templates.append(tmpl)
        return templates

    # -- construction helpers ----------------------------------------------------------------------
    def _template_types(
        self, np: NodePool, reqs: Requirements, its: Sequence[InstanceType], space: ResourceSpace
    ) -> TypeIndex | None:
        """The NodePool's compatible, offered, fitting instance types (None: none, with a warning).
        NodePools of one NodeClass share one index of the same types (its memos are pure)."""
        full = self._index(its, space)
        entry = full.compat(reqs)
        mask = entry.compat & entry.offering & full.fit_mask((0,) * len(space.names))
        kept = [its[i] for i in iter_bits(mask)]
        if kept and reqs.has_min_values():
            _, _, err = satisfies_min_values(reqs, kept)
            if err is not None and not self.relax_min_values:
                kept = []
        if not kept:
            log.warning(
                "NodePool %s: requirements filtered out all compatible available instance types", np.name
            )
            return None
        return self._index(kept, space)

    def _index(self, its: Sequence[InstanceType], space: ResourceSpace) -> TypeIndex:
        key = (tuple(map(id, its)), tuple(space.names))
        got = self._indexes.get(key)
        if got is None:
            got = self._indexes[key] = TypeIndex(its, space)
        return got

    def _daemon_groups(self, tmpl: Template, daemons: Sequence[Pod]) -> list[DaemonGroup]:
        groups: dict[tuple[str, ...], DaemonGroup] = {}
        # a daemon pod never respects PreferNoSchedule
        prepared = [preferences_tolerating(p) for p in daemons]
        taint_ok = [tolerates(tmpl.taints, p.spec.tolerations) is None for p in prepared]
        for i, it in enumerate(tmpl.types.types):
            compatible = [
                p
                for p, ok in zip(prepared, taint_ok, strict=True)
                if ok and self._daemon_fits_type(tmpl, it, p)
            ]
            key = tuple(sorted(p.key for p in compatible))
            g = groups.get(key)
            if g is None:
                overhead: ResourceList = requests_for_pods(compatible) if compatible else {}
                ports = HostPortUsage()
                for p in compatible:
                    ports.add(p.key, host_ports(p))
                g = groups[key] = DaemonGroup(0, overhead, self.space.vec(overhead), ports)
            g.mask |= 1 << i
        return list(groups.values())

    @staticmethod
    def _daemon_fits_type(tmpl: Template, it: InstanceType, pod: Pod) -> bool:
        current: Pod | None = pod
        while current is not None:
            reqs = pod_requirements(current, include_preferred=False)
            if tmpl.requirements.is_compatible(
                reqs, allow_undefined=tmpl.allow_undefined
            ) and it.requirements.has_intersection(reqs):
                return True
            current = remove_required_node_affinity_term(current)
        return False
