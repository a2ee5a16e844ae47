"""The topology groups a pod asks for: its spread constraints, pod affinity and anti-affinity
terms as group specs (Karpenter v1.14.1 ``pkg/controllers/provisioning/scheduling/topology.go``:
``newForTopologies``, ``newForAffinities``, ``buildNamespaceList``), before
:class:`nodewright.scheduling.topology.Topology` deduplicates them into groups.

Boundary: pure; no I/O.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from nodewright.scheduling.topologybase import namespace_of
from nodewright.scheduling.topologyfilter import IGNORE, TopologyNodeFilter
from nodewright.scheduling.topologygroup import MAX_INT32, GroupKey, TopologyType, group_key
from nodewright.scheduling.topologyselector import Expression, RawSelector, selector_for_matching

if TYPE_CHECKING:
    from nodewright.api.core import LabelSelector, Pod, PodAffinityTerm

_log = logging.getLogger("nodewright")

_DO_NOT_SCHEDULE: Final = "DoNotSchedule"
_HONOR: Final = "Honor"


def raw_selector(selector: LabelSelector | None) -> RawSelector | None:
    """A label selector as the topology's selector matcher reads it (``None``: no selector)."""
    if selector is None:
        return None
    return RawSelector.of(selector.match_labels, selector.match_expressions)


def namespaces_for(
    pod: Pod, term: PodAffinityTerm, namespace_labels: Callable[[], Mapping[str, Mapping[str, str]]]
) -> frozenset[str]:
    """``buildNamespaceList``; namespace labels are known only as ``kubernetes.io/metadata.name``
    (plus any given to the topology), since cluster files carry no Namespace objects; ``namespace_labels``
    is asked only when a namespace selector needs them."""
    if not term.namespaces and term.namespace_selector is None:
        return frozenset({namespace_of(pod)})
    if term.namespace_selector is None:
        return frozenset(term.namespaces)
    selector = selector_for_matching(raw_selector(term.namespace_selector))
    if selector.nothing and (
        term.namespace_selector.match_labels or term.namespace_selector.match_expressions
    ):
        _log.warning(
            "pod %s: invalid namespaceSelector in a pod (anti-)affinity term; it selects no namespace",
            pod.key,
        )
    selected = {ns for ns, labels in namespace_labels().items() if selector.matches(labels)}
    return frozenset(selected | set(term.namespaces))


def group_specs(
    pod: Pod, *, respect: bool, namespace_labels: Callable[[], Mapping[str, Mapping[str, str]]]
) -> list[GroupSpec]:
    """``newForTopologies`` then ``newForAffinities`` (affinity terms, then anti-affinity);
    ``respect``: the preference policy ``Respect`` (soft constraints count)."""
    specs: list[GroupSpec] = []
    namespace = namespace_of(pod)
    labels = pod.metadata.labels
    for tsc in pod.spec.topology_spread_constraints:
        if not respect and tsc.when_unsatisfiable != _DO_NOT_SCHEDULE:
            continue
        raw = raw_selector(tsc.label_selector)
        if raw is not None and tsc.match_label_keys:
            raw = raw.with_expressions(
                Expression(k, "In", (labels[k],)) for k in tsc.match_label_keys if k in labels
            )
        node_filter = TopologyNodeFilter.for_pod(
            pod,
            taint_policy=tsc.node_taints_policy or IGNORE,
            affinity_policy=tsc.node_affinity_policy or _HONOR,
        )
        specs.append(
            GroupSpec(
                topology_type=TopologyType.SPREAD,
                key=tsc.topology_key,
                namespaces=frozenset({namespace}),
                raw_selector=raw,
                max_skew=tsc.max_skew,
                min_domains=tsc.min_domains,
                node_filter=node_filter,
            )
        )
    affinity = pod.spec.affinity
    if affinity is None:
        return specs
    for topology_type, rules in (
        (TopologyType.POD_AFFINITY, affinity.pod_affinity),
        (TopologyType.POD_ANTI_AFFINITY, affinity.pod_anti_affinity),
    ):
        if rules is None:
            continue
        terms = list(rules.required_during_scheduling_ignored_during_execution)
        if respect:
            terms.extend(
                w.pod_affinity_term for w in rules.preferred_during_scheduling_ignored_during_execution
            )
        for term in terms:
            specs.append(
                GroupSpec(
                    topology_type=topology_type,
                    key=term.topology_key,
                    namespaces=namespaces_for(pod, term, namespace_labels),
                    raw_selector=raw_selector(term.label_selector),
                    max_skew=MAX_INT32,
                    min_domains=None,
                    node_filter=TopologyNodeFilter(),
                )
            )
    return specs


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupSpec:
    """One topology group a pod asks for, before it is deduplicated into a :class:`TopologyGroup`."""

    topology_type: TopologyType
    key: str
    namespaces: frozenset[str]
    raw_selector: RawSelector | None
    max_skew: int
    min_domains: int | None
    node_filter: TopologyNodeFilter

    def group_key(self) -> GroupKey:
        """The dedupe key of the group this spec describes (Karpenter's ``TopologyGroup.Hash()``)."""
        return group_key(
            topology_type=self.topology_type,
            key=self.key,
            namespaces=self.namespaces,
            raw_selector=self.raw_selector,
            max_skew=self.max_skew,
            node_filter=self.node_filter,
        )
