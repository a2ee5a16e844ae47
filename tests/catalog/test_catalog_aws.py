"""``aws:<region>`` through the real boto3 code path, answered by moto (the embedded default),
plus the disk cache and the spot-price handling of a real-AWS answer (a recorded-shape client)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from nodewright import labels
from nodewright.catalog import Catalog, apply_kubelet, ec2calls, load_catalog, loader
from nodewright.catalog import aws as aws_mod
from nodewright.catalog import cache as cache_mod
from nodewright.userdata import nodeclass_catalog

MI = 2**20 * 1000


@pytest.fixture
def catalog(us_east_1: Catalog) -> Catalog:
    return us_east_1


def test_embedded_catalog_m5_large(catalog: Catalog) -> None:
    assert len(catalog) > 1000
    m5 = catalog["m5.large"]
    d = m5.to_dict()
    assert d["capacity"]["cpu"] == "2"
    assert d["capacity"]["pods"] == "29"
    assert d["maxPods"] == 29
    assert d["allocatable"]["memory"] == "6903Mi"
    assert d["overhead"]["kubeReserved"]["cpu"] == "70m"
    assert d["price"] == pytest.approx(0.096)
    reqs = m5.requirements
    assert reqs.get(labels.INSTANCE_FAMILY).has("m5")
    assert reqs.get(labels.INSTANCE_SIZE).has("large")
    assert reqs.get(labels.INSTANCE_CATEGORY).has("m")
    assert reqs.get(labels.INSTANCE_GENERATION).has("5")
    assert reqs.get(labels.INSTANCE_CPU).has("2")
    assert reqs.get(labels.INSTANCE_MEMORY).has("8192")
    assert reqs.get(labels.INSTANCE_HYPERVISOR).has("nitro")
    assert reqs.get(labels.INSTANCE_CPU_MANUFACTURER).has("intel")
    assert reqs.get(labels.OS).has("linux") and reqs.get(labels.ARCH).has("amd64")
    assert reqs.get(labels.REGION).has("us-east-1")
    assert reqs.get(labels.ZONE).has("us-east-1a")
    assert not reqs.get(labels.INSTANCE_GPU_NAME).has("anything")
    assert {o.capacity_type for o in m5.offerings} == {"on-demand", "spot"}


def test_embedded_catalog_arm64_and_gpu(catalog: Catalog) -> None:
    g = catalog["m6g.large"]
    assert g.requirements.get(labels.ARCH).has("arm64")
    assert g.capacity["memory"] == 7518 * MI
    p = catalog["p4d.24xlarge"]
    assert p.capacity["nvidia.com/gpu"] == 8000
    assert p.requirements.get(labels.INSTANCE_GPU_NAME).has("a100")
    assert p.requirements.get(labels.INSTANCE_GPU_MANUFACTURER).has("nvidia")
    assert p.requirements.get(labels.INSTANCE_GPU_COUNT).has("8")


def test_catalog_is_sorted_and_every_type_has_offerings(catalog: Catalog) -> None:
    assert catalog.names() == sorted(catalog.names())
    assert all(it.offerings for it in catalog)


def test_warm_load_comes_from_disk_cache(
    cache_home: Path, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = list((cache_home / "nodewright").glob("catalog-us-east-1-*.json"))
    assert len(files) == 1
    loader.clear_memory_cache()

    def no_ec2(*_: Any, **__: Any) -> Any:
        raise AssertionError("EC2 was called although the disk cache is warm")

    monkeypatch.setattr(ec2calls, "fetch", no_ec2)
    again = load_catalog("aws:us-east-1")
    assert again.names() == catalog.names()
    assert again["m5.large"].allocatable() == catalog["m5.large"].allocatable()
    assert load_catalog("aws:us-east-1") is again  # in-process memo


def test_corrupt_cache_file_is_ignored(cache_home: Path, catalog: Catalog, tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    types = [aws_mod.base_of(it) for it in list(catalog)[:3]]
    cache_mod.write(path, [t for t in types if t is not None], meta={})
    assert [b.name for b in cache_mod.read(path, ttl_seconds=None) or []] == [
        it.name for it in list(catalog)[:3]
    ]
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
    assert cache_mod.read(path, ttl_seconds=None) is None
    path.write_text(json.dumps({"format": 999}))
    assert cache_mod.read(path, ttl_seconds=None) is None
    assert cache_mod.read(tmp_path / "missing.json", ttl_seconds=None) is None


def test_apply_kubelet_recomputes_from_ec2_facts(catalog: Catalog) -> None:
    m5 = catalog["m5.large"]
    changed = apply_kubelet(m5, {"maxPods": 110, "kubeReserved": {"memory": "1Gi"}})
    assert changed.capacity["pods"] == 110_000
    assert changed.overhead.kube_reserved["memory"] == 1024 * MI
    br = apply_kubelet(m5, {"maxPods": 110}, "Bottlerocket")
    assert br.overhead.kube_reserved["memory"] == (11 * 110 + 255) * MI
    assert m5.capacity["pods"] == 29_000  # the original is untouched


def test_load_catalog_with_nodeclass(cache_home: Path) -> None:
    nodeclass = {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "br"},
        "spec": {
            "amiSelectorTerms": [{"alias": "bottlerocket@latest"}],
            "kubelet": {"maxPods": 58},
            "blockDeviceMappings": [{"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "100Gi"}}],
        },
    }
    cat = nodeclass_catalog("aws:us-east-1", nodeclass)
    m5 = cat["m5.large"]
    assert m5.capacity["pods"] == 58_000
    assert m5.capacity["ephemeral-storage"] == 100 * 2**30 * 1000
    assert m5.overhead.kube_reserved["memory"] == (11 * 58 + 255) * MI


class _Paginator:
    def __init__(self, pages: list[dict[str, Any]]) -> None:
        self.pages = pages

    def paginate(self, **_: Any) -> list[dict[str, Any]]:
        return self.pages


class _RecordedEC2:
    """Answers shaped like real EC2 responses (two pages of types, one spot page)."""

    def __init__(self, info: dict[str, Any]) -> None:
        self.info = info

    def get_paginator(self, op: str) -> _Paginator:
        now = dt.datetime.now(dt.UTC)
        pages: dict[str, list[dict[str, Any]]] = {
            "describe_instance_types": [{"InstanceTypes": [self.info]}, {"InstanceTypes": []}],
            "describe_instance_type_offerings": [
                {
                    "InstanceTypeOfferings": [
                        {"InstanceType": "m5.large", "Location": z} for z in ("eu-x-1a", "eu-x-1b")
                    ]
                }
            ],
            "describe_spot_price_history": [
                {
                    "SpotPriceHistory": [
                        {
                            "InstanceType": "m5.large",
                            "AvailabilityZone": "eu-x-1a",
                            "SpotPrice": "0.0400",
                            "Timestamp": now,
                        },
                        {
                            "InstanceType": "m5.large",
                            "AvailabilityZone": "eu-x-1a",
                            "SpotPrice": "0.0500",
                            "Timestamp": now - dt.timedelta(hours=1),
                        },
                    ]
                }
            ],
        }
        return _Paginator(pages[op])

    def describe_availability_zones(self) -> dict[str, Any]:
        return {
            "AvailabilityZones": [
                {
                    "ZoneName": "eu-x-1a",
                    "ZoneId": "eux1-az1",
                    "State": "available",
                    "ZoneType": "availability-zone",
                },
                {
                    "ZoneName": "eu-x-1b",
                    "ZoneId": "eux1-az2",
                    "State": "available",
                    "ZoneType": "availability-zone",
                },
            ]
        }


def test_real_aws_spot_prices_and_missing_zones(catalog: Catalog) -> None:
    info = {
        "InstanceType": "m5.large",
        "SupportedUsageClasses": ["on-demand", "spot"],
        "Hypervisor": "nitro",
        "ProcessorInfo": {
            "SupportedArchitectures": ["x86_64"],
            "Manufacturer": "Intel",
            "SustainedClockSpeedInGhz": 3.1,
        },
        "VCpuInfo": {"DefaultVCpus": 2},
        "MemoryInfo": {"SizeInMiB": 8192},
        "NetworkInfo": {
            "DefaultNetworkCardIndex": 0,
            "NetworkCards": [
                {"NetworkCardIndex": 0, "MaximumNetworkInterfaces": 3, "BaselineBandwidthInGbps": 0.75}
            ],
            "Ipv4AddressesPerInterface": 10,
            "EncryptionInTransitSupported": False,
        },
    }
    answers = ec2calls._call_ec2(_RecordedEC2(info), "us-east-1", trust_spot=True)
    (base,) = aws_mod.base_types(answers)
    by = {(o.zone, o.capacity_type): o for o in base.offerings}
    assert by[("eu-x-1a", "spot")].price == pytest.approx(0.04)  # latest record wins
    assert by[("eu-x-1a", "spot")].zone_id == "eux1-az1"
    assert not by[("eu-x-1b", "spot")].available  # spot data known, but not for this zone
    assert by[("eu-x-1b", "on-demand")].price == pytest.approx(0.096)


def test_credentials_detection(tmp_path: Path) -> None:
    missing = str(tmp_path / "none")
    assert not ec2calls.has_aws_credentials({"AWS_SHARED_CREDENTIALS_FILE": missing})
    assert ec2calls.has_aws_credentials({"AWS_ACCESS_KEY_ID": "x", "AWS_SHARED_CREDENTIALS_FILE": missing})
    assert ec2calls.has_aws_credentials({"AWS_PROFILE": "dev", "AWS_SHARED_CREDENTIALS_FILE": missing})
    assert not ec2calls.has_aws_credentials({"AWS_PROFILE": "dev", ec2calls.SOURCE_ENV: "embedded"})
    assert ec2calls.has_aws_credentials({ec2calls.SOURCE_ENV: "aws", "AWS_SHARED_CREDENTIALS_FILE": missing})


def test_invalid_region_spec() -> None:
    from nodewright.errors import InputError

    with pytest.raises(InputError):
        load_catalog("aws:")


def test_unknown_region_names_the_closest() -> None:
    from nodewright.errors import InputError

    with pytest.raises(InputError) as info:
        load_catalog("aws:us-east1")
    assert 'did you mean "aws:us-east-1"' in str(info.value)


def test_nodeclass_options_from_api_model() -> None:
    from nodewright.api.ec2nodeclass import EC2NodeClass
    from nodewright.userdata import nodeclass_options

    nc = EC2NodeClass.model_validate(
        {
            "apiVersion": "karpenter.k8s.aws/v1",
            "kind": "EC2NodeClass",
            "metadata": {"name": "x"},
            "spec": {
                "role": "r",
                "amiSelectorTerms": [{"alias": "bottlerocket@latest"}],
                "subnetSelectorTerms": [{"id": "s"}],
                "securityGroupSelectorTerms": [{"id": "g"}],
                "kubelet": {"maxPods": 58, "podsPerCore": 2, "evictionHard": {"memory.available": "5%"}},
                "blockDeviceMappings": [{"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "100Gi"}}],
                "instanceStorePolicy": "RAID0",
            },
        }
    )
    opts = nodeclass_options(nc)
    assert opts.family == "Bottlerocket"
    assert opts.kubelet.max_pods == 58 and opts.kubelet.pods_per_core == 2
    assert opts.kubelet.eviction_hard == {"memory.available": "5%"}
    assert opts.block_devices[0].volume_size == 100 * 2**30
    assert opts.instance_store_raid0
