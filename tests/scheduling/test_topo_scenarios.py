"""Karpenter topology_test.go scenarios (reference §2.1, 43-61) replayed through the mini solver.

Counts are compared as multisets, like upstream's ``ExpectSkew(...).To(ConsistOf(...))``.
"""

from __future__ import annotations

from test_topo_support import ZONES, MiniSolver, Pool, node, pod, spread, term

from nodewright.api.core import Pod
from nodewright.labels import CAPACITY_TYPE, HOSTNAME, ZONE
from nodewright.scheduling.requirements import Requirement, Requirements

LABELS = {"test": "test"}


def zone_pool(*zones: str, name: str = "default", **kw: object) -> Pool:
    return Pool(
        name=name,
        requirements=Requirements(
            [Requirement.new(CAPACITY_TYPE, "Exists"), Requirement.new(ZONE, "In", zones)]
        ),
        **kw,  # type: ignore[arg-type]
    )


def pods(n: int, prefix: str = "p", **kw: object) -> list[Pod]:
    kw.setdefault("labels", LABELS)
    return [pod(f"{prefix}-{i}", **kw) for i in range(n)]  # type: ignore[arg-type]


def bound(result_nodes: list[tuple[str, str, int]]) -> tuple[list[object], list[Pod]]:
    """Existing nodes (name, zone, pods-with-LABELS) as cluster state."""
    nodes = []
    cluster = []
    for name, zone, count in result_nodes:
        nodes.append(node(name, {ZONE: zone, HOSTNAME: name, CAPACITY_TYPE: "spot"}))
        cluster += [pod(f"{name}-pod-{i}", labels=LABELS, node_name=name) for i in range(count)]
    return nodes, cluster


ZONE_TSC = spread(ZONE, labels=LABELS)


# -- 43 -------------------------------------------------------------------------------------------
def test_unknown_topology_key_blocks_only_that_pod() -> None:
    batch = [pod("a", labels=LABELS, tsc=[spread("unknown", labels=LABELS)]), pod("b")]
    result = MiniSolver([Pool()]).solve(batch)
    assert set(result.errors) == {"default/a"}
    assert (
        "unsatisfiable topology constraint for topology spread, key=unknown (counts = , "
        in result.errors["default/a"]
    )
    assert result.pods_per_claim() == [1]


def test_nil_selector_does_not_spread() -> None:
    batch = pods(2, tsc=[spread(ZONE, nil_selector=True)])
    result = MiniSolver([Pool()]).solve(batch)
    assert not result.errors
    assert result.zone_counts() == [2]


def test_selector_matching_nothing_does_not_spread_hostname() -> None:
    batch = pods(5, tsc=[spread(HOSTNAME, labels={"other": "x"})])
    result = MiniSolver([Pool()]).solve(batch)
    assert result.pods_per_claim() == [5]


def test_invalid_selector_selects_nothing() -> None:
    batch = pods(2, tsc=[spread(ZONE, labels={"app.kubernetes.io/name": "{{ zqfmgb }}"})])
    assert MiniSolver([Pool()]).solve(batch).zone_counts() == [2]


# -- zonal balance ---------------------------------------------------------------------------------
def test_balance_across_zones_match_labels_and_expressions() -> None:
    for tsc in (
        ZONE_TSC,
        spread(ZONE, selector={"matchExpressions": [{"key": "test", "operator": "In", "values": ["test"]}]}),
    ):
        result = MiniSolver([Pool()]).solve(pods(4, tsc=[tsc]))
        assert result.zone_counts() == [1, 1, 2]


def test_nodepool_zone_subset_requirements_and_labels() -> None:
    assert MiniSolver([zone_pool("test-zone-1", "test-zone-2")]).solve(
        pods(4, tsc=[ZONE_TSC])
    ).zone_counts() == [2, 2]
    labelled = Pool(requirements=Requirements([Requirement.new(ZONE, "In", ["test-zone-1"])]))
    assert MiniSolver([labelled]).solve(pods(4, tsc=[ZONE_TSC])).zone_counts() == [4]


# -- 45 ------------------------------------------------------------------------------------------
def test_existing_pod_in_zone_outside_nodepool_limits_skew() -> None:
    nodes, cluster = bound([("existing", "test-zone-3", 1)])
    solver = MiniSolver(
        [zone_pool("test-zone-1", "test-zone-2")], nodes=nodes, cluster_pods=cluster, node_capacity=1
    )
    result = solver.solve(pods(6, tsc=[ZONE_TSC]))
    assert result.zone_counts() == [1, 2, 2]
    assert len(result.errors) == 2


# -- 46 ------------------------------------------------------------------------------------------
def test_non_minimum_domain_if_all_available() -> None:
    tsc = spread(ZONE, labels=LABELS, max_skew=5)
    nodes, cluster = bound([("n1", "test-zone-1", 1), ("n2", "test-zone-2", 1)])
    solver = MiniSolver([zone_pool("test-zone-3")], nodes=nodes, cluster_pods=cluster, node_capacity=1)
    result = solver.solve(pods(10, tsc=[tsc]))
    assert result.zone_counts() == [1, 1, 6]
    assert len(result.errors) == 4


def test_only_minimum_domains_when_already_violating() -> None:
    nodes, cluster = bound([("n1", "test-zone-1", 1)])
    solver = MiniSolver(
        [zone_pool("test-zone-2", "test-zone-3")], nodes=nodes, cluster_pods=cluster, node_capacity=1
    )
    assert solver.solve(pods(10, tsc=[ZONE_TSC])).zone_counts() == [1, 2, 2]


# -- 47 ------------------------------------------------------------------------------------------
def test_skew_recovers_after_deleting_pods() -> None:
    first = MiniSolver([Pool()]).solve(pods(9, tsc=[ZONE_TSC]))
    assert first.zone_counts() == [3, 3, 3]
    nodes, cluster = bound([("z1", "test-zone-1", 3), ("z2", "test-zone-2", 0), ("z3", "test-zone-3", 0)])
    second = MiniSolver([Pool()], nodes=nodes, cluster_pods=cluster, node_capacity=3).solve(
        pods(3, prefix="q", tsc=[ZONE_TSC])
    )
    assert second.zone_counts() == [1, 2, 3]


# -- 49 ------------------------------------------------------------------------------------------
def test_hostname_spread() -> None:
    result = MiniSolver([Pool()]).solve(pods(4, tsc=[spread(HOSTNAME, labels=LABELS, max_skew=4)]))
    assert result.pods_per_claim() == [4]
    result = MiniSolver([Pool()]).solve(pods(4, tsc=[spread(HOSTNAME, labels=LABELS)]))
    assert result.pods_per_claim() == [1, 1, 1, 1]


def test_hostname_spread_two_apps() -> None:
    batch = [
        pod(f"{app}-{i}", labels={"app": app}, tsc=[spread(HOSTNAME, labels={"app": app})])
        for app in ("app1", "app2")
        for i in range(2)
    ]
    assert MiniSolver([Pool()]).solve(batch).pods_per_claim() == [2, 2]


# -- 50 ------------------------------------------------------------------------------------------
def test_capacity_type_spread() -> None:
    result = MiniSolver([Pool()]).solve(pods(4, tsc=[spread(CAPACITY_TYPE, labels=LABELS)]))
    counts: dict[str, int] = {}
    for claim in result.claims:
        (ct,) = claim.requirements.get(CAPACITY_TYPE).values
        counts[ct] = counts.get(ct, 0) + len(claim.pods)
    assert sorted(counts.values()) == [2, 2]


def _capacity_type_round(when: str) -> list[int]:
    tsc = spread(CAPACITY_TYPE, labels=LABELS, when=when)
    existing = node("spot-node", {CAPACITY_TYPE: "spot", ZONE: "test-zone-1", HOSTNAME: "spot-node"})
    cluster = [pod("first", labels=LABELS, node_name="spot-node")]
    od_pool = Pool(requirements=Requirements([Requirement.new(CAPACITY_TYPE, "In", ["on-demand"])]))
    result = MiniSolver([od_pool], nodes=[existing], cluster_pods=cluster, node_capacity=1).solve(
        pods(5, tsc=[tsc])
    )
    return sorted([1, *(len(c.pods) for c in result.claims)]) if result.claims else [1]


def test_capacity_type_do_not_schedule_vs_schedule_anyway() -> None:
    assert sum(_capacity_type_round("DoNotSchedule")) == 3  # (1, 2)
    assert _capacity_type_round("ScheduleAnyway") == [1, 5]


# -- 52 ------------------------------------------------------------------------------------------
def test_unreachable_domain_keeps_min_at_zero() -> None:
    a = zone_pool("test-zone-1", "test-zone-2", name="a")
    b = zone_pool("test-zone-3", name="b", max_nodes=0)
    batch = pods(
        10,
        tsc=[ZONE_TSC, spread(HOSTNAME, labels=LABELS, when="ScheduleAnyway")],
    )
    result = MiniSolver([a, b]).solve(batch)
    assert result.zone_counts() == [1, 1]
    assert result.pods_per_claim() == [1, 1]


# -- 55 ------------------------------------------------------------------------------------------
def _zone_selector(*zones: str) -> dict[str, object]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": ZONE, "operator": "In", "values": list(zones)}]}
                ]
            }
        }
    }


def test_spread_with_node_selectors_per_zone() -> None:
    batch = pods(5, prefix="a", tsc=[ZONE_TSC], node_selector={ZONE: "test-zone-1"}) + pods(
        10, prefix="b", tsc=[ZONE_TSC], node_selector={ZONE: "test-zone-2"}
    )
    assert MiniSolver([Pool()]).solve(batch).zone_counts() == [5, 10]


def test_spread_with_required_zone_subset() -> None:
    batch = pods(10, tsc=[ZONE_TSC], affinity=_zone_selector("test-zone-1", "test-zone-2"))
    assert MiniSolver([Pool()]).solve(batch).zone_counts() == [5, 5]


def test_spread_with_preferred_zone_subset_counts_all_zones() -> None:
    preferred = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 1,
                    "preference": {
                        "matchExpressions": [
                            {"key": ZONE, "operator": "In", "values": ["test-zone-1", "test-zone-2"]}
                        ]
                    },
                }
            ]
        }
    }
    result = MiniSolver([Pool()]).solve(pods(6, tsc=[ZONE_TSC], affinity=preferred))
    assert result.zone_counts() == [2, 2, 2]


# -- 56 ------------------------------------------------------------------------------------------
def _self_affinity(key: str, **extra: object) -> dict[str, object]:
    return {
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term(key, {"app": "a"})]},
        **extra,
    }


def test_self_affinity_hostname_and_zone() -> None:
    for key in (HOSTNAME, ZONE):
        result = MiniSolver([Pool()]).solve(pods(3, labels={"app": "a"}, affinity=_self_affinity(key)))
        assert not result.errors
        assert result.pods_per_claim() == [3]


def test_self_affinity_zone_with_required_zone() -> None:
    affinity = _self_affinity(ZONE, **_zone_selector("test-zone-3"))
    result = MiniSolver([Pool()]).solve(pods(3, labels={"app": "a"}, affinity=affinity))
    assert [c.zone() for c in result.claims] == ["test-zone-3"]


def test_self_affinity_two_zones_two_nodes() -> None:
    batch = [
        pod("x", labels={"app": "a"}, affinity=_self_affinity(ZONE, **_zone_selector("test-zone-2"))),
        pod("y", labels={"app": "a"}, affinity=_self_affinity(ZONE, **_zone_selector("test-zone-3"))),
    ]
    result = MiniSolver([Pool()]).solve(batch)
    assert not result.errors
    assert sorted(c.zone() for c in result.claims) == ["test-zone-2", "test-zone-3"]


# -- 58 ------------------------------------------------------------------------------------------
def _affinity_to(labels: dict[str, str], key: str = ZONE) -> dict[str, object]:
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term(key, labels)]}}


def test_affinity_to_missing_target_fails() -> None:
    result = MiniSolver([Pool()]).solve(pods(10, labels={"app": "b"}, affinity=_affinity_to({"app": "none"})))
    assert len(result.errors) == 10
    assert all("unsatisfiable topology constraint for pod affinity" in e for e in result.errors.values())


def test_affinity_to_target_in_same_batch() -> None:
    target = pod("target", labels={"app": "target"})
    followers = pods(10, labels={"app": "b"}, affinity=_affinity_to({"app": "target"}))
    result = MiniSolver([Pool()]).solve([*followers, target])
    # the target lands on a NodeClaim whose zone is not collapsed, so followers cannot use it yet
    assert set(result.errors) == {p.key for p in followers}
    # next round: target bound in a zone, all followers schedule into it
    nodes, cluster = (
        [node("t", {ZONE: "test-zone-2", HOSTNAME: "t"})],
        [pod("target", labels={"app": "target"}, node_name="t")],
    )
    second = MiniSolver([Pool()], nodes=nodes, cluster_pods=cluster).solve(followers)
    assert not second.errors
    assert {n.zone() for n in second.existing + second.claims if n.pods} == {"test-zone-2"}


def test_affinity_to_constrained_target_same_batch() -> None:
    target = pod("target", labels={"app": "target"}, node_selector={ZONE: "test-zone-1"})
    followers = pods(10, labels={"app": "b"}, affinity=_affinity_to({"app": "target"}))
    result = MiniSolver([Pool()]).solve([target, *followers])
    assert not result.errors
    assert result.zone_counts() == [11]


# -- 61 ------------------------------------------------------------------------------------------
def test_anti_affinity_hostname_separates_pods() -> None:
    for _ in range(3):
        a = pod("a", labels={"security": "s2"})
        b = pod(
            "b",
            affinity={
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [term(HOSTNAME, {"security": "s2"})]
                }
            },
        )
        result = MiniSolver([Pool()]).solve([a, b])
        assert not result.errors
        assert result.pods_per_claim() == [1, 1]


def test_hostname_spread_with_preferred_affinity() -> None:
    target = pod("target", labels={"app": "target"})
    preferred = {
        "podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "podAffinityTerm": term(HOSTNAME, {"app": "target"})}
            ]
        }
    }
    batch = pods(3, labels={"app": "s"}, tsc=[spread(HOSTNAME, labels={"app": "s"})], affinity=preferred)
    result = MiniSolver([Pool()]).solve([*batch, target])
    assert not result.errors
    spread_counts = [sum(1 for k in c.pods if k.startswith("default/p-")) for c in result.claims]
    assert sorted(n for n in spread_counts if n) == [1, 1, 1]


def test_zones_constant() -> None:
    assert len(ZONES) == 3
