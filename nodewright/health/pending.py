"""Which NodePool each pending pod is waiting on (a simple requirements/taints match).

Boundary: Karpenter's ``IsProvisionable`` selects the pending pods; each goes to the first NodePool,
by weight (highest first) then name (later in the alphabet first, Karpenter's ``OrderByWeight``),
whose template taints the pod tolerates and whose requirements plus template labels are compatible
with one of the pod's node selector / required node-affinity terms (well-known labels may be
undefined). No resources, topology or instance types: that is the scheduler's job.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from nodewright import labels
from nodewright.algebra.requirements import ALLOW_UNDEFINED_WELL_KNOWN, Requirement, Requirements
from nodewright.algebra.taints import is_tolerated
from nodewright.api.core import Taint
from nodewright.drift.detect import parse_time
from nodewright.scheduling.podutil import is_provisionable


@dataclass(frozen=True, kw_only=True)
class _Req:
    key: str
    operator: str
    values: tuple[str, ...] = ()


def _pool_view(body: Mapping[str, Any]) -> tuple[str, int, Any, list[Taint]]:

    meta = body.get("metadata") or {}
    name = str(meta.get("name", ""))
    spec = body.get("spec") or {}
    weight = int(spec.get("weight") or 0)
    tmpl = spec.get("template") or {}
    tspec = tmpl.get("spec") or {}
    reqs = Requirements.from_node_selector_requirements(
        _Req(
            key=str(r.get("key", "")),
            operator=str(r.get("operator", "")),
            values=tuple(r.get("values") or ()),
        )
        for r in tspec.get("requirements") or []
        if isinstance(r, Mapping)
    )
    tlabels = (tmpl.get("metadata") or {}).get("labels") or {}
    reqs.add(*Requirements.from_labels({str(k): str(v) for k, v in tlabels.items()}).values())
    reqs.add(Requirement.new(labels.NODEPOOL, "In", (name,)))
    taints = [
        Taint(key=str(t.get("key", "")), value=t.get("value"), effect=str(t.get("effect", "")))
        for t in tspec.get("taints") or []
        if isinstance(t, Mapping)
    ]
    return name, weight, reqs, taints


def pod_terms(pod: Any) -> list[Any]:
    """The pod's alternatives: node selector AND each required node-affinity term (OR of terms)."""

    base = Requirements.from_labels(dict(pod.spec.node_selector or {}))
    aff = pod.spec.affinity.node_affinity if pod.spec.affinity and pod.spec.affinity.node_affinity else None
    required = aff.required_during_scheduling_ignored_during_execution if aff else None
    terms = required.node_selector_terms if required else []
    if not terms:
        return [base]
    out = []
    for term in terms:
        r = base.copy()
        r.add(*Requirements.from_node_selector_requirements(term.match_expressions).values())
        out.append(r)
    return out


def _pending_since(pod: Any) -> datetime | None:
    for c in pod.status.conditions:
        if c.type == "PodScheduled":
            t = parse_time(c.last_transition_time)
            if t is not None:
                return t
    return parse_time(pod.metadata.creation_timestamp)


def assign_pending(
    pools: Sequence[tuple[Any, Mapping[str, Any]]], pods: Iterable[Any]
) -> tuple[dict[str, list[str]], list[str], dict[str, datetime]]:
    """(pool name -> pending pod keys, pods no pool takes, pod key -> pending since)."""
    by_name = sorted((_pool_view(body) for _, body in pools), key=lambda v: v[0], reverse=True)
    views = sorted(by_name, key=lambda v: -v[1])  # stable: weight desc, then name desc
    out: dict[str, list[str]] = {}
    unmatched: list[str] = []
    since: dict[str, datetime] = {}
    for pod in pods:
        if not is_provisionable(pod):
            continue
        key = f"{pod.metadata.namespace or 'default'}/{pod.metadata.name}"
        t = _pending_since(pod)
        if t is not None:
            since[key] = t
        terms = pod_terms(pod)
        for name, _, reqs, taints in views:
            if not is_tolerated(taints, pod.spec.tolerations):
                continue
            if any(reqs.is_compatible(term, allow_undefined=ALLOW_UNDEFINED_WELL_KNOWN) for term in terms):
                out.setdefault(name, []).append(key)
                break
        else:
            unmatched.append(key)
    return out, unmatched, since
