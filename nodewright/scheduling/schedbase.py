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

:class:`~nodewright.scheduling.nodememo.NodeMemo` keeps each node's derived facts and the last
base's existing nodes between bases over changing clusters (disruption forecasts rebuild the state
every reconcile while most nodes stay as they were).
"""

from __future__ import annotations

import logging
from bisect import bisect_left
from collections.abc import Collection, Mapping, Sequence
from typing import Final

from nodewright import labels
from nodewright.algebra.requirements import ALLOW_UNDEFINED_WELL_KNOWN, Requirements
from nodewright.algebra.resources import ResourceList, requests_for_pods
from nodewright.algebra.taints import tolerates
from nodewright.api.core import Pod
from nodewright.api.karpenter import NodePool
from nodewright.catalog.model import InstanceType
from nodewright.scheduling.existingnode import StateNode
from nodewright.scheduling.fitindex import FitIndex
from nodewright.scheduling.hostports import HostPortUsage, host_ports
from nodewright.scheduling.instancetypes import ResourceSpace, TypeIndex, iter_bits, satisfies_min_values
from nodewright.scheduling.nodeclaim import DaemonGroup, Template, template_requirements
from nodewright.scheduling.nodememo import (
    ORDER,
    Each,
    NodeMemo,
    built,
    limits_of,
    node_keys,
    patched,
    same_types,
)
from nodewright.scheduling.podrequirements import pod_requirements
from nodewright.scheduling.preferences import remove_required_node_affinity_term
from nodewright.scheduling.volumes import VolumeIndex

log = logging.getLogger("nodewright")

BEST_EFFORT: Final = "BestEffort"


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
            if kept is not None and not same_types(kept[1][1], instance_types, nodepools):
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
            np.name: limits_of(memo, np) for np in nodepools if np.spec.limits
        }
        # the limited NodePools, by their parsed limits (kept per NodePool object, so the same
        # objects while the NodePools are)
        nkey = (daemons_key, tuple((name, id(limits)) for name, limits in self.remaining.items()))
        each = Each(memo, daemons_key, volumes, daemonset_pods, self.remaining)
        nodes = None
        if memo is not None and volumes is None:  # (volume usage is per round: nothing kept)
            nodes = patched(memo.nodes, nkey, state_nodes, each)
        if nodes is None:
            nodes = built(nkey, state_nodes, each)
        if memo is not None and volumes is None:
            memo.nodes = nodes
        existing = self.existing = nodes.existing
        self._unique = nodes.unique
        # per existing node (by identity): its NodePool and what it takes from the pool's limits
        self.charges = nodes.charges
        self.remaining = nodes.remaining
        # a shared base's nodes are never changed in place (solves copy on write)
        self.fit = FitIndex(
            existing,
            previous=memo.fit if memo is not None else None,
            dims=nodes.dims,
            leaves=nodes.leaves,
        )
        if memo is not None:
            memo.fit = self.fit  # a base's index is never changed: solves work on copies
        # how many existing nodes define each requirement key: a pod requiring (In/Exists/Gt/Lt) a
        # key no node defines is refused by every node's requirements check (Requirements.is_compatible
        # with no undefined keys allowed), so none of them is tried
        self.node_keys: dict[str, int] = node_keys(memo, existing, nodes.delta)
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
        if self._unique:  # sorted by unique (not initialized, name) keys: found by bisection
            return sorted(i for name in node_names if (i := self._index_of(name)) is not None)
        if self._by_node_name is None:
            self._by_node_name = {n.name: i for i, n in enumerate(self.existing) if n.state.node is not None}
        got = (self._by_node_name.get(name) for name in node_names)
        return sorted(i for i in got if i is not None)

    def _index_of(self, name: str) -> int | None:
        """The position of the last existing node named ``name`` that has a Node."""
        existing = self.existing
        for key in ((True, name), (False, name)):
            i = bisect_left(existing, key, key=ORDER)
            if i < len(existing) and existing[i].order == key and existing[i].state.node is not None:
                return i
        return None

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
