"""Preference relaxation (Karpenter ``preferences.go``).

When a pod cannot be placed, ``relax`` applies the *first* applicable step and returns the relaxed
copy (the input model is frozen and never changed), or None when nothing is left to relax:

1. drop the first required node-affinity term when there are several (they are ORed);
2. drop the heaviest preferred pod-affinity term;
3. drop the heaviest preferred pod-anti-affinity term;
4. drop the heaviest preferred node-affinity term;
5. drop the first ``ScheduleAnyway`` topology spread constraint (swap-with-last removal);
6. when some NodePool has a ``PreferNoSchedule`` taint: tolerate ``PreferNoSchedule`` taints.
"""

from __future__ import annotations

from typing import Final

from nodewright.api.core import Affinity, Pod, Toleration

PREFER_NO_SCHEDULE: Final = "PreferNoSchedule"
_TOLERATE_PREFER_NO_SCHEDULE: Final = Toleration(operator="Exists", effect=PREFER_NO_SCHEDULE)


def _with_affinity(pod: Pod, affinity: Affinity) -> Pod:
    return pod.model_copy(update={"spec": pod.spec.model_copy(update={"affinity": affinity})})


def remove_required_node_affinity_term(pod: Pod) -> Pod | None:
    aff = pod.spec.affinity
    if aff is None or aff.node_affinity is None:
        return None
    req = aff.node_affinity.required_during_scheduling_ignored_during_execution
    if req is None or len(req.node_selector_terms) <= 1:
        return None
    new_req = req.model_copy(update={"node_selector_terms": req.node_selector_terms[1:]})
    na = aff.node_affinity.model_copy(update={"required_during_scheduling_ignored_during_execution": new_req})
    return _with_affinity(pod, aff.model_copy(update={"node_affinity": na}))


def _remove_preferred_pod_term(pod: Pod, field: str) -> Pod | None:
    aff = pod.spec.affinity
    if aff is None:
        return None
    pa = getattr(aff, field)
    if pa is None or not pa.preferred_during_scheduling_ignored_during_execution:
        return None
    terms = sorted(pa.preferred_during_scheduling_ignored_during_execution, key=lambda t: -t.weight)
    new_pa = pa.model_copy(update={"preferred_during_scheduling_ignored_during_execution": terms[1:]})
    return _with_affinity(pod, aff.model_copy(update={field: new_pa}))


def remove_preferred_pod_affinity_term(pod: Pod) -> Pod | None:
    return _remove_preferred_pod_term(pod, "pod_affinity")


def remove_preferred_pod_anti_affinity_term(pod: Pod) -> Pod | None:
    return _remove_preferred_pod_term(pod, "pod_anti_affinity")


def remove_preferred_node_affinity_term(pod: Pod) -> Pod | None:
    aff = pod.spec.affinity
    if aff is None or aff.node_affinity is None:
        return None
    na = aff.node_affinity
    if not na.preferred_during_scheduling_ignored_during_execution:
        return None
    terms = sorted(na.preferred_during_scheduling_ignored_during_execution, key=lambda t: -t.weight)
    new_na = na.model_copy(update={"preferred_during_scheduling_ignored_during_execution": terms[1:]})
    return _with_affinity(pod, aff.model_copy(update={"node_affinity": new_na}))


def remove_topology_spread_schedule_anyway(pod: Pod) -> Pod | None:
    tscs = list(pod.spec.topology_spread_constraints)
    for i, tsc in enumerate(tscs):
        if tsc.when_unsatisfiable == "ScheduleAnyway":
            tscs[i] = tscs[-1]
            tscs.pop()
            return pod.model_copy(
                update={"spec": pod.spec.model_copy(update={"topology_spread_constraints": tscs})}
            )
    return None


def tolerate_prefer_no_schedule_taints(pod: Pod) -> Pod | None:
    for t in pod.spec.tolerations:
        if t.operator == "Exists" and t.effect == PREFER_NO_SCHEDULE and not t.key and not t.value:
            return None
    tolerations = [*pod.spec.tolerations, _TOLERATE_PREFER_NO_SCHEDULE]
    return pod.model_copy(update={"spec": pod.spec.model_copy(update={"tolerations": tolerations})})


class Preferences:
    """The relaxation ladder; ``tolerate_prefer_no_schedule`` when any NodePool has such a taint."""

    __slots__ = ("tolerate_prefer_no_schedule",)

    def __init__(self, *, tolerate_prefer_no_schedule: bool) -> None:
        self.tolerate_prefer_no_schedule = tolerate_prefer_no_schedule

    def relax(self, pod: Pod) -> Pod | None:
        for step in (
            remove_required_node_affinity_term,
            remove_preferred_pod_affinity_term,
            remove_preferred_pod_anti_affinity_term,
            remove_preferred_node_affinity_term,
            remove_topology_spread_schedule_anyway,
        ):
            relaxed = step(pod)
            if relaxed is not None:
                return relaxed
        if self.tolerate_prefer_no_schedule:
            return tolerate_prefer_no_schedule_taints(pod)
        return None
