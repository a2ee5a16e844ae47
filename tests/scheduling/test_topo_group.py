"""TopologyGroup next-domain rules: spread min/minDomains, hostname cases, affinity bootstrap, anti-affinity."""

from __future__ import annotations

from collections.abc import Sequence

from nodewright.algebra.requirements import Requirement
from nodewright.labels import HOSTNAME, ZONE
from nodewright.scheduling.topologyfilter import TopologyNodeFilter
from nodewright.scheduling.topologygroup import MAX_INT32, TopologyGroup, TopologyType
from nodewright.scheduling.topologyselector import RawSelector

ZONES = ("test-zone-1", "test-zone-2", "test-zone-3")
SEL = RawSelector.of({"app": "web"})


def group(
    kind: TopologyType,
    key: str = ZONE,
    *,
    domains: Sequence[str] = ZONES,
    max_skew: int = 1,
    min_domains: int | None = None,
) -> TopologyGroup:
    return TopologyGroup(
        topology_type=kind,
        key=key,
        namespaces=frozenset({"default"}),
        raw_selector=SEL,
        max_skew=max_skew if kind is TopologyType.SPREAD else MAX_INT32,
        min_domains=min_domains,
        node_filter=TopologyNodeFilter(),
        domains=domains,
    )


def r(key: str, op: str, *values: str) -> Requirement:
    return Requirement.new(key, op, values)


EXISTS = r(ZONE, "Exists")
ALL = r(ZONE, "In", *ZONES)


def test_spread_picks_least_loaded_with_smallest_name_on_ties() -> None:
    g = group(TopologyType.SPREAD)
    assert g.get(True, EXISTS, ALL).values == {"test-zone-1"}
    g.record("test-zone-1")
    assert g.get(True, EXISTS, ALL).values == {"test-zone-2"}
    g.record("test-zone-2", "test-zone-3")
    assert g.get(True, EXISTS, ALL).values == {"test-zone-1"}
    assert g.get(True, EXISTS, EXISTS).values == {"test-zone-1"}  # non-In node domains walk all domains


def test_spread_min_is_over_pod_domains_and_max_skew_bounds() -> None:
    g = group(TopologyType.SPREAD)
    g.record("test-zone-1", "test-zone-1", "test-zone-2")
    # min over all zones is 0 (zone-3): zone-1 (2+1-0) violates, zone-2 (1+1-0) is too much, zone-3 ok
    assert g.get(True, EXISTS, r(ZONE, "In", "test-zone-1", "test-zone-2")).is_empty()
    # pod restricted to zones 1-2: min is 1, zone-2 is valid
    pod_domains = r(ZONE, "In", "test-zone-1", "test-zone-2")
    assert g.get(True, pod_domains, pod_domains).values == {"test-zone-2"}
    # a pod the group does not select does not add itself to the count
    assert g.get(False, EXISTS, r(ZONE, "In", "test-zone-2")).values == {"test-zone-2"}


def test_min_domains_forces_global_min_to_zero() -> None:
    g = group(TopologyType.SPREAD, domains=("test-zone-1", "test-zone-2"), min_domains=3)
    g.record("test-zone-1", "test-zone-2")
    # two domains < minDomains 3: min is 0, so count 1+1 exceeds maxSkew 1 everywhere
    assert g.get(True, EXISTS, ALL).is_empty()
    g2 = group(TopologyType.SPREAD, domains=("test-zone-1", "test-zone-2"), min_domains=2)
    g2.record("test-zone-1", "test-zone-2")
    assert g2.get(True, EXISTS, ALL).values == {"test-zone-1"}


def test_no_supported_domain_means_unbounded_min() -> None:
    g = group(TopologyType.SPREAD)
    g.record("test-zone-1", "test-zone-1", "test-zone-1")
    # pod domains match no known domain: min = MaxInt32, any node domain is valid
    assert g.get(True, r(ZONE, "In", "nowhere"), r(ZONE, "In", "test-zone-1")).values == {"test-zone-1"}


def test_hostname_spread_single_node_domain() -> None:
    g = group(TopologyType.SPREAD, HOSTNAME, domains=(), max_skew=2)
    host = r(HOSTNAME, "In", "hostname-placeholder-0001")
    assert g.get(True, r(HOSTNAME, "Exists"), host).values == {"hostname-placeholder-0001"}
    g.record("hostname-placeholder-0001", "hostname-placeholder-0001")
    assert g.get(True, r(HOSTNAME, "Exists"), host).is_empty()
    assert g.get(False, r(HOSTNAME, "Exists"), host).values == {"hostname-placeholder-0001"}


def test_affinity_uses_populated_domains() -> None:
    g = group(TopologyType.POD_AFFINITY)
    g.record("test-zone-2")
    assert g.get(False, EXISTS, ALL).values == {"test-zone-2"}
    assert g.get(False, EXISTS, r(ZONE, "In", "test-zone-1")).is_empty()


def test_affinity_bootstrap_only_for_self_selecting_pods() -> None:
    g = group(TopologyType.POD_AFFINITY)
    assert g.get(False, EXISTS, ALL).is_empty()
    assert g.get(True, EXISTS, ALL).values == {"test-zone-1"}
    # node domains outside the pod domains: one domain from pod∩node (none) and one from pod domains
    assert g.get(True, r(ZONE, "In", "test-zone-3"), r(ZONE, "In", "test-zone-1")).values == {"test-zone-3"}
    # populated domains incompatible with the pod's: bootstrap again
    g.record("test-zone-1")
    assert g.get(True, r(ZONE, "In", "test-zone-2"), r(ZONE, "In", "test-zone-2")).values == {"test-zone-2"}


def test_affinity_hostname_single_node_domain() -> None:
    g = group(TopologyType.POD_AFFINITY, HOSTNAME, domains=())
    host = r(HOSTNAME, "In", "h1")
    exists = r(HOSTNAME, "Exists")
    assert g.get(False, exists, host).is_empty()
    assert g.get(True, exists, host).values == {"h1"}
    g.record("h2")
    assert g.get(True, exists, host).is_empty()
    assert g.get(True, exists, r(HOSTNAME, "In", "h2")).values == {"h2"}


def test_anti_affinity_uses_empty_domains() -> None:
    g = group(TopologyType.POD_ANTI_AFFINITY)
    g.record("test-zone-1")
    assert g.get(True, EXISTS, ALL).values == {"test-zone-2", "test-zone-3"}
    assert g.get(True, r(ZONE, "In", "test-zone-2"), ALL).values == {"test-zone-2"}
    g.record("test-zone-2", "test-zone-3")
    assert g.get(True, EXISTS, ALL).is_empty()


def test_anti_affinity_hostname_new_node_is_allowed() -> None:
    g = group(TopologyType.POD_ANTI_AFFINITY, HOSTNAME, domains=())
    assert g.get(True, r(HOSTNAME, "Exists"), r(HOSTNAME, "In", "new")).values == {"new"}
    g.record("new")
    assert g.get(True, r(HOSTNAME, "Exists"), r(HOSTNAME, "In", "new")).is_empty()


def test_register_and_record_keep_empty_set_in_sync() -> None:
    g = group(TopologyType.POD_ANTI_AFFINITY, domains=())
    g.register("a", "b")
    g.record("b", "c")
    assert g.counts == {"a": 0, "b": 1, "c": 1}
    assert g.empty == {"a"}
    g.register("c")
    assert g.counts["c"] == 1
    g.unregister("a")
    assert g.empty == set()
