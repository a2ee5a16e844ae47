"""Karpenter's AWS overhead math (aws/karpenter-provider-aws v1.14.1 ``pkg/providers/instancetype/types.go``), number by number."""

from __future__ import annotations

import pytest

from nodewright.catalog import overhead as oh
from nodewright.catalog.aws import BaseType, compute
from nodewright.catalog.model import Ec2Facts
from nodewright.catalog.overhead import DeviceSize, KubeletOptions, NodeClassOptions

MI = 2**20 * 1000  # one MiB in milli-bytes
GI = 2**30 * 1000


@pytest.mark.parametrize(("vcpus", "milli"), [(1, 60), (2, 70), (4, 80), (8, 90), (5, 82), (96, 310)])
def test_kube_reserved_cpu_tiers(vcpus: int, milli: int) -> None:
    assert oh.kube_reserved_cpu(vcpus * 1000) == milli


def _m5_large(**facts: object) -> BaseType:
    f = {
        "vcpus": 2,
        "memory_mib": 8192,
        "arm64": False,
        "max_interfaces": 3,
        "ipv4_per_interface": 10,
    } | facts
    return BaseType(name="m5.large", facts=Ec2Facts(**f), specs=(), offerings=())  # type: ignore[arg-type]


def test_m5_large_al2023_worked_example() -> None:
    it = compute(_m5_large(), NodeClassOptions())
    assert it.capacity["cpu"] == 2000
    assert it.capacity["memory"] == 7577 * MI
    assert it.capacity["pods"] == 29000
    assert it.capacity["ephemeral-storage"] == 20 * GI
    assert it.overhead.kube_reserved == {"cpu": 70, "memory": 574 * MI, "ephemeral-storage": GI}
    assert it.overhead.eviction_threshold["memory"] == 100 * MI
    assert it.overhead.eviction_threshold["ephemeral-storage"] == 2 * GI
    assert it.allocatable()["memory"] == 6903 * MI
    assert it.allocatable()["cpu"] == 1930


def test_arm64_subtracts_64mib_before_vm_overhead() -> None:
    it = compute(_m5_large(arm64=True), NodeClassOptions())
    # (8192-64) = 8128 MiB; overhead ceil(8128*0.075) = ceil(609.6) = 610 -> 7518 MiB
    assert it.capacity["memory"] == 7518 * MI
    assert it.allocatable()["memory"] == (7518 - 574 - 100) * MI


def test_vm_memory_overhead_uses_float_ceil() -> None:
    assert oh.memory_capacity(8192, arm64=False) == 7577 * MI  # ceil(614.4) = 615
    assert oh.memory_capacity(1024, arm64=False) == (1024 - 77) * MI  # ceil(76.8) = 77


def test_eni_limited_pods() -> None:
    assert oh.eni_limited_pods(3, 10) == 29
    assert oh.eni_limited_pods(15, 50) == 737  # no 110 cap
    assert oh.eni_limited_pods(2, 10, reserved_enis=2) == 0


def test_max_pods_override_and_pods_per_core() -> None:
    it = compute(_m5_large(), NodeClassOptions(kubelet=KubeletOptions(max_pods=110)))
    assert it.capacity["pods"] == 110_000
    # kube-reserved memory still uses ENI-limited pods on AL2023 (UsesENILimitedMemoryOverhead)
    assert it.overhead.kube_reserved["memory"] == 574 * MI
    it = compute(_m5_large(), NodeClassOptions(kubelet=KubeletOptions(pods_per_core=4)))
    assert it.capacity["pods"] == 8000


def test_bottlerocket_uses_pods_for_memory_and_ignores_pods_per_core() -> None:
    opts = NodeClassOptions(family="Bottlerocket", kubelet=KubeletOptions(max_pods=110, pods_per_core=4))
    it = compute(_m5_large(), opts)
    assert it.capacity["pods"] == 110_000
    assert it.overhead.kube_reserved["memory"] == (11 * 110 + 255) * MI


def test_windows_defaults_to_110_pods_and_windows_os() -> None:
    it = compute(_m5_large(), NodeClassOptions(family="Windows2022"))
    assert it.capacity["pods"] == 110_000
    assert it.capacity["ephemeral-storage"] == 50 * GI
    assert it.overhead.kube_reserved["memory"] == (11 * 110 + 255) * MI
    os_req = next(s for s in it.requirement_specs if s.key == "kubernetes.io/os")
    assert os_req.values == ("windows",)


def test_user_kube_reserved_system_reserved_and_eviction_hard() -> None:
    kubelet = KubeletOptions(
        kube_reserved={"cpu": "200m"},
        system_reserved={"memory": "100Mi"},
        eviction_hard={"memory.available": "5%", "nodefs.available": "100%"},
    )
    it = compute(_m5_large(), NodeClassOptions(kubelet=kubelet))
    assert it.overhead.kube_reserved["cpu"] == 200
    assert it.overhead.kube_reserved["memory"] == 574 * MI  # defaults kept for other keys
    assert it.overhead.system_reserved == {"memory": 100 * MI}
    mem_bytes = 7577 * 2**20
    assert it.overhead.eviction_threshold["memory"] == -(-mem_bytes * 5 // 100) * 1000
    assert it.overhead.eviction_threshold["ephemeral-storage"] == 0  # 100% disables


def test_ephemeral_storage_priorities() -> None:
    base = _m5_large(instance_storage_gb=75)
    raid = compute(base, NodeClassOptions(instance_store_raid0=True))
    assert raid.capacity["ephemeral-storage"] == 75 * 10**9 * 1000
    root = NodeClassOptions(
        block_devices=(
            DeviceSize(device_name="/dev/xvda", volume_size=100 * 2**30),
            DeviceSize(device_name="/dev/xvdz", volume_size=50 * 2**30, root_volume=True),
        )
    )
    assert compute(base, root).capacity["ephemeral-storage"] == 50 * GI
    dev = NodeClassOptions(block_devices=(DeviceSize(device_name="/dev/xvda", volume_size=80 * 2**30),))
    assert compute(base, dev).capacity["ephemeral-storage"] == 80 * GI
    br = NodeClassOptions(family="Bottlerocket")
    assert compute(base, br).capacity["ephemeral-storage"] == 20 * GI
    custom = NodeClassOptions(
        family="Custom", block_devices=(DeviceSize(device_name="/dev/sdb", volume_size=None),)
    )
    assert compute(base, custom).capacity["ephemeral-storage"] == 20 * GI
