"""Topology spread scenarios of Karpenter's ``topology_test.go``, through ``plan``
(kubernetes-sigs/karpenter v1.14.1 ``pkg/controllers/provisioning/scheduling/topology_test.go``).

Each test is one upstream ``It``: same NodePools, pods and rounds, the same ``ExpectSkew`` /
``ExpectMaxSkew`` assertions (multisets, compared sorted). Fixture: the fake provider catalog and
the topology suite's NodePool (``capacity-type Exists``); see ``test_topo_plan_support``.
"""

from __future__ import annotations

from test_topo_plan_support import ARCH, LABELS, Cluster, node, nodepool, pod, req, spread

from nodewright.labels import CAPACITY_TYPE, HOSTNAME, INSTANCE_TYPE, ZONE

Z1, Z2, Z3 = "test-zone-1", "test-zone-2", "test-zone-3"
ZONE_TSC = spread(ZONE)
CT_TSC = spread(CAPACITY_TYPE)
HOST_TSC = spread(HOSTNAME)


def zones(*values: str) -> list[dict[str, object]]:
    return [req(ZONE, "In", *values)]


# -- 43: selectors -------------------------------------------------------------------------------
def test_unknown_topology_key_blocks_only_that_pod() -> None:
    c = Cluster()
    (a,) = c.new_pods(1, tsc=[spread("unknown")])
    (b,) = c.new_pods(1, labels={})
    c.provision([nodepool()], [a, b])
    assert c.unscheduled([a]) and c.scheduled([b])
    assert "unsatisfiable topology constraint for topology spread, key=unknown" in c.errors()[a.key]


def test_invalid_label_selector_does_not_spread() -> None:
    c = Cluster()
    tsc = spread(ZONE, labels={"app.kubernetes.io/name": "{{ zqfmgb }}"})
    c.provision([nodepool()], c.new_pods(2, tsc=[tsc]))
    assert c.skew(ZONE) == [2]


def test_nil_label_selector_does_not_spread() -> None:
    c = Cluster()
    c.provision([nodepool()], c.new_pods(2, tsc=[spread(ZONE, labels=None)]))
    assert c.skew(ZONE) == [2]


def test_match_all_pods_when_label_selector_is_not_specified() -> None:
    c = Cluster()
    c.provision([nodepool()], c.new_pods(1, labels={}))
    assert c.skew(ZONE, labels=None) == [1]
    assert c.skew(CAPACITY_TYPE, labels=None) == [1]


def test_interdependent_selectors_pack_on_one_node() -> None:
    c = Cluster()
    batch = c.new_pods(5, labels={}, tsc=[HOST_TSC])
    c.provision([nodepool()], batch)
    assert c.scheduled(batch)
    assert len({c.pod(p.key).spec.node_name for p in batch}) == 1


# -- zonal ---------------------------------------------------------------------------------------
def test_balance_across_zones_match_labels_and_expressions() -> None:
    expr = spread(ZONE, labels=None, labelSelector={"matchExpressions": [req("test", "In", "test")]})
    for tsc in (ZONE_TSC, expr):
        c = Cluster()
        c.provision([nodepool()], c.new_pods(4, tsc=[tsc]))
        assert c.skew(ZONE) == [1, 1, 2]


def test_respect_nodepool_zonal_constraints() -> None:
    c = Cluster()
    c.provision([nodepool(requirements=zones(Z1, Z2, Z3))], c.new_pods(4, tsc=[ZONE_TSC]))
    assert c.skew(ZONE) == [1, 1, 2]


def test_respect_nodepool_zonal_subset_requirements() -> None:
    c = Cluster()
    c.provision([nodepool(requirements=zones(Z1, Z2))], c.new_pods(4, tsc=[ZONE_TSC]))
    assert c.skew(ZONE) == [2, 2]


def test_respect_nodepool_zonal_subset_labels() -> None:
    c = Cluster()
    c.provision([nodepool(labels={ZONE: Z1})], c.new_pods(4, tsc=[ZONE_TSC]))
    assert c.skew(ZONE) == [4]


def test_respect_nodepool_zonal_subset_requirements_and_labels() -> None:
    c = Cluster()
    c.provision([nodepool(requirements=zones(Z1, Z2), labels={ZONE: Z1})], c.new_pods(4, tsc=[ZONE_TSC]))
    assert c.skew(ZONE) == [4]


def test_respect_nodepool_zonal_subset_labels_across_nodepools() -> None:
    c = Cluster()
    pools = [nodepool(requirements=zones(Z1, Z2), labels={ZONE: Z1}), nodepool("second", labels={ZONE: Z2})]
    c.provision(pools, c.new_pods(4, tsc=[ZONE_TSC]))
    assert c.skew(ZONE) == [2, 2]


# -- 45 ------------------------------------------------------------------------------------------
def test_respect_nodepool_zonal_constraints_existing_pod() -> None:
    c = Cluster()
    (first,) = c.new_pods(1, cpu="1.1", node_selector={ZONE: Z3})
    c.provision([nodepool()], [first])
    assert c.scheduled([first])
    c.provision([nodepool(requirements=zones(Z1, Z2))], c.new_pods(6, cpu="1.1", tsc=[ZONE_TSC]))
    assert c.skew(ZONE) == [1, 2, 2]


# -- 46 ------------------------------------------------------------------------------------------
def test_schedule_to_non_minimum_domain_if_all_that_is_available() -> None:
    c = Cluster()
    tsc = spread(ZONE, max_skew=5)
    c.provision([nodepool(requirements=zones(Z1))], c.new_pods(1, cpu="1.1", tsc=[tsc]))
    assert c.skew(ZONE) == [1]
    c.provision([nodepool(requirements=zones(Z2))], c.new_pods(1, cpu="1.1", tsc=[tsc]))
    assert c.skew(ZONE) == [1, 1]
    c.provision([nodepool(requirements=zones(Z3))], c.new_pods(10, cpu="1.1", tsc=[tsc]))
    assert c.skew(ZONE) == [1, 1, 6]


def test_do_not_violate_max_skew_when_do_not_schedule() -> None:
    c = Cluster()
    c.provision([nodepool(requirements=zones(Z1))], c.new_pods(1, cpu="1.1", tsc=[ZONE_TSC]))
    assert c.skew(ZONE) == [1]
    c.provision([nodepool(requirements=zones(Z2, Z3))], c.new_pods(10, cpu="1.1", tsc=[ZONE_TSC]))
    assert c.skew(ZONE) == [1, 2, 2]


def test_do_not_violate_max_skew_when_do_not_schedule_discover_domains() -> None:
    c = Cluster()
    c.provision([nodepool(requirements=zones(Z1))], c.new_pods(1, cpu="1.1"))
    c.provision([nodepool(requirements=zones(Z2, Z3))], c.new_pods(10, cpu="1.1", tsc=[ZONE_TSC]))
    assert c.skew(ZONE) == [1, 2, 2]


# -- 47 ------------------------------------------------------------------------------------------
def test_only_schedule_to_minimum_domains_if_already_violating_max_skew() -> None:
    c = Cluster()
    first = c.new_pods(9, cpu="1.1", tsc=[ZONE_TSC])
    c.provision([nodepool()], first)
    assert c.skew(ZONE) == [3, 3, 3]
    gone = {p.key for p in first if (n := c.node_of(p)) is not None and n.metadata.labels[ZONE] != Z1}
    c.delete_pods(lambda p: p.key not in gone)
    assert c.skew(ZONE) == [3]
    c.provision([nodepool()], c.new_pods(3, cpu="1.1", tsc=[ZONE_TSC]))
    assert c.skew(ZONE) == [1, 2, 3]


def _counting_cluster(key: str, first: str, second: str) -> Cluster:
    """Three nodes (two with the key) and bound pods of which only some count (upstream's list)."""
    c = Cluster()
    c.nodes += [
        node("first", labels={key: first}),
        node("second", labels={key: second}),
        node("third", labels={}),
    ]
    c.add(
        pod("ignored-no-labels", node_name="first"),
        pod("ignored-pending", labels=LABELS, provisionable=False),
        pod("ignored-no-domain", labels=LABELS, node_name="third"),
        pod("ignored-namespace", labels=LABELS, namespace="wrong", node_name="first"),
        pod("ignored-terminating", labels=LABELS, deleting=True),
        pod("ignored-failed", labels=LABELS, node_name="first", phase="Failed"),
        pod("ignored-succeeded", labels=LABELS, node_name="first", phase="Succeeded"),
        pod("counted-1", labels=LABELS, node_name="first"),
        pod("counted-2", labels=LABELS, node_name="first"),
        pod("counted-3", labels=LABELS, node_name="second"),
    )
    return c


def test_only_count_running_scheduled_matching_pods_zone() -> None:
    c = _counting_cluster(ZONE, Z1, Z2)
    batch = c.new_pods(2, tsc=[ZONE_TSC])
    c.provision([nodepool()], batch)
    assert c.scheduled(batch)
    assert c.skew(ZONE) == [1, 2, 2]


def test_only_count_running_scheduled_matching_pods_capacity_type() -> None:
    c = _counting_cluster(CAPACITY_TYPE, "spot", "on-demand")
    batch = c.new_pods(2, tsc=[CT_TSC])
    c.provision([nodepool()], batch)
    assert c.scheduled(batch)
    assert c.skew(CAPACITY_TYPE) == [2, 3]


# -- minDomains ----------------------------------------------------------------------------------
def test_respect_min_domains() -> None:
    c = Cluster()
    c.provision([nodepool(requirements=zones(Z1, Z2))], c.new_pods(3, tsc=[spread(ZONE, minDomains=3)]))
    assert c.skew(ZONE) == [1, 1]


def test_satisfied_min_domains_allow_scheduling() -> None:
    for min_domains in (3, 2):
        c = Cluster()
        tsc = spread(ZONE, minDomains=min_domains)
        c.provision([nodepool(requirements=zones(Z1, Z2, Z3))], c.new_pods(11, tsc=[tsc]))
        assert c.skew(ZONE) == [3, 4, 4], min_domains


# -- 49: hostname ----------------------------------------------------------------------------------
def test_hostname_balance_across_nodes() -> None:
    c = Cluster()
    c.provision([nodepool()], c.new_pods(4, tsc=[HOST_TSC]))
    assert c.skew(HOSTNAME) == [1, 1, 1, 1]


def test_hostname_balance_up_to_max_skew() -> None:
    c = Cluster()
    c.provision([nodepool()], c.new_pods(4, tsc=[spread(HOSTNAME, max_skew=4)]))
    assert c.skew(HOSTNAME) == [4]


def test_hostname_balance_multiple_deployments() -> None:
    c = Cluster()
    batch = [
        p
        for app in ("app1", "app2")
        for p in c.new_pods(2, labels={"app": app}, tsc=[spread(HOSTNAME, labels={"app": app})])
    ]
    c.provision([nodepool()], batch)
    assert c.scheduled(batch)
    assert c.node_count() == 2


def test_hostname_balance_multiple_deployments_varying_arch() -> None:
    c = Cluster()
    batch = [
        p
        for app, arch in (("app1", "amd64"), ("app2", "arm64"))
        for p in c.new_pods(
            2,
            labels={"app": app},
            node_requirements=[req(ARCH, "In", arch)],
            tsc=[spread(HOSTNAME, labels={"app": app})],
        )
    ]
    c.provision([nodepool()], batch)
    assert c.scheduled(batch)
    assert c.node_count() == 4


# -- 50: capacity type -----------------------------------------------------------------------------
def test_capacity_type_balance() -> None:
    for pool in (nodepool(), nodepool(requirements=[req(CAPACITY_TYPE, "In", "spot", "on-demand")])):
        c = Cluster()
        c.provision([pool], c.new_pods(4, tsc=[CT_TSC]))
        assert c.skew(CAPACITY_TYPE) == [2, 2]


def _capacity_type_rounds(when: str) -> list[int]:
    c = Cluster()
    tsc = spread(CAPACITY_TYPE, when=when)
    spot = nodepool(requirements=[req(CAPACITY_TYPE, "In", "spot")])
    c.provision([spot], c.new_pods(1, cpu="1.1", tsc=[tsc]))
    assert c.skew(CAPACITY_TYPE) == [1]
    on_demand = nodepool(requirements=[req(CAPACITY_TYPE, "In", "on-demand")])
    c.provision([on_demand], c.new_pods(5, cpu="1.1", tsc=[tsc]))
    return c.skew(CAPACITY_TYPE)


def test_capacity_type_do_not_schedule_keeps_max_skew() -> None:
    assert _capacity_type_rounds("DoNotSchedule") == [1, 2]


def test_capacity_type_schedule_anyway_violates_max_skew() -> None:
    assert _capacity_type_rounds("ScheduleAnyway") == [1, 5]


def test_capacity_type_balance_node_required_affinity_constrained() -> None:
    c = Cluster()
    (first,) = c.new_pods(1, node_requirements=[req(ZONE, "In", Z1), req(CAPACITY_TYPE, "In", "on-demand")])
    c.provision([nodepool()], [first])
    assert c.scheduled([first])
    reqs = [req(ZONE, "In", Z2), req(CAPACITY_TYPE, "In", "spot")]
    c.provision([nodepool()], c.new_pods(5, node_requirements=reqs, tsc=[CT_TSC]))
    assert c.skew(CAPACITY_TYPE) == [1, 5]


def test_capacity_type_balance_no_constraints() -> None:
    c = Cluster()
    (first,) = c.new_pods(
        1,
        node_selector={INSTANCE_TYPE: "single-pod-instance-type"},
        node_requirements=[req(CAPACITY_TYPE, "In", "on-demand")],
    )
    c.provision([nodepool()], [first])
    assert c.scheduled([first])
    spot = nodepool(requirements=[req(CAPACITY_TYPE, "In", "spot")])
    c.provision([spot], c.new_pods(5, cpu="2", tsc=[CT_TSC]))
    assert c.skew(CAPACITY_TYPE) == [1, 2]


def test_arch_balance_no_constraints() -> None:
    c = Cluster()
    (first,) = c.new_pods(
        1,
        node_selector={INSTANCE_TYPE: "single-pod-instance-type"},
        node_requirements=[req(ARCH, "In", "amd64")],
    )
    c.provision([nodepool()], [first])
    assert c.scheduled([first])
    arm = nodepool(requirements=[req(ARCH, "In", "arm64")])
    c.provision([arm], c.new_pods(5, cpu="2", tsc=[spread(ARCH)]))
    assert c.skew(ARCH) == [1, 2]


def test_capacity_type_spread_respects_nodepool_constraints() -> None:
    """topology_test.go Context "CapacityType", It "should respect NodePool capacity type constraints"."""
    c = Cluster()
    c.provision(
        [nodepool(requirements=[req(CAPACITY_TYPE, "In", "spot", "on-demand")])], c.new_pods(4, tsc=[CT_TSC])
    )
    assert c.skew(CAPACITY_TYPE) == [2, 2]
