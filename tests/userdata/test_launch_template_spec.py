"""The launch template Karpenter creates, ported from aws/karpenter-provider-aws v1.14.1
``pkg/providers/launchtemplate/suite_test.go`` (each test names the upstream Context/It or Entry).

Upstream drives a whole provisioning loop and inspects ``CreateLaunchTemplateInput``; here the same
expectations are checked on :func:`nodewright.userdata.launch_template.launch_template_spec`, the pure
function the Pulumi component maps onto ``aws.ec2.LaunchTemplate``.
"""

from __future__ import annotations

from typing import Any

import pytest
from userdata_support import SUITE_CLUSTER, suite_nodeclass

from nodewright.algebra.quantity import to_gib_ceil
from nodewright.api import EC2NodeClass
from nodewright.userdata import ClusterInfo, UserDataError
from nodewright.userdata.launch_template import (
    LaunchTemplateSpec,
    efa_count_for,
    launch_template_spec,
)

KMS = "arn:aws:kms:us-west-2:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
V4 = SUITE_CLUSTER
V6 = ClusterInfo(
    name="test-cluster", endpoint="https://test-cluster", ca_bundle="Y2E=", dns=("fd01:99f0:d47b::a",)
)


nc = suite_nodeclass


def lt(nodeclass: EC2NodeClass | None = None, **kw: Any) -> LaunchTemplateSpec:
    args: dict[str, Any] = {
        "cluster": V4,
        "nodepool": "default",
        "user_data": "x",
        "capacity_type": "on-demand",
    }
    args.update(kw)
    return launch_template_spec(nodeclass or nc(), **args)


# -- Tags ------------------------------------------------------------------------------------


def test_tags_on_network_interfaces_and_spot_requests() -> None:
    """Context "Tags" / It "should request that tags be applied to both network interfaces and spot instance requests"."""
    spec = lt(nc(tags={"tag1": "tag1value", "tag2": "tag2value"}), capacity_type="spot")
    assert [r for r, _ in spec.tag_specifications] == ["network-interface", "spot-instances-request"]
    for _, tags in spec.tag_specifications:
        assert tags["tag1"] == "tag1value" and tags["tag2"] == "tag2value"
    assert [r for r, _ in lt(capacity_type="on-demand").tag_specifications] == ["network-interface"]


def test_static_tags_win_and_name_can_be_overridden() -> None:
    """utils.GetTags; Context "Tags" / It "should override default tag names"."""
    spec = lt(nc(tags={"Name": "myname", "karpenter.sh/nodepool": "mine"}))
    assert spec.tags == {
        "Name": "myname",
        "karpenter.sh/nodepool": "default",
        "kubernetes.io/cluster/test-cluster": "owned",
        "eks:eks-cluster-name": "test-cluster",
        "karpenter.k8s.aws/ec2nodeclass": "default",
    }


# -- Block Device Mappings ----------------------------------------------------------------------


@pytest.mark.parametrize("alias", ["al2@latest", "al2023@latest"])
def test_default_block_device_mappings(alias: str) -> None:
    """It "should default AL2 block device mappings" / "should default AL2023 block device mappings"."""
    (bdm,) = lt(nc(amiSelectorTerms=[{"alias": alias}])).block_device_mappings
    assert (bdm.device_name, bdm.volume_size_gib, bdm.volume_type, bdm.iops) == ("/dev/xvda", 20, "gp3", None)


def test_custom_block_device_mapping_200G_is_187_GiB() -> None:
    """It "should use custom block device mapping" (200G -> 187, 200Gi -> 200)."""
    ebs = {
        "deleteOnTermination": True,
        "encrypted": True,
        "volumeType": "io2",
        "iops": 10000,
        "kmsKeyID": KMS,
    }
    spec = lt(
        nc(
            blockDeviceMappings=[
                {"deviceName": "/dev/xvda", "ebs": {**ebs, "volumeSize": "200G"}},
                {"deviceName": "/dev/xvdb", "ebs": {**ebs, "volumeSize": "200Gi"}},
            ]
        )
    )
    a, b = spec.block_device_mappings
    assert a.volume_size_gib == 187 and b.volume_size_gib == 200
    assert (a.volume_type, a.iops, a.delete_on_termination, a.encrypted, a.kms_key_id) == (
        "io2",
        10000,
        True,
        True,
        KMS,
    )


def test_gigabytes_round_up() -> None:
    """It "should round up for custom block device mappings when specified in gigabytes" (4G -> 4, 2G -> 2)."""
    spec = lt(
        nc(
            blockDeviceMappings=[
                {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "4G"}},
                {"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "2G"}},
            ]
        )
    )
    assert [b.volume_size_gib for b in spec.block_device_mappings] == [4, 2]


def test_one_terabyte_is_932_GiB() -> None:
    """A ``1T`` volume gets a size (EC2 would otherwise fall back to the AMI's 20 GiB)."""
    (bdm,) = lt(
        nc(blockDeviceMappings=[{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "1T"}}])
    ).block_device_mappings
    assert bdm.volume_size_gib == 932 == to_gib_ceil("1T")
    assert to_gib_ceil("1Ti") == 1024 and to_gib_ceil(1) == 1


def test_bad_volume_size_names_the_field() -> None:
    with pytest.raises(UserDataError) as err:
        lt(nc(blockDeviceMappings=[{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "lots"}}]))
    assert err.value.path == "spec.blockDeviceMappings[0].ebs.volumeSize"


def test_bottlerocket_default_volumes() -> None:
    """It "should default bottlerocket second volume with root volume size"."""
    spec = lt(nc(amiSelectorTerms=[{"alias": "bottlerocket@latest"}]))
    assert [(b.device_name, b.volume_size_gib, b.volume_type) for b in spec.block_device_mappings] == [
        ("/dev/xvda", 4, "gp3"),
        ("/dev/xvdb", 20, "gp3"),
    ]


def test_custom_family_has_no_default_block_devices() -> None:
    """It "should not default block device mappings for custom AMIFamilies" / "should use custom block device mapping for custom AMIFamilies"."""
    custom = {"amiFamily": "Custom", "amiSelectorTerms": [{"tags": {"*": "*"}}]}
    assert lt(nc(**custom)).block_device_mappings == ()
    ebs = {
        "deleteOnTermination": True,
        "encrypted": True,
        "volumeType": "io2",
        "volumeSize": "40Gi",
        "iops": 10000,
        "kmsKeyID": KMS,
    }
    (bdm,) = lt(
        nc(**custom, blockDeviceMappings=[{"deviceName": "/dev/xvda", "ebs": ebs}])
    ).block_device_mappings
    assert (bdm.volume_size_gib, bdm.volume_type, bdm.iops, bdm.delete_on_termination, bdm.encrypted) == (
        40,
        "io2",
        10000,
        True,
        True,
    )


# -- Public IP, prefixes, IPv6 ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("set_value", "efa"),
    [(True, False), (False, False), (True, True), (False, True)],
    ids=["true", "false", "true (EFA)", "false (EFA)"],
)
def test_associate_public_ip_address(set_value: bool, efa: bool) -> None:
    """Context "Public IP Association": "should set 'AssociatePublicIPAddress' based on EC2NodeClass"."""
    spec = lt(nc(associatePublicIPAddress=set_value), efa_count=2 if efa else 0)
    assert spec.network_interfaces[0].associate_public_ip_address is set_value


@pytest.mark.parametrize("count", [0, 1, 10, 100])
def test_ipv4_prefix_count(count: int) -> None:
    """Context "IP Prefix Delegation": "should set 'IPv4PrefixCount' based on EC2NodeClass"."""
    ni = lt(nc(ipPrefixCount=count)).network_interfaces[0]
    assert ni.ipv4_prefix_count == count and ni.ipv6_prefix_count is None


@pytest.mark.parametrize("count", [0, 1, 10, 100])
def test_ipv6_prefix_count(count: int) -> None:
    """Context "IP Prefix Delegation": "should set 'IPv6PrefixCount' based on EC2NodeClass"."""
    ni = lt(nc(ipPrefixCount=count), cluster=V6).network_interfaces[0]
    assert ni.ipv6_prefix_count == count and ni.ipv4_prefix_count is None


@pytest.mark.parametrize(
    ("is_set", "public", "efa"),
    [(False, True, False), (False, False, True), (True, True, True), (True, False, False)],
)
def test_ipv6_cluster_primary_ipv6(is_set: bool, public: bool, efa: bool) -> None:
    """Context "Networking": "should set Primary IPv6 as true and provision a IPv6 address" (all four Entries)."""
    nodeclass = nc(associatePublicIPAddress=public) if is_set else nc()
    spec = lt(nodeclass, cluster=V6, efa_count=2 if efa else 0)
    ni = spec.network_interfaces[0]
    if not is_set and not efa:
        assert ni.associate_public_ip_address is None
    if efa:
        assert ni.interface_type == "efa"
        assert bool(ni.associate_public_ip_address) is (public if is_set else False)
    assert ni.ipv6_address_count == 1 and ni.primary_ipv6 is True


# -- Connection tracking --------------------------------------------------------------------------

FULL_CT = {"tcpEstablishedTimeout": 86400, "udpStreamTimeout": 120, "udpTimeout": 45}


@pytest.mark.parametrize(
    ("ct", "want"),
    [
        (None, None),
        (
            {"tcpEstablishedTimeout": 432000, "udpStreamTimeout": 180, "udpTimeout": 30},
            {"tcpEstablishedTimeout": 432000, "udpStreamTimeout": 180, "udpTimeout": 30},
        ),
        ({"tcpEstablishedTimeout": 86400}, {"tcpEstablishedTimeout": 86400}),
    ],
    ids=["nil", "AWS defaults", "non-default TCP timeout"],
)
def test_connection_tracking(ct: dict[str, int] | None, want: dict[str, int] | None) -> None:
    """Context "Connection Tracking settings": "should set 'ConnectionTracking' based on EC2NodeClass"."""
    nodeclass = nc(connectionTracking=ct) if ct else nc()
    assert lt(nodeclass).network_interfaces[0].connection_tracking == want


def test_connection_tracking_on_every_efa_eni() -> None:
    """It "should apply ConnectionTracking to every EFA ENI in the launch template"."""
    spec = lt(nc(connectionTracking=FULL_CT), efa_count=2)
    assert len(spec.network_interfaces) == 2
    assert all(
        ni.interface_type == "efa" and ni.connection_tracking == FULL_CT for ni in spec.network_interfaces
    )
    assert [(ni.network_card_index, ni.device_index) for ni in spec.network_interfaces] == [(0, 0), (1, 1)]


FOUR = [
    {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
    {"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "efa-only"},
    {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa-only"},
    {"networkCardIndex": 1, "deviceIndex": 1, "interfaceType": "interface"},
]


def test_connection_tracking_on_user_interfaces_except_efa_only() -> None:
    """It "should apply ConnectionTracking to every user-configured NetworkInterface in the launch template except efa-only"."""
    spec = lt(nc(connectionTracking=FULL_CT, networkInterfaces=FOUR))
    assert [ni.connection_tracking for ni in spec.network_interfaces] == [FULL_CT, None, None, FULL_CT]


# -- Network interfaces ---------------------------------------------------------------------------


@pytest.mark.parametrize("efa", [0, 2], ids=["pod does not request EFA", "pod does request EFA"])
def test_network_interfaces_as_the_nodeclass(efa: int) -> None:
    """Context "Network Interfaces": "should configure network interfaces with same configuration as NodeClass"."""
    spec = lt(nc(networkInterfaces=FOUR), efa_count=efa)
    got = [(ni.network_card_index, ni.device_index, ni.interface_type) for ni in spec.network_interfaces]
    assert got == [(0, 0, "interface"), (0, 1, "efa-only"), (1, 0, "efa-only"), (1, 1, "interface")]
    assert spec.security_group_ids is None


def test_no_prefix_count_on_efa_only() -> None:
    """It "should not set prefix count on EFA-only interfaces"."""
    three = [FOUR[0], FOUR[1], FOUR[3]]
    spec = lt(nc(networkInterfaces=three, ipPrefixCount=2))
    assert [ni.ipv4_prefix_count for ni in spec.network_interfaces] == [2, None, 2]


def test_no_ipv6_on_efa_only() -> None:
    """It "should not set Ipv6 specs on EFA-only interfaces"."""
    spec = lt(nc(networkInterfaces=FOUR[:2]), cluster=V6)
    a, b = spec.network_interfaces
    assert (a.primary_ipv6, a.ipv6_address_count) == (True, 1)
    assert (b.primary_ipv6, b.ipv6_address_count) == (None, None)


def test_efa_count_per_instance_type() -> None:
    """resolver.go: the EFA count is the instance type's capacity, only when the NodeClaim requests EFA."""
    cap = {"vpc.amazonaws.com/efa": 4000}
    assert efa_count_for(cap, {"vpc.amazonaws.com/efa": "1"}) == 4
    assert efa_count_for(cap, {"cpu": "1"}) == 0
    spec = lt(efa_count=4, security_group_ids=("sg-1", "sg-2"))
    assert [ni.device_index for ni in spec.network_interfaces] == [0, 1, 1, 1]
    assert all(ni.security_groups == ("sg-1", "sg-2") for ni in spec.network_interfaces)


def test_primary_eni_carries_the_security_groups() -> None:
    """generateNetworkInterfaces: without interfaces or EFA, one primary ENI (device 0) with the groups,
    so SecurityGroupIds on the template stays unset."""
    spec = lt(security_group_ids=("sg-1",))
    (ni,) = spec.network_interfaces
    assert (ni.device_index, ni.network_card_index, ni.interface_type, ni.security_groups) == (
        0,
        None,
        None,
        ("sg-1",),
    )
    assert spec.security_group_ids is None


# -- Monitoring, enclave, metadata, tenancy, CPU -----------------------------------------------------


def test_detailed_monitoring() -> None:
    """Context "Detailed Monitoring": default off; passed through when set."""
    assert lt().monitoring is False
    assert lt(nc(detailedMonitoring=True)).monitoring is True


def test_enclave_options() -> None:
    """Context "Enclave Options": default disabled; enabled when nip-slots is requested."""
    assert lt().enclave_enabled is False
    assert lt(enclave=True).enclave_enabled is True


def test_instance_metadata() -> None:
    """Context "Instance Metadata": the CRD defaults and InstanceMetadataTags disabled."""
    assert lt().metadata_options == {
        "httpEndpoint": "enabled",
        "httpProtocolIPv6": "disabled",
        "httpPutResponseHopLimit": 1,
        "httpTokens": "required",
        "instanceMetadataTags": "disabled",
    }
    assert "httpProtocolIPv6" not in lt(region="us-iso-east-1").metadata_options


@pytest.mark.parametrize("tenancy", ["default", "dedicated"])
def test_tenancy(tenancy: str) -> None:
    """Context "Tenancy": "should set tenancy on launch template"."""
    assert lt(tenancy=tenancy).tenancy == tenancy


def test_placement_group_and_cpu_options() -> None:
    """Build.buildPlacement and cpuoptions_test.go: group id and partition only when set."""
    spec = lt(
        nc(cpuOptions={"nestedVirtualization": "enabled"}),
        placement_group_id="pg-1",
        placement_group_partition=2,
    )
    assert (spec.placement_group_id, spec.placement_group_partition, spec.cpu_nested_virtualization) == (
        "pg-1",
        2,
        "enabled",
    )
    bare = lt()
    assert (bare.placement_group_id, bare.placement_group_partition, bare.cpu_nested_virtualization) == (
        None,
        None,
        None,
    )


# -- Capacity reservations --------------------------------------------------------------------------


def test_reserved_launch_targets_its_reservation() -> None:
    """It "should generate a unique launch template per capacity reservation": one template per reservation id."""
    a = lt(capacity_type="reserved", capacity_reservation_id="cr-m5.large-1a-2")
    b = lt(capacity_type="reserved", capacity_reservation_id="cr-m5.large-1b-1")
    assert a.capacity_reservation_preference == "capacity-reservations-only"
    assert (a.capacity_reservation_id, b.capacity_reservation_id) == ("cr-m5.large-1a-2", "cr-m5.large-1b-1")
    assert a.name != b.name


@pytest.mark.parametrize(
    ("kind", "interruptible", "market"),
    [("default", True, "interruptible-capacity-reservation"), ("capacity-block", False, "capacity-block")],
    ids=["interruptible", "capacity block"],
)
def test_market_type_for_reserved_capacity(kind: str, interruptible: bool, market: str) -> None:
    """ "should correctly assign the market type for reserved capacity" (both Entries)."""
    spec = lt(
        capacity_type="reserved",
        capacity_reservation_id="cr-1",
        capacity_reservation_type=kind,
        capacity_reservation_interruptible=interruptible,
    )
    assert spec.market_type == market


@pytest.mark.parametrize("enabled", [True, False])
def test_capacity_reservation_spec_follows_the_feature_gate(enabled: bool) -> None:
    """ "should set the capacity reservation specification according to the capacity reservation feature flag"."""
    spec = lt(reserved_capacity_gate=enabled)
    if enabled:
        assert (spec.capacity_reservation_preference, spec.capacity_reservation_id) == ("none", None)
    else:
        assert spec.capacity_reservation_preference is None


def test_spot_market_options_are_not_in_the_template() -> None:
    """Spot is requested through CreateFleet, never as InstanceMarketOptions on the template."""
    assert lt(capacity_type="spot").market_type is None


# -- Naming -------------------------------------------------------------------------------------------


def test_name_is_karpenters_prefix_and_a_stable_hash() -> None:
    """LaunchTemplateName: karpenter.k8s.aws/<hash>; Context "Cache" / It "should use same launch template
    for equivalent constraints"."""
    a = lt()
    assert a.name.startswith("karpenter.k8s.aws/") and a.name[len("karpenter.k8s.aws/") :].isdigit()
    assert lt().name == a.name


def _unique(names: list[str]) -> bool:
    return len(set(names)) == len(names)


def test_names_differ_by_amifamily_options() -> None:
    """Context "Cache" / It "should generate different launch template names based on amifamily option configuration"."""
    base = V4

    def cluster(**kw: Any) -> ClusterInfo:
        fields = {
            "name": base.name,
            "endpoint": base.endpoint,
            "ca_bundle": base.ca_bundle,
            "cidr": base.cidr,
            "dns": base.dns,
        }
        fields.update(kw)
        return ClusterInfo(**fields)

    renamed = EC2NodeClass.model_validate(
        {
            "metadata": {"name": "test-name"},
            "spec": suite_nodeclass().spec.model_dump(by_alias=True, exclude_unset=True),
        }
    )
    names = [
        lt().name,
        lt(cluster=cluster(name="test-name")).name,
        lt(cluster=cluster(endpoint="test-endpoint")).name,
        lt(cluster=cluster(cidr="10.1.0.0/16")).name,
        lt(instance_profile="test-profile").name,
        lt(nc(instanceStorePolicy="RAID0")).name,
        lt(security_group_ids=("test-sg",)).name,
        lt(nc(tags={"test-key": "test-value"})).name,
        lt(cluster=cluster(dns=("192.0.0.2",))).name,
        lt(nc(associatePublicIPAddress=True)).name,
        lt(renamed).name,
    ]
    assert len(names) == 11 and _unique(names)


def test_names_differ_by_bootstrap_configuration() -> None:
    """Context "Cache" / Its "should generate different launch template names based on bootstrap configuration"
    and "... based on kubelet configuration": the rendered user data (labels, taints, kubelet, CA bundle,
    custom user data) is part of the name; "should not generate different launch template names based on
    CABundle and Labels" concerns the duplicated amifamily options only, so it holds by construction."""
    texts = ["", "labels", "taints", "ca", "custom", "kubeReserved", "maxPods=20"]
    assert _unique([lt(user_data=t).name for t in texts])


def test_names_differ_by_launch_template_options() -> None:
    """Context "Cache" / It "should generate different launch template names based on launchtemplate option configuration";
    "should not generate different launch template names based on instance types" (no instance-type input)."""
    names = [
        lt().name,
        lt(nc(blockDeviceMappings=[{"deviceName": "test-block"}])).name,
        lt(image_id="test-ami").name,
        lt(nc(detailedMonitoring=True)).name,
        lt(efa_count=12).name,
        lt(capacity_type="spot").name,
        lt(enclave=True).name,
    ]
    assert len(names) == 7 and _unique(names)
