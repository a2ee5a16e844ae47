"""Disruption: Karpenter v1.14.1's disruption controller as a forecast (``nodewright disrupt``).

Public API: :func:`forecast` (the controller's loop over a cluster state, returning a
:class:`DisruptionForecast`), its result types, and the pieces a caller may reuse (budgets per
reason, candidates). Ported from kubernetes-sigs/karpenter v1.14.1 ``pkg/controllers/disruption``.

Boundary: pure over api models, a cluster state and a catalog; no I/O.
"""

from __future__ import annotations

from nodewright.disruption.loop import METHODS, forecast
from nodewright.disruption.result import (
    BlockedNode,
    BlockedPool,
    CommandResult,
    DisruptionForecast,
    Unconsolidatable,
)

__all__ = [
    "METHODS",
    "BlockedNode",
    "BlockedPool",
    "CommandResult",
    "DisruptionForecast",
    "Unconsolidatable",
    "forecast",
]
