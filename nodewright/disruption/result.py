"""The typed answer of :func:`nodewright.disruption.forecast` (``nodewright disrupt -o json``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


def _r(x: float) -> float:
    return round(x, 6)


@dataclass(frozen=True, kw_only=True)
class CommandResult:
    round: int
    method: str
    reason: str
    decision: str
    candidates: tuple[Mapping[str, Any], ...]
    replacements: tuple[Mapping[str, Any], ...]
    pods_moved: int
    hourly_cost_before: float
    hourly_cost_after: float
    score: float | None = None
    savings_fraction: float | None = None
    disruption_fraction: float | None = None
    wave: int | None = None  # forecast(waves=True): the wave the command runs in

    @property
    def savings(self) -> float:
        return self.hourly_cost_before - self.hourly_cost_after

    @property
    def candidate_nodes(self) -> tuple[tuple[Any, Any], ...]:
        """(node, instance type) of each candidate, in order."""
        return tuple((c["node"], c["instanceType"]) for c in self.candidates)

    @property
    def replacement_types(self) -> tuple[tuple[Any, Any], ...]:
        """(NodePool, instance type, ``-`` when it has no launch) of each replacement, in order."""
        return tuple(
            (r["nodePool"], (r.get("launch") or {}).get("instanceType", "-")) for r in self.replacements
        )

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "round": self.round,
            "method": self.method,
            "reason": self.reason,
            "decision": self.decision,
            "candidates": [dict(c) for c in self.candidates],
            "replacements": [dict(r) for r in self.replacements],
            "podsMoved": self.pods_moved,
            "hourlyCostBefore": _r(self.hourly_cost_before),
            "hourlyCostAfter": _r(self.hourly_cost_after),
        }
        if self.score is not None:
            out["score"] = self.score if self.score != float("inf") else "+Inf"
            out["savingsFraction"] = _r(self.savings_fraction or 0.0)
            out["disruptionFraction"] = _r(self.disruption_fraction or 0.0)
        if self.wave is not None:
            out["wave"] = self.wave
        return out


@dataclass(frozen=True, kw_only=True)
class BlockedNode:
    node: str
    node_claim: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"node": self.node, "nodeClaim": self.node_claim, "reason": self.reason}


@dataclass(frozen=True, kw_only=True)
class BlockedPool:
    node_pool: str
    reason: str
    allowed: int
    disrupting: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "nodePool": self.node_pool,
            "reason": self.reason,
            "allowed": self.allowed,
            "disrupting": self.disrupting,
        }


@dataclass(frozen=True, kw_only=True)
class Unconsolidatable:
    node_claim: str
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {"nodeClaim": self.node_claim, "message": self.message}


@dataclass(frozen=True, kw_only=True)
class DisruptionForecast:
    """Commands in execution order, what blocked, and the cost before and after."""

    at: str
    until_quiet: bool
    commands: tuple[CommandResult, ...]
    blocked: tuple[BlockedNode, ...]
    blocked_pools: tuple[BlockedPool, ...]
    unconsolidatable: tuple[Unconsolidatable, ...]
    hourly_cost_before: float
    hourly_cost_after: float
    rounds: int
    stopped: str  # "quiet" or "round limit"
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "untilQuiet": self.until_quiet,
            "commands": [c.as_dict() for c in self.commands],
            "blocked": [b.as_dict() for b in self.blocked],
            "blockedNodePools": [b.as_dict() for b in self.blocked_pools],
            "unconsolidatable": [u.as_dict() for u in self.unconsolidatable],
            "notes": list(self.notes),
            "summary": {
                "rounds": self.rounds,
                "stopped": self.stopped,
                "commands": len(self.commands),
                "nodesDisrupted": sum(len(c.candidates) for c in self.commands),
                "replacements": sum(len(c.replacements) for c in self.commands),
                "hourlyCostBefore": _r(self.hourly_cost_before),
                "hourlyCostAfter": _r(self.hourly_cost_after),
                "hourlySavings": _r(self.hourly_cost_before - self.hourly_cost_after),
            },
        }
