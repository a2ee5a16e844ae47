"""Pending-pod validation (Karpenter ``provisioner.go`` ``Validate``), with Karpenter's texts.

A pod whose node selector or required node affinity Karpenter rejects is not scheduled; its error is
reported as ``Failed to schedule pod, <errors joined by "; ">``. A pod that requires
``karpenter.sh/nodepool DoesNotExist`` is ignored without an event (``ignoring pod, ...``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from nodewright import labels
from nodewright.api.core import NodeSelectorTerm, Pod

_NAME_RE: Final = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN_RE: Final = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
_LABEL_VALUE_RE: Final = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")

_NAME_FMT: Final = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_QUALIFIED_FMT: Final = (
    "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
    "(e.g. 'example.com/MyName')"
)
_DNS1123_FMT: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_LABEL_VALUE_FMT: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
_INT_OPERATORS: Final = ("Gt", "Lt", "Gte", "Lte")


def _go_list(values: Iterable[str]) -> str:
    return "[" + " ".join(values) + "]"


def qualified_name_errors(key: str) -> list[str]:
    """k8s ``IsQualifiedName`` messages."""
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            return ["prefix part must be non-empty"]
        errs: list[str] = []
        if len(prefix) > 253:
            errs.append("prefix part must be no more than 253 characters")
        if not _DNS1123_SUBDOMAIN_RE.match(prefix):
            errs.append("prefix part " + _DNS1123_FMT)
        if errs:
            return errs
    else:
        return [_QUALIFIED_FMT]
    if not name:
        return ["name part must be non-empty"]
    out: list[str] = []
    if len(name) > 63:
        out.append("name part must be no more than 63 characters")
    if not _NAME_RE.match(name):
        out.append(_NAME_FMT)
    return out


def label_value_errors(value: str) -> list[str]:
    """k8s ``IsValidLabelValue`` messages."""
    out: list[str] = []
    if len(value) > 63:
        out.append("must be no more than 63 characters")
    if not _LABEL_VALUE_RE.match(value):
        out.append(_LABEL_VALUE_FMT)
    return out


_RESTRICTED_DOMAINS: Final = labels.RESTRICTED_LABEL_DOMAINS
is_restricted_pod_label = labels.is_restricted_pod_label


def restricted_label_error(key: str) -> str | None:
    if not is_restricted_pod_label(key):
        return None
    return (
        f"label {key} is restricted; specify a well known label: {_go_list(sorted(labels.WELL_KNOWN_LABELS))}, "
        f"or a custom label that does not use a restricted domain: {_go_list(sorted(_RESTRICTED_DOMAINS))}"
    )


def requirement_errors(key: str, operator: str, values: list[str]) -> list[str]:
    """Karpenter ``ValidateRequirement`` for one node selector requirement of a pod."""
    key = labels.normalize(key)
    errs: list[str] = []
    if operator not in labels.OPERATORS:
        errs.append(
            f"key {key} has an unsupported operator {operator} not in {_go_list(sorted(labels.OPERATORS))}"
        )
    restricted = restricted_label_error(key)
    if restricted:
        errs.append(restricted)
    errs.extend(f"key {key} is not a qualified name, {e}" for e in qualified_name_errors(key))
    for v in values:
        errs.extend(f"invalid value {v} for key {key}, {e}" for e in label_value_errors(v))
    if operator == "In" and not values:
        errs.append(f"key {key} with operator {operator} must have a value defined")
    if operator in _INT_OPERATORS:
        ok = len(values) == 1
        if ok:
            try:
                ok = int(values[0]) >= 0
            except ValueError:
                ok = False
        if not ok:
            errs.append(f"key {key} with operator {operator} must have a single positive integer value")
    return errs


def _term_errors(term: NodeSelectorTerm) -> list[str]:
    errs: list[str] = []
    if term.match_fields:
        errs.append("node selector term with matchFields is not supported")
    for r in term.match_expressions:
        errs.extend(requirement_errors(r.key, r.operator, list(r.values)))
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
        errs.extend(requirement_errors(key, "In", [pod.spec.node_selector[key]]))
    aff = pod.spec.affinity
    if aff is not None and aff.node_affinity is not None:
        # preferred terms are not validated (kubernetes-sigs/karpenter PR #2182, ``validateAffinity``
        # at v1.14.1): a preference that no node can meet is relaxed away, not an error
        req = aff.node_affinity.required_during_scheduling_ignored_during_execution
        if req is not None:
            for term in req.node_selector_terms:
                errs.extend(_term_errors(term))
    return errs
