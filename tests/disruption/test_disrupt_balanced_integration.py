"""Balanced consolidation end to end, ported from kubernetes-sigs/karpenter v1.14.1
``pkg/controllers/disruption/balanced_integration_test.go`` (Describe "Balanced Consolidation");
each test names its Context and ``It``. Upstream's ConsolidationApproved events are asserted through
the command's ``score`` (the forecast's record of the approval)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from disrupt_support import CT, ZONE, disrupted, itype, managed, nodepool, pod, run

from nodewright.api.karpenter import NodePool
from nodewright.catalog.fake import new_instance_type
from nodewright.catalog.model import Offering
from nodewright.disruption.balanced import Evaluator, Totals
from nodewright.disruption.candidates import Candidate, node_price

BIG = itype("big", 16.0, cpu="32", memory="64Gi")
MID = itype("mid", 8.0, cpu="32", memory="64Gi")
CHEAP = itype("cheap", 1.2, cpu="4", memory="8Gi")
TINY = itype("tiny", 0.5, cpu="1", memory="2Gi")
TYPES = [BIG, MID, CHEAP, TINY]


def _balanced(budget: str = "100%", name: str = "default") -> NodePool:
    return nodepool(name, policy="Balanced", budgets=[{"nodes": budget}], capacity_types=("on-demand",))


def test_approves_replacing_an_oversized_node() -> None:
    """Context("Single-Node") It("should approve replacing an oversized node"): a half-cpu pod on the
    dearest type; the replacement does not offer that type and the move scores at least 1/2."""
    r = run([_balanced()], [*managed("n1", BIG), pod("p1", "n1", cpu="500m")], TYPES)
    assert [c.decision for c in r.commands] == ["replace"]
    cmd = r.commands[0]
    assert "big" not in cmd.replacements[0]["instanceTypes"]
    assert cmd.score is not None and cmd.score >= 0.5


def test_rejects_replacing_a_well_packed_node() -> None:
    """Context("Single-Node") It("should reject replacing a well-packed node"): eight 3.5-cpu pods on
    the cheapest type that holds them: nothing cheaper, no command."""
    packed = itype("packed", 1.0, cpu="32", memory="64Gi")
    items = [*managed("n1", packed), *[pod(f"p{i}", "n1", cpu="3500m") for i in range(8)]]
    assert run([_balanced()], items, [packed, BIG]).commands == ()


def test_approves_consolidating_multiple_underutilized_nodes() -> None:
    """Context("Multi-Node") It("should approve consolidating multiple underutilized nodes"): three
    dear nodes with a 1-cpu pod each: one command of at least two nodes."""
    items = [
        *[x for i in range(3) for x in managed(f"n{i}", BIG)],
        *[pod(f"p{i}", f"n{i}", cpu="1") for i in range(3)],
    ]
    r = run([_balanced()], items, TYPES)
    assert len(r.commands) == 1 and len(r.commands[0].candidates) >= 2


def test_zero_budget_blocks_balanced() -> None:
    """Context("Budgets") It("should block disruption when budget is 0%"): no command even though
    the score would approve."""
    r = run([_balanced("0%")], [*managed("n1", BIG), pod("p1", "n1", cpu="500m")], TYPES)
    assert r.commands == ()


def test_empty_before_non_empty_when_budget_is_limited() -> None:
    """Context("Priority Ordering") It("should consolidate empty nodes before non-empty nodes when
    budget is limited"): budget 1; the empty node goes, the underutilized one stays."""
    items = [*managed("empty", BIG), *managed("busy", BIG), pod("p1", "busy", cpu="500m")]
    r = run([_balanced("1")], items, TYPES)
    assert disrupted(r) == [["empty"]]


def test_chooses_delete_when_pods_fit_on_existing_nodes() -> None:
    """Context("Decision and Savings") It("should choose delete when pods fit on existing nodes"):
    node A's 1-cpu pod fits on node B (thirty 1-cpu pods on 32 cpu, so B's high disruption cost keeps
    it out of the batch); the delete saves the full price of A."""
    items = [
        *managed("a", MID),
        *managed("b", MID),
        pod("pa", "a", cpu="1"),
        *[pod(f"pb{i}", "b", cpu="1") for i in range(30)],
    ]
    r = run([_balanced()], items, [MID])
    deletes = [c for c in r.commands if c.decision == "delete"]
    assert deletes and disrupted(r)[0] == ["a"]
    assert deletes[0].savings == pytest.approx(MID.offerings[0].price, abs=0.01)


def test_chooses_replace_when_pods_need_a_new_cheaper_node() -> None:
    """Context("Decision and Savings") It("should choose replace when pods need a new cheaper node"):
    a 2-cpu pod fits no existing node; the savings are positive but below the source's price."""
    r = run([_balanced()], [*managed("a", BIG), pod("pa", "a", cpu="2")], TYPES)
    assert [c.decision for c in r.commands] == ["replace"]
    assert 0 < r.commands[0].savings < BIG.offerings[0].price


def test_highest_ratio_candidates_first() -> None:
    """Context("Ratio Sort in Multi-Node") It("should select highest-ratio candidates first when nodes
    have heterogeneous prices and pod counts"): A ($16, 10 pods), B ($8, 1 pod, the best ratio), C
    ($1.2, 8 pods): B is in the command and precedes C when both are."""
    items = [
        *managed("a", BIG),
        *managed("b", MID),
        *managed("c", CHEAP),
        *[pod(f"pa{i}", "a", cpu="100m") for i in range(10)],
        pod("pb", "b", cpu="100m"),
        *[pod(f"pc{i}", "c", cpu="100m") for i in range(8)],
    ]
    r = run([_balanced()], items, TYPES)
    names = disrupted(r)[0]
    assert "b" in names
    if "c" in names:
        assert names.index("b") < names.index("c")


def test_mixed_policy_nodepools() -> None:
    """Context("Mixed-Policy NodePools") It("should apply scoring to Balanced pools while non-Balanced
    pools consolidate normally"): a Balanced and a WhenEmptyOrUnderutilized pool, a dear node with a
    half-cpu pod in each: the Balanced pool's node is consolidated too."""
    loose = nodepool(
        "loose", policy="WhenEmptyOrUnderutilized", budgets=[{"nodes": "100%"}], capacity_types=("on-demand",)
    )
    items = [
        *managed("bal", BIG, pool="balanced"),
        *managed("std", BIG, pool="loose"),
        pod("p1", "bal", cpu="500m"),
        pod("p2", "std", cpu="500m"),
    ]
    r = run([_balanced(name="balanced"), loose], items, TYPES, until_quiet=True)
    assert r.commands
    assert "bal" in {n for c in disrupted(r) for n in c}


# -- balanced_adversarial_test.go ------------------------------------------------------------------
def _candidate(name: str, pool: str, price: float, cost: float) -> Candidate:
    return Candidate(
        state=SimpleNamespace(name=name),  # type: ignore[arg-type]
        pool=nodepool(pool, policy="Balanced"),
        instance_type=None,
        zone="test-zone-1",
        capacity_type="on-demand",
        price=price,
        pods=[],
        reschedulable=[],
        reschedule_cost=cost,
    )


def _pool_totals(cands: list[Candidate]) -> dict[str, Totals]:
    out: dict[str, Totals] = {}
    for c in cands:
        t = out.get(c.pool.name, Totals(0.0, 0.0))
        out[c.pool.name] = Totals(t.cost + c.price, t.disruption + c.reschedule_cost)
    return out


def test_per_pool_entries_for_all_pools() -> None:
    """balanced_adversarial_test.go It("should populate perPool entries for all pools even on early
    return"): a move across two Balanced pools scores both, each with k = 2 (v1.14.1's test helper
    ignores the per-pool k it is given; BalancedK is the constant 2)."""
    a = [_candidate("a-0", "pool-a", 1.0, 21.0), _candidate("a-1", "pool-a", 1.0, 2.0)]
    b = [_candidate(f"b-{i}", "pool-b", 1.0, 2.0) for i in range(10)]
    _, per_pool = Evaluator(_pool_totals([*a, *b])).approve([a[0], b[0]], 2.0)
    assert set(per_pool) == {"pool-a", "pool-b"} and all(r.k == 2 for r in per_pool.values())


def test_single_node_pool_delete_scores_one() -> None:
    """balanced_adversarial_test.go It("should approve single-node pool DELETE with expected
    scoring"): the pool's only node deleted: savings and disruption fractions 1.0, score 1.0, approved."""
    only = _candidate("only-node", "pool-single", 4.84, 2.0)
    approved, per_pool = Evaluator(_pool_totals([only])).approve([only], 4.84)
    result = per_pool["pool-single"]
    assert approved and result.savings_fraction >= 1.0 and result.score == pytest.approx(1.0)


def test_source_price_ignores_availability() -> None:
    """balanced_adversarial_test.go It("should use source pricing that ignores availability"): a
    running node costs its own offering's price even when that offering can no longer launch."""
    src = new_instance_type(
        "source-type",
        offerings=(
            Offering(zone="test-zone-1", capacity_type="on-demand", price=1.0, available=False),
            Offering(zone="test-zone-2", capacity_type="on-demand", price=5.0),
        ),
    )
    assert node_price({ZONE: "test-zone-1", CT: "on-demand"}, src) == 1.0
