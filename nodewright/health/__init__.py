"""NodePool health: Karpenter's ``NodeRegistrationHealthy`` tracker, verified NodeClasses, metrics.

Public API:

* :func:`nodepool_health` - per NodePool of a cluster state: the condition, the ring buffer, the
  replayed results, ``verifiedNodeClasses`` (the Degraded NodePool RFC, kubernetes-sigs/karpenter pull request #1885), the Degraded reading, pending pods;
* :func:`flag_pools` - the pools a preview/policy should warn about (Unhealthy or never verified);
* :class:`Tracker` - the upstream ring-buffer tracker (buffer 4, threshold 0.5);
* :func:`render_prometheus` - the Prometheus text exposition of a report.

Boundary: pure functions over cluster states; no clock except ``now`` (defaults to the current time).
"""

from __future__ import annotations

from nodewright.health.derive import (
    LAUNCH_TIMEOUT,
    REGISTRATION_TIMEOUT,
    PoolFlag,
    claim_results,
    degraded_reading,
    evaluate_pool,
    flag_pools,
    nodepool_health,
    verified_nodeclasses,
)
from nodewright.health.metrics import render_prometheus
from nodewright.health.report import (
    CONDITION_TYPE,
    HealthCondition,
    HealthReport,
    PoolHealth,
    Result,
)
from nodewright.health.tracker import (
    BUFFER_SIZE,
    HEALTHY,
    THRESHOLD_FALSE,
    UNHEALTHY,
    UNKNOWN,
    RingBuffer,
    Tracker,
    status_of,
)

__all__ = [
    "BUFFER_SIZE",
    "CONDITION_TYPE",
    "HEALTHY",
    "LAUNCH_TIMEOUT",
    "REGISTRATION_TIMEOUT",
    "THRESHOLD_FALSE",
    "UNHEALTHY",
    "UNKNOWN",
    "HealthCondition",
    "HealthReport",
    "PoolFlag",
    "PoolHealth",
    "Result",
    "RingBuffer",
    "Tracker",
    "claim_results",
    "degraded_reading",
    "evaluate_pool",
    "flag_pools",
    "nodepool_health",
    "render_prometheus",
    "status_of",
    "verified_nodeclasses",
]
