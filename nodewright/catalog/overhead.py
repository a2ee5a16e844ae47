"""Karpenter's AWS capacity and overhead math, as pure integer functions.

Mirrors ``pkg/providers/instancetype/types.go`` of aws/karpenter-provider-aws (v1.14.x): memory
capacity with the VM overhead estimate, ENI-limited max pods, kube-reserved CPU tiers and memory,
eviction thresholds and ephemeral-storage capacity. Every quantity here is an ``int`` in
*milli-units* (the :mod:`nodewright.algebra.resources` convention: ``1 cpu == 1000``, ``1 byte == 1000``)
unless the name says otherwise. No boto3, no I/O: :mod:`nodewright.catalog.aws` feeds it facts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from nodewright.algebra.quantity import parse_quantity
from nodewright.algebra.resources import CPU, EPHEMERAL_STORAGE, MEMORY
from nodewright.api.amifamily import AL2023, CUSTOM, default_block_device_mappings

MI: Final = 1024 * 1024
GI: Final = 1024 * MI
MILLI: Final = 1000

# Karpenter's --vm-memory-overhead-percent default.
VM_MEMORY_OVERHEAD_PERCENT: Final = 0.075
# Max pods when the family does not derive it from ENIs (Windows) and kubelet.maxPods is unset.
DEFAULT_MAX_PODS: Final = 110
MEMORY_AVAILABLE: Final = "memory.available"
NODEFS_AVAILABLE: Final = "nodefs.available"

# Resource names (Kubernetes core and AWS extended resources).
NVIDIA_GPU: Final = "nvidia.com/gpu"
AMD_GPU: Final = "amd.com/gpu"
AWS_NEURON: Final = "aws.amazon.com/neuron"
AWS_NEURON_CORE: Final = "aws.amazon.com/neuroncore"
HABANA_GAUDI: Final = "habana.ai/gaudi"
EFA: Final = "vpc.amazonaws.com/efa"

# The family a catalog is computed for when no EC2NodeClass says otherwise.
DEFAULT_AMI_FAMILY: Final = AL2023


def family_traits(family: str) -> tuple[bool, bool, bool]:
    """(supports ENI-limited pod density, pods-per-core enabled, uses ENI-limited memory overhead)."""
    if family.startswith("Windows"):
        return False, True, False
    if family == "Bottlerocket":
        return True, False, False
    return True, True, True  # AL2, AL2023, Custom


def default_volume_size(family: str) -> int:
    """Size in bytes of the family's default ephemeral block device (the last of
    ``DefaultBlockDeviceMappings``); Custom has none and falls back to Karpenter's DefaultEBS 20Gi."""
    devices = default_block_device_mappings(family)
    if not devices:
        return 20 * GI
    return parse_quantity(str(devices[-1]["ebs"]["volumeSize"])).milli // MILLI


def ephemeral_device(family: str) -> str | None:
    """The device Karpenter counts as ephemeral storage: the last default block device (Custom: none)."""
    devices = default_block_device_mappings(family)
    return str(devices[-1]["deviceName"]) if devices else None


@dataclass(frozen=True, kw_only=True)
class DeviceSize:
    """One EC2NodeClass blockDeviceMapping, reduced to what capacity depends on."""

    device_name: str
    volume_size: int | None = None  # bytes
    root_volume: bool = False


@dataclass(frozen=True, kw_only=True)
class KubeletOptions:
    """The EC2NodeClass ``spec.kubelet`` fields that change capacity or overhead."""

    max_pods: int | None = None
    pods_per_core: int | None = None
    kube_reserved: Mapping[str, str] = field(default_factory=dict)
    system_reserved: Mapping[str, str] = field(default_factory=dict)
    eviction_hard: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class NetworkInterface:
    """One EC2NodeClass ``networkInterfaces`` entry, reduced to what instance types depend on."""

    network_card_index: int = 0
    device_index: int = 0
    interface_type: str = "interface"  # or "efa-only"


@dataclass(frozen=True, kw_only=True)
class NodeClassOptions:
    """Everything of an EC2NodeClass the instance-type math reads."""

    family: str = DEFAULT_AMI_FAMILY
    kubelet: KubeletOptions = field(default_factory=KubeletOptions)
    block_devices: tuple[DeviceSize, ...] = ()
    instance_store_raid0: bool = False
    efa_only_interfaces: int = 0  # EFA-only interfaces the NodeClass puts on network card 0
    reserved_enis: int = 0  # --reserved-enis
    vm_memory_overhead_percent: float = VM_MEMORY_OVERHEAD_PERCENT
    # spec.networkInterfaces; None when the field is absent (the instance type's own EFA count)
    network_interfaces: tuple[NetworkInterface, ...] | None = None

    def cache_key(self) -> str:
        k = self.kubelet
        return repr(
            (
                self.family,
                k.max_pods,
                k.pods_per_core,
                sorted(k.kube_reserved.items()),
                sorted(k.system_reserved.items()),
                sorted(k.eviction_hard.items()),
                self.block_devices,
                self.instance_store_raid0,
                self.efa_only_interfaces,
                self.reserved_enis,
                self.vm_memory_overhead_percent,
                self.network_interfaces,
            )
        )


def parse_milli(value: str | int | float) -> int:
    """A Kubernetes quantity as exact milli-units, rounded up (k8s MilliValue)."""
    return parse_quantity(value).milli


def memory_capacity(
    size_in_mib: int, *, arm64: bool, overhead_percent: float = VM_MEMORY_OVERHEAD_PERCENT
) -> int:
    """Memory capacity in milli-bytes: SizeInMiB (−64MiB on Graviton) minus the VM overhead estimate."""
    mib = size_in_mib - 64 if arm64 else size_in_mib
    value = mib * MI
    # Same float64 arithmetic as Go: ceil(float64(bytes) * pct / 1024 / 1024) MiB.
    overhead_mib = math.ceil(float(value) * overhead_percent / 1024 / 1024)
    return (value - overhead_mib * MI) * MILLI


def eni_limited_pods(max_interfaces: int, ipv4_per_interface: int, *, reserved_enis: int = 0) -> int:
    """``usableENIs * (IPv4AddressesPerInterface - 1) + 2``; 0 when no ENI is usable."""
    usable = max(max_interfaces - reserved_enis, 0)
    if usable == 0:
        return 0
    return usable * (ipv4_per_interface - 1) + 2


def max_pods(*, vcpus: int, eni_pods: int, family: str, kubelet: KubeletOptions) -> int:
    """Karpenter's ``pods()``: kubelet.maxPods, else ENI-limited (or 110), then podsPerCore."""
    eni_density, per_core_enabled, _ = family_traits(family)
    if kubelet.max_pods is not None:
        count = kubelet.max_pods
    elif eni_density:
        count = eni_pods
    else:
        count = DEFAULT_MAX_PODS
    if kubelet.pods_per_core and kubelet.pods_per_core > 0 and per_core_enabled:
        count = min(kubelet.pods_per_core * vcpus, count)
    return count


_CPU_TIERS: Final = ((0, 1000, 0.06), (1000, 2000, 0.01), (2000, 4000, 0.005), (4000, 1 << 31, 0.0025))


def kube_reserved_cpu(cpu_milli: int) -> int:
    """Kube-reserved CPU in millicores from the tiers 6% / 1% / 0.5% / 0.25% (each truncated)."""
    total = 0
    for start, end, pct in _CPU_TIERS:
        if cpu_milli >= start:
            r = float(end - start) if cpu_milli >= end else float(cpu_milli - start)
            total += int(r * pct)
    return total


def kube_reserved(*, cpu_milli: int, pods: int, overrides: Mapping[str, str]) -> dict[str, int]:
    """Kube-reserved: CPU tiers, memory ``11*pods+255`` Mi, ephemeral-storage 1Gi; user keys win."""
    out = {
        CPU: kube_reserved_cpu(cpu_milli),
        MEMORY: (11 * pods + 255) * MI * MILLI,
        EPHEMERAL_STORAGE: GI * MILLI,
    }
    for key, value in overrides.items():
        out[key] = parse_milli(value)
    return out


def system_reserved(overrides: Mapping[str, str]) -> dict[str, int]:
    return {key: parse_milli(value) for key, value in overrides.items()}


def _percentage(signal: str) -> float:
    p = float(signal.strip().rstrip("%"))
    return 0.0 if p == 100 else p


def eviction_signal(capacity_milli: int, signal: str) -> int:
    """An evictionHard value against a capacity: ``ceil(capacity/100*p)`` for percentages."""
    if signal.strip().endswith("%"):
        capacity = float(capacity_milli // MILLI)
        return math.ceil(capacity / 100 * _percentage(signal)) * MILLI
    return parse_milli(signal)


def eviction_threshold(
    *, memory_milli: int, storage_milli: int, eviction_hard: Mapping[str, str]
) -> dict[str, int]:
    """Defaults memory 100Mi and nodefs 10%; only evictionHard memory/nodefs override them."""
    out = {
        MEMORY: 100 * MI * MILLI,
        EPHEMERAL_STORAGE: math.ceil(float(storage_milli // MILLI) / 100 * 10) * MILLI,
    }
    if MEMORY_AVAILABLE in eviction_hard:
        out[MEMORY] = eviction_signal(memory_milli, eviction_hard[MEMORY_AVAILABLE])
    if NODEFS_AVAILABLE in eviction_hard:
        out[EPHEMERAL_STORAGE] = eviction_signal(storage_milli, eviction_hard[NODEFS_AVAILABLE])
    return out


def ephemeral_storage(*, instance_storage_gb: int | None, options: NodeClassOptions) -> int:
    """Ephemeral-storage capacity in milli-bytes, in Karpenter's order of priority."""
    if options.instance_store_raid0 and instance_storage_gb is not None:
        return instance_storage_gb * 10**9 * MILLI
    bdms = options.block_devices
    if bdms:
        root = next((b for b in bdms if b.root_volume), None)
        if root is not None and root.volume_size is not None:
            return root.volume_size * MILLI
        if options.family == CUSTOM:
            last = bdms[-1].volume_size
            return (last if last is not None else 20 * GI) * MILLI
        device = ephemeral_device(options.family)
        match = next((b for b in bdms if b.device_name == device), None)
        if match is not None and match.volume_size is not None:
            return match.volume_size * MILLI
    return default_volume_size(options.family) * MILLI
