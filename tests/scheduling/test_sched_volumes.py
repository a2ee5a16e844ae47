"""Volume topology and claim validation through ``plan``, ported from kubernetes-sigs/karpenter v1.14.1:

* ``pkg/controllers/provisioning/suite_test.go``, Context "Volume Topology Requirements" (the
  storage class of its BeforeEach allows test-zone-2 and test-zone-3, WaitForFirstConsumer);
* ``pkg/controllers/provisioning/scheduling/suite_test.go``, Describe "VolumeUsage" (topology and
  validation cases);
* aws/karpenter-provider-aws v1.14.1 ``test/suites/storage/suite_test.go`` "should run a pod with a
  dynamic persistent volume while respecting allowed topologies" (the EBS CSI zone key).

Each test names the upstream ``It``. "Not scheduled" means the pod has an error and no place.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_sched_support import (
    CT,
    FAKE5,
    HOSTNAME,
    ZONE,
    Rounds,
    anti_affinity,
    catalog,
    nodepool,
    pod,
    pv,
    pvc,
    run,
    scheduled,
    storage_class,
)

SC = storage_class("sc", zones=["test-zone-2", "test-zone-3"])
EBS_ZONE = "topology.ebs.csi.aws.com/zone"


def _zone(doc: dict[str, Any], key: str = "default/p") -> str | None:
    got = scheduled(doc).get(key)
    return None if got is None else got.labels.get(ZONE)


def _not_scheduled(doc: dict[str, Any], key: str = "default/p") -> str:
    assert key not in scheduled(doc)
    err: str = doc.pod_errors[key]
    return err


def _zones_in(*zones: str) -> list[list[dict[str, Any]]]:
    return [[{"key": ZONE, "operator": "In", "values": list(zones)}]]


# -- provisioning/suite_test.go: Context "Volume Topology Requirements" -----------------------------
def test_invalid_pvc_is_not_scheduled() -> None:
    """It "should not schedule if invalid pvc"."""
    doc = run([nodepool()], [pod("p", claims=["invalid"])])
    assert _not_scheduled(doc) == (
        'Failed to schedule pod, getting persistent volume claim, persistentvolumeclaims "invalid" not found '
        "(PersistentVolumeClaim=invalid)"
    )


@pytest.mark.parametrize(
    ("sc", "bound", "error"),
    [
        # It "should schedule with an empty storage class if the pvc is bound"
        ("", True, None),
        # It "should not schedule with an empty storage class if the pvc is not bound"
        ("", False, "unbound pvc must define a storage class (PersistentVolumeClaim=default/c, StorageClass=)"),
        # It "should schedule with a missing storage class if the pvc is bound"
        ("missing", True, None),
        # It "should not schedule with a missing storage class if the pvc is not bound"
        ("missing", False, 'failed to validate pvc, failed to get storage class, storageclasses.storage.k8s.io '
         '"missing" not found (PersistentVolumeClaim=default/c, StorageClass=missing)'),
    ],
)  # fmt: skip
def test_empty_or_missing_storage_class(sc: str, bound: bool, error: str | None) -> None:
    objects: dict[str, Any] = {"pvcs": [pvc("c", storage_class=sc, volume="v" if bound else None)]}
    if bound:
        objects["pvs"] = [pv("v", storage_class=sc)]
    doc = run([nodepool()], [pod("p", claims=["c"])], **objects)
    if error is None:
        assert "default/p" in scheduled(doc)
    else:
        assert _not_scheduled(doc) == "Failed to schedule pod, " + error


@pytest.mark.parametrize(
    ("claim", "objects"),
    [
        ("invalid", {}),  # It "... when a pod with an invalid pvc is encountered (pvc)"
        ("c", {"pvcs": [pvc("c", storage_class="invalid-storage-class")]}),  # "(storage class)"
        ("c", {"pvcs": [pvc("c", volume="invalid-volume-name")]}),  # "(volume name)"
    ],
)
def test_valid_pods_schedule_beside_an_invalid_pvc(claim: str, objects: dict[str, Any]) -> None:
    """It "should schedule valid pods when a pod with an invalid pvc is encountered (pvc | storage
    class | volume name)", over two rounds as upstream."""
    env = Rounds([nodepool()], **objects)
    invalid = pod("invalid", claims=[claim])
    env.round(invalid)
    valid = pod("valid")
    doc = env.round(valid)
    assert env.waiting([invalid]) == [invalid] and env.bound([valid]) == [valid]
    assert "default/invalid" in doc.pod_errors


@pytest.mark.parametrize("ephemeral", [False, True], ids=["pvc", "ephemeral volume"])
@pytest.mark.parametrize(
    ("bound", "zones", "want"),
    [
        # It "should schedule to storage class zones if volume does not exist"
        (False, ("test-zone-1", "test-zone-3"), "test-zone-3"),
        # It "should not schedule if storage class zones are incompatible"
        (False, ("test-zone-1",), None),
        # It "should schedule to volume zones if volume already bound"
        (True, (), "test-zone-3"),
        # It "should not schedule if volume zones are incompatible"
        (True, ("test-zone-1",), None),
    ],
)
def test_zones_from_volumes(bound: bool, zones: tuple[str, ...], want: str | None, ephemeral: bool) -> None:
    """The Its above, each also "(ephemeral volume)": the claim is then ``<pod>-<volume>``. The
    storage class allows test-zone-2 and test-zone-3; the bound volume is in test-zone-3."""
    claim = "p-e0" if ephemeral else "c"
    p = pod("p", ephemeral=["sc"] if ephemeral else (), claims=() if ephemeral else ["c"],
            required=_zones_in(*zones) if zones else None)  # fmt: skip
    objects: dict[str, Any] = {"pvcs": [pvc(claim, storage_class="sc", volume="v" if bound else None)]}
    if bound:
        objects["pvs"] = [pv("v", zones=["test-zone-3"])]
    doc = run([nodepool()], [p], storageclasses=[SC], **objects)
    if want is None:
        assert "incompatible volume requirements" in _not_scheduled(doc)
    else:
        assert _zone(doc) == want


@pytest.mark.parametrize("ephemeral", [False, True])
@pytest.mark.parametrize("source", ["local", "hostPath"])
def test_local_volume_hostname_affinity_ignored(source: str, ephemeral: bool) -> None:
    """DescribeTable "should ignore hostname affinity scheduling when using local path volumes" (and
    "(ephemeral volume)"), entries local and hostpath."""
    claim = "p-e0" if ephemeral else "c"
    local_sc = storage_class("local-path", mode=None, provisioner="kubernetes.io/no-provisioner")
    p = pod("p", ephemeral=["local-path"] if ephemeral else (), claims=() if ephemeral else ["c"])
    vol = pv("v", source=source, terms=[[{"key": HOSTNAME, "operator": "In", "values": ["random-host"]}]])
    doc = run(
        [nodepool()],
        [p],
        pvcs=[pvc(claim, storage_class="local-path", volume="v")],
        pvs=[vol],
        storageclasses=[local_sc],
    )
    assert "default/p" in scheduled(doc)


def test_non_local_volume_hostname_affinity_is_kept() -> None:
    """It "should not ignore hostname affinity when using non-local path volumes"."""
    vol = pv("v", terms=[[{"key": HOSTNAME, "operator": "In", "values": ["random-host"]}]])
    doc = run(
        [nodepool()],
        [pod("p", claims=["c"])],
        pvcs=[pvc("c", storage_class="sc", volume="v")],
        pvs=[vol],
        storageclasses=[SC],
    )
    _not_scheduled(doc)


def test_volume_zone_is_not_relaxed_away() -> None:
    """It "should not relax an added volume topology zone node-selector away"."""
    terms = [
        [{"key": "example.com/label", "operator": "In", "values": ["unsupported"]}],
        [{"key": CT, "operator": "In", "values": ["on-demand"]}],
    ]
    doc = run(
        [nodepool()],
        [pod("p", claims=["c"], required=terms)],
        pvcs=[pvc("c", storage_class="sc", volume="v")],
        pvs=[pv("v", zones=["test-zone-3"])],
        storageclasses=[SC],
    )
    assert _zone(doc) == "test-zone-3"


# -- scheduling/suite_test.go: Describe "VolumeUsage" --------------------------------------------
def _anti_zone_pods(claims: list[str]) -> list[Any]:
    return [
        pod(f"p{i}", labels={"app": "test"}, affinity=anti_affinity(ZONE), claims=[c])
        for i, c in enumerate(claims)
    ]


def test_pv_with_multiple_zones() -> None:
    """It "should schedule pods using a PV with multiple zones"."""
    terms = [[{"key": ZONE, "operator": "In", "values": [z]}] for z in ("test-zone-1", "test-zone-2")]
    pvs = [pv(f"v{i}", terms=terms) for i in range(2)]
    pvcs = [pvc(f"c{i}", volume=f"v{i}") for i in range(2)]
    doc = run([nodepool()], _anti_zone_pods(["c0", "c1"]), pvcs=pvcs, pvs=pvs)
    zones = [_zone(doc, f"default/p{i}") for i in range(2)]
    assert set(zones) == {"test-zone-1", "test-zone-2"}


@pytest.mark.parametrize("source", ["local", "hostPath"])
def test_unconstrained_pv_alternative_after_hostname(source: str) -> None:
    """DescribeTable "should preserve unconstrained PV alternatives after ignoring hostname affinity"."""
    terms = [
        [{"key": HOSTNAME, "operator": "In", "values": ["existing-host"]}],
        [{"key": ZONE, "operator": "In", "values": ["invalid-zone"]}],
    ]
    doc = run(
        [nodepool()],
        [pod("p", claims=["c"])],
        pvcs=[pvc("c", volume="v")],
        pvs=[pv("v", source=source, terms=terms)],
    )
    assert "default/p" in scheduled(doc)


def test_storage_class_with_multiple_zone_terms() -> None:
    """It "should schedule pods using a StorageClass with multiple zones in AllowedTopologies"."""
    sc = storage_class("multi", allowed=[{ZONE: ["test-zone-1"]}, {ZONE: ["test-zone-2"]}])
    pvcs = [pvc(f"c{i}", storage_class="multi") for i in range(2)]
    doc = run([nodepool()], _anti_zone_pods(["c0", "c1"]), pvcs=pvcs, storageclasses=[sc])
    zones = [_zone(doc, f"default/p{i}") for i in range(2)]
    assert set(zones) == {"test-zone-1", "test-zone-2"}


def test_multi_volume_alternative_after_pruning() -> None:
    """It "should schedule pods when a valid multi-volume topology alternative remains after pruning
    disjoint branches" (``fake.InstanceTypes(5)``)."""
    a = storage_class("a", allowed=[{"special": ["required"]}, {"special": ["optional"]}])
    b = storage_class(
        "b",
        allowed=[
            {ZONE: ["test-zone-1"], "special": ["optional"]},
            {ZONE: ["test-zone-2"], "special": ["required"]},
        ],
    )
    doc = run(
        [nodepool()],
        [pod("p", claims=["ca", "cb"])],
        types=catalog(FAKE5),
        pvcs=[pvc("ca", storage_class="a"), pvc("cb", storage_class="b")],
        storageclasses=[a, b],
    )
    got = scheduled(doc)["default/p"].labels
    assert got[ZONE] == "test-zone-1" and got["special"] == "optional"


def test_disjoint_volumes_fail_the_pod() -> None:
    """Two claims allowing only test-zone-2 and only test-zone-3 have no compatible combination:
    upstream keeps the merged alternative, whose zone has no value left (``DoesNotExist``), so the
    pod fails instead of launching anywhere."""
    z2, z3 = storage_class("z2", zones=["test-zone-2"]), storage_class("z3", zones=["test-zone-3"])
    doc = run(
        [nodepool()],
        [pod("p", claims=["c2", "c3"])],
        storageclasses=[z2, z3],
        pvcs=[pvc("c2", storage_class="z2"), pvc("c3", storage_class="z3")],
    )
    assert f"{ZONE} DoesNotExist" in _not_scheduled(doc)
    assert doc.node_claims == ()


@pytest.mark.parametrize(
    ("objects", "error"),
    [
        # It "should not launch nodes for pod with unbound volume for volumeBindingMode immediate"
        (
            {
                "storageclasses": [storage_class("sc", zones=["test-zone-1"], mode="Immediate")],
                "pvcs": [pvc("c", storage_class="sc")],
            },
            "failed to validate pvc, pvc with immediate volume binding mode must be bound "
            "(PersistentVolumeClaim=default/c, StorageClass=sc)",
        ),
        # It "should not launch nodes for pod with deleting persistentVolumeClaim"
        (
            {
                "storageclasses": [storage_class("sc", zones=["test-zone-1"])],
                "pvcs": [pvc("c", storage_class="sc", deletionTimestamp="2024-01-01T00:00:00Z")],
            },
            "persistentvolumeclaim is being deleted (PersistentVolumeClaim=default/c)",
        ),
        # It "should not launch nodes for pod with bound persistentVolume that is marked for deletion"
        (
            {
                "pvcs": [pvc("c", volume="v")],
                "pvs": [
                    pv("v").model_copy(
                        update={
                            "metadata": pv("v").metadata.model_copy(
                                update={"deletion_timestamp": "2024-01-01T00:00:00Z"}
                            )
                        }
                    )
                ],
            },
            "failed to validate pvc, persistentvolume is being deleted "
            "(PersistentVolume=v, PersistentVolumeClaim=default/c, StorageClass=)",
        ),
        # DescribeTable "should handle pods with PVCs with defined volumeName", bind-completed missing
        (
            {"pvcs": [pvc("c", volume="v", annotations={})], "pvs": [pv("v")]},
            "pvc is considered unbound because it does not contain annotation "
            "(PersistentVolume=v, PersistentVolumeClaim=c, annotation=pv.kubernetes.io/bind-completed)",
        ),
    ],
)
def test_claim_validation(objects: dict[str, Any], error: str) -> None:
    doc = run([nodepool()], [pod("p", claims=["c"])], **objects)
    assert _not_scheduled(doc) == "Failed to schedule pod, " + error
    assert doc.node_claims == ()


def test_lost_claim_is_not_scheduled() -> None:
    """It "should not launch nodes for pod with Lost persistentVolumeClaim"."""
    claim = pvc("c", storage_class="sc")
    claim = claim.model_copy(update={"status": claim.status.model_copy(update={"phase": "Lost"})})
    doc = run([nodepool()], [pod("p", claims=["c"])], pvcs=[claim], storageclasses=[storage_class("sc")])
    assert _not_scheduled(doc).endswith(
        "persistentvolumeclaim bound to non-existent persistentvolume (PersistentVolume=, "
        "PersistentVolumeClaim=default/c)"
    )


# -- EBS CSI zone key (aws/karpenter-provider-aws pkg/operator/operator.go alias) -------------------
def test_ebs_zone_in_storage_class_allowed_topologies() -> None:
    """aws test/suites/storage "should run a pod with a dynamic persistent volume while respecting
    allowed topologies": the EBS key constrains the zone, with no typo hint."""
    sc = storage_class("ebs", allowed=[{EBS_ZONE: ["test-zone-2"]}], provisioner="ebs.csi.aws.com")
    doc = run(
        [nodepool()], [pod("p", claims=["c"])], pvcs=[pvc("c", storage_class="ebs")], storageclasses=[sc]
    )
    assert doc.pod_errors == {} and _zone(doc) == "test-zone-2"


def test_ebs_zone_in_bound_pv_node_affinity() -> None:
    """A bound EBS PV's node affinity on ``topology.ebs.csi.aws.com/zone`` (Karpenter's docs example)."""
    vol = pv("v", terms=[[{"key": EBS_ZONE, "operator": "In", "values": ["test-zone-3"]}]])
    doc = run([nodepool()], [pod("p", claims=["c"])], pvcs=[pvc("c", volume="v")], pvs=[vol])
    assert doc.pod_errors == {} and _zone(doc) == "test-zone-3"


def test_ebs_zone_in_pod_node_affinity() -> None:
    """A pod requiring the EBS key is normalised to the zone like a deprecated beta label."""
    req = [[{"key": EBS_ZONE, "operator": "In", "values": ["test-zone-1"]}]]
    doc = run([nodepool()], [pod("p", required=req)])
    assert doc.pod_errors == {} and _zone(doc) == "test-zone-1"


def test_pvc_and_min_domains_spread_over_three_zones() -> None:
    """topology_test.go Describe "Topology with Volume Requirements", It "should schedule pod with PVC
    and TSC minDomains=3 when pods are spread across 3 zones": the volume's zone narrows the
    NodeClaim, not the spread's domain counting."""
    labels = {"app": "test"}
    tsc = [{"topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule", "maxSkew": 1, "minDomains": 3,
            "labelSelector": {"matchLabels": labels}}]  # fmt: skip
    env = Rounds(
        [nodepool(requirements=[{"key": CT, "operator": "In", "values": ["on-demand"]}])],
        pvcs=[pvc("test-pvc", volume="test-pv")],
        pvs=[pv("test-pv", zones=["test-zone-1"])],
    )
    first = [pod(f"p{i}", labels=labels, tsc=tsc) for i in range(3)]
    env.round(*first)
    assert env.bound(first) == first and env.skew(ZONE, labels=labels) == [1, 1, 1]
    with_pvc = pod("with-pvc", labels=labels, tsc=tsc, claims=["test-pvc"])
    env.round(with_pvc)
    n = env.node_of(with_pvc)
    assert n is not None and n.metadata.labels[ZONE] == "test-zone-1"
    assert env.skew(ZONE, labels=labels) == [1, 1, 2]


def test_rescheduled_pod_with_missing_claim_is_left_out() -> None:
    """Pods of a deleting node are not validated; a missing claim then fails
    ``VolumeTopology.GetRequirements`` and Karpenter leaves the pod out of the round
    (``getVolumeTopologyRequirements``); ``plan`` says why."""
    from test_sched_support import node

    old = node("old", labels={"karpenter.sh/nodepool": "default", "karpenter.sh/initialized": "true"},
               capacity={"cpu": "2", "memory": "2Gi", "pods": "5"}, deleting=True)  # fmt: skip
    moving = pod("moving", node_name="old", claims=["gone"])
    doc = run([nodepool()], [moving, pod("p", claims=["c"])], nodes=[old],
              pvcs=[pvc("c", storage_class="sc")], storageclasses=[SC])  # fmt: skip
    assert "default/p" in scheduled(doc)
    assert doc.pod_errors["default/moving"] == (
        "ignoring pod, failed getting volume topology requirements, discovering persistent volume claim, "
        'getting persistent volume claim, persistentvolumeclaims "gone" not found (PersistentVolumeClaim=gone)'
    )
