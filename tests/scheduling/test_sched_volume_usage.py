"""Volume usage through ``plan`` over rounds, ported from kubernetes-sigs/karpenter v1.14.1
``pkg/controllers/provisioning/scheduling/suite_test.go`` Describe "VolumeUsage": CSINode volume
limits on the in-flight node, the StorageClass of ephemeral volumes (named, the default one, the
newest default), ephemeral volumes without a usable class, and the ``bind-completed`` annotation.
Each test names its upstream ``It``/``DescribeTable``.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_sched_support import Rounds, nodepool, pod, pv, pvc, run, scheduled, storage_class

# -- scheduling/suite_test.go Describe "VolumeUsage": limits on the in-flight node ----------------
CSI = "fake.csi.provider"


def _volume_usage_env(**objects: Any) -> Rounds:
    """The Describe's BeforeEach (one 1024 cpu / 1024 pod type) and an in-flight node from a first
    round, whose CSINode allows 10 volumes of the CSI driver."""
    from nodewright.api.core import CSINode
    from nodewright.catalog.fake import new_instance_type

    it = new_instance_type("instance-type", resources={"cpu": "1024", "pods": "1024"})
    env = Rounds([nodepool()], types=[it], **objects)
    first = pod("initial")
    env.round(first)
    n = env.node_of(first)
    assert n is not None
    csinode = CSINode.model_validate({"metadata": {"name": n.metadata.name}, "spec": {"drivers": [
        {"name": CSI, "nodeID": "fake-node-id", "allocatable": {"count": 10}}]}})  # fmt: skip
    env.objects["csinodes"] = (csinode,)
    return env


def test_volume_limits_launch_a_second_node() -> None:
    """It "should launch multiple nodes if required due to volume limits": six pods with two claims
    each, the in-flight node holds five (10 volumes)."""
    sc = storage_class("my-storage-class", zones=["test-zone-1"], provisioner=CSI)
    claims = [pvc(f"my-claim-{x}-{i}", storage_class="my-storage-class") for i in range(6) for x in "ab"]
    env = _volume_usage_env(storageclasses=[sc], pvcs=claims)
    pods = [pod(f"p{i}", claims=[f"my-claim-a-{i}", f"my-claim-b-{i}"]) for i in range(6)]
    env.round(*pods)
    assert env.bound(pods) == pods and env.node_count() == 2


@pytest.mark.parametrize("nfs", [False, True])
def test_one_claim_shared_by_many_pods(nfs: bool) -> None:
    """It "should launch a single node if all pods use the same PVC" (100 pods) and "should not fail
    for NFS volumes" (5 pods, the claim listed twice, an NFS volume with no CSI driver)."""
    if nfs:
        objects: dict[str, Any] = {"pvs": [pv("my-volume", zones=["test-zone-1"], source="nfs", storage_class="nfs")],
                                   "pvcs": [pvc("my-claim", storage_class="", volume="my-volume")]}  # fmt: skip
    else:
        objects = {"storageclasses": [storage_class("my-storage-class", zones=["test-zone-1"], mode=None, provisioner=CSI)],
                   "pvs": [pv("my-volume", zones=["test-zone-1"])],
                   "pvcs": [pvc("my-claim", storage_class="my-storage-class", volume="my-volume")]}  # fmt: skip
    env = _volume_usage_env(**objects)
    pods = [
        pod(f"p{i:03d}", claims=["my-claim", "my-claim"] if nfs else ["my-claim"])
        for i in range(5 if nfs else 100)
    ]
    env.round(*pods)
    assert env.bound(pods) == pods and env.node_count() == 1


@pytest.mark.parametrize("which", ["specified", "default", "newest"])
def test_ephemeral_volume_storage_class(which: str) -> None:
    """It "should launch nodes for pods with ephemeral volume using the specified storage class name",
    "... using a default storage class" and "... using the newest storage class": the claims' class
    (named, or the default the API server gives a claim without one, the newest default winning)
    decides the CSI driver whose limit of one volume sends the second pod to a new node."""
    from nodewright.api.core import CSINode

    t0, t1 = "2024-01-01T00:00:00Z", "2024-01-01T00:00:05Z"
    classes = {
        "specified": [storage_class("my-storage-class", zones=["test-zone-1"], provisioner=CSI),
                      storage_class("default-storage-class", zones=["test-zone-1"], provisioner="other-provider",
                                    default=True)],
        "default": [storage_class("default-storage-class", zones=["test-zone-1"], provisioner=CSI, default=True)],
        "newest": [storage_class("default-storage-class", zones=["test-zone-1"], provisioner="other-provider",
                                 default=True, created=t0),
                   storage_class("newer-default-storage-class", zones=["test-zone-1"], provisioner=CSI,
                                 default=True, created=t1)],
    }[which]  # fmt: skip
    sc = "my-storage-class" if which == "specified" else None
    claims = [pvc(f"{name}-e0", storage_class=sc) for name in ("initial", "second")]
    env = Rounds([nodepool()], storageclasses=classes, pvcs=claims)
    first = pod("initial", ephemeral=[sc or ""])
    env.round(first)
    n = env.node_of(first)
    assert n is not None
    drivers = [{"name": CSI, "nodeID": "fake-node-id", "allocatable": {"count": 1}},
               {"name": "other-provider", "nodeID": "fake-node-id", "allocatable": {"count": 10}}]  # fmt: skip
    env.objects["csinodes"] = (
        CSINode.model_validate({"metadata": {"name": n.metadata.name}, "spec": {"drivers": drivers}}),
    )
    second = pod("second", ephemeral=[sc or ""])
    env.round(second)
    m = env.node_of(second)
    assert m is not None and m.metadata.name != n.metadata.name


@pytest.mark.parametrize("sc", ["non-existent", ""], ids=["non-existent storage class", "empty string"])
@pytest.mark.parametrize("bound", [True, False])
def test_ephemeral_volume_without_a_usable_storage_class(sc: str, bound: bool) -> None:
    """DescribeTables "should launch nodes for pods with ephemeral volume without a storage class when
    the PVC is bound" and "should not launch nodes ... when the PVC is unbound" (there the claim
    does not even exist: the ephemeral volume controller has not created it)."""
    objects: dict[str, Any] = {}
    if bound:
        objects = {"pvcs": [pvc("p-e0", storage_class=sc, volume="test-pv")], "pvs": [pv("test-pv")]}
    doc = run([nodepool()], [pod("p", ephemeral=[sc])], **objects)
    assert (len(doc.node_claims) == 1) is bound


@pytest.mark.parametrize("annotated", [True, False])
def test_claim_with_volume_name_needs_bind_completed(annotated: bool) -> None:
    """DescribeTable "should handle pods with PVCs with defined volumeName" (entries annotation
    present / missing)."""
    sc = storage_class("default-storage-class", zones=["test-zone-1"], provisioner="other-provider")
    claim = pvc("tmp-ephemeral", storage_class="default-storage-class", volume="v")
    if not annotated:
        claim = claim.model_copy(update={"metadata": claim.metadata.model_copy(update={"annotations": {}})})
    doc = run(
        [nodepool()], [pod("p", claims=["tmp-ephemeral"])], storageclasses=[sc], pvcs=[claim], pvs=[pv("v")]
    )
    assert ("default/p" in scheduled(doc)) is annotated
