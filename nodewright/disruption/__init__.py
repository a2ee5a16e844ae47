"""Disruption: Karpenter v1.14.1's disruption controller as a forecast (``nodewright disrupt``).

Public API: :func:`forecast` (the controller's loop over a cluster state, returning a
:class:`DisruptionForecast`), its result types, and the pieces a caller may reuse (budgets per
reason, candidates). Ported from kubernetes-sigs/karpenter v1.14.1 ``pkg/controllers/disruption``.
:mod:`nodewright.disruption.rollout` answers drift's rollouts with the same simulation.

The names are imported on first use, so ``nodewright drift`` (which simulates only small states)
does not pay for the scheduler when it does not run it.

Boundary: pure over api models, a cluster state and a catalog; no I/O.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nodewright.disruption.loop import METHODS, forecast
    from nodewright.disruption.result import (
        BlockedNode,
        BlockedPool,
        CommandResult,
        DisruptionForecast,
        Unconsolidatable,
    )

_HOME = {
    "METHODS": "loop",
    "forecast": "loop",
    "BlockedNode": "result",
    "BlockedPool": "result",
    "CommandResult": "result",
    "DisruptionForecast": "result",
    "Unconsolidatable": "result",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"nodewright.disruption.{home}"), name)


__all__ = [
    "METHODS",
    "BlockedNode",
    "BlockedPool",
    "CommandResult",
    "DisruptionForecast",
    "Unconsolidatable",
    "forecast",
]
