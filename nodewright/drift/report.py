"""The typed answer of drift detection (:func:`nodewright.drift.detect.drift_impact`): the NodeClaims
Karpenter marks ``Drifted``, what happens to each NodePool, and the report's wire form."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from nodewright.drift.rollout import Rollout


@dataclass(frozen=True, kw_only=True)
class DriftedNodeClaim:
    """One NodeClaim Karpenter would mark ``Drifted=True`` with ``reason``."""

    node_claim: str
    node_pool: str
    reason: str
    message: str = ""
    already_drifted: bool = False

    def as_dict(self) -> dict[str, str]:
        return {"nodeClaim": self.node_claim, "nodePool": self.node_pool, "reason": self.reason}


@dataclass(frozen=True, kw_only=True)
class PoolImpact:
    """What the change does to one NodePool: its hash before/after and how many nodes get replaced."""

    name: str
    source: str  # "files" (a NodePool of the branch) or "cluster" (only live)
    node_claims: int
    replaced: int
    reasons: Mapping[str, int]
    hash_before: str | None
    hash_after: str
    version: str
    version_before: str | None = None
    restamped: int = 0
    rollout: Rollout | None = None

    @property
    def hash_changed(self) -> bool:
        return self.hash_before is not None and self.hash_before != self.hash_after

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "nodeClaims": self.node_claims,
            "replaced": self.replaced,
            "reasons": dict(self.reasons),
            "hash": {
                "before": self.hash_before,
                "after": self.hash_after,
                "version": self.version,
                "versionBefore": self.version_before,
            },
            "hashChanged": self.hash_changed,
            "restamped": self.restamped,
            **({"rollout": self.rollout.as_dict()} if self.rollout is not None else {}),
        }


@dataclass(frozen=True, kw_only=True)
class DriftReport:
    """The answer of :func:`drift_impact`."""

    drifted: tuple[DriftedNodeClaim, ...]
    pools: tuple[PoolImpact, ...]
    node_claims: int = 0
    skipped: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()
    at: datetime | None = None  # the one time the report was evaluated at (age gate, budgets)
    karpenter: Mapping[str, Any] = field(default_factory=dict)
    """The release and settings the forecast was made for (``{version, ...settings}``)."""

    @property
    def replaced(self) -> int:
        return len(self.drifted)

    def by_pool(self) -> dict[str, int]:
        return {p.name: p.replaced for p in self.pools}

    def as_dict(self) -> dict[str, Any]:
        return {
            "at": self.at.astimezone(UTC).isoformat().replace("+00:00", "Z") if self.at else None,
            "drifted": [d.as_dict() for d in self.drifted],
            "nodePools": [p.as_dict() for p in self.pools],
            "details": [
                {
                    "nodeClaim": d.node_claim,
                    "nodePool": d.node_pool,
                    "reason": d.reason,
                    "message": d.message,
                    "alreadyDrifted": d.already_drifted,
                }
                for d in self.drifted
            ],
            "skipped": [{"nodeClaim": n, "why": w} for n, w in self.skipped],
            "notes": list(self.notes),
            **({"karpenter": dict(self.karpenter)} if self.karpenter else {}),
            "summary": {
                "nodeClaims": self.node_claims,
                "drifted": len(self.drifted),
                "replacedByNodePool": self.by_pool(),
            },
        }
