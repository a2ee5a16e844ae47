"""Balanced consolidation scoring, ported from kubernetes-sigs/karpenter v1.14.1
``pkg/controllers/disruption/balanced_test.go`` (Describe "ScoreMove") and
``balanced_scoring_test.go`` (Describe "Balanced Scoring"); each test names its Context/It/Entry."""

from __future__ import annotations

import math

import pytest
from disrupt_support import itype, managed, nodepool, pod, run

from nodewright.disruption.balanced import Totals, score_move

RFC = Totals(58.08, 90)  # the RFC example pool: 10 nodes, $58.08/day, disruption 90


def _expected(savings: float, disruption: float, totals: Totals) -> float:
    return (savings / totals.cost) / (disruption / totals.disruption)


@pytest.mark.parametrize(
    ("name", "savings", "disruption", "totals", "approved"),
    [
        ("should approve an oversized node consolidation", 7.26, 4.0, RFC, True),
        ("should approve a spare capacity delete", 4.84, 5.0, RFC, True),
        ("should reject a marginal move", 2.42, 9.0, RFC, False),
        ("should approve a replace in a uniform pool", 2.42, 9.0, Totals(48.40, 90), True),
        ("should approve low-disruption nodes ... (node A)", 4.84, 5.0, Totals(58.08, 117), True),
        (
            "should approve low-disruption nodes and reject high-disruption nodes (node B)",
            4.84,
            32.0,
            Totals(58.08, 117),
            False,
        ),
    ],
)
def test_score_move(name: str, savings: float, disruption: float, totals: Totals, approved: bool) -> None:
    """balanced_test.go Describe("ScoreMove"): It(``name``)."""
    r = score_move(savings, disruption, totals)
    assert r.approved is approved
    assert r.score == pytest.approx(_expected(savings, disruption, totals), abs=0.02)
    assert r.savings_fraction == pytest.approx(savings / totals.cost)
    assert r.disruption_fraction == pytest.approx(disruption / totals.disruption)


def test_zero_savings_scores_zero() -> None:
    """It("should reject a well-packed node with zero savings")."""
    r = score_move(0.0, 11.0, RFC)
    assert r.score == 0 and not r.approved


def test_scale_invariance() -> None:
    """Context("scale invariance") It("should produce the same score regardless of pool size")."""
    assert score_move(7.26, 4.0, RFC).score == pytest.approx(
        score_move(7.26, 4.0, Totals(580.80, 900)).score, abs=0.01
    )


def test_zero_edge_cases() -> None:
    """Context("edge cases with zero values"): +Inf when the move disrupts nothing, reject when
    both are zero or the pool costs nothing."""
    assert math.isinf(score_move(4.84, 0.0, RFC).score) and score_move(4.84, 0.0, RFC).approved
    assert not score_move(0.0, 0.0, RFC).approved
    assert not score_move(4.84, 5.0, Totals(0, 90)).approved


def test_threshold_tuning() -> None:
    """Context("consolidation threshold tuning"): k=2 rejects, k=3 approves, k=1 rejects."""
    assert [score_move(2.42, 9.0, RFC, k).approved for k in (2, 3, 1)] == [False, True, False]


def test_cross_pool_equivalence() -> None:
    """Context("cross-NodePool scoring") It("should produce identical scores for proportionally
    equivalent moves")."""
    od, spot = score_move(4.84, 4.0, Totals(48.40, 90)), score_move(1.45, 4.0, Totals(14.50, 90))
    assert od.score == pytest.approx(spot.score, abs=0.01) and od.approved and spot.approved


@pytest.mark.parametrize(
    ("savings", "disruption", "score", "approved", "inf"),
    [
        (20.0, 5.0, 4.0, True, False),
        (10.0, 10.0, 1.0, True, False),
        (5.0, 50.0, 0.10, False, False),
        (10.0, 0.0, 0.0, True, True),
        (0.0, 10.0, 0.0, False, False),
        (-5.0, 10.0, 0.0, False, False),
    ],
)
def test_score_table(savings: float, disruption: float, score: float, approved: bool, inf: bool) -> None:
    """balanced_scoring_test.go DescribeTable("should compute correct scores") (totals 100/100)."""
    r = score_move(savings, disruption, Totals(100.0, 100.0))
    assert math.isinf(r.score) if inf else r.score == pytest.approx(score, abs=0.01)
    assert r.approved is approved


BIG = itype("big", 1.0, cpu="8", memory="16Gi")
MID = itype("mid", 0.9, cpu="4", memory="8Gi")
SMALL = itype("small", 0.2, cpu="2", memory="4Gi")


def test_balanced_pool_rejects_low_value_move_and_reports_score() -> None:
    """End to end: a Balanced pool approves a move that saves enough for its disruption and carries
    score, savingsFraction and disruptionFraction; a marginal replace (saves 10% for a node carrying
    most of the pool's pods) is rejected where WhenEmptyOrUnderutilized takes it."""
    items = [
        *managed("n1", BIG),
        *managed("n2", BIG),
        *[pod(f"p{i}", "n1", cpu="100m") for i in range(8)],
        pod("q", "n2", cpu="7500m"),
    ]
    pool = dict(budgets=[{"nodes": "100%"}], capacity_types=("on-demand",))
    loose = run([nodepool(policy="WhenEmptyOrUnderutilized", **pool)], items, [BIG, MID])  # type: ignore[arg-type]
    assert [(c.method, c.decision, c.replacements[0]["instanceTypes"]) for c in loose.commands] == [
        ("single-node-consolidation", "replace", ["mid"])
    ]
    # Balanced: savings 0.1 of 2.0 (5%) for disruption 9 of 11: score 0.06 < 1/2
    assert run([nodepool(policy="Balanced", **pool)], items, [BIG, MID]).commands == ()  # type: ignore[arg-type]
    ok = run(
        [nodepool(policy="Balanced", **pool)], [*managed("n1", BIG), pod("p", "n1", cpu="1")], [BIG, SMALL]
    )  # type: ignore[arg-type]
    cmd = ok.commands[0]
    assert cmd.score is not None and cmd.score >= 0.5
    assert cmd.savings_fraction == pytest.approx(0.8) and cmd.disruption_fraction == pytest.approx(1.0)
    assert cmd.as_dict()["score"] == pytest.approx(0.8)


def _cand(pool_name: str, policy: str, price: float, pods: int) -> object:
    from types import SimpleNamespace

    from nodewright.disruption.candidates import Candidate

    return Candidate(
        state=SimpleNamespace(name=f"{pool_name}-node"),  # type: ignore[arg-type]
        pool=nodepool(pool_name, policy=policy),
        instance_type=None,
        zone="z",
        capacity_type="on-demand",
        price=price,
        pods=[],
        reschedulable=[],
        reschedule_cost=1.0 + pods,
    )


def _totals(cands: list[object]) -> dict[str, Totals]:
    out: dict[str, Totals] = {}
    for c in cands:
        t = out.get(c.pool.name, Totals(0.0, 0.0))  # type: ignore[attr-defined]
        out[c.pool.name] = Totals(t.cost + c.price, t.disruption + c.reschedule_cost)  # type: ignore[attr-defined]
    return out


def test_evaluate_balanced_move() -> None:
    """balanced_scoring_test.go Describe("EvaluateBalancedMove"): It("should reject when command has
    zero candidates"), It("should skip non-Balanced pools and approve unconditionally"), It("should
    reject when candidate NodePool is missing from totals map"), It("should approve a delete command
    for a single Balanced NodePool") (score 1.0), It("should attribute savings proportionally in
    cross-NodePool scenarios") (score 1.0 for the Balanced pool)."""
    from nodewright.disruption.balanced import Evaluator

    assert Evaluator({}).approve([], 1.0) == (False, {})
    loose = [_cand("pool-nobalanced", "WhenEmptyOrUnderutilized", 4.84, 1) for _ in range(5)]
    ok, per_pool = Evaluator(_totals(loose)).approve(loose[:2], 9.68)  # type: ignore[arg-type]
    assert ok and per_pool == {}
    missing = [_cand("pool-missing", "Balanced", 4.84, 1)]
    ok, per_pool = Evaluator({}).approve(missing, 4.84)  # type: ignore[arg-type]
    assert not ok and per_pool["pool-missing"].score == 0.0
    single = [_cand("pool-single", "Balanced", 4.84, 1) for _ in range(10)]
    ok, per_pool = Evaluator(_totals(single)).approve(single[:1], 4.84)  # type: ignore[arg-type]
    assert ok and per_pool["pool-single"].score == pytest.approx(1.0, abs=0.05)
    bal = [_cand("pool-balanced", "Balanced", 4.84, 1) for _ in range(5)]
    empty = [_cand("pool-empty", "WhenEmptyOrUnderutilized", 4.84, 1) for _ in range(5)]
    ok, per_pool = Evaluator(_totals(bal + empty)).approve([bal[0], empty[0]], 9.68)  # type: ignore[arg-type]
    assert ok and set(per_pool) == {"pool-balanced"}
    assert per_pool["pool-balanced"].score == pytest.approx(1.0, abs=0.05)


def test_all_balanced_pools_must_approve() -> None:
    """balanced_scoring_test.go Context("AllPoolsMustApprove") It("should reject when any Balanced
    pool rejects"): pool B's heavy node (40 pods of a two-node pool) drags its score under 1/2 when
    the savings are small."""
    from nodewright.disruption.balanced import Evaluator

    pool_a = [_cand("pool-a", "Balanced", 4.84, 1) for _ in range(10)]
    pool_b = [_cand("pool-b", "Balanced", 1.0, 40), _cand("pool-b", "Balanced", 1.0, 1)]
    ev = Evaluator(_totals(pool_a + pool_b))
    ok, per_pool = ev.approve([pool_a[0], pool_b[0]], 1.0)  # type: ignore[arg-type]
    assert not ok and not per_pool["pool-b"].approved
    assert ev.can_pass(pool_a[0]) and not ev.can_pass(_cand("pool-b", "Balanced", 0.01, 40))  # type: ignore[arg-type]
