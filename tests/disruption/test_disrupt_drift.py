"""Drift and static drift, ported from kubernetes-sigs/karpenter v1.14.1
``pkg/controllers/disruption/drift_test.go`` and ``staticdrift_test.go``; each test names its ``It``.

Upstream's harness runs Drift before Emptiness; these tests use ``consolidateAfter: Never`` (as
upstream's Drift context clears ``Consolidatable``) so emptiness never claims the node first and
the order does not matter, except where a test says so.
"""

from __future__ import annotations

import builders
from disrupt_support import (
    disrupted,
    itype,
    managed,
    methods,
    nodepool,
    pod,
    run,
)

BIG = itype("big", 1.0, cpu="8", memory="16Gi")
SMALL = itype("small", 0.25, cpu="2", memory="4Gi")
TYPES = [BIG, SMALL]
D1, D2, D3 = "2026-11-19T01:00:00Z", "2026-11-19T02:00:00Z", "2026-11-19T03:00:00Z"


def _pool(**kw: object) -> object:
    kw.setdefault("after", "Never")
    kw.setdefault("budgets", [{"nodes": "100%"}])
    kw.setdefault("capacity_types", ("on-demand",))
    return nodepool(**kw)  # type: ignore[arg-type]


def test_replace_drifted_nodes() -> None:
    """It("should replace drifted nodes"): a drifted node with a pod gets one replacement."""
    r = run([_pool()], [*managed("n1", BIG, drifted_at=D1), pod("p1", "n1", cpu="3")], TYPES)
    assert methods(r) == ["drift"]
    cmd = r.commands[0]
    assert (cmd.reason, cmd.decision) == ("Drifted", "replace")
    assert cmd.replacements[0]["instanceTypes"] == ["big"]


def test_delete_drifted_nodes() -> None:
    """It("should delete drifted nodes"): its pods fit elsewhere, no replacement."""
    items = [*managed("n1", BIG, drifted_at=D1), *managed("n2", BIG), pod("p1", "n1")]
    r = run([_pool()], items, TYPES)
    assert [(c.method, c.decision) for c in r.commands] == [("drift", "delete")]


def test_empty_drifted_node_with_consolidation_disabled() -> None:
    """It("should delete drifted nodes when they are empty and consolidation is disabled")."""
    r = run([_pool()], [*managed("n1", BIG, drifted_at=D1)], TYPES)
    assert [(c.method, c.decision) for c in r.commands] == [("drift", "delete")]


def test_empty_before_non_empty() -> None:
    """It("should drift empty nodes before non-empty nodes"): n1 drifted first but has a pod."""
    items = [*managed("n1", BIG, drifted_at=D1), *managed("n2", BIG, drifted_at=D2), pod("p1", "n1", cpu="3")]
    r = run([_pool(budgets=[{"nodes": "1"}])], items, TYPES)
    assert disrupted(r) == [["n2"]]


def test_one_non_empty_node_at_a_time_earliest_first() -> None:
    """It("should drift one non-empty node at a time, starting with the earliest drift"): as upstream's
    test, each command completes (replacement ready) before the next reconcile."""
    items = [
        *managed("n1", BIG, drifted_at=D3),
        *managed("n2", BIG, drifted_at=D1),
        *managed("n3", BIG, drifted_at=D2),
        *[pod(f"p{i}", f"n{i}", cpu="5") for i in (1, 2, 3)],
    ]
    r = run([_pool()], items, TYPES, until_quiet=True)
    assert disrupted(r) == [["n2"], ["n3"], ["n1"]]
    assert [c.round for c in r.commands] == [1, 2, 3]


def test_continue_to_next_if_first_cannot_reschedule() -> None:
    """It("should continue to the next drifted node if the first cannot reschedule all pods")."""
    items = [
        *managed("n1", BIG, drifted_at=D1),
        *managed("n2", BIG, drifted_at=D2),
        pod("huge", "n1", cpu="7900m"),
        pod("p2", "n2", cpu="1"),
    ]
    # n1's pod fits no instance type: Drift reports it blocked and takes the next drifted node
    tiny = itype("tiny", 0.1, cpu="1", memory="1Gi")
    items[5 - 1] = pod("huge", "n1", cpu="150")
    r = run([_pool()], items, [BIG, tiny])
    assert disrupted(r)[0] == ["n2"]
    assert r.blocked[0].node == "n1" and r.blocked[0].reason.startswith("Not all pods would schedule")


def test_ignores_nodes_without_drifted_condition() -> None:
    """It("should ignore nodes without the drifted status condition")."""
    assert run([_pool()], [*managed("n1", BIG), pod("p1", "n1")], TYPES).commands == ()


def test_do_not_disrupt_node_annotation() -> None:
    """It("should ignore nodes with the karpenter.sh/do-not-disrupt annotation set to true") and
    It("should delete drifted nodes with the karpenter.sh/do-not-disrupt annotation set to false")."""
    for value, expected in (("true", []), ("false", [["n1"]])):
        items = [*managed("n1", BIG, drifted_at=D1, node_annotations={"karpenter.sh/do-not-disrupt": value})]
        assert disrupted(run([_pool()], items, TYPES)) == expected


def test_do_not_disrupt_pods_and_termination_grace_period() -> None:
    """It("should not create replacements for drifted nodes that have pods with the
    karpenter.sh/do-not-disrupt annotation set to true"); with a terminationGracePeriod the
    eventual drift goes ahead (It("...when the NodePool's TerminationGracePeriod is not nil") asserts
    the replacement is created)."""
    dnd = {"karpenter.sh/do-not-disrupt": "true"}
    items = [*managed("n1", BIG, drifted_at=D1), pod("p1", "n1", annotations=dnd)]
    assert run([_pool()], items, TYPES).commands == ()
    items = [
        *managed("n1", BIG, drifted_at=D1, termination_grace_period="1h"),
        pod("p1", "n1", annotations=dnd),
    ]
    r = run([_pool()], items, TYPES)
    assert disrupted(r) == [["n1"]]


def test_blocking_pdb_and_termination_grace_period() -> None:
    """It("should not create replacements for drifted nodes that have pods with the blocking PDBs
    when the NodePool's TerminationGracePeriod is not nil"): the node is a drift candidate, but the
    fully blocked pod is not rescheduled, so no replacement is launched for it."""
    items = [
        *managed("n1", BIG, drifted_at=D1, termination_grace_period="1h"),
        pod("p1", "n1", labels={"app": "a"}),
        builders.pdb("a", match_labels={"app": "a"}, max_unavailable=0),
    ]
    r = run([_pool()], items, TYPES)
    assert [(c.method, c.decision) for c in r.commands] == [("drift", "delete")]


def test_budgets_three_nodes() -> None:
    """Context("Budgets") It("should only consider 3 nodes allowed to be disrupted because of
    budgets"): 10 empty drifted nodes, budget 30%: three commands, then the budget is spent."""
    items = [x for i in range(10) for x in managed(f"n{i}", SMALL, drifted_at=D1)]
    r = run([_pool(budgets=[{"nodes": "30%"}])], items, TYPES)
    assert len(r.commands) == 3
    assert r.blocked_pools[0].as_dict() == {
        "nodePool": "default",
        "reason": "Drifted",
        "allowed": 3,
        "disrupting": 3,
    }


def test_budgets_take_commands_in_progress_into_account() -> None:
    """Context("Budgets") It("should disrupt 3 nodes, taking into account commands in progress"):
    nodes already marked for deletion consume the budget."""
    items = [x for i in range(10) for x in managed(f"n{i}", SMALL, drifted_at=D1, deleting=i < 2)]
    r = run([_pool(budgets=[{"nodes": "30%"}])], items, TYPES)
    assert len(r.commands) == 1


def test_budgets_by_reason() -> None:
    """A budget scoped to reason Drifted blocks drift but not emptiness (nodepool.go reasons)."""
    items = [*managed("n1", SMALL, drifted_at=D1)]
    r = run([_pool(after="0s", budgets=[{"nodes": "0", "reasons": ["Drifted"]}])], items, TYPES)
    assert [c.method for c in r.commands] == ["emptiness"]


def test_static_nodepool_not_considered_for_drift() -> None:
    """Context("Static NodePool") It("should not consider static nodepool for drift"), and
    staticdrift_test.go: a drifted node of a static pool at its replicas is replaced by static drift."""
    items = [*managed("n1", SMALL, drifted_at=D1), pod("p1", "n1", cpu="500m")]
    r = run([_pool(replicas=1)], items, TYPES)
    assert [(c.method, c.decision) for c in r.commands] == [("static-drift", "replace")]
    assert r.commands[0].replacements[0]["instanceTypes"] == ["small", "big"]


def test_static_drift_waits_for_scale_down() -> None:
    """staticdrift_test.go: no static drift while the pool runs more nodes than its replicas."""
    items = [*managed("n1", SMALL, drifted_at=D1), *managed("n2", SMALL)]
    assert run([_pool(replicas=1)], items, TYPES).commands == ()


def test_pods_of_deleting_nodes_may_use_uninitialized_replacements() -> None:
    """suite_test.go Describe("Simulate Scheduling") It("should allow pods on deleting nodes to
    reschedule to uninitialized nodes"): without completion, the second drift command places the
    first node's pod on the first (never initialized) replacement and launches its own."""
    items = [
        *managed("n1", BIG, drifted_at=D1),
        *managed("n2", BIG, drifted_at=D2),
        pod("p1", "n1", cpu="7"),
        pod("p2", "n2", cpu="6"),
    ]
    r = run([_pool()], items, [BIG])
    assert disrupted(r) == [["n1"], ["n2"]]
    assert [len(c.replacements) for c in r.commands] == [1, 1]


def test_candidate_pods_may_not_use_uninitialized_nodes() -> None:
    """helpers.go SimulateScheduling: a candidate's own pod placed on an uninitialized node is an
    error ("would schedule against uninitialized"), so Drift reports the node blocked."""
    items = [
        *managed("n1", BIG, drifted_at=D1),
        *managed("n2", BIG, initialized=False),
        pod("p1", "n1", cpu="1"),
    ]
    r = run([_pool()], items, [BIG])
    assert r.commands == ()
    why = {b.node: b.reason for b in r.blocked}
    assert "would schedule against uninitialized nodeclaim/n2-claim" in why["n1"]
    assert why["n2"] == "Node isn't initialized"


def test_once_no_nodeclaim_is_drifted_none_becomes_so() -> None:
    """The forecast stops asking every NodeClaim whether it is Drifted once none is
    (``_Forecast._any_drifted``): at every reconcile of runs that roll drifted nodes (marked on the
    claims and by ``drifted=``, completing or not) and then consolidate, its answer is the full
    check's."""
    from nodewright.disruption import loop

    real = loop._Forecast._any_drifted
    asked: list[bool] = []

    def checked(self: loop._Forecast) -> bool:
        got = real(self)
        full = any(
            (cond := c.condition("Drifted")) is not None and cond.status == "True" for c in self.world.claims
        )
        assert got == full
        asked.append(got)
        return got

    items = [
        *managed("n1", BIG, drifted_at=D1),
        *managed("n2", BIG),
        *managed("n3", SMALL),
        *managed("n4", BIG),
        pod("p1", "n1", cpu="3"),
        pod("p2", "n2", cpu="1"),
        pod("p4", "n4", cpu="1"),
    ]
    pools = [_pool(after="0s")]
    try:
        loop._Forecast._any_drifted = checked  # type: ignore[method-assign]
        for until_quiet in (False, True):
            r = run(pools, items, TYPES, until_quiet=until_quiet, drifted=["n4"])
            assert "drift" in methods(r), methods(r)
    finally:
        loop._Forecast._any_drifted = real  # type: ignore[method-assign]
    assert True in asked and False in asked
