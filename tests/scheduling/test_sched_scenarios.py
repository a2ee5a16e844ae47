"""Karpenter scheduling suite scenarios (kubernetes-sigs/karpenter v1.14.1
``pkg/controllers/provisioning/scheduling/suite_test.go``, non-topology), through ``plan``.

Fixture: Karpenter's fake provider types (tests/data/catalogs/fake.yaml); the scheduling suite's
NodePool requires ``karpenter.sh/capacity-type In [spot, on-demand, reserved]``; test pods have
no requests unless stated (only ``pods: 1``). S = scheduled, NS = not scheduled.
"""

from __future__ import annotations

from test_sched_support import (
    ARCH,
    CT,
    FAKE5,
    HOSTNAME,
    IT,
    OS,
    ZONE,
    catalog,
    daemonset,
    label_of,
    materialize,
    node,
    nodeclaim,
    nodepool,
    pod,
    req,
    run,
    scheduled,
)

from nodewright.algebra.resources import parse_resource_list
from nodewright.catalog.model import InstanceType


def ok(doc: dict[str, object], key: str = "default/p") -> bool:
    return key in scheduled(doc)  # type: ignore[arg-type]


# -- requirements / labels --------------------------------------------------------------------
def test_nodepool_label_conflicting_selector_is_not_scheduled() -> None:
    doc = run(
        [nodepool(labels={"test-key": "test-value"})],
        [pod("p", node_selector={"test-key": "different-value"})],
    )
    assert not ok(doc)
    assert doc.pod_errors["default/p"].startswith(
        "Failed to schedule pod, incompatible requirements, key test-key"
    )


def test_selector_on_undefined_custom_key_is_not_scheduled() -> None:
    doc = run([nodepool()], [pod("p", node_selector={"test-key": "test-value"})])
    assert 'label "test-key" does not have known values' in doc.pod_errors["default/p"]


def test_undefined_custom_key_operators() -> None:
    for op, values, expect in (
        ("NotIn", ["test-value"], True),
        ("DoesNotExist", [], True),
        ("Exists", [], False),
        ("In", ["test-value"], False),
    ):
        doc = run([nodepool()], [pod("p", required=[[req("test-key", op, *values)]])])
        assert ok(doc) is expect, op
        if expect:
            assert "test-key" not in scheduled(doc)["default/p"].labels


def test_nodepool_zone_is_used() -> None:
    doc = run([nodepool(requirements=[req(ZONE, "In", "test-zone-2")])], [pod("p")])
    assert label_of(doc, "default/p", ZONE) == "test-zone-2"


def test_conflicting_zone_and_restricted_hostname() -> None:
    doc = run(
        [nodepool(requirements=[req(ZONE, "In", "test-zone-1")])],
        [pod("p", node_selector={ZONE: "test-zone-2"})],
    )
    assert not ok(doc)
    doc = run([nodepool()], [pod("p", node_selector={HOSTNAME: "red-node"})])
    assert not ok(doc)
    assert "using label kubernetes.io/hostname is not allowed" in doc.pod_errors["default/p"]


def test_zone_not_in() -> None:
    doc = run(
        [nodepool()], [pod("p", required=[[req(ZONE, "NotIn", "test-zone-1", "test-zone-2", "unknown")]])]
    )
    assert label_of(doc, "default/p", ZONE) == "test-zone-3"
    doc = run(
        [nodepool()], [pod("p", required=[[req(ZONE, "NotIn", "test-zone-1", "test-zone-2", "test-zone-3")]])]
    )
    assert not ok(doc)


def test_integer_operators() -> None:
    for op, value, expect in (("Gt", "8", "16"), ("Lt", "8", "2"), ("Gte", "16", "16"), ("Lte", "2", "2")):
        doc = run([nodepool(requirements=[req("integer", op, value)])], [pod("p")])
        assert scheduled(doc)["default/p"].labels.get("integer") == expect, op


def test_preferred_zone_then_relaxed() -> None:
    required = [[req(ZONE, "In", "test-zone-1", "test-zone-2", "test-zone-3", "unknown")]]
    doc = run(
        [nodepool()],
        [pod("p", required=required, preferred=[(1, [req(ZONE, "In", "test-zone-2", "unknown")])])],
    )
    assert label_of(doc, "default/p", ZONE) == "test-zone-2"
    doc = run([nodepool()], [pod("p", required=required, preferred=[(1, [req(ZONE, "In", "unknown")])])])
    assert ok(doc)
    doc = run(
        [nodepool()],
        [pod("p", required=required, preferred=[(1, [req(ZONE, "NotIn", "test-zone-1", "test-zone-3")])])],
    )
    assert label_of(doc, "default/p", ZONE) == "test-zone-2"


def test_same_term_in_nonexistent_and_exists() -> None:
    doc = run(
        [nodepool()], [pod("p", required=[[req(ZONE, "In", "non-existent-zone"), req(ZONE, "Exists")]])]
    )
    assert not ok(doc)


def test_compatible_custom_values_share_a_node() -> None:
    np = nodepool(
        requirements=[
            req(CT, "In", "spot", "on-demand"),
            req("test-key", "In", "test-value", "another-value"),
        ]
    )
    a = pod("a", required=[[req("test-key", "In", "test-value")]])
    b = pod("b", required=[[req("test-key", "NotIn", "another-value")]])
    doc = run([np], [a, b])
    assert len(doc.node_claims) == 1
    assert doc.node_claims[0].labels["test-key"] == "test-value"
    a = pod("a", required=[[req("test-key", "In", "test-value")]])
    b = pod("b", required=[[req("test-key", "In", "another-value")]])
    assert len(run([np], [a, b]).node_claims) == 2


def test_last_required_term_is_never_relaxed() -> None:
    doc = run(
        [nodepool(requirements=[req(ZONE, "In", "test-zone-1")])],
        [pod("p", required=[[req(ZONE, "In", "invalid")]])],
    )
    assert not ok(doc)


def test_required_or_terms_are_relaxed_in_order() -> None:
    doc = run(
        [nodepool()], [pod("p", required=[[req(ZONE, "In", "invalid")], [req(ZONE, "In", "test-zone-2")]])]
    )
    assert label_of(doc, "default/p", ZONE) == "test-zone-2"


def test_preferred_notin_with_required_in() -> None:
    doc = run(
        [nodepool()],
        [
            pod(
                "p",
                required=[[req(ZONE, "In", "test-zone-3")]],
                preferred=[(1, [req(ZONE, "NotIn", "test-zone-3")])],
            )
        ],
    )
    assert label_of(doc, "default/p", ZONE) == "test-zone-3"


# -- instance types / binpacking ----------------------------------------------------------------
def test_requests_too_large() -> None:
    for p in (pod("p", cpu="512"), pod("p", memory="2Ti"), pod("p", init=[{"memory": "1Ti"}])):
        doc = run([nodepool()], [p])
        assert not ok(doc)
        assert "no instance type has enough resources" in doc.pod_errors["default/p"]


def test_cpu_typo_hint() -> None:
    doc = run([nodepool()], [pod("p", cpu="2M")])
    assert doc.pod_errors["default/p"].endswith("(CPU request >= 1 Million, m vs M typo?)")


def test_incompatible_instance_type_arch_os_limits() -> None:
    np = nodepool(requirements=[req(ARCH, "In", "amd64")])
    assert not ok(run([np], [pod("p", node_selector={IT: "arm-instance-type"})]))
    assert not ok(run([np], [pod("p", required=[[req(OS, "In", "ios")]])]))
    assert not ok(run([np], [pod("p", limits={"cpu": "14"})]))


def test_distinct_selectors_make_distinct_nodes() -> None:
    for key, a, b in ((ARCH, "amd64", "arm64"), (OS, "linux", "windows"), (ZONE, "test-zone-1", "test-zone-2"),
                      (IT, "small-instance-type", "default-instance-type")):  # fmt: skip
        doc = run([nodepool()], [pod("a", node_selector={key: a}), pod("b", node_selector={key: b})])
        assert len(doc.node_claims) == 2, key
        assert label_of(doc, "default/a", key) == a
        assert label_of(doc, "default/b", key) == b


def _gpu_types() -> list[InstanceType]:
    types = list(catalog(FAKE5))
    out = []
    for i, it in enumerate(types):
        extra = {"gpu1": "1"} if i == 0 else {"gpu2": "1"} if i == 1 else {}
        cap = {**it.capacity, **parse_resource_list(extra)}
        out.append(InstanceType(name=it.name, capacity=cap, overhead=it.overhead,
                                requirement_specs=it.requirement_specs, offerings=it.offerings))  # fmt: skip
    return out


def test_extended_resources_select_types() -> None:
    types = _gpu_types()
    doc = run([nodepool()], [pod("a", limits={"gpu1": "1"}), pod("b", limits={"gpu2": "1"})], types=types)
    assert len(doc.node_claims) == 2
    assert label_of(doc, "default/a", IT) == "fake-it-0"
    assert label_of(doc, "default/b", IT) == "fake-it-1"
    assert not ok(run([nodepool()], [pod("p", limits={"gpu1": "1", "gpu2": "1"})], types=types))


def test_size_labels_on_fake_5() -> None:
    types = catalog(FAKE5)
    assert (
        label_of(run([nodepool()], [pod("p", node_selector={"size": "large"})], types=types), "default/p", IT)
        == "fake-it-4"
    )
    assert (
        label_of(run([nodepool()], [pod("p", node_selector={"size": "small"})], types=types), "default/p", IT)
        == "fake-it-0"
    )
    doc = run([nodepool()], [pod("p", required=[[req("special", "Exists")]])], types=types)
    assert label_of(doc, "default/p", IT) == "fake-it-4"


def test_cheapest_fitting_type_is_launched() -> None:
    for p, expect in (
        (pod("p", memory="100M"), "small-instance-type"),
        (pod("p", memory="2000M"), "small-instance-type"),
        (pod("p", cpu="1", overhead={"cpu": "2"}), "default-instance-type"),
        (pod("p", cpu="1", memory="1Gi", init=[{"cpu": "2", "memory": "1Gi"}]), "default-instance-type"),
    ):
        assert label_of(run([nodepool()], [p]), "default/p", IT) == expect


def test_small_pods_pack_on_one_node() -> None:
    doc = run([nodepool()], [pod(f"p{i}", memory="10M") for i in range(5)])
    assert len(doc.node_claims) == 1
    assert doc.node_claims[0].launch.instance_type == "small-instance-type"


def test_pods_of_different_sizes_on_fake_5() -> None:
    doc = run([nodepool()], [pod("a", cpu="4.5"), pod("b", cpu="1")], types=catalog(FAKE5))
    assert len(doc.node_claims) == 2
    assert label_of(doc, "default/a", IT) != label_of(doc, "default/b", IT)


# -- in-flight / existing -------------------------------------------------------------------------
def test_inflight_nodeclaims_are_reused() -> None:
    doc = run([nodepool()], [pod("a", cpu="10m"), pod("b", cpu="10m")])
    assert len(doc.node_claims) == 1
    doc = run(
        [nodepool()],
        [
            pod("a", node_selector={ZONE: "test-zone-2"}, created="2024-01-01T00:00:00Z"),
            pod(
                "b",
                required=[[req(ZONE, "In", "test-zone-1", "test-zone-2")]],
                created="2024-01-01T00:00:01Z",
            ),
            pod(
                "c",
                required=[[req(ZONE, "In", "test-zone-1", "test-zone-3")]],
                created="2024-01-01T00:00:02Z",
            ),
        ],
    )
    s = scheduled(doc)
    assert s["default/a"] is s["default/b"]
    assert s["default/c"] is not s["default/a"]


def test_second_round_reuses_then_overflows() -> None:
    first = [pod("a", cpu="1001m")]
    doc = run([nodepool()], first)
    assert label_of(doc, "default/a", IT) == "small-instance-type"
    nodes, bound = materialize(doc, first)
    doc2 = run([nodepool()], [*bound, pod("b", cpu="1")], nodes=nodes)
    assert len(doc2.node_claims) == 1  # 1.9 allocatable - 1.001 used < 1


def test_existing_unmanaged_node_takes_everything() -> None:
    n = node("big", labels={ARCH: "amd64", OS: "linux", ZONE: "test-zone-1"},
             capacity={"cpu": "10", "memory": "100Gi", "pods": "110"})  # fmt: skip
    doc = run([nodepool()], [pod(f"p{i:03d}", cpu="10m") for i in range(100)], nodes=[n])
    assert doc.node_claims == ()
    assert len(doc.existing_nodes[0].pods) == 100


def test_initialized_inflight_node_first() -> None:
    claims = []
    nodes = []
    for i in range(10):
        claims.append(nodeclaim(f"nc-{i:02d}", nodepool_name="default", labels={ZONE: "test-zone-1"},
                                capacity={"cpu": "10", "memory": "10Gi", "pods": "100"}))  # fmt: skip
    nodes.append(node("nc-07", labels={"karpenter.sh/nodepool": "default", "karpenter.sh/initialized": "true",
                                        ZONE: "test-zone-1"}, capacity={"cpu": "10", "memory": "10Gi", "pods": "100"}))  # fmt: skip
    claims[7] = nodeclaim("nc-07", nodepool_name="default", labels={ZONE: "test-zone-1"},
                          capacity={"cpu": "10", "memory": "10Gi", "pods": "100"}, node_name="nc-07")  # fmt: skip
    doc = run([nodepool()], [pod("p", cpu="1")], nodes=nodes, nodeclaims=claims)
    assert [(n.name, n.pods) for n in doc.existing_nodes] == [("nc-07", ("default/p",))]


def test_daemonset_overhead() -> None:
    doc = run(
        [nodepool()], [pod("p", cpu="1", memory="1Gi")], daemonsets=[daemonset("ds", cpu="2", memory="2Gi")]
    )
    c = doc.node_claims[0]
    assert c.launch.instance_type == "default-instance-type"
    assert c.requests == {"cpu": "3", "memory": "3Gi", "pods": "2"}
    doc = run([nodepool()], [pod("p", cpu="1")], daemonsets=[daemonset("ds", cpu="10000")])
    assert not ok(doc)


def test_existing_nodeclaim_without_matching_labels() -> None:
    nc = nodeclaim(
        "nc", nodepool_name="other", labels={}, capacity={"cpu": "10", "memory": "10Gi", "pods": "10"}
    )
    doc = run([], [pod("p", node_selector={ZONE: "test-zone-1"})], nodeclaims=[nc])
    assert not ok(doc)
    # without any usable NodePool the provisioner stops before scheduling and marks every pod
    # (kubernetes-sigs/karpenter v1.14.1 provisioner.go Schedule, ErrNodePoolsNotFound)
    assert doc.pod_errors["default/p"] == "no dynamic nodepools found"
    assert ok(run([nodepool()], [pod("p", node_selector={ZONE: "test-zone-1"})], nodeclaims=[nc]))


def test_pods_of_deleting_nodes_are_rescheduled() -> None:
    n = node("old", labels={"karpenter.sh/nodepool": "default", "karpenter.sh/initialized": "true", IT: "small-instance-type"},
             capacity={"cpu": "2", "memory": "2Gi", "pods": "5"}, deleting=True)  # fmt: skip
    active = pod("active", node_name="old")
    terminating = pod("gone", node_name="old", deleting=True)
    ds = pod("ds-pod", node_name="old", owner={"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds"})
    sts = pod(
        "sts",
        node_name="old",
        deleting=True,
        owner={"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "s"},
    )
    doc = run([nodepool()], [active, terminating, ds, sts], nodes=[n])
    placed = scheduled(doc)
    assert set(placed) == {"default/active", "default/sts"}


def test_nodepool_requirements_filtering_every_type() -> None:
    for reqs in (
        [req(IT, "In", "non-existent")],
        [req(ARCH, "In", "non-existent-arch")],
        [req(ARCH, "In", "amd64"), req(ARCH, "In", "arm64")],
        [req(ZONE, "In", "non-existent-zone")],
    ):
        doc = run([nodepool(requirements=reqs)], [pod("p")])
        assert (
            "nodepool requirements filtered out all available instance types" in doc.pod_errors["default/p"]
        )


# -- limits / weights ---------------------------------------------------------------------------
def test_limits() -> None:
    nc = nodeclaim("nc", nodepool_name="default", labels={}, capacity={"cpu": "100", "memory": "10Gi", "pods": "10"},
                   node_name="n")  # fmt: skip
    n = node("n", labels={"karpenter.sh/nodepool": "default", "karpenter.sh/initialized": "true"},
             capacity={"cpu": "100", "memory": "10Gi", "pods": "10"}, taints=[{"key": "x", "effect": "NoSchedule"}])  # fmt: skip
    doc = run([nodepool(limits={"cpu": "20"})], [pod("p")], nodes=[n], nodeclaims=[nc])
    assert doc.pod_errors["default/p"].endswith(
        "all available instance types exceed limits for nodepool (NodePool=default)"
    )
    assert ok(run([nodepool(limits={"cpu": "2"})], [pod("p", cpu="1.75")]))
    assert not ok(run([nodepool(limits={"cpu": "2"})], [pod("p", cpu="2.1")]))


def test_limits_with_anti_affinity_pods() -> None:
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": HOSTNAME}]}}  # fmt: skip
    pods = [pod(f"p{i}", cpu="1.5", labels={"app": "x"}, affinity=anti) for i in range(2)]
    doc = run([nodepool(limits={"cpu": "3"})], pods)
    assert len(scheduled(doc)) == 1
    assert len(doc.pod_errors) == 1


def test_limit_pods_and_nodes() -> None:
    assert not ok(run([nodepool(limits={"pods": "1"})], [pod("p", limits={"fake.com/vendor-a": "1"})]))
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": HOSTNAME}]}}  # fmt: skip
    np = nodepool(limits={"nodes": "2"})
    nodes: list = []
    bound: list = []
    results = []
    for i in range(3):
        p = pod(f"p{i}", labels={"app": "x"}, affinity=anti)
        doc = run([np], [*bound, p], nodes=nodes)
        results.append(ok(doc, f"default/p{i}"))
        new_nodes, new_bound = materialize(doc, [p], prefix=f"r{i}")
        nodes += new_nodes
        bound += new_bound
    assert results == [True, True, False]


def test_weights_and_explicit_pool() -> None:
    pools = [nodepool("a"), nodepool("b", weight=20), nodepool("c", weight=100)]
    doc = run(pools, [pod(f"p{i}") for i in range(3)])
    assert {c.node_pool for c in doc.node_claims} == {"c"}
    doc = run(pools, [pod("p", node_selector={"karpenter.sh/nodepool": "a"})])
    assert doc.node_claims[0].node_pool == "a"


# -- taints -------------------------------------------------------------------------------------
def test_taints() -> None:
    np = nodepool(taints=[{"key": "test-key", "value": "test-value", "effect": "NoSchedule"}])
    assert ok(run([np], [pod("p", tolerations=[{"key": "test-key", "operator": "Exists"}])]))
    assert ok(
        run([np], [pod("p", tolerations=[{"key": "test-key", "operator": "Equal", "value": "test-value"}])])
    )
    doc = run([np], [pod("p")])
    assert doc.pod_errors["default/p"] == (
        "Failed to schedule pod, did not tolerate taint (taint=test-key=test-value:NoSchedule)"
    )
    assert not ok(run([np], [pod("p", tolerations=[{"key": "other", "operator": "Exists"}])]))
    assert not ok(run([np], [pod("p", tolerations=[{"key": "test-key", "operator": "Equal"}])]))
    startup = nodepool(startup_taints=[{"key": "s", "effect": "NoSchedule"}])
    assert ok(run([startup], [pod("p")]))


def test_prefer_no_schedule_is_tolerated_after_relaxation() -> None:
    np = nodepool(taints=[{"key": "soft", "effect": "PreferNoSchedule"}])
    assert ok(run([np], [pod("p")]))


# -- reserved capacity: test_sched_reserved.py ports upstream's "Reserved Instance Types" ----------


def test_limits_across_rounds() -> None:
    np = nodepool(limits={"cpu": "2"})
    first = [pod("a", cpu="1.75")]
    doc = run([np], first)
    assert ok(doc, "default/a")
    nodes, bound = materialize(doc, first)
    doc2 = run([np], [*bound, pod("b", cpu="1.75")], nodes=nodes)
    assert not ok(doc2, "default/b")
    assert "exceed limits for nodepool (NodePool=default)" in doc2.pod_errors["default/b"]


def test_host_port_conflicts_split_nodes() -> None:
    port = [{"containerPort": 80, "hostPort": 80, "protocol": "TCP"}]
    doc = run([nodepool()], [pod("a", ports=port), pod("b", ports=port), pod("c")])
    s = scheduled(doc)
    assert s["default/a"] is not s["default/b"]
    assert len(doc.node_claims) == 2


def test_existing_node_host_port_conflict() -> None:
    n = node("n1", labels={ARCH: "amd64", OS: "linux", ZONE: "test-zone-1"},
             capacity={"cpu": "10", "memory": "10Gi", "pods": "10"})  # fmt: skip
    port = [{"containerPort": 80, "hostPort": 80}]
    running = pod("running", node_name="n1", ports=port)
    doc = run([nodepool()], [running, pod("p", ports=port)], nodes=[n])
    assert doc.existing_nodes == ()
    assert len(doc.node_claims) == 1


def test_queue_order_biggest_first_then_creation() -> None:
    pods = [
        pod("small", cpu="100m"),
        pod("big", cpu="3"),
        pod("mid", cpu="1", created="2024-01-01T00:00:02Z"),
    ]
    doc = run([nodepool()], pods)
    claim = doc.node_claims[0]
    assert claim.pods[0] == "default/big"


def test_minvalues_strict_and_best_effort() -> None:
    from nodewright.scheduling.plan import PlanOptions

    reqs = [
        {
            "key": IT,
            "operator": "In",
            "values": ["small-instance-type", "default-instance-type"],
            "minValues": 2,
        }
    ]
    np = nodepool(requirements=reqs)
    doc = run([np], [pod("p", cpu="1.5")])  # only default fits 1.5 cpu... and small (1.9 alloc) too
    assert ok(doc)
    assert len(doc.node_claims[0].instance_types) == 2
    doc = run([np], [pod("p", cpu="2.5")])
    assert not ok(doc)
    assert (
        "minValues requirement is not met for label(s) (label(s)=[node.kubernetes.io/instance-type])"
        in (doc.pod_errors["default/p"])
    )
    doc = run(
        [np],
        [pod("p", cpu="2.5")],
        options=PlanOptions(max_instance_types=60, min_values_policy="BestEffort"),
    )
    assert ok(doc)
    assert doc.node_claims[0].min_values_relaxed is True


def test_volume_limits_on_existing_nodes() -> None:
    from nodewright.api.core import CSINode, PersistentVolumeClaim, StorageClass

    sc = StorageClass.model_validate(
        {
            "metadata": {"name": "ebs"},
            "provisioner": "ebs.csi.aws.com",
            "volumeBindingMode": "WaitForFirstConsumer",
        }
    )
    pvcs = [
        PersistentVolumeClaim.model_validate(
            {"metadata": {"name": f"c{i}", "namespace": "default"}, "spec": {"storageClassName": "ebs"}}
        )
        for i in range(12)
    ]
    csinode = CSINode.model_validate(
        {
            "metadata": {"name": "n1"},
            "spec": {"drivers": [{"name": "ebs.csi.aws.com", "allocatable": {"count": 10}}]},
        }
    )
    n = node("n1", labels={ARCH: "amd64", OS: "linux", ZONE: "test-zone-1"},
             capacity={"cpu": "10", "memory": "10Gi", "pods": "100"})  # fmt: skip
    pods = [pod(f"p{i}", claims=[f"c{2 * i}", f"c{2 * i + 1}"]) for i in range(6)]
    doc = run([nodepool()], pods, nodes=[n], pvcs=pvcs, storageclasses=[sc], csinodes=[csinode])
    assert len(doc.existing_nodes[0].pods) == 5
    assert len(doc.node_claims) == 1
    shared = [pod(f"s{i:03d}", claims=["c0"]) for i in range(100)]
    doc = run([nodepool()], shared, nodes=[n], pvcs=pvcs, storageclasses=[sc], csinodes=[csinode])
    assert len(doc.existing_nodes[0].pods) == 100
