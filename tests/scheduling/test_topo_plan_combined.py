"""Combined constraints of Karpenter's ``topology_test.go`` through ``plan`` (kubernetes-sigs/karpenter
v1.14.1 ``pkg/controllers/provisioning/scheduling/topology_test.go``, its combined-constraint contexts).

Several spread constraints at once (hostname, zone, capacity type, a custom key across NodePools)
over several rounds, and spread interacting with node selectors / node affinity. Assertions are
upstream's ``ExpectSkew`` multisets and ``ExpectMaxSkew``/"no domain above N" bounds.
"""

from __future__ import annotations

from test_topo_plan_support import Cluster, nodepool, req, spread

from nodewright.algebra.resources import parse_resource_list
from nodewright.catalog.fake import new_instance_type, price_from_resources
from nodewright.catalog.model import Offering
from nodewright.labels import CAPACITY_TYPE, HOSTNAME, ZONE

Z1, Z2, Z3 = "test-zone-1", "test-zone-2", "test-zone-3"
ZONE_TSC = spread(ZONE)
CT_TSC = spread(CAPACITY_TYPE)


def _rounds(tscs: list[dict[str, object]], sizes: tuple[int, ...]) -> list[tuple[list[int], list[int]]]:
    """Provision ``sizes`` batches; per round the skew of the first and second constraint."""
    c = Cluster()
    out = []
    for size in sizes:
        batch = c.new_pods(size, tsc=tscs)
        c.provision([nodepool()], batch)
        assert c.scheduled(batch), c.errors()
        out.append((c.skew(str(tscs[0]["topologyKey"])), c.skew(str(tscs[1]["topologyKey"]))))
    return out


# -- hostname + zone ---------------------------------------------------------------------------------
def test_hostname_and_zone_both_respected() -> None:
    got = _rounds([ZONE_TSC, spread(HOSTNAME, max_skew=3)], (2, 3, 5, 11))
    assert [zone for zone, _ in got] == [[1, 1], [1, 2, 2], [3, 3, 4], [7, 7, 7]]
    assert all(max(host) <= 3 for _, host in got)


def test_hostname_and_capacity_type_both_respected() -> None:
    got = _rounds([CT_TSC, spread(HOSTNAME, max_skew=3)], (2, 3, 5, 11))
    assert [ct for ct, _ in got] == [[1, 1], [2, 3], [5, 5], [10, 11]]
    assert all(max(host) <= 3 for _, host in got)


def test_balance_across_nodepool_requirements() -> None:
    key = "capacity.spread.4-1"
    spot = nodepool(
        "spot", requirements=[req(CAPACITY_TYPE, "In", "spot"), req(key, "In", "2", "3", "4", "5")]
    )
    on_demand = nodepool(
        "on-demand", requirements=[req(CAPACITY_TYPE, "In", "on-demand"), req(key, "In", "1")]
    )
    c = Cluster()
    batch = c.new_pods(20, tsc=[spread(key)])
    c.provision([spot, on_demand], batch)
    assert c.scheduled(batch), c.errors()
    assert c.skew(key) == [4, 4, 4, 4, 4]
    assert c.skew(CAPACITY_TYPE) == [4, 16]


def test_unreachable_domain_of_a_disabled_nodepool_keeps_min_at_zero() -> None:
    """52: zone-3 comes from a NodePool with ``limits.cpu: 0``; min stays 0, one pod per zone."""
    c = Cluster()
    pools = [
        nodepool(requirements=[req(ZONE, "In", Z1, Z2)]),
        nodepool("b", requirements=[req(ZONE, "In", Z3)], limits={"cpu": "0"}),
    ]
    c.provision(pools, c.new_pods(10, tsc=[ZONE_TSC, spread(HOSTNAME, when="ScheduleAnyway")]))
    assert c.skew(ZONE) == [1, 1]
    assert c.skew(HOSTNAME) == [1, 1]


# -- zone + capacity type ------------------------------------------------------------------------------
def test_zone_and_capacity_type_both_respected() -> None:
    c = Cluster()
    tscs = [CT_TSC, ZONE_TSC]
    for size, ct_bound, zone_bound in ((2, 1, 1), (3, 3, 2), (3, 5, 4), (11, 11, 7)):
        # upstream asserts no placement here: with the fake catalog a pod the zone spread sends to
        # zone-3 while the capacity-type spread wants spot has no offering, and stays pending
        c.provision([nodepool()], c.new_pods(size, tsc=tscs))
        assert max(c.skew(CAPACITY_TYPE)) <= ct_bound
        assert max(c.skew(ZONE)) <= zone_bound


def test_hostname_zone_and_capacity_type_max_skews() -> None:
    """Upstream uses an assorted catalog so that every zone x capacity type pair has an offering."""
    price = price_from_resources(parse_resource_list({"cpu": "4", "memory": "4Gi"}))
    assorted = [
        new_instance_type(
            f"assorted-{zone}-{ct}", offerings=(Offering(zone=zone, capacity_type=ct, price=price),)
        )
        for zone in (Z1, Z2, Z3)
        for ct in ("spot", "on-demand")
    ]
    c = Cluster(types=assorted)
    tscs = [CT_TSC, spread(ZONE, max_skew=2), spread(HOSTNAME, max_skew=3)]
    for size in range(1, 15):
        batch = c.new_pods(size, tsc=tscs)
        c.provision([nodepool()], batch)
        assert c.scheduled(batch), (size, c.errors())
        assert c.max_skew(CAPACITY_TYPE) <= 1
        assert c.max_skew(ZONE) <= 2
        assert c.max_skew(HOSTNAME) <= 3


# -- 55: zone spread and node affinity -----------------------------------------------------------------
def test_spread_limited_by_node_selector() -> None:
    c = Cluster()
    batch = c.new_pods(5, tsc=[ZONE_TSC], node_selector={ZONE: Z1}) + c.new_pods(
        10, tsc=[ZONE_TSC], node_selector={ZONE: Z2}
    )
    c.provision([nodepool()], batch)
    assert c.skew(ZONE) == [5, 10]


def test_spread_limited_by_node_requirements() -> None:
    c = Cluster()
    c.provision([nodepool()], c.new_pods(10, tsc=[ZONE_TSC], node_requirements=[req(ZONE, "In", Z1, Z2)]))
    assert c.skew(ZONE) == [5, 5]


def test_spread_limited_by_required_node_affinity_then_reopened() -> None:
    c = Cluster()
    c.provision([nodepool()], c.new_pods(6, tsc=[ZONE_TSC], node_requirements=[req(ZONE, "In", Z1, Z2)]))
    assert c.skew(ZONE) == [3, 3]
    opened = nodepool(requirements=[req(ZONE, "In", Z1, Z2, Z3)])
    c.provision([opened], c.new_pods(1, tsc=[ZONE_TSC], node_requirements=[req(ZONE, "In", Z2, Z3)]))
    assert c.skew(ZONE) == [1, 3, 3]
    c.provision([opened], c.new_pods(5, tsc=[ZONE_TSC]))
    assert c.skew(ZONE) == [4, 4, 4]


def test_spread_not_limited_by_preferred_node_affinity() -> None:
    c = Cluster()
    c.provision([nodepool()], c.new_pods(6, tsc=[ZONE_TSC], node_preferences=[req(ZONE, "In", Z1, Z2)]))
    assert c.skew(ZONE) == [2, 2, 2]


# -- capacity type spread and node affinity ------------------------------------------------------------
def test_capacity_type_spread_limited_by_node_selector() -> None:
    c = Cluster()
    tsc = spread(CAPACITY_TYPE, when="ScheduleAnyway")
    batch = c.new_pods(5, tsc=[tsc], node_selector={CAPACITY_TYPE: "spot"}) + c.new_pods(
        5, tsc=[tsc], node_selector={CAPACITY_TYPE: "on-demand"}
    )
    c.provision([nodepool()], batch)
    assert c.skew(CAPACITY_TYPE) == [5, 5]


def test_capacity_type_spread_limited_by_node_affinity_then_reopened() -> None:
    c = Cluster()
    c.provision(
        [nodepool()], c.new_pods(3, tsc=[CT_TSC], node_requirements=[req(CAPACITY_TYPE, "In", "spot")])
    )
    assert c.skew(CAPACITY_TYPE) == [3]
    both = [req(CAPACITY_TYPE, "In", "on-demand", "spot")]
    c.provision([nodepool()], c.new_pods(1, tsc=[CT_TSC], node_requirements=both))
    assert c.skew(CAPACITY_TYPE) == [1, 3]
    c.provision([nodepool()], c.new_pods(5, tsc=[CT_TSC]))
    assert c.skew(CAPACITY_TYPE) == [4, 5]
