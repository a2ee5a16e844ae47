"""Pending-pod validation (Karpenter ``provisioner.go`` ``Validate``), with Karpenter's texts.

A pod whose node selector or required node affinity Karpenter rejects is not scheduled; its error is
reported as ``Failed to schedule pod, <errors joined by "; ">``. A pod that requires
``karpenter.sh/nodepool DoesNotExist`` is ignored without an event (``ignoring pod, ...``).
"""

from __future__ import annotations

from nodewright import labels
from nodewright.api.core import NodeSelectorTerm, Pod
from nodewright.crd.runtime import requirement_errors as crd_requirement_errors


def _requirement_errors(key: str, operator: str, values: list[str]) -> list[str]:
    """Karpenter ``ValidateRequirement`` for one node selector requirement of a pod (the one
    implementation lives in :mod:`nodewright.crd.runtime`)."""
    return crd_requirement_errors({"key": key, "operator": operator, "values": values})


def _term_errors(term: NodeSelectorTerm) -> list[str]:
    errs: list[str] = []
    if term.match_fields:
        errs.append("node selector term with matchFields is not supported")
    for r in term.match_expressions:
        errs.extend(_requirement_errors(r.key, r.operator, list(r.values)))
    return errs


def managed_label_does_not_exist(pod: Pod) -> str | None:
    """The pod asks not to run on a Karpenter node (``karpenter.sh/nodepool DoesNotExist``)."""
    aff = pod.spec.affinity
    if aff is None or aff.node_affinity is None:
        return None
    terms: list[NodeSelectorTerm] = []
    req = aff.node_affinity.required_during_scheduling_ignored_during_execution
    if req is not None and req.node_selector_terms:
        terms.append(req.node_selector_terms[0])
    prefs = aff.node_affinity.preferred_during_scheduling_ignored_during_execution
    if prefs:
        terms.append(max(prefs, key=lambda p: p.weight).preference)
    for term in terms:
        for r in term.match_expressions:
            if labels.normalize(r.key) == labels.NODEPOOL and r.operator == "DoesNotExist":
                return (
                    f"configured to not run on a Karpenter provisioned node via the "
                    f"{labels.NODEPOOL} DoesNotExist requirement"
                )
    return None


def validate_pod(pod: Pod) -> list[str]:
    """Every validation error Karpenter reports for the pod, in its order."""
    errs: list[str] = []
    for key in sorted(pod.spec.node_selector):
        errs.extend(_requirement_errors(key, "In", [pod.spec.node_selector[key]]))
    aff = pod.spec.affinity
    if aff is not None and aff.node_affinity is not None:
        # preferred terms are not validated (kubernetes-sigs/karpenter PR #2182, ``validateAffinity``
        # at v1.14.1): a preference that no node can meet is relaxed away, not an error
        req = aff.node_affinity.required_during_scheduling_ignored_during_execution
        if req is not None:
            for term in req.node_selector_terms:
                errs.extend(_term_errors(term))
    return errs
