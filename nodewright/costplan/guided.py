"""A Solve that follows a packing plan, checked at every step by Karpenter's own machinery.

:class:`GuidedScheduler` is the :class:`~nodewright.scheduling.scheduler.Scheduler` with a
different order of decisions, never different rules:

1. the pods the optimiser leaves alone are replayed in the karpenter strategy's placement order
   (:class:`RecordingScheduler` records it, with the relaxed form each pod was placed in): onto
   existing nodes through the normal placement (existing capacity first), onto the counterpart
   of the NodeClaim Karpenter gave them through ``InflightClaim.can_add`` (with topology);
2. each planned bin becomes a NodeClaim of its template restricted to the bin's instance types
   (opened by the scheduler's own ``_add_new``, so NodePool limits and minValues are checked);
   every pod is offered to the existing nodes first, then to its bin through
   ``InflightClaim.can_add`` (requirements, taints, resources with daemon overhead, offerings,
   reservations, topology recording);
3. everything else, and any pod its bin refused, goes through the normal queue (Karpenter's
   order, in-flight NodeClaims, new NodeClaims, relaxation, retry).

So every placement in the result passed exactly the checks the karpenter strategy applies, in the
order recorded here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nodewright.api.core import Pod
from nodewright.scheduling.nodeclaim import InflightClaim, Placement, Template
from nodewright.scheduling.poddata import PodData
from nodewright.scheduling.scheduler import Scheduler, SolveResult


@dataclass(slots=True)
class PlannedClaim:
    template: Template
    mask: int  # the template's instance types this NodeClaim may take
    pods: list[PodData]


class RecordingScheduler(Scheduler):
    """Karpenter's Solve, unchanged, that also records each placement in order with the (possibly
    relaxed) pod it placed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log: list[tuple[PodData, Pod]] = []

    def _placed(self, pod: PodData) -> None:
        self.log.append((pod, pod.current))


class GuidedScheduler(Scheduler):
    """See the module docstring."""

    def _replay(
        self, log: Sequence[tuple[PodData, Pod]], where: dict[int, InflightClaim], skip: set[int]
    ) -> list[PodData]:
        """Phase 1: Karpenter's placements of the pods not in ``skip``, in its order."""
        retry: list[PodData] = []
        mapped: dict[int, InflightClaim] = {}
        by_name = {t.name: t for t in self.templates}
        topo = self.topology
        for pod, relaxed in log:
            if id(pod) in skip:
                continue
            if relaxed is not pod.current:
                pod.refresh(relaxed)
                topo.update(relaxed)
            target = where.get(id(pod))
            if target is None:  # an existing node took it: the normal placement, existing first
                if self._try_schedule(pod) is not None:
                    retry.append(pod)
                continue
            has_topology = topo.has_groups_for(pod.current)
            claim = mapped.get(target.index)
            if claim is None:
                tmpl = by_name.get(target.template.name)
                n = len(self.claims)
                if (
                    tmpl is not None
                    and self._add_new(pod, has_topology, restrict=(tmpl, tmpl.types.all)) is None
                ):
                    mapped[target.index] = self.claims[n]
                else:
                    retry.append(pod)
                continue
            if not self._offer(claim, pod, has_topology):
                retry.append(pod)
        return retry

    def _offer(self, claim: InflightClaim, pod: PodData, has_topology: bool) -> bool:
        """Place ``pod`` on ``claim`` if ``InflightClaim.can_add`` accepts it."""
        placed = claim.can_add(
            pod,
            self.topology,
            self.reservations,
            relax_min_values=False,
            strict_reserved=not self.options.reserved_fallback,
            has_topology=has_topology,
        )
        if isinstance(placed, Placement):
            self._place_on(claim, pod, placed)
            return True
        return False

    def solve_guided(
        self,
        log: Sequence[tuple[PodData, Pod]],
        where: dict[int, InflightClaim],
        planned: Sequence[PlannedClaim],
        unplaced: Sequence[PodData],
    ) -> SolveResult:
        skip = {id(p) for pc in planned for p in pc.pods}
        retry = self._replay(log, where, skip)
        for pc in planned:
            claim = None
            for pod in pc.pods:
                if self._on_existing(pod):
                    continue
                if claim is None:
                    n = len(self.claims)
                    if self._add_new(pod, False, restrict=(pc.template, pc.mask)) is None:
                        claim = self.claims[n]
                    else:
                        retry.append(pod)
                    continue
                if not self._offer(claim, pod, False):
                    retry.append(pod)
        for pod in retry:
            if pod.current is not pod.pod:
                pod.reset()
                self.topology.update(pod.pod)
        return self.finish(self.drain([*retry, *unplaced]))
