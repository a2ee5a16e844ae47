"""Karpenter's provisioning simulation: which NodeClaims the NodePools would launch for pending pods.

Public API:

* :func:`nodewright.scheduling.plan.plan` (and :class:`~nodewright.scheduling.plan.PlanOptions`):
  one provisioning round from NodePools, a cluster state and a catalog, as the ``nodewright plan
  -o json`` document;
* :class:`nodewright.scheduling.scheduler.Scheduler` / ``SolveResult``: the Solve loop itself;
* requirements (:mod:`.requirements`), taints (:mod:`.taints`) and topology (:mod:`.topology`) are
  the algebra and topology modules the loop rests on.

Boundary: pure computation over nodewright.api models and the catalog; no I/O, no click, no pulumi.
Submodules are imported explicitly (``from nodewright.scheduling.plan import plan``) so that
importing the package stays cheap.
"""
