"""Instance-type facts of aws/karpenter-provider-aws v1.14.1 on the embedded aws:us-east-1 catalog:
``vpc.amazonaws.com/pod-eni`` (``awsPodENI``), the EC2NodeClass's ``networkInterfaces`` (``efas``,
``ENILimitedPods``, ``IsCompatibleWithNodeClass``), a1 on AL2023, reserved ENIs, the types listing
both i386 and x86_64, hugepages (kubernetes-sigs/karpenter ``computeAllocatable``), and the
GovCloud/China static price tables. Ports name their upstream It."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nodewright.catalog import Catalog, load_catalog
from nodewright.catalog.fake import new_instance_type
from nodewright.catalog.model import Offering
from nodewright.catalog.overhead import NetworkInterface, NodeClassOptions
from nodewright.catalog.prices import on_demand_prices
from nodewright.catalog.vpclimits import POD_ENI, branch_interfaces

EFA = "vpc.amazonaws.com/efa"
GI = 2**30 * 1000


def _available(catalog: Catalog, name: str) -> bool:
    return any(o.available for o in catalog[name].offerings)


def test_pod_eni_capacity_from_the_trunking_table(us_east_1: Catalog) -> None:
    """suite_test.go It("should not launch AWS Pod ENI on a t3") and It("should launch
    vpc.amazonaws.com/pod-eni on a compatible instance type")"""
    assert POD_ENI not in us_east_1["t3.large"].capacity
    assert us_east_1["m5.large"].capacity[POD_ENI] == branch_interfaces("m5.large") * 1000 == 9000
    with_eni = [it.name for it in us_east_1 if it.capacity.get(POD_ENI, 0) > 0]
    assert len(with_eni) > 500 and all(branch_interfaces(n) > 0 for n in with_eni)


def test_efa_only_interface_counts_against_max_pods(cache_home: Path) -> None:
    """suite_test.go Context("Network Interfaces") It("should calculate max pods according when no
    EFA-only interfaces used on NC 0") and It("should calculate max pods according to EFA-only
    interfaces used")"""
    card1 = (NetworkInterface(), NetworkInterface(network_card_index=1, interface_type="efa-only"))
    card0 = (NetworkInterface(), NetworkInterface(device_index=1, interface_type="efa-only"))
    assert (
        load_catalog("aws:us-east-1", options=NodeClassOptions(network_interfaces=card1))[
            "m6idn.32xlarge"
        ].max_pods
        == 394
    )
    assert (
        load_catalog("aws:us-east-1", options=NodeClassOptions(network_interfaces=card0))[
            "m6idn.32xlarge"
        ].max_pods
        == 345
    )


def test_network_interfaces_override_the_efa_count_and_rule_out_types(
    cache_home: Path, us_east_1: Catalog
) -> None:
    """suite_test.go Context("Network Interfaces") It("should mark instance type offering as
    available when it supports network interface configuration") / It("should mark instance type
    offering as unavailable when it does not support network interface configuration") (on
    p4d.24xlarge: 4 EFAs, 4 network cards; dl1.24xlarge is not in the embedded data) and types.go
    ``efas``: a NodeClass listing interfaces has exactly its efa-only ones"""
    assert us_east_1["p4d.24xlarge"].capacity[EFA] == 4000
    ena_only = load_catalog(
        "aws:us-east-1", options=NodeClassOptions(network_interfaces=(NetworkInterface(),))
    )
    assert EFA not in ena_only["p4d.24xlarge"].capacity
    assert _available(ena_only, "p4d.24xlarge")
    one_efa = (NetworkInterface(), NetworkInterface(device_index=1, interface_type="efa-only"))
    fits = load_catalog("aws:us-east-1", options=NodeClassOptions(network_interfaces=one_efa))
    assert fits["p4d.24xlarge"].capacity[EFA] == 1000
    assert _available(fits, "p4d.24xlarge")
    assert not _available(fits, "m5.large")  # no EFA at all
    assert fits["m5.large"].offerings  # offerings kept, unavailable
    five = (
        NetworkInterface(),
        NetworkInterface(device_index=1, interface_type="efa-only"),
        *(NetworkInterface(network_card_index=i, interface_type="efa-only") for i in range(1, 5)),
    )
    too_many = load_catalog("aws:us-east-1", options=NodeClassOptions(network_interfaces=five))
    assert not _available(too_many, "p4d.24xlarge")  # 5 efa-only > 4, and no network card 4
    deep = (NetworkInterface(device_index=3),)
    assert not _available(
        load_catalog("aws:us-east-1", options=NodeClassOptions(network_interfaces=deep)), "t3.large"
    )


@pytest.mark.parametrize(("family", "available"), [("AL2023", False), ("Bottlerocket", True)])
def test_a1_availability_depends_on_the_ami_family(cache_home: Path, family: str, available: bool) -> None:
    """suite_test.go DescribeTable("should mark availability of a1 instance type offerings based on
    AMI"): Entry("when AMI is AL2023") / Entry("when AMI is BottleRocket")"""
    catalog = load_catalog("aws:us-east-1", options=NodeClassOptions(family=family))
    a1 = catalog["a1.medium"]
    assert a1.offerings
    assert all(o.available is available for o in a1.offerings)


def test_reserved_enis(cache_home: Path) -> None:
    """suite_test.go It("should reserve ENIs when aws.reservedENIs is set and not go below 0 ENIs in
    max-pods calculation"), plus one reserved ENI on t3.large: (3 - 1) * (12 - 1) + 2 = 24"""
    assert load_catalog("aws:us-east-1", options=NodeClassOptions(reserved_enis=1))["t3.large"].max_pods == 24
    huge = load_catalog("aws:us-east-1", options=NodeClassOptions(reserved_enis=1_000_000))
    assert huge["t3.large"].max_pods == 0


@pytest.mark.parametrize(
    "name", ["t2.nano", "t2.micro", "t2.small", "t2.medium", "c1.medium", "c3.large", "m1.small", "m1.medium"]
)
def test_types_listing_i386_and_x86_64_are_kept(us_east_1: Catalog, name: str) -> None:
    """Karpenter asks EC2 for architecture x86_64 or arm64 and gets these (they also list i386)."""
    assert name in us_east_1
    assert us_east_1[name].requirements.get("kubernetes.io/arch").has("amd64")


def test_hugepages_reserve_memory_and_never_drive_it_negative() -> None:
    """kubernetes-sigs/karpenter pkg/cloudprovider/suite_test.go It("should reserve additional
    capacity memory for when HugePages is defined resources") and It("should set memory to zero for
    when HugePages use all the memory on the instance type")"""
    offer = (Offering(zone="test-zone-1", capacity_type="on-demand", price=1.0),)
    it = new_instance_type(
        "h", resources={"memory": "20Gi", "hugepages-2Mi": "5Gi", "hugepages-1Gi": "10Gi"}, offerings=offer
    )
    assert it.allocatable()["memory"] == 5 * GI - 10 * 2**20 * 1000  # minus the fake's 10Mi kube-reserved
    it = new_instance_type(
        "h", resources={"memory": "20Gi", "hugepages-2Mi": "50Gi", "hugepages-1Gi": "10Gi"}, offerings=offer
    )
    assert it.allocatable()["memory"] == 0


def test_govcloud_and_china_use_the_providers_static_tables() -> None:
    """pricing.go ``Reset``: a region with a static table uses it; others use us-east-1's."""
    assert on_demand_prices("us-gov-west-1")["c5.large"] == pytest.approx(0.102)
    assert on_demand_prices("us-gov-west-1")["m5.large"] != on_demand_prices("us-east-1")["m5.large"]
    assert on_demand_prices("us-gov-east-1")["c5.large"] == pytest.approx(0.102)
    assert on_demand_prices("cn-north-1")["c3.large"] == pytest.approx(1.054)
    source = json.loads(
        (Path(__file__).resolve().parents[2] / "nodewright/data/prices-cn-north-1.json").read_text()
    )
    assert "zz_generated.pricing_aws_cn.go" in source["source"]


def test_a_region_without_a_table_warns_once(tmp_path: Path) -> None:
    code = (
        "import logging; logging.basicConfig()\n"
        "from nodewright.catalog.prices import on_demand_prices\n"
        "a = on_demand_prices('eu-west-3'); b = on_demand_prices('eu-west-3')\n"
        "assert a == on_demand_prices('us-east-1')\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stderr.count("eu-west-3: on-demand prices are read live by Karpenter") == 1
