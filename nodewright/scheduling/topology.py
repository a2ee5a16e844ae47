"""Topology spread, pod affinity and pod anti-affinity for one scheduling round (Karpenter's ``Topology``).

Built from the cluster state (nodes, bound pods), the NodePools' domain universe
(:class:`~nodewright.scheduling.topologydomains.DomainSource`) and the batch of pods being
scheduled. The Solve loop asks :meth:`Topology.add_requirements` which domains a pod may take on
a candidate node (raising :class:`TopologyError` with Karpenter's text when none), then
:meth:`Topology.register` / :meth:`Topology.record` once the pod is placed, and
:meth:`Topology.update` after a preference was relaxed.

Semantics (``topology.go``):

* groups come from each pod's topology spread constraints (``matchLabelKeys`` appended as ``In``
  expressions) and pod (anti-)affinity terms (required, and preferred unless preferences are
  ignored; maxSkew ``MaxInt32``); identical groups are shared, each with its set of owner pods;
* required anti-affinity terms of bound cluster pods and of batch pods are also tracked
  *inversely*: they keep a pod that such a term selects out of the domains holding its owner;
* a new group counts the existing cluster pods it selects (scheduled, not terminal, not
  terminating, not in the batch) on nodes that carry the key (hostname falls back to the node
  name) and pass the group's node filter, and starts with the domain universe of its key plus the
  key's values on existing nodes that pass the filter;
* recording a placement: spread and affinity groups count the domain only when the requirement
  collapsed to one value; anti-affinity groups and the pod's inverse groups count every domain the
  pod could still land in.

Determinism: groups are evaluated in creation order (the first failing one names the error) and
ties between domains go to the lexicographically smallest (Go uses map order).

Boundary: no instance types, no resources; requirements algebra from
:mod:`nodewright.algebra.requirements`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from nodewright.algebra.requirements import Requirement, Requirements
from nodewright.errors import SchedulingError
from nodewright.labels import HOSTNAME
from nodewright.scheduling.topologybase import TopologyBase, TopoNode, namespace_of, required_anti_affinity
from nodewright.scheduling.topologydomains import DomainSource, DomainUniverse
from nodewright.scheduling.topologyfilter import IGNORE, TopologyNodeFilter
from nodewright.scheduling.topologygroup import (
    MAX_INT32,
    GroupKey,
    TopologyGroup,
    TopologyType,
)
from nodewright.scheduling.topologyselector import EVERYTHING
from nodewright.scheduling.topologyspecs import GroupSpec, group_specs, namespaces_for, raw_selector

if TYPE_CHECKING:
    from nodewright.algebra.taints import TaintLike
    from nodewright.api.core import Node, Pod

__all__ = ["DomainSource", "Topology", "TopologyError", "TopologyGroup", "TopologyType", "pretty_map"]

RESPECT: Final = "Respect"
_NAMESPACE_NAME_LABEL: Final = "kubernetes.io/metadata.name"


def pretty_map(values: Mapping[str, int], max_items: int) -> str:
    """Karpenter's ``pretty.Map``: sorted ``k: v`` pairs, cut after ``max_items``."""
    keys = sorted(values)
    shown = keys[:max_items]
    text = ", ".join(f"{k}: {values[k]}" for k in shown)
    if len(shown) < len(values):
        text += f" and {len(values) - len(shown)} other(s)"
    return text


def topology_owners(pods: Iterable[Pod]) -> list[Pod]:
    """Of ``pods``, in order, those that may own a group (spread constraints or affinity): a pod
    without either owns none, nothing to derive."""
    return [p for p in pods if p.spec.topology_spread_constraints or p.spec.affinity is not None]


class TopologyError(SchedulingError):
    """No domain satisfies a topology group; ``str()`` is Karpenter's text (rendered lazily).

    Upstream formats the counts when the error is printed, not when it is raised, and the message
    has no closing parenthesis; both are kept.
    """

    def __init__(self, group: TopologyGroup, pod_domains: Requirement, node_domains: Requirement) -> None:
        # Exception.__new__ already stored the arguments; skipping super().__init__ keeps this cheap
        self.group = group
        self.pod_domains = pod_domains
        self.node_domains = node_domains

    def __str__(self) -> str:
        group = self.group
        return (
            f"unsatisfiable topology constraint for {group.type}, key={group.key} "
            f"(counts = {pretty_map(group.counts, 25)}, podDomains = {self.pod_domains}, "
            f"nodeDomains = {self.node_domains}"
        )


@dataclass(slots=True)
class _PodInfo:
    key: str
    namespace: str
    labels: Mapping[str, str]
    owned: list[TopologyGroup] = field(default_factory=list)
    inverse_owned: list[TopologyGroup] = field(default_factory=list)
    selecting: list[TopologyGroup] | None = None  # forward groups selecting the pod, at ``selecting_version``
    selecting_version: int = -1
    inverse_selecting: list[TopologyGroup] | None = None
    inverse_version: int = -1
    # (group, pod is selected) for owned then inversely selecting groups, at ``plan_version``
    plan: tuple[tuple[TopologyGroup, bool], ...] | None = None
    plan_version: int = -1
    signature: tuple[str, tuple[tuple[str, str], ...]] | None = None  # namespace and sorted labels

    def sig(self) -> tuple[str, tuple[tuple[str, str], ...]]:
        """What a group's selection of the pod depends on: alike pods share their selecting lists."""
        if self.signature is None:
            self.signature = (self.namespace, tuple(sorted(self.labels.items())))
        return self.signature


class Topology:
    """Topology groups and their counts for one scheduling round (see module docstring)."""

    def __init__(
        self,
        *,
        domain_sources: Iterable[DomainSource],
        nodes: Iterable[Node] = (),
        cluster_pods: Iterable[Pod] = (),
        batch_pods: Iterable[Pod] = (),
        preference_policy: str = RESPECT,
        namespace_labels: Mapping[str, Mapping[str, str]] | None = None,
        all_nodes: Iterable[Node] | None = None,
        universe: DomainUniverse | None = None,
    ) -> None:
        """``nodes`` are the (active) state nodes whose labels seed group domains; ``all_nodes``
        (default: ``nodes``) every Node of the cluster, used to find where a counted pod runs, as
        upstream's API lookup also finds deleting nodes. ``universe``: the domains of
        ``domain_sources`` already built (read-only; callers running many rounds over the same
        NodePools and instance types build it once)."""
        batch = list(batch_pods)
        base = TopologyBase(
            nodes=nodes,
            all_nodes=all_nodes,
            cluster_pods=cluster_pods,
            namespaces=[namespace_of(p) for p in batch],
        )
        self._start(
            base,
            domain_sources=domain_sources,
            batch=batch,
            preference_policy=preference_policy,
            namespace_labels=namespace_labels,
            universe=universe,
            left_out={},
        )

    @classmethod
    def over(
        cls,
        base: TopologyBase,
        *,
        batch_pods: Iterable[Pod],
        left_out: Mapping[str, Node],
        universe: DomainUniverse,
        preference_policy: str = RESPECT,
        batch_keys: AbstractSet[str] | None = None,
        owners: Sequence[Pod] | None = None,
    ) -> Topology:
        """A round over ``base``'s cluster without the active nodes of ``left_out`` (by name, each
        with its Node as this round sees it, e.g. marked for deletion): the same groups and counts
        as a Topology built from the cluster without them. ``batch_keys``: the batch's pod keys;
        ``owners``: its pods with spread constraints or affinity, in batch order (when known)."""
        self = cls.__new__(cls)
        self._start(
            base,
            domain_sources=(),
            batch=list(batch_pods),
            preference_policy=preference_policy,
            namespace_labels=None,
            universe=universe,
            left_out=left_out,
            batch_keys=batch_keys,
            owners=owners,
        )
        return self

    def _start(
        self,
        base: TopologyBase,
        *,
        domain_sources: Iterable[DomainSource],
        batch: list[Pod],
        preference_policy: str,
        namespace_labels: Mapping[str, Mapping[str, str]] | None,
        universe: DomainUniverse | None,
        left_out: Mapping[str, Node],
        batch_keys: AbstractSet[str] | None = None,
        owners: Sequence[Pod] | None = None,
    ) -> None:
        self._respect = preference_policy == RESPECT
        self._universe = universe if universe is not None else DomainUniverse(domain_sources)
        self._groups: dict[GroupKey, TopologyGroup] = {}
        self._inverse: dict[GroupKey, TopologyGroup] = {}
        self._by_key: dict[str, list[TopologyGroup]] = {}
        self._seq = 0
        self._groups_version = 0
        self._inverse_version = 0
        # (version, pod signature) -> the groups selecting such pods, shared by alike pods
        self._selecting_memo: dict[tuple[int, object], list[TopologyGroup]] = {}  # one version at a time
        self._inverse_memo: dict[tuple[int, object], list[TopologyGroup]] = {}
        self._pods: dict[str, _PodInfo] = {}
        self._by_id: dict[int, tuple[Pod, _PodInfo]] = {}

        self._base = base
        self._batch = batch
        self._excluded = batch_keys if batch_keys is not None else {pod.key for pod in batch}
        self._left_out = {name: TopoNode.of(node) for name, node in left_out.items()}
        self._active: dict[str, TopoNode] | None = None if self._left_out else base.nodes
        self._extra_namespace_labels = namespace_labels
        self._namespace_labels_memo: dict[str, Mapping[str, str]] | None = None

        excluded = self._excluded
        for pod, bound in base.inverse():
            if pod.key not in excluded:
                self._update_inverse_anti_affinity(pod, self._left_out.get(bound.name, bound).labels)
        if owners is None:
            owners = topology_owners(batch)
        for pod in owners:
            self.update(pod)

    def _nodes(self) -> dict[str, TopoNode]:
        """The active nodes of this round."""
        if self._active is None:
            left = self._left_out
            self._active = {name: n for name, n in self._base.nodes.items() if name not in left}
        return self._active

    def _namespace_labels(self) -> dict[str, Mapping[str, str]]:
        if self._namespace_labels_memo is None:
            known = self._base.namespaces() | {namespace_of(p) for p in self._batch}
            out: dict[str, Mapping[str, str]] = {ns: {_NAMESPACE_NAME_LABEL: ns} for ns in sorted(known)}
            for ns, labels in (self._extra_namespace_labels or {}).items():
                out[ns] = {_NAMESPACE_NAME_LABEL: ns, **labels}
            self._namespace_labels_memo = out
        return self._namespace_labels_memo

    # -- public API ------------------------------------------------------------------------------
    def update(self, pod: Pod) -> None:
        """Re-derive the groups ``pod`` owns (after a relaxation or a failed attempt)."""
        info = self._info(pod)
        for group in info.owned:
            group.owners.discard(info.key)
        # upstream gates on HasPodAntiAffinity / HasRequiredPodAntiAffinity, then walks required terms only
        self._update_inverse_anti_affinity(pod, None)
        owned: dict[GroupKey, TopologyGroup] = {}
        for spec in group_specs(pod, respect=self._respect, namespace_labels=self._namespace_labels):
            hash_key = spec.group_key()
            existing = self._groups.get(hash_key)
            if existing is None:
                existing = self._new_group(spec, pod)
                self._count_domains(existing)
                self._groups[hash_key] = existing
                self._index(existing)
                self._groups_version += 1
            existing.owners.add(info.key)
            owned[hash_key] = existing
        info.owned = sorted(owned.values(), key=lambda g: g.seq)
        info.plan = None

    def has_groups_of(self, key: str) -> bool:
        """True when some group (forward or inverse) is keyed on ``key``."""
        return bool(self._by_key.get(key))

    def is_empty(self) -> bool:
        """True when no group (forward or inverse) exists: every pod is a no-op to topology."""
        return not self._groups and not self._inverse

    def has_groups_for(self, pod: Pod) -> bool:
        """True when some group owns ``pod`` or inversely selects it (else topology is a no-op)."""
        if not self._groups and not self._inverse:
            return False
        return bool(self._plan(self._info(pod)))

    def add_requirements(
        self,
        pod: Pod,
        *,
        taints: Sequence[TaintLike],
        strict_requirements: Requirements,
        nodeclaim_requirements: Requirements,
        allow_undefined: frozenset[str] = frozenset(),
    ) -> Requirements:
        """``AddRequirements``: ``nodeclaim_requirements`` narrowed by every group that applies.

        Returns ``nodeclaim_requirements`` itself when no group owns or inversely selects the pod.
        ``taints`` and ``allow_undefined`` are accepted for parity with upstream; the inverse
        groups they would filter are anti-affinity groups, whose node filter passes every node.
        """
        del taints, allow_undefined
        plan = self._plan(self._info(pod))
        if not plan:
            return nodeclaim_requirements
        narrowing: list[Requirement] = []
        for group, selects in plan:
            key = group.key
            pod_domains = strict_requirements.get(key) if strict_requirements.has(key) else group.exists
            node_domains = (
                nodeclaim_requirements.get(key) if nodeclaim_requirements.has(key) else group.exists
            )
            domains = group.get(selects, pod_domains, node_domains)
            if len(domains) == 0:
                raise TopologyError(group, pod_domains, node_domains)
            narrowing.append(domains)
        result = nodeclaim_requirements.copy()
        result.add(*narrowing)
        return result

    def rejects_hostname(self, pod: Pod, hostname: str) -> bool:
        """True when a hostname group certainly refuses ``pod`` on a node whose hostname requirement is
        exactly ``hostname`` (anti-affinity: a selected pod is there; spread: count(+1) > maxSkew).

        O(#hostname groups of the pod), no allocation: a pre-check the Solve loop may run before
        ``add_requirements`` on in-flight NodeClaims and existing nodes, where upstream discards the
        error anyway. ``False`` means "ask :meth:`add_requirements`", not "fits".
        """
        for group, selects in self._plan(self._info(pod)):
            if group.key != HOSTNAME:
                continue
            count = group.counts.get(hostname, 0)
            if group.type is TopologyType.POD_ANTI_AFFINITY:
                if count > 0:
                    return True
            elif group.type is TopologyType.SPREAD and count + selects > group.max_skew:
                return True
        return False

    def register(self, key: str, domain: str) -> None:
        """Make ``domain`` of ``key`` known to every group of that key (count 0 if new)."""
        for group in self._by_key.get(key, ()):
            group.register(domain)

    def unregister(self, key: str, domain: str) -> None:
        for group in self._by_key.get(key, ()):
            group.unregister(domain)

    def record(
        self,
        pod: Pod,
        *,
        taints: Sequence[TaintLike],
        requirements: Requirements,
        allow_undefined: frozenset[str] = frozenset(),
    ) -> None:
        """``Record``: count ``pod`` placed on a node with ``requirements`` and ``taints``."""
        del allow_undefined  # upstream's node filter does not pass the options on either
        if not self._groups and not self._inverse:
            return  # no group to count in
        info = self._info(pod)
        for group in self._selecting(info):
            node_filter = group.node_filter
            if not node_filter.passes_everything and not node_filter.matches(taints, requirements):
                continue
            domains = requirements.get(group.key)
            # anti-affinity blocks every domain the pod may land in; spread and affinity count
            # only a collapsed domain
            if group.type is TopologyType.POD_ANTI_AFFINITY or len(domains) == 1:
                group.record(*domains.values)
        for group in info.inverse_owned:
            group.record(*requirements.get(group.key).values)

    def groups(self) -> list[TopologyGroup]:
        """Forward groups in creation order (dict insertion order is creation order)."""
        return list(self._groups.values())

    def inverse_groups(self) -> list[TopologyGroup]:
        return list(self._inverse.values())

    # -- internals -------------------------------------------------------------------------------
    def _info(self, pod: Pod) -> _PodInfo:
        entry = self._by_id.get(id(pod))
        if entry is not None and entry[0] is pod:
            return entry[1]
        key = pod.key
        info = self._pods.get(key)
        if info is None:
            info = _PodInfo(key, namespace_of(pod), pod.metadata.labels)
            self._pods[key] = info
        self._by_id[id(pod)] = (pod, info)  # the pod is kept alive, so its id is not reused
        return info

    def _plan(self, info: _PodInfo) -> tuple[tuple[TopologyGroup, bool], ...]:
        """Groups that apply to the pod in ``add_requirements`` order, with its selection by each."""
        plan = info.plan
        if plan is None or info.plan_version != self._inverse_version:
            key, namespace, labels = info.key, info.namespace, info.labels
            plan = tuple(
                (g, g.selects(key, namespace, labels)) for g in (*info.owned, *self._inverse_selecting(info))
            )
            info.plan = plan
            info.plan_version = self._inverse_version
        return plan

    def _selecting(self, info: _PodInfo) -> list[TopologyGroup]:
        if info.selecting is None or info.selecting_version != self._groups_version:
            memo_key = (self._groups_version, info.sig())
            if next(iter(self._selecting_memo), memo_key)[0] != memo_key[0]:
                self._selecting_memo.clear()  # groups changed: older entries are stale
            selecting = self._selecting_memo.get(memo_key)
            if selecting is None:
                selecting = [g for g in self.groups() if g.selects(info.key, info.namespace, info.labels)]
                self._selecting_memo[memo_key] = selecting
            info.selecting = selecting
            info.selecting_version = self._groups_version
        return info.selecting

    def _inverse_selecting(self, info: _PodInfo) -> list[TopologyGroup]:
        if info.inverse_selecting is None or info.inverse_version != self._inverse_version:
            memo_key = (self._inverse_version, info.sig())
            if next(iter(self._inverse_memo), memo_key)[0] != memo_key[0]:
                self._inverse_memo.clear()
            selecting = self._inverse_memo.get(memo_key)
            if selecting is None:
                selecting = [
                    g for g in self.inverse_groups() if g.selects(info.key, info.namespace, info.labels)
                ]
                self._inverse_memo[memo_key] = selecting
            info.inverse_selecting = selecting
            info.inverse_version = self._inverse_version
        return info.inverse_selecting

    def _index(self, group: TopologyGroup) -> None:
        self._by_key.setdefault(group.key, []).append(group)

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _new_group(self, spec: GroupSpec, pod: Pod) -> TopologyGroup:
        honor_taints = spec.node_filter.taint_policy != IGNORE
        domains = self._universe.eligible(
            spec.key, tolerations=pod.spec.tolerations, honor_taints=honor_taints
        )
        return TopologyGroup(
            topology_type=spec.topology_type,
            key=spec.key,
            namespaces=spec.namespaces,
            raw_selector=spec.raw_selector,
            max_skew=spec.max_skew,
            min_domains=spec.min_domains,
            node_filter=spec.node_filter,
            domains=domains,
            seq=self._next_seq(),
        )

    def _count_domains(self, group: TopologyGroup) -> None:
        """``countDomains``: domains of existing nodes, then the existing pods the group counts."""
        node_filter = group.node_filter
        everything = node_filter.passes_everything
        key = group.key
        for node in self._nodes().values():
            domain = node.labels.get(key)
            if domain is None:
                continue
            if everything or node_filter.matches(node.taints, node.requirements):
                group.register(domain)
        selector = group.list_selector
        counted_pods = self._base.counted()
        excluded, left_out = self._excluded, self._left_out
        for namespace in sorted(group.namespaces):
            for counted in counted_pods.get(namespace, ()):
                if counted.key in excluded:
                    continue  # being scheduled in this round
                if selector is not EVERYTHING and not selector.matches(counted.labels):
                    continue
                node = counted.node
                if left_out:
                    node = left_out.get(node.name, node)
                domain = node.labels.get(key)
                if domain is None:
                    if key != HOSTNAME:
                        continue
                    domain = node.name
                if not everything and not node_filter.matches(node.taints, node.requirements):
                    continue
                group.record(domain)

    def _update_inverse_anti_affinity(self, pod: Pod, node_labels: Mapping[str, str] | None) -> None:
        info = self._info(pod)
        owned = {id(g) for g in info.inverse_owned}
        for term in required_anti_affinity(pod):
            spec = GroupSpec(
                topology_type=TopologyType.POD_ANTI_AFFINITY,
                key=term.topology_key,
                namespaces=namespaces_for(pod, term, self._namespace_labels),
                raw_selector=raw_selector(term.label_selector),
                max_skew=MAX_INT32,
                min_domains=None,
                node_filter=TopologyNodeFilter(),
            )
            hash_key = spec.group_key()
            group = self._inverse.get(hash_key)
            if group is None:
                group = self._new_group(spec, pod)
                self._inverse[hash_key] = group
                self._index(group)
                self._inverse_version += 1
            if node_labels is not None and group.key in node_labels:
                group.record(node_labels[group.key])
            group.owners.add(info.key)
            if id(group) not in owned:
                owned.add(id(group))
                info.inverse_owned.append(group)
