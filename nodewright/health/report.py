"""The typed answer of the health derivation (:func:`nodewright.health.derive.nodepool_health`):
per NodePool the ``NodeRegistrationHealthy`` condition Karpenter would write, the replayed
results, the verified NodeClasses and pending pods, and the report's wire form."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from nodewright.health.repair import NodeRepair
from nodewright.health.tracker import Status

CONDITION_TYPE: Final = "NodeRegistrationHealthy"


@dataclass(frozen=True, kw_only=True)
class HealthCondition:
    """The ``NodeRegistrationHealthy`` condition as Karpenter would write it."""

    status: str  # "True" | "False" | "Unknown"
    reason: str
    message: str
    observed_generation: int | None
    last_transition_time: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "type": CONDITION_TYPE,
            "status": self.status,
            "reason": self.reason,
            "message": self.message,
            "observedGeneration": self.observed_generation,
            "lastTransitionTime": self.last_transition_time,
        }


@dataclass(frozen=True, kw_only=True)
class Result:
    """One launch/registration result of one NodeClaim."""

    node_claim: str
    ok: bool
    at: datetime
    reason: str = ""
    message: str = ""


@dataclass(frozen=True, kw_only=True)
class PoolHealth:
    """Everything ``nodewright health`` says about one NodePool."""

    name: str
    uid: str
    generation: int | None
    tracker_status: Status
    condition: HealthCondition
    buffer: tuple[bool, ...]
    results: tuple[Result, ...]
    nodeclass: str
    verified_nodeclasses: Mapping[str, bool]
    verified: bool
    degraded: HealthCondition
    pending_pods: tuple[str, ...]
    reset: bool = False

    @property
    def flagged(self) -> bool:
        """Unhealthy, or its current NodePool/NodeClass pair has never launched an initialized node."""
        return self.condition.status == "False" or not self.verified

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.tracker_status,
            "condition": self.condition.as_dict(),
            "buffer": list(self.buffer),
            "results": [
                {
                    "nodeClaim": r.node_claim,
                    "ok": r.ok,
                    "at": r.at.isoformat().replace("+00:00", "Z"),
                    "reason": r.reason,
                }
                for r in self.results
            ],
            "reset": self.reset,
            "nodeClass": self.nodeclass,
            "verifiedNodeClasses": dict(self.verified_nodeclasses),
            "verified": self.verified,
            "degraded": self.degraded.as_dict() | {"type": "Degraded"},
            "pendingPods": list(self.pending_pods),
        }


@dataclass(frozen=True, kw_only=True)
class HealthReport:
    now: datetime
    pools: tuple[PoolHealth, ...]
    unmatched_pods: tuple[str, ...] = ()
    pending_since: Mapping[str, datetime] = field(default_factory=dict)
    repairs: tuple[NodeRepair, ...] = ()  # nodes the node health controller repairs (NodeRepair)
    skipped: tuple[tuple[str, str], ...] = ()  # NodePools this Karpenter does not own, and why

    def pool(self, name: str) -> PoolHealth | None:
        return next((p for p in self.pools if p.name == name), None)

    def as_dict(self) -> dict[str, Any]:
        return {
            "at": self.now.astimezone(UTC).isoformat().replace("+00:00", "Z"),
            "now": self.now.astimezone(UTC).isoformat().replace("+00:00", "Z"),  # the former name of "at"
            "nodePools": [p.as_dict() for p in self.pools],
            "unmatchedPendingPods": list(self.unmatched_pods),
            "nodeRepairs": [r.as_dict() for r in self.repairs],
            **(
                {"skippedNodePools": [{"name": n, "why": w} for n, w in self.skipped]} if self.skipped else {}
            ),
        }
