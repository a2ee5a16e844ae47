"""The Balanced consolidation policy's scoring (Karpenter ``disruption/balanced.go``, ``types.go``
``ScoreResult``; ``BalancedK = 2`` in ``apis/v1/nodepool.go``).

A move's score, per Balanced pool among its candidates, is savingsFraction / disruptionFraction:
savings over the pool's total cost (a cross-pool move attributes the net savings to each pool in
proportion to its candidates' price) and the pool's reschedule disruption cost of the move over
the pool's total disruption cost (every node of the pool counts: 1 per node plus each
reschedulable pod's eviction cost). No savings scores 0; no disruption scores +inf. A move passes
when every Balanced pool's score is at least 1/k. Other policies always pass.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from nodewright.disruption.candidates import Candidate

BALANCED: Final = "Balanced"
BALANCED_K: Final = 2


@dataclass(frozen=True)
class Totals:
    cost: float
    disruption: float


@dataclass(frozen=True)
class ScoreResult:
    savings_fraction: float
    disruption_fraction: float
    k: int = BALANCED_K

    @property
    def score(self) -> float:
        if self.savings_fraction <= 0:
            return 0.0
        if self.disruption_fraction == 0:
            return math.inf
        return self.savings_fraction / self.disruption_fraction

    @property
    def threshold(self) -> float:
        return 1.0 / self.k

    @property
    def approved(self) -> bool:
        return self.score >= self.threshold


def score_move(savings: float, disruption: float, totals: Totals, k: int = BALANCED_K) -> ScoreResult:
    if totals.cost <= 0 or totals.disruption <= 0:
        return ScoreResult(0.0, 0.0, k)
    return ScoreResult(savings / totals.cost, disruption / totals.disruption, k)


def is_balanced(c: Candidate) -> bool:
    return c.pool.spec.disruption.consolidation_policy == BALANCED


class Evaluator:
    """Approves moves: every Balanced pool must score at least 1/k (no totals: all pass)."""

    def __init__(self, totals: Mapping[str, Totals] | None = None) -> None:
        self.totals = dict(totals or {})

    def approve(self, cands: Sequence[Candidate], savings: float) -> tuple[bool, dict[str, ScoreResult]]:
        if not cands:
            return False, {}
        by_pool: dict[str, list[Candidate]] = {}
        for c in cands:
            by_pool.setdefault(c.pool_name, []).append(c)
        total_price = sum(c.price for c in cands)
        ok = True
        out: dict[str, ScoreResult] = {}
        for name, group in by_pool.items():
            if not is_balanced(group[0]):
                continue
            pool_savings = savings
            if total_price > 0 and len(by_pool) > 1:
                pool_savings = savings * (sum(c.price for c in group) / total_price)
            result = score_move(
                pool_savings,
                sum(c.reschedule_cost for c in group),
                self.totals.get(name, Totals(0.0, 0.0)),
            )
            out[name] = result
            ok = ok and result.approved
        return ok, out

    def can_pass(self, c: Candidate) -> bool:
        """A delete is the best any move of ``c`` can score: if it fails, skip the candidate."""
        if not is_balanced(c):
            return True
        totals = self.totals.get(c.pool_name)
        if totals is None or totals.cost <= 0:
            return True
        return score_move(c.price, c.reschedule_cost, totals).approved
