"""Which nodes take part in a topology spread constraint (Karpenter's ``TopologyNodeFilter``).

A spread group counts a node (existing, or a NodeClaim being planned) only if it matches the
owning pod's ``nodeSelector`` plus any one of its required node-affinity terms (when
``nodeAffinityPolicy`` is ``Honor``, the default) and, when ``nodeTaintsPolicy`` is ``Honor``, its
taints are tolerated by the pod. (Anti-)affinity groups use the empty filter, which passes every
node. Requirements are checked with ``Compatible`` and no allowed-undefined labels, as upstream.

:meth:`TopologyNodeFilter.key` is the part of Karpenter's group hash that comes from the filter;
hashstructure skips unexported fields, so a requirement contributes only its key and minValues,
not its values (an upstream quirk mirrored on purpose: groups whose filters differ only in values
are merged, keeping the first filter).

Boundary: pure; no counts, no pods other than the one the filter is made from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from nodewright.algebra.requirements import Requirements
from nodewright.algebra.taints import TaintLike, is_tolerated

if TYPE_CHECKING:
    from nodewright.api.core import Pod, Toleration


HONOR: Final = "Honor"
IGNORE: Final = "Ignore"


@dataclass(frozen=True, slots=True)
class TopologyNodeFilter:
    """Requirements OR-ed together, taint and affinity policies, and the owning pod's tolerations.

    The zero value (``TopologyNodeFilter()``) passes every node: both policies are empty strings,
    which are neither ``Honor`` nor ``Ignore``, as for Karpenter's (anti-)affinity groups.
    """

    requirements: tuple[Requirements, ...] = ()
    taint_policy: str = ""
    affinity_policy: str = ""
    tolerations: tuple[Toleration, ...] = ()

    @staticmethod
    def for_pod(pod: Pod, *, taint_policy: str, affinity_policy: str) -> TopologyNodeFilter:
        """``MakeTopologyNodeFilter``: node selector, AND-ed with each required term in turn."""
        node_selector = Requirements.from_labels(pod.spec.node_selector)
        tolerations = tuple(pod.spec.tolerations)
        affinity = pod.spec.affinity
        required = None
        if affinity is not None and affinity.node_affinity is not None:
            required = affinity.node_affinity.required_during_scheduling_ignored_during_execution
        if required is None:
            return TopologyNodeFilter((node_selector,), taint_policy, affinity_policy, tolerations)
        terms: list[Requirements] = []
        for term in required.node_selector_terms:
            requirements = node_selector.copy()
            requirements.add(*Requirements.from_node_selector_requirements(term.match_expressions).values())
            terms.append(requirements)
        return TopologyNodeFilter(tuple(terms), taint_policy, affinity_policy, tolerations)

    def key(self) -> tuple[object, ...]:
        """The filter's share of the group dedupe key (see module docstring)."""
        return (
            frozenset(
                frozenset((r.key, r.min_values) for r in requirements.values())
                for requirements in self.requirements
            ),
            self.taint_policy,
            self.affinity_policy,
            frozenset(self.tolerations),
        )

    @property
    def passes_everything(self) -> bool:
        """True when :meth:`matches` is true for any node (no work needed)."""
        affinity_free = (
            self.affinity_policy != HONOR
            or not self.requirements
            or any(len(r) == 0 for r in self.requirements)
        )
        return affinity_free and self.taint_policy != HONOR

    def matches_requirements(self, requirements: Requirements) -> bool:
        """``matchesRequirements``: no terms, policy ``Ignore``, or one term compatible."""
        if not self.requirements or self.affinity_policy == IGNORE:
            return True
        return any(requirements.compatible(term) is None for term in self.requirements)

    def matches(self, taints: Sequence[TaintLike], requirements: Requirements) -> bool:
        """``Matches``: the node (its taints and label requirements) takes part in the topology."""
        if self.affinity_policy == HONOR and not self.matches_requirements(requirements):
            return False
        return not (self.taint_policy == HONOR and not is_tolerated(taints, self.tolerations))
