"""Karpenter ``NewPodRequirements``: the node requirements a pod's selector and affinity state.

Boundary: reads a pod model, returns the algebra's :class:`Requirements`.
"""

from __future__ import annotations

from nodewright.algebra.requirements import Requirements
from nodewright.api.core import Pod


def pod_requirements(pod: Pod, *, include_preferred: bool = True) -> Requirements:
    """Karpenter ``NewPodRequirements`` (``include_preferred=False``: ``NewStrictPodRequirements``).

    Node selector labels, plus the heaviest preferred node-affinity term (first of equal
    weights) when ``include_preferred``, plus the first required node-selector term. The outer
    relaxation loop removes terms that cannot be met.
    """
    spec = pod.spec
    reqs = Requirements.from_labels(spec.node_selector)
    affinity = spec.affinity
    node_affinity = affinity.node_affinity if affinity is not None else None
    if node_affinity is None:
        return reqs
    preferred = node_affinity.preferred_during_scheduling_ignored_during_execution
    if include_preferred and preferred:
        heaviest = max(preferred, key=lambda t: t.weight)  # first of the heaviest
        reqs.add_all(Requirements.from_node_selector_requirements(heaviest.preference.match_expressions))
    required = node_affinity.required_during_scheduling_ignored_during_execution
    if required is not None and required.node_selector_terms:
        reqs.add_all(
            Requirements.from_node_selector_requirements(required.node_selector_terms[0].match_expressions)
        )
    return reqs
