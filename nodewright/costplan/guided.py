"""A Solve that follows a packing plan, checked at every step by Karpenter's own machinery.

:class:`GuidedScheduler` is the :class:`~nodewright.scheduling.scheduler.Scheduler` with a
different order of decisions, never different rules:

1. pods the karpenter strategy placed on existing nodes go first, through the normal placement
   (existing capacity first, preference relaxation);
2. each planned bin becomes a NodeClaim of its template restricted to the bin's instance types
   (opened by the scheduler's own ``_add_new``, so NodePool limits and minValues are checked);
   every pod is offered to the existing nodes first, then to its bin through
   ``NodeClaim.can_add`` (requirements, taints, resources with daemon overhead, offerings,
   reservations, topology recording);
3. everything else, and any pod its bin refused, goes through the normal queue (Karpenter's
   order, in-flight NodeClaims, new NodeClaims, relaxation, retry).

So every placement in the result passed exactly the checks the karpenter strategy applies, in the
order recorded here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nodewright.scheduling.nodeclaim import Failure, Placement, Template
from nodewright.scheduling.poddata import PodData
from nodewright.scheduling.queue import Queue
from nodewright.scheduling.scheduler import Scheduler, SolveResult


@dataclass(slots=True)
class PlannedClaim:
    template: Template
    mask: int  # the template's instance types this NodeClaim may take
    pods: list[PodData]


class GuidedScheduler(Scheduler):
    """See the module docstring."""

    def _on_existing(self, pod: PodData) -> bool:
        topo = self.topology
        for node in self.existing:
            got = node.can_add(pod, topo)
            if not isinstance(got, Failure):
                node.add(pod, got, topo)
                return True
        return False

    def solve_guided(
        self, first: Sequence[PodData], planned: Sequence[PlannedClaim], rest: Sequence[PodData]
    ) -> SolveResult:
        retry: list[PodData] = []
        for pod in first:
            if self._try_schedule(pod) is not None:
                pod.reset()
                self.topology.update(pod.pod)
                retry.append(pod)
        strict_reserved = not self.options.reserved_fallback
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
                placed = claim.can_add(
                    pod,
                    self.topology,
                    self.reservations,
                    relax_min_values=False,
                    strict_reserved=strict_reserved,
                    has_topology=False,
                )
                if isinstance(placed, Placement):
                    self._place_on(claim, pod, placed)
                else:
                    retry.append(pod)
        errors: dict[str, str] = {}
        queue: Queue[PodData] = Queue([*retry, *rest])
        while (queued := queue.pop()) is not None:
            err = self._try_schedule(queued)
            if err is None:
                errors.pop(queued.key, None)
                continue
            errors[queued.key] = err
            queued.reset()
            self.topology.update(queued.pod)
            queue.push(queued)
        for claim in self.claims:
            claim.finalize()
        return SolveResult(
            new_claims=self.claims,
            existing=self.existing,
            errors=errors,
            templates=self.templates,
            remaining=self.remaining,
        )
