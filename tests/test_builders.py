"""The shared fixture builders (tests/builders.py) build objects the api layer accepts."""

from __future__ import annotations

import builders

from nodewright.api.core import DaemonSet, Node, Pod
from nodewright.api.ec2nodeclass import EC2NodeClass
from nodewright.api.karpenter import NodeClaim, NodePool
from nodewright.crd import admit_object


def test_builders_build_valid_objects() -> None:
    pool = NodePool.model_validate(builders.nodepool(taints=[{"key": "k", "effect": "NoSchedule"}]))
    assert pool.spec.template.spec.taints[0].key == "k"
    nc = EC2NodeClass.model_validate(builders.ec2nodeclass())
    assert nc.ami_family() == "AL2023"
    # the cluster (the shipped CRDs, CEL rules and Karpenter's runtime checks) accepts them
    assert admit_object(builders.nodepool(), kind="NodePool").problems == []
    assert admit_object(builders.ec2nodeclass(), kind="EC2NodeClass").problems == []
    pod = Pod.model_validate(builders.pod("p", cpu="1"))
    assert pod.status.conditions[0].reason == builders.UNSCHEDULABLE
    assert Node.model_validate(builders.node("n", labels={}, capacity={"cpu": "2"})).metadata.name == "n"
    claim = NodeClaim.model_validate(builders.nodeclaim("c", capacity={"cpu": "2"}))
    assert claim.metadata.labels[builders.NODEPOOL_LABEL] == "default"
    assert DaemonSet.model_validate(builders.daemonset("d", cpu="100m")).metadata.name == "d"


def test_absent_stays_absent() -> None:
    """Absent and empty hash differently (drift), so a builder writes only what it is given."""
    spec = builders.nodepool()["spec"]["template"]["spec"]
    assert set(spec) == {"nodeClassRef", "requirements"}
    assert "taints" in builders.nodepool(taints=[])["spec"]["template"]["spec"]
