"""Unit tests of Topology: group creation/dedupe, counting rules, inverse anti-affinity, errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from test_topo_support import ZONES, Pool, node, pod, reqs, spread, term

from nodewright.algebra.requirements import Requirement, Requirements
from nodewright.api.core import Node, Pod, Taint
from nodewright.labels import CAPACITY_TYPE, HOSTNAME, ZONE
from nodewright.scheduling.topology import DomainSource, Topology, TopologyError, TopologyType, pretty_map
from nodewright.scheduling.topologygroup import MAX_INT32

APP = {"app": "web"}
ZONE_TSC = spread(ZONE, labels=APP)
EMPTY = Requirements()


def topo(
    batch: Sequence[Pod],
    *,
    nodes: Sequence[Node] = (),
    cluster: Sequence[Pod] = (),
    pools: Sequence[Pool] | None = None,
    **kw: Any,
) -> Topology:
    return Topology(
        domain_sources=[p.source() for p in (pools or [Pool()])],
        nodes=nodes,
        cluster_pods=cluster,
        batch_pods=batch,
        **kw,
    )


def zone_nodes() -> list:  # type: ignore[type-arg]
    return [node(f"n{i}", {ZONE: z, HOSTNAME: f"n{i}"}) for i, z in enumerate(ZONES, 1)]


def only_group(t: Topology):  # type: ignore[no-untyped-def]
    (group,) = t.groups()
    return group


# -- groups ----------------------------------------------------------------------------------------
def test_identical_constraints_share_one_group_with_owner_set() -> None:
    batch = [pod(f"p{i}", labels=APP, tsc=[ZONE_TSC]) for i in range(3)]
    group = only_group(topo(batch))
    assert group.owners == {"default/p0", "default/p1", "default/p2"}
    assert group.type is TopologyType.SPREAD
    assert group.counts == dict.fromkeys(ZONES, 0)


def test_min_domains_is_not_part_of_the_dedupe_key() -> None:
    batch = [
        pod("a", labels=APP, tsc=[spread(ZONE, labels=APP, minDomains=5)]),
        pod("b", labels=APP, tsc=[ZONE_TSC]),
    ]
    group = only_group(topo(batch))
    assert group.min_domains == 5


def test_node_filter_values_do_not_split_groups_but_keys_do() -> None:
    same_key = [
        pod("a", labels=APP, tsc=[ZONE_TSC], node_selector={ZONE: "test-zone-1"}),
        pod("b", labels=APP, tsc=[ZONE_TSC], node_selector={ZONE: "test-zone-2"}),
    ]
    assert len(topo(same_key).groups()) == 1  # hashstructure skips Requirement's unexported values
    other_key = [
        pod("a", labels=APP, tsc=[ZONE_TSC], node_selector={ZONE: "test-zone-1"}),
        pod("b", labels=APP, tsc=[ZONE_TSC], node_selector={CAPACITY_TYPE: "spot"}),
    ]
    assert len(topo(other_key).groups()) == 2


def test_match_label_keys_are_appended_as_in_expressions() -> None:
    tsc = spread(ZONE, labels=APP, matchLabelKeys=["rev"])
    batch = [
        pod("a", labels={**APP, "rev": "1"}, tsc=[tsc]),
        pod("b", labels={**APP, "rev": "2"}, tsc=[tsc]),
        pod("c", labels={**APP, "rev": "1"}, tsc=[tsc]),
    ]
    t = topo(batch)
    groups = t.groups()
    assert [sorted(g.owners) for g in groups] == [["default/a", "default/c"], ["default/b"]]
    assert groups[0].selects("default/b", "default", {**APP, "rev": "2"}) is False


def test_affinity_groups_use_max_skew_and_preferred_terms_only_when_respected() -> None:
    affinity = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [term(ZONE, APP)],
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "podAffinityTerm": term(HOSTNAME, APP)}
            ],
        },
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "podAffinityTerm": term(ZONE, {"x": "y"})}
            ]
        },
    }
    batch = [pod("a", labels=APP, affinity=affinity)]
    respect = topo(batch).groups()
    assert [(g.type, g.key) for g in respect] == [
        (TopologyType.POD_AFFINITY, ZONE),
        (TopologyType.POD_AFFINITY, HOSTNAME),
        (TopologyType.POD_ANTI_AFFINITY, ZONE),
    ]
    assert all(g.max_skew == MAX_INT32 for g in respect)
    ignore = topo(batch, preference_policy="Ignore").groups()
    assert [(g.type, g.key) for g in ignore] == [(TopologyType.POD_AFFINITY, ZONE)]


def test_ignore_policy_skips_schedule_anyway_spreads() -> None:
    batch = [pod("a", labels=APP, tsc=[spread(ZONE, labels=APP, when="ScheduleAnyway")])]
    assert topo(batch, preference_policy="Ignore").groups() == []
    assert len(topo(batch).groups()) == 1


def test_update_after_relaxation_drops_ownership() -> None:
    p = pod("a", labels=APP, tsc=[spread(ZONE, labels=APP, when="ScheduleAnyway")])
    t = topo([p])
    assert t.has_groups_for(p)
    relaxed = p.model_copy(update={"spec": p.spec.model_copy(update={"topology_spread_constraints": []})})
    t.update(relaxed)
    assert not t.has_groups_for(relaxed)
    assert (
        t.add_requirements(relaxed, taints=(), strict_requirements=EMPTY, nodeclaim_requirements=EMPTY)
        is EMPTY
    )


# -- counting --------------------------------------------------------------------------------------
def test_counting_rules_for_existing_pods() -> None:
    nodes = [*zone_nodes(), node("nolabel", {})]
    cluster = [
        pod("c1", labels=APP, node_name="n1"),
        pod("c2", labels=APP, node_name="n1"),
        pod("c3", labels=APP, node_name="n2"),
        pod("other-ns", namespace="kube-system", labels=APP, node_name="n3"),
        pod("unselected", labels={"app": "db"}, node_name="n3"),
        pod("terminal", labels=APP, node_name="n3", phase="Succeeded"),
        pod("terminating", labels=APP, node_name="n3", deleting=True),
        pod("pending", labels=APP),
        pod("gone", labels=APP, node_name="missing-node"),
        pod("no-zone", labels=APP, node_name="nolabel"),
    ]
    batch = [pod("b", labels=APP, tsc=[ZONE_TSC]), pod("c3", labels=APP, tsc=[ZONE_TSC])]  # c3 is being moved
    group = only_group(topo(batch, nodes=nodes, cluster=cluster))
    assert group.counts == {"test-zone-1": 2, "test-zone-2": 0, "test-zone-3": 0}


def test_hostname_falls_back_to_node_name() -> None:
    nodes = [node("bare", {ZONE: "test-zone-1"})]
    cluster = [pod("c", labels=APP, node_name="bare")]
    group = only_group(
        topo([pod("b", labels=APP, tsc=[spread(HOSTNAME, labels=APP)])], nodes=nodes, cluster=cluster)
    )
    assert group.counts == {"bare": 1}


def test_existing_node_domains_are_registered_when_they_pass_the_filter() -> None:
    nodes = [
        node("x", {ZONE: "zone-x", HOSTNAME: "x"}),
        node("y", {ZONE: "zone-y", "tier": "b", HOSTNAME: "y"}),
    ]
    p = pod("b", labels=APP, tsc=[ZONE_TSC], node_selector={"tier": "b"})
    group = only_group(topo([p], nodes=nodes))
    assert "zone-y" in group.counts
    assert "zone-x" not in group.counts  # filtered out by the pod's node selector (affinity policy Honor)
    honor_ignore = pod(
        "c",
        labels=APP,
        tsc=[spread(ZONE, labels=APP, nodeAffinityPolicy="Ignore")],
        node_selector={"tier": "b"},
    )
    assert {"zone-x", "zone-y"} <= set(only_group(topo([honor_ignore], nodes=nodes)).counts)


def test_nil_selector_counts_existing_pods_but_not_batch_pods() -> None:
    cluster = [pod("c", labels={"any": "thing"}, node_name="n1")]
    p = pod("b", labels=APP, tsc=[spread(ZONE, nil_selector=True)])
    t = topo([p], nodes=zone_nodes(), cluster=cluster)
    group = only_group(t)
    assert group.counts["test-zone-1"] == 1  # TopologyListOptions(nil) lists everything
    assert group.selects("default/b", "default", APP) is False  # LabelSelectorAsSelector(nil) = Nothing
    empty = pod("e", labels=APP, tsc=[spread(ZONE, selector={})])
    assert only_group(topo([empty])).selects("default/e", "default", {}) is True


def test_taints_policy_honor_limits_domains_to_tolerated_pools() -> None:
    taint = Taint(key="dedicated", value="gpu", effect="NoSchedule")
    tainted = Pool(
        name="gpu",
        requirements=Requirements([Requirement.new(ZONE, "In", ["test-zone-3"])]),
        taints=(taint,),
    )
    plain = Pool(requirements=Requirements([Requirement.new(ZONE, "In", ["test-zone-1", "test-zone-2"])]))
    honor = pod("h", labels=APP, tsc=[spread(ZONE, labels=APP, nodeTaintsPolicy="Honor")])
    ignore = pod("i", labels=APP, tsc=[ZONE_TSC])
    t = topo([honor, ignore], pools=[tainted, plain])
    by_owner = {next(iter(g.owners)): g for g in t.groups()}
    assert set(by_owner["default/h"].counts) == {"test-zone-1", "test-zone-2"}
    assert set(by_owner["default/i"].counts) == set(ZONES)
    tolerant = pod(
        "t",
        labels=APP,
        tsc=[spread(ZONE, labels=APP, nodeTaintsPolicy="Honor")],
        tolerations=[{"operator": "Exists"}],
    )
    assert set(only_group(topo([tolerant], pools=[tainted, plain])).counts) == set(ZONES)


def test_domain_universe_intersects_nodepool_and_instance_type() -> None:
    pool = Pool(requirements=Requirements([Requirement.new(ZONE, "In", ["test-zone-1", "elsewhere"])]))
    group = only_group(topo([pod("b", labels=APP, tsc=[ZONE_TSC])], pools=[pool]))
    # instance types offer zones 1-3: the intersection is zone-1; "elsewhere" comes in as an In value of the pool
    assert set(group.counts) == {"test-zone-1", "elsewhere"}


# -- add_requirements / record -----------------------------------------------------------------------
def test_add_requirements_narrows_and_record_counts_collapsed_domain() -> None:
    p = pod("b", labels=APP, tsc=[ZONE_TSC])
    t = topo([p])
    node_reqs = reqs(zone=list(ZONES), host=["hostname-placeholder-0001"])
    out = t.add_requirements(p, taints=(), strict_requirements=EMPTY, nodeclaim_requirements=node_reqs)
    assert out.get(ZONE).values == {"test-zone-1"}  # ties go to the smallest domain
    assert node_reqs.get(ZONE).values == set(ZONES)  # input untouched
    t.record(p, taints=(), requirements=node_reqs)  # not collapsed: not counted
    assert only_group(t).counts["test-zone-1"] == 0
    t.record(p, taints=(), requirements=out)
    assert only_group(t).counts["test-zone-1"] == 1


def test_error_text_matches_upstream() -> None:
    p = pod("b", labels=APP, tsc=[ZONE_TSC])
    t = topo([p])
    group = only_group(t)
    group.record("test-zone-1", "test-zone-1")
    with pytest.raises(TopologyError) as info:
        t.add_requirements(
            p, taints=(), strict_requirements=EMPTY, nodeclaim_requirements=reqs(zone=["test-zone-1"])
        )
    assert str(info.value) == (
        "unsatisfiable topology constraint for topology spread, key=topology.kubernetes.io/zone "
        "(counts = test-zone-1: 2, test-zone-2: 0, test-zone-3: 0, podDomains = topology.kubernetes.io/zone Exists, "
        "nodeDomains = topology.kubernetes.io/zone In [test-zone-1]"
    )


def test_pretty_map_truncates() -> None:
    assert pretty_map({"b": 1, "a": 2, "c": 3}, 2) == "a: 2, b: 1 and 1 other(s)"
    assert pretty_map({}, 25) == ""


def test_inverse_anti_affinity_of_existing_pod_blocks_its_zone() -> None:
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term(ZONE, APP)]}}
    cluster = [pod("guard", labels={"role": "guard"}, affinity=anti, node_name="n1")]
    victim = pod("v", labels=APP)
    bystander = pod("x", labels={"app": "db"})
    t = topo([victim, bystander], nodes=zone_nodes(), cluster=cluster)
    (inverse,) = t.inverse_groups()
    assert inverse.counts["test-zone-1"] == 1
    assert t.has_groups_for(victim)
    assert not t.has_groups_for(bystander)
    out = t.add_requirements(
        victim, taints=(), strict_requirements=EMPTY, nodeclaim_requirements=reqs(zone=list(ZONES))
    )
    assert out.get(ZONE).values == {"test-zone-2", "test-zone-3"}


def test_inverse_anti_affinity_of_batch_pod_records_all_possible_domains() -> None:
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term(ZONE, APP)]}}
    guard = pod("guard", labels={"role": "guard"}, affinity=anti)
    victim = pod("v", labels=APP)
    t = topo([guard, victim])
    t.record(guard, taints=(), requirements=reqs(zone=["test-zone-1", "test-zone-2"]))
    with pytest.raises(TopologyError, match="pod anti-affinity"):
        t.add_requirements(
            victim, taints=(), strict_requirements=EMPTY, nodeclaim_requirements=reqs(zone=["test-zone-2"])
        )
    out = t.add_requirements(
        victim, taints=(), strict_requirements=EMPTY, nodeclaim_requirements=reqs(zone=list(ZONES))
    )
    assert out.get(ZONE).values == {"test-zone-3"}


def test_preferred_anti_affinity_is_not_tracked_inversely() -> None:
    anti = {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "podAffinityTerm": term(ZONE, APP)}
            ]
        }
    }
    cluster = [pod("guard", affinity=anti, node_name="n1")]
    t = topo([pod("v", labels=APP)], nodes=zone_nodes(), cluster=cluster)
    assert t.inverse_groups() == []


def test_namespaces_and_namespace_selector() -> None:
    cluster = [
        pod("c", namespace="other", labels=APP, node_name="n1"),
        pod("d", namespace="third", labels=APP, node_name="n2"),
    ]
    listed = pod(
        "a",
        labels=APP,
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [term(ZONE, APP, namespaces=["other"])]
            }
        },
    )
    assert only_group(topo([listed], nodes=zone_nodes(), cluster=cluster)).namespaces == {"other"}
    everything = pod(
        "a",
        labels=APP,
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [term(ZONE, APP, namespaceSelector={})]
            }
        },
    )
    group = only_group(topo([everything], nodes=zone_nodes(), cluster=cluster))
    assert group.namespaces == {"default", "other", "third"}
    assert group.counts["test-zone-1"] == 1 and group.counts["test-zone-2"] == 1
    by_name = pod(
        "a",
        labels=APP,
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    term(
                        ZONE, APP, namespaceSelector={"matchLabels": {"kubernetes.io/metadata.name": "third"}}
                    )
                ]
            }
        },
    )
    assert only_group(topo([by_name], nodes=zone_nodes(), cluster=cluster)).namespaces == {"third"}


def test_register_reaches_groups_of_that_key_only() -> None:
    batch = [pod("a", labels=APP, tsc=[spread(HOSTNAME, labels=APP), ZONE_TSC])]
    t = topo(batch)
    t.register(HOSTNAME, "hostname-placeholder-0001")
    host, zone = sorted(t.groups(), key=lambda g: g.key)
    assert host.counts == {"hostname-placeholder-0001": 0}
    assert "hostname-placeholder-0001" not in zone.counts


def test_domain_source_from_nodepool() -> None:
    from nodewright.api.karpenter import NodePool

    np = NodePool.model_validate(
        {
            "apiVersion": "karpenter.sh/v1",
            "kind": "NodePool",
            "metadata": {"name": "default"},
            "spec": {
                "template": {
                    "metadata": {"labels": {"team": "a"}},
                    "spec": {
                        "nodeClassRef": {
                            "group": "karpenter.k8s.aws",
                            "kind": "EC2NodeClass",
                            "name": "default",
                        },
                        "requirements": [{"key": ZONE, "operator": "In", "values": ["test-zone-1"]}],
                        "taints": [{"key": "k", "effect": "NoSchedule"}],
                    },
                }
            },
        }
    )
    source = DomainSource.from_nodepool(np, [reqs(zone=list(ZONES))])
    assert source.nodepool_requirements.get("team").values == {"a"}
    assert len(source.taints) == 1


def test_rejects_hostname_matches_add_requirements() -> None:
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term(HOSTNAME, APP)]}}
    a = pod("a", labels=APP, affinity=anti)
    b = pod("b", labels=APP, affinity=anti)
    s = pod("s", labels=APP, tsc=[spread(HOSTNAME, labels=APP, max_skew=2)])
    t = topo([a, b, s])
    t.register(HOSTNAME, "h1")
    assert not t.rejects_hostname(b, "h1")
    t.record(a, taints=(), requirements=reqs(host=["h1"], zone=["test-zone-1"]))
    for p in (b, s):
        rejected = t.rejects_hostname(p, "h1")
        try:
            t.add_requirements(
                p, taints=(), strict_requirements=EMPTY, nodeclaim_requirements=reqs(host=["h1"])
            )
            accepted = True
        except TopologyError:
            accepted = False
        assert rejected == (not accepted)
    assert t.rejects_hostname(b, "h1")
    assert t.rejects_hostname(s, "h1")  # not by its spread (1 + 1 <= 2) but by a's inverse anti-affinity
    assert not t.rejects_hostname(pod("x", labels={"app": "db"}), "h1")
