"""Pod-level disruption rules: ``karpenter.sh/do-not-disrupt``, PodDisruptionBudgets, eviction cost.

Translated from kubernetes-sigs/karpenter v1.14.1: ``pkg/utils/pod/scheduling.go``
(``IsDoNotDisruptActive``: ``"true"`` always blocks, a positive Go duration blocks until the pod
has run that long (no start time: it blocks), anything else is ignored; ``IsEvictable``,
``IsDisruptable``), ``pkg/utils/pdb/pdb.go`` (``Limits``: a pod matched by more than one PDB cannot
be evicted; a PDB with ``disruptionsAllowed: 0`` blocks eviction unless ``AlwaysAllow`` lets an
unready pod go; ``maxUnavailable: 0``/``0%`` or ``minAvailable: 100%`` fully blocks, so such pods
are not rescheduled) and ``pkg/utils/disruption/disruption.go`` (``EvictionCost``).

Boundary: pure functions of pods, PDBs and a clock value; no scheduling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from nodewright import labels
from nodewright.algebra.taints import tolerates_pod
from nodewright.api.core import Pod, PodDisruptionBudget, Taint
from nodewright.scheduling import podutil
from nodewright.scheduling.podutil import do_not_disrupt_active
from nodewright.scheduling.topologyselector import Expression, RawSelector, Selector, selector_for_matching

_DISRUPTED_NO_SCHEDULE: Final = Taint(key=labels.DISRUPTED_TAINT_KEY, effect="NoSchedule")


def is_disruptable(pod: Pod, now: datetime) -> bool:
    return not podutil.is_active(pod) or not do_not_disrupt_active(pod, now)


def is_evictable(pod: Pod, now: datetime) -> bool:
    return (
        podutil.is_active(pod)
        and tolerates_pod([_DISRUPTED_NO_SCHEDULE], pod) is not None
        and not podutil.is_owned_by_node(pod)
        and not do_not_disrupt_active(pod, now)
    )


def _fully_blocking(pdb: PodDisruptionBudget) -> bool:
    mu, ma = pdb.spec.max_unavailable, pdb.spec.min_available
    return (isinstance(mu, int) and not isinstance(mu, bool) and mu == 0) or mu == "0%" or ma == "100%"


@dataclass(frozen=True, slots=True)
class _Pdb:
    key: str
    namespace: str
    selector: Selector
    disruptions_allowed: int
    fully_blocking: bool
    always_allow_unhealthy: bool


class PdbLimits:
    """``pdb.Limits`` over the cluster's PodDisruptionBudgets."""

    def __init__(self, pdbs: Sequence[PodDisruptionBudget]) -> None:
        self._items: list[_Pdb] = []
        for pdb in pdbs:
            ns = pdb.metadata.namespace or "default"
            sel = pdb.spec.selector
            raw = (
                None
                if sel is None
                else RawSelector.of(
                    sel.match_labels,
                    [Expression(e.key, e.operator, tuple(e.values)) for e in sel.match_expressions],
                )
            )
            self._items.append(
                _Pdb(
                    key=f"{ns}/{pdb.metadata.name}",
                    namespace=ns,
                    selector=selector_for_matching(raw),
                    disruptions_allowed=pdb.status.disruptions_allowed,
                    fully_blocking=_fully_blocking(pdb),
                    always_allow_unhealthy=pdb.spec.unhealthy_pod_eviction_policy == "AlwaysAllow",
                )
            )

        self._by_ns: dict[str, list[_Pdb]] = {}
        for item in self._items:
            self._by_ns.setdefault(item.namespace, []).append(item)

    def _evictable(self, pod: Pod, now: datetime, *, fully: bool) -> tuple[list[str], bool]:
        ns = pod.metadata.namespace or "default"
        matching = [p for p in self._by_ns.get(ns, ()) if p.selector.matches(pod.metadata.labels)]
        # a pod no PDB selects, or one Karpenter would not evict, never blocks
        if not matching or not is_evictable(pod, now):
            return [], True
        if len(matching) > 1:
            return [p.key for p in matching], False
        for p in matching:
            if p.always_allow_unhealthy and any(
                c.type == "Ready" and c.status == "False" for c in pod.status.conditions
            ):
                return [], True
            if p.fully_blocking if fully else p.disruptions_allowed == 0:
                return [p.key], False
        return [], True

    def can_evict_pods(self, pods: Sequence[Pod], now: datetime) -> tuple[list[str], bool]:
        for pod in pods:
            keys, ok = self._evictable(pod, now, fully=False)
            if not ok:
                return keys, False
        return [], True

    def is_currently_reschedulable(self, pod: Pod, now: datetime) -> bool:
        _, ok = self._evictable(pod, now, fully=True)
        return podutil.is_reschedulable(pod) and is_disruptable(pod, now) and ok


def pods_block_reason(pods: Sequence[Pod], pdbs: PdbLimits, now: datetime) -> str | None:
    """``ValidatePodsDisruptable``: the blocking error text (lower case, as Karpenter's error)."""
    for pod in pods:
        if not is_disruptable(pod, now):
            return f'pod has "karpenter.sh/do-not-disrupt" annotation (Pod={pod.key})'
    keys, ok = pdbs.can_evict_pods(pods, now)
    if not ok:
        if len(keys) > 1:
            return f"eviction does not support multiple PDBs (PodDisruptionBudget(s)=[{' '.join(keys)}])"
        return f"pdb prevents pod evictions (PodDisruptionBudget=[{' '.join(keys)}])"
    return None
