"""The whole program under set_mocks, per example stack and mode: resources, inputs, parents, secrets."""

from __future__ import annotations

import base64
from typing import Any

import yaml
from pulumi_helpers import run_stack

from nodewright import crd, labels
from nodewright.drift.nodepoolhash import nodepool_hash
from nodewright.preview.mocks import RecordedRegistration, secret_paths, unwrap


def _by_type(regs: list[RecordedRegistration], typ: str) -> list[RecordedRegistration]:
    return [r for r in regs if r.type == typ]


def _one(regs: list[RecordedRegistration], typ: str) -> RecordedRegistration:
    found = _by_type(regs, typ)
    assert len(found) == 1, f"expected one {typ}, got {[r.name for r in found]}"
    return found[0]


def _inputs(reg: RecordedRegistration) -> dict[str, Any]:
    out: dict[str, Any] = unwrap(reg.raw(), reveal=True)
    return out


def test_karpenter_mode_resources_and_parents() -> None:
    run = run_stack("karpenter")
    kinds = sorted((r.type, r.name) for r in run.registrations)
    assert kinds == [
        ("aws:ec2/launchTemplate:LaunchTemplate", "default-default-pods29"),
        ("aws:ec2/launchTemplate:LaunchTemplate", "default-default-pods58"),
        ("aws:iam/instanceProfile:InstanceProfile", "default-profile"),
        ("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "default-ec2nodeclass"),
        ("kubernetes:karpenter.sh/v1:NodePool", "default-nodepool"),
        ("nodewright:index:NodeClass", "default"),
        ("nodewright:index:NodePool", "default"),
    ]
    for reg in run.registrations:
        if reg.type.startswith("nodewright:index:"):
            assert reg.parent.endswith("::nodewright-karpenter"), reg.parent  # top level under the stack
            assert not reg.custom
        else:
            assert reg.custom
    nc = _one(run.registrations, "nodewright:index:NodeClass")
    for typ in ("aws:ec2/launchTemplate:LaunchTemplate", "aws:iam/instanceProfile:InstanceProfile"):
        assert all(r.parent == nc.urn for r in _by_type(run.registrations, typ))
    pool = _one(run.registrations, "nodewright:index:NodePool")
    assert _one(run.registrations, "kubernetes:karpenter.sh/v1:NodePool").parent == pool.urn


def test_nodepool_cr_carries_computed_hash() -> None:
    run = run_stack("karpenter")
    cr = _inputs(_one(run.registrations, "kubernetes:karpenter.sh/v1:NodePool"))
    ann = cr["metadata"]["annotations"]
    assert ann[labels.NODEPOOL_HASH] == nodepool_hash(cr, crd_defaults=True)
    assert ann[labels.NODEPOOL_HASH_VERSION] == crd.default_release().nodepool_hash_version
    assert cr["apiVersion"] == "karpenter.sh/v1" and cr["kind"] == "NodePool"
    assert run.outputs["nodePoolHashes"].value == {"default": ann[labels.NODEPOOL_HASH]}


def test_launch_template_inputs_and_secret_user_data() -> None:
    run = run_stack("karpenter")
    lts = {r.name: r for r in _by_type(run.registrations, "aws:ec2/launchTemplate:LaunchTemplate")}
    reg = lts["default-default-pods29"]
    assert secret_paths(reg.raw()) == ["userData"]
    lt = _inputs(reg)
    assert lt["metadataOptions"]["httpTokens"] == "required"
    assert lt["metadataOptions"]["httpPutResponseHopLimit"] == 1
    assert lt["blockDeviceMappings"] == [
        {"deviceName": "/dev/xvda", "ebs": {"encrypted": "true", "volumeSize": 20, "volumeType": "gp3"}}
    ]
    assert lt["imageId"].startswith("ami-")
    assert lt["tags"][labels.NODEPOOL] == "default"
    text = base64.b64decode(lt["userData"]).decode()
    # exactly the core renderer's output (as `nodewright render userdata`), one per max-pods group:
    # the pool allows m5.large, m5a.large (29 pods) and c5.xlarge (58 pods)
    for name, pods in (("default-default-pods29", 29), ("default-default-pods58", 58)):
        got = base64.b64decode(_inputs(lts[name])["userData"]).decode()
        assert got == _core_render(max_pods=pods)
        assert f"maxPods: {pods}\n" in got
    assert "key: karpenter.sh/unregistered" in text and "team=web" in text
    # the AMI came from the SSM alias parameter
    assert [i.args["name"] for i in run.invokes] == [
        "/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id"
    ]


def _core_render(*, max_pods: int, capacity_type: str | None = None) -> str:
    from pulumi_helpers import STACKS

    from nodewright.api.loading import load_objects
    from nodewright.userdata import cluster_info_from_mapping, render_user_data

    objs = load_objects([STACKS.parent / "nodepools.yaml"])
    cfg = yaml.safe_load((STACKS / "Pulumi.karpenter.yaml").read_text())["config"]
    info = cluster_info_from_mapping(cfg["nodewright:cluster"], file="cluster")
    return render_user_data(
        objs.nodeclasses[0], objs.nodepools[0], info, max_pods=max_pods, capacity_type=capacity_type
    )


def test_fleet_mode_launch_templates_per_capacity_type_and_max_pods() -> None:
    run = run_stack("fleet")
    lts = {r.name: r for r in _by_type(run.registrations, "aws:ec2/launchTemplate:LaunchTemplate")}
    assert sorted(lts) == ["default-default-on-demand-pods58", "default-default-spot-pods29"]
    spot = base64.b64decode(_inputs(lts["default-default-spot-pods29"])["userData"]).decode()
    assert spot == _core_render(max_pods=29, capacity_type="spot")
    assert "karpenter.sh/capacity-type=spot" in spot
    inst = {r.name: _inputs(r) for r in _by_type(run.registrations, "aws:ec2/instance:Instance")}
    # Karpenter's naming (launchtemplate.go LaunchTemplateName): karpenter.k8s.aws/<hash>, one per template
    ids = {_inputs(r)["name"]: r for r in lts.values()}
    assert len(ids) == 2 and all(n.startswith("karpenter.k8s.aws/") for n in ids)
    spot_lt = _inputs(lts["default-default-spot-pods29"])
    assert [t["resourceType"] for t in spot_lt["tagSpecifications"]] == [
        "network-interface",
        "spot-instances-request",
        "instance",
        "volume",
    ]
    assert spot_lt["capacityReservationSpecification"] == {"capacityReservationPreference": "none"}
    assert "instanceMarketOptions" not in spot_lt  # spot is requested by the instance, not the template
    assert (
        inst["capacity-default-0001"]["launchTemplate"]["id"]
        != inst["capacity-default-0002"]["launchTemplate"]["id"]
    )


def test_fleet_mode_instances_from_claims() -> None:
    run = run_stack("fleet")
    assert not _by_type(run.registrations, "kubernetes:karpenter.sh/v1:NodePool")
    assert not _by_type(run.registrations, "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")
    cap = _one(run.registrations, "nodewright:index:Capacity")
    inst = {r.name: r for r in _by_type(run.registrations, "aws:ec2/instance:Instance")}
    assert sorted(inst) == ["capacity-default-0001", "capacity-default-0002"]
    assert all(r.parent == cap.urn for r in inst.values())
    spot = _inputs(inst["capacity-default-0001"])
    assert spot["instanceType"] == "m5.large" and spot["subnetId"] == "subnet-0aaa"
    assert spot["instanceMarketOptions"]["marketType"] == "spot"
    assert spot["launchTemplate"]["id"].startswith("lt-")
    od = _inputs(inst["capacity-default-0002"])
    assert "instanceMarketOptions" not in od
    assert od["tags"][labels.NODEPOOL_HASH] == "1111"
    assert run.outputs["instanceIds"].value.keys() == {"default-0001", "default-0002"}


def test_runs_are_independent_in_one_process() -> None:
    first = run_stack("karpenter")
    again = run_stack("fleet")
    assert {r.urn for r in first.registrations}.isdisjoint({r.urn for r in again.registrations})


def test_launch_template_carries_every_option_karpenter_sets() -> None:
    """An EC2NodeClass with network interfaces, conntrack, CPU options, public IP, prefixes, monitoring and
    G/T volume sizes: the aws.ec2.LaunchTemplate inputs are the core LaunchTemplateSpec (ported cases
    in tests/userdata/test_launch_template_spec.py)."""
    run = run_stack("lt-options")
    (reg,) = _by_type(run.registrations, "aws:ec2/launchTemplate:LaunchTemplate")
    lt = _inputs(reg)
    assert [b["ebs"]["volumeSize"] for b in lt["blockDeviceMappings"]] == [932, 187]  # 1T, 200G: ceil GiB
    assert lt["blockDeviceMappings"][0]["ebs"]["iops"] == 3000
    first, efa_only = lt["networkInterfaces"]
    assert first == {
        "deviceIndex": 0,
        "networkCardIndex": 0,
        "interfaceType": "interface",
        "securityGroups": ["sg-0123456789abcdef0"],
        "associatePublicIpAddress": "false",
        "ipv4PrefixCount": 2,
        "connectionTrackingSpecification": {"tcpEstablishedTimeout": 86400},
    }
    assert efa_only == {
        "deviceIndex": 0,
        "networkCardIndex": 1,
        "interfaceType": "efa-only",
        "securityGroups": ["sg-0123456789abcdef0"],
    }
    assert "vpcSecurityGroupIds" not in lt
    assert lt["monitoring"] == {"enabled": True}
    assert lt["cpuOptions"] == {"nestedVirtualization": "enabled"}
    assert lt["metadataOptions"]["instanceMetadataTags"] == "disabled"
    assert lt["enclaveOptions"] == {"enabled": False}
    assert lt["placement"] == {"tenancy": "default"}
    assert lt["name"].startswith("karpenter.k8s.aws/")
    assert lt["tags"]["kubernetes.io/cluster/demo"] == "owned"
