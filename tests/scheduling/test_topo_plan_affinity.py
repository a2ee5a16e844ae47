"""Pod affinity and anti-affinity scenarios of Karpenter's ``topology_test.go`` through ``plan``
(kubernetes-sigs/karpenter v1.14.1
``pkg/controllers/provisioning/scheduling/topology_test.go``, its pod affinity contexts): self affinity, affinity to targets in and out of the batch, namespaces,
anti-affinity on hostname / zone / arch, inverse anti-affinity of batch and bound pods, the
"Schrödinger" zone that an unlaunched NodeClaim may take, and preferred terms being relaxed.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from test_topo_plan_support import ARCH, LABELS, Cluster, nodepool, req, spread, term, zone_of

from nodewright.api.core import Pod
from nodewright.labels import HOSTNAME, ZONE

S2 = {"security": "s2"}
HOST_TSC = spread(HOSTNAME)


def _same_node(c: Cluster, *keys: str) -> bool:
    return len({c.pod(k).spec.node_name for k in keys}) == 1 and bool(c.pod(keys[0]).spec.node_name)


def test_empty_pod_affinity_and_anti_affinity() -> None:
    c = Cluster()
    (p,) = c.new_pods(1, labels={})
    raw = p.model_dump(by_alias=True, exclude_none=True)
    raw["spec"]["affinity"] = {
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []},
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []},
    }
    p = Pod.model_validate(raw)
    c.provision([nodepool()], [p])
    assert c.scheduled([p])


def test_pod_affinity_hostname() -> None:
    c = Cluster()
    spreaders = c.new_pods(10, tsc=[HOST_TSC])
    (target,) = c.new_pods(1, labels=S2)
    (follower,) = c.new_pods(1, labels={}, affinity=[term(HOSTNAME, S2)])
    c.provision([nodepool()], [*spreaders, target, follower])
    assert _same_node(c, target.key, follower.key)


def test_pod_affinity_arch() -> None:
    c = Cluster()
    tsc = spread(HOSTNAME, labels=S2)
    (a,) = c.new_pods(1, labels=S2, tsc=[tsc], cpu="2", node_selector={ARCH: "arm64"})
    (b,) = c.new_pods(1, labels=S2, tsc=[tsc], cpu="1", affinity=[term(ARCH, S2)])
    c.provision([nodepool()], [a, b])
    na, nb = c.node_of(a), c.node_of(b)
    assert na is not None and nb is not None
    assert na.metadata.labels[ARCH] == nb.metadata.labels[ARCH]
    assert na.metadata.name != nb.metadata.name


def test_self_pod_affinity_hostname_and_zone() -> None:
    for key in (HOSTNAME, ZONE):
        c = Cluster()
        batch = c.new_pods(3, labels=S2, affinity=[term(key, S2)])
        c.provision([nodepool()], batch)
        assert _same_node(c, *(p.key for p in batch)), key


def test_self_pod_affinity_first_empty_domain_only() -> None:
    c = Cluster()
    first = c.new_pods(10, labels=S2, affinity=[term(HOSTNAME, S2)])
    c.provision([nodepool()], first)
    placed = [p for p in first if c.pod(p.key).spec.node_name]
    assert len(placed) == 5 and _same_node(c, *(p.key for p in placed))
    # a later batch cannot open a second node either (the first one is full)
    second = c.new_pods(10, labels=S2, affinity=[term(HOSTNAME, S2)])
    c.provision([nodepool()], second)
    assert c.unscheduled(second)


def test_self_pod_affinity_first_empty_domain_only_constrained_zones() -> None:
    c = Cluster()
    (first,) = c.new_pods(1, labels=S2, node_selector={ZONE: "test-zone-1"}, affinity=[term(HOSTNAME, S2)])
    c.provision([nodepool()], [first])
    assert c.scheduled([first])
    batch = c.new_pods(
        10,
        labels=S2,
        node_requirements=[req(ZONE, "In", "test-zone-2", "test-zone-3")],
        affinity=[term(HOSTNAME, S2)],
    )
    c.provision([nodepool()], batch)
    assert c.unscheduled(batch)


def test_self_pod_affinity_zone_with_constraint() -> None:
    c = Cluster()
    batch = c.new_pods(
        3, labels=S2, affinity=[term(ZONE, S2)], node_requirements=[req(ZONE, "In", "test-zone-3")]
    )
    c.provision([nodepool()], batch)
    assert _same_node(c, *(p.key for p in batch))
    assert zone_of(c, batch[0]) == "test-zone-3"


def test_allow_violation_of_preferred_pod_affinity() -> None:
    c = Cluster()
    spreaders = c.new_pods(10, tsc=[HOST_TSC])
    (p,) = c.new_pods(1, labels={}, affinity_preferred=[(50, term(HOSTNAME, S2))])
    c.provision([nodepool()], [*spreaders, p])
    assert c.scheduled([p])


def test_allow_violation_of_preferred_pod_anti_affinity() -> None:
    c = Cluster()
    avoiders = c.new_pods(10, labels={}, anti_preferred=[(50, term(ZONE, LABELS))])
    spreaders = c.new_pods(3, tsc=[spread(ZONE)])
    c.provision([nodepool()], [*spreaders, *avoiders])
    assert c.scheduled(avoiders)


def test_separate_nodes_with_anti_affinity_on_hostname() -> None:
    """Bidirectional: repeated in one cluster, the avoider listed first."""
    c = Cluster()
    for _ in range(10):
        (target,) = c.new_pods(1, labels=S2)
        (avoider,) = c.new_pods(1, labels={}, anti=[term(HOSTNAME, S2)])
        c.provision([nodepool()], [avoider, target])
        assert c.scheduled([target, avoider])
        assert c.pod(target.key).spec.node_name != c.pod(avoider.key).spec.node_name


def test_anti_affinity_on_zone() -> None:
    c = Cluster()
    zonal = [c.new_pods(1, labels=S2, cpu="2", node_selector={ZONE: f"test-zone-{i}"})[0] for i in (1, 2, 3)]
    (avoider,) = c.new_pods(1, labels={}, anti=[term(ZONE, S2)])
    c.provision([nodepool()], [*zonal, avoider])
    assert c.scheduled(zonal)
    assert c.unscheduled([avoider])


def test_anti_affinity_on_zone_other_schedules_first() -> None:
    c = Cluster()
    (target,) = c.new_pods(1, labels=S2, cpu="2")
    (avoider,) = c.new_pods(1, labels={}, anti=[term(ZONE, S2)])
    c.provision([nodepool()], [target, avoider])
    assert c.scheduled([target])
    assert c.unscheduled([avoider])


def test_anti_affinity_arch() -> None:
    c = Cluster()
    tsc = spread(HOSTNAME, labels=S2)
    (a,) = c.new_pods(1, labels=S2, tsc=[tsc], cpu="2", node_selector={ARCH: "arm64"})
    (b,) = c.new_pods(1, labels=S2, tsc=[tsc], cpu="1", anti=[term(ARCH, S2)])
    c.provision([nodepool()], [a, b])
    na, nb = c.node_of(a), c.node_of(b)
    assert na is not None and nb is not None
    assert na.metadata.labels[ARCH] != nb.metadata.labels[ARCH]


def _inverse(*, required: bool, existing: bool) -> bool:
    """Zone pods carrying anti-affinity to s2 in every zone; does a plain s2 pod schedule?"""
    c = Cluster()
    kw: dict[str, Any] = (
        {"anti": [term(ZONE, S2)]} if required else {"anti_preferred": [(10, term(ZONE, S2))]}
    )
    zonal = [
        c.new_pods(1, labels={}, cpu="2", node_selector={ZONE: f"test-zone-{i}"}, **kw)[0] for i in (1, 2, 3)
    ]
    (target,) = c.new_pods(1, labels=S2)
    if existing:
        c.provision([nodepool()], zonal)
        assert c.scheduled(zonal)
        c.provision([nodepool()], [target])
    else:
        c.provision([nodepool()], [*zonal, target])
        assert c.scheduled(zonal)
    return c.scheduled([target])


def test_anti_affinity_on_zone_inverse() -> None:
    assert _inverse(required=True, existing=False) is False


def test_preferred_anti_affinity_on_zone_inverse_is_violated() -> None:
    assert _inverse(required=False, existing=False) is True


def test_anti_affinity_on_zone_inverse_existing_nodes() -> None:
    assert _inverse(required=True, existing=True) is False


def test_preferred_anti_affinity_on_zone_inverse_existing_nodes_is_violated() -> None:
    assert _inverse(required=False, existing=True) is True


def test_anti_affinity_on_zone_schroedinger() -> None:
    c = Cluster()
    (anywhere,) = c.new_pods(1, labels={}, cpu="2", anti=[term(ZONE, S2)])
    (target,) = c.new_pods(1, labels=S2)
    c.provision([nodepool()], [anywhere, target])
    assert c.scheduled([anywhere])
    # the claim may land in any zone: the target cannot schedule until it is launched
    assert c.unscheduled([target])
    c.provision([nodepool()])  # the target is still pending
    assert c.scheduled([target])
    assert zone_of(c, anywhere) != zone_of(c, target)


def test_pod_anti_affinity_zone_topology_takes_one_round_per_zone() -> None:
    c = Cluster()
    counts = []
    for _ in range(4):
        c.provision([nodepool()], c.new_pods(3, labels=S2, anti=[term(ZONE, S2)]))
        counts.append(c.skew(ZONE, labels=None))
        c.drop_pending()
    assert counts == [[1], [1, 1], [1, 1, 1], [1, 1, 1]]


def test_affinity_to_non_existent_pod() -> None:
    c = Cluster()
    batch = c.new_pods(10, labels={}, affinity=[term(ZONE, S2)])
    c.provision([nodepool()], batch)
    assert c.unscheduled(batch)
    assert all("unsatisfiable topology constraint for pod affinity" in c.errors()[p.key] for p in batch)


def test_affinity_zone_unconstrained_target() -> None:
    c = Cluster()
    (target,) = c.new_pods(1, labels=S2)
    followers = c.new_pods(10, labels={}, affinity=[term(ZONE, S2)])
    c.provision([nodepool()], [*followers, target])
    assert c.unscheduled(followers)
    assert c.skew(ZONE, labels=None) == [1]
    c.provision([nodepool()])  # the target's zone is now committed
    assert c.scheduled(followers)
    assert c.skew(ZONE, labels=None) == [11]


def test_affinity_zone_constrained_target() -> None:
    c = Cluster()
    (target,) = c.new_pods(1, labels=S2, node_requirements=[req(ZONE, "In", "test-zone-1")])
    followers = c.new_pods(10, labels={}, affinity=[term(ZONE, S2)])
    c.provision([nodepool()], [*followers, target])
    assert c.skew(ZONE, labels=None) == [11]


def test_multiple_dependent_affinities() -> None:
    chain = [{"type": t, "spread": "spread"} for t in ("db", "web", "cache", "ui")]
    for _ in range(5):
        c = Cluster()
        batch = [c.new_pods(1, labels=chain[0])[0]]
        for prev, labels in pairwise(chain):
            batch.append(c.new_pods(1, labels=labels, affinity=[term(HOSTNAME, prev)])[0])
        c.provision([nodepool()], batch)
        assert c.scheduled(batch), c.errors()


def test_unsatisfiable_dependencies_terminate() -> None:
    c = Cluster()
    (p,) = c.new_pods(1, labels={"type": "db"}, affinity=[term(HOSTNAME, {"type": "web"})])
    c.provision([nodepool()], [p])
    assert c.unscheduled([p])


def _namespaced(**term_extra: object) -> tuple[Cluster, str, str]:
    c = Cluster()
    spreaders = c.new_pods(10, tsc=[HOST_TSC])
    (target,) = c.new_pods(1, labels=S2, namespace="other-ns")
    (follower,) = c.new_pods(1, labels={}, affinity=[term(HOSTNAME, S2, **term_extra)])
    c.provision([nodepool()], [*spreaders, target, follower])
    assert c.scheduled([target])
    return c, target.key, follower.key


def test_affinity_filtered_by_namespace_no_match() -> None:
    c, _, follower = _namespaced()
    assert not c.pod(follower).spec.node_name


def test_affinity_filtered_by_namespace_list() -> None:
    c, target, follower = _namespaced(namespaces=["other-ns"])
    assert _same_node(c, target, follower)


def test_affinity_filtered_by_empty_namespace_selector() -> None:
    c, target, follower = _namespaced(namespaceSelector={})
    assert _same_node(c, target, follower)


def test_preferred_affinity_conflicting_with_required_spread() -> None:
    c = Cluster()
    (target,) = c.new_pods(1, labels=S2)
    spreaders = c.new_pods(3, tsc=[HOST_TSC], affinity_preferred=[(50, term(HOSTNAME, S2))])
    c.provision([nodepool()], [*spreaders, target])
    assert c.scheduled([*spreaders, target])
    assert c.skew(HOSTNAME, namespace=None) == [1, 1, 1]


def test_matching_affinities_with_incompatible_selectors_make_two_nodes() -> None:
    """topology_test.go It "should allow two nodes to be created when two pods with matching
    affinities have incompatible selectors"."""
    s1 = {"security": "s1"}
    c = Cluster()
    (a,) = c.new_pods(
        1, labels=s1, affinity=[term(ZONE, s1)], node_requirements=[req(ZONE, "In", "test-zone-2")]
    )
    (b,) = c.new_pods(
        1, labels=s1, affinity=[term(ZONE, s1)], node_requirements=[req(ZONE, "In", "test-zone-3")]
    )
    c.provision([nodepool()], [a, b])
    assert (zone_of(c, a), zone_of(c, b)) == ("test-zone-2", "test-zone-3")
    assert c.node_count() == 2
