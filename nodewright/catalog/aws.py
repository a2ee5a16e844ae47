"""``aws:<region>``: the EC2 instance-type catalog through boto3, with Karpenter's AWS math.

Calls ``DescribeInstanceTypes`` (hvm, x86_64/arm64, paginated), ``DescribeAvailabilityZones``,
``DescribeInstanceTypeOfferings`` (LocationType availability-zone) and
``DescribeSpotPriceHistory``; on-demand prices come from the shipped table
(:mod:`.prices`). Requirements follow the AWS provider's ``computeRequirements``; capacity and
overhead follow ``computeCapacity``/``kubeReservedResources``/``evictionThreshold`` via
:mod:`.overhead`.

Without AWS credentials in the environment the *same* boto3 calls are answered in-process by
moto (``moto.mock_aws``) with fake credentials set only on that session: the embedded default.
moto's spot price history is a placeholder (``0.00001`` at 2006-01-02), so in embedded mode it is
not asked for and spot offerings are priced like Karpenter before its first spot refresh: at the
on-demand price.

Boundary: EC2 facts -> :class:`~nodewright.catalog.model.InstanceType`. The calls themselves are
:mod:`.ec2calls`; caching is :mod:`.cache`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from nodewright import labels
from nodewright.algebra import resources as res
from nodewright.api.amifamily import AL2023
from nodewright.catalog import overhead as oh
from nodewright.catalog.ec2calls import ARCHITECTURES, Ec2Answers
from nodewright.catalog.model import Ec2Facts, InstanceType, Offering, Overhead, RequirementSpec
from nodewright.catalog.prices import on_demand_prices
from nodewright.catalog.vpclimits import POD_ENI, branch_interfaces

_FAMILY_SCHEME: Final = re.compile(r"(^[a-z]+)(\-[0-9]+tb)?([0-9]+).*\.")
_WINDOWS_BUILD: Final = {
    "Windows2019": "10.0.17763",
    "Windows2022": "10.0.20348",
    "Windows2025": "10.0.26100",
}
_CAPACITY_TYPES: Final = (labels.CAPACITY_TYPE_ON_DEMAND, labels.CAPACITY_TYPE_SPOT)
PRIVATE_IPV4: Final = "vpc.amazonaws.com/PrivateIPv4Address"
EFA_ONLY: Final = "efa-only"


@dataclass(frozen=True, kw_only=True)
class BaseType:
    """The family-independent part of one instance type (what the disk cache stores)."""

    name: str
    facts: Ec2Facts
    specs: tuple[RequirementSpec, ...]  # every requirement except OS and windows-build
    offerings: tuple[Offering, ...]


# -- requirements and facts ------------------------------------------------------------------


def _kebab(s: str) -> str:
    return s.replace(" ", "-").lower()


def _arch(info: Mapping[str, Any]) -> str:
    archs = info.get("ProcessorInfo", {}).get("SupportedArchitectures", [])
    for a in archs:
        if a in ARCHITECTURES:
            return ARCHITECTURES[a]
    return str(archs)


def _count(items: Iterable[Mapping[str, Any]], manufacturer: str) -> int:
    return sum(int(g.get("Count", 0)) for g in items if g.get("Manufacturer") == manufacturer)


def facts_of(info: Mapping[str, Any]) -> Ec2Facts:
    net = info.get("NetworkInfo", {})
    cards = net.get("NetworkCards") or []
    default_idx = int(net.get("DefaultNetworkCardIndex", 0))
    card = next((c for c in cards if int(c.get("NetworkCardIndex", -1)) == default_idx), None)
    max_if = int(card["MaximumNetworkInterfaces"]) if card else int(net.get("MaximumNetworkInterfaces", 0))
    archs = info.get("ProcessorInfo", {}).get("SupportedArchitectures", [])
    gpus = (info.get("GpuInfo") or {}).get("Gpus") or []
    neuron = (info.get("NeuronInfo") or {}).get("NeuronDevices") or []
    extended = {
        oh.NVIDIA_GPU: _count(gpus, "NVIDIA"),
        oh.AMD_GPU: _count(gpus, "AMD"),
        oh.HABANA_GAUDI: _count(gpus, "Habana"),
        oh.AWS_NEURON: sum(int(d.get("Count", 0)) for d in neuron),
        oh.AWS_NEURON_CORE: (
            int(neuron[0].get("Count", 0)) * int(neuron[0].get("CoreInfo", {}).get("Count", 0))
        )
        if neuron
        else 0,
        oh.EFA: int((net.get("EfaInfo") or {}).get("MaximumEfaInterfaces", 0)),
    }
    storage = info.get("InstanceStorageInfo") or {}
    network_cards = tuple(
        sorted((int(c.get("NetworkCardIndex", 0)), int(c.get("MaximumNetworkInterfaces", 0))) for c in cards)
    )
    return Ec2Facts(
        vcpus=int(info["VCpuInfo"]["DefaultVCpus"]),
        memory_mib=int(info["MemoryInfo"]["SizeInMiB"]),
        arm64=bool(archs) and archs[0] == "arm64",
        max_interfaces=max_if,
        ipv4_per_interface=int(net.get("Ipv4AddressesPerInterface", 0)),
        instance_storage_gb=int(storage["TotalSizeInGB"]) if "TotalSizeInGB" in storage else None,
        extended={k: v for k, v in extended.items() if v},
        network_cards=network_cards,
        ena_supported=net.get("EnaSupport") != "unsupported",
    )


def _req(key: str, *values: str) -> RequirementSpec:
    return RequirementSpec(key, "In", tuple(values))


def _absent(key: str) -> RequirementSpec:
    return RequirementSpec(key, "DoesNotExist")


def _offering_values(offerings: Iterable[Offering]) -> tuple[list[str], list[str], list[str]]:
    """Zones, zone ids and capacity types of the available offerings (requirements list only those)."""
    avail = [o for o in offerings if o.available]
    zones = sorted({o.zone for o in avail})
    zone_ids = sorted({o.zone_id for o in avail if o.zone_id})
    cts = [ct for ct in _CAPACITY_TYPES if any(o.capacity_type == ct for o in avail)]
    return zones, zone_ids, cts


def with_offerings(it: InstanceType, offerings: tuple[Offering, ...]) -> InstanceType:
    """``it`` with other offerings, its zone, zone-id and capacity-type requirements recomputed
    from the available ones (as ``computeRequirements`` does from the offerings it is given)."""
    zones, zone_ids, cts = _offering_values(offerings)
    values = {labels.ZONE: zones, labels.ZONE_ID: zone_ids, labels.CAPACITY_TYPE: cts}
    specs = []
    for s in it.requirement_specs:
        if s.key in values and s.operator == "In":
            if not values[s.key] and s.key == labels.ZONE_ID:
                continue
            s = _req(s.key, *values[s.key])
        specs.append(s)
    if zone_ids and not any(s.key == labels.ZONE_ID for s in specs):
        specs.append(_req(labels.ZONE_ID, *zone_ids))
    return replace(it, offerings=offerings, requirement_specs=tuple(specs))


def base_requirements(
    info: Mapping[str, Any], *, region: str, offerings: Iterable[Offering]
) -> list[RequirementSpec]:
    """``computeRequirements`` minus the family-dependent OS and windows-build requirements."""
    name = str(info["InstanceType"])
    zones, zone_ids, cts = _offering_values(offerings)
    proc = info.get("ProcessorInfo") or {}
    net = info.get("NetworkInfo") or {}
    vals: dict[str, str] = {}
    m = _FAMILY_SCHEME.match(name)
    if m:
        vals[labels.INSTANCE_CATEGORY] = m.group(1)
        vals[labels.INSTANCE_GENERATION] = m.group(3)
    parts = name.split(".")
    if len(parts) == 2:
        vals[labels.INSTANCE_FAMILY] = parts[0]
        vals[labels.INSTANCE_SIZE] = parts[1]
    storage = info.get("InstanceStorageInfo")
    if storage and storage.get("NvmeSupport") != "unsupported" and "TotalSizeInGB" in storage:
        vals[labels.INSTANCE_LOCAL_NVME] = str(storage["TotalSizeInGB"])
    vals[labels.INSTANCE_CAPABILITY_FLEX] = "true" if "-flex" in parts[0] else "false"
    bandwidth = sum(float(c.get("BaselineBandwidthInGbps", 0.0)) for c in net.get("NetworkCards") or [])
    if bandwidth > 0:
        vals[labels.INSTANCE_NETWORK_BANDWIDTH] = str(round(bandwidth * 1000))
    gpus = (info.get("GpuInfo") or {}).get("Gpus") or []
    if len(gpus) == 1:
        g = gpus[0]
        vals[labels.INSTANCE_GPU_NAME] = _kebab(str(g.get("Name", "")))
        vals[labels.INSTANCE_GPU_MANUFACTURER] = _kebab(str(g.get("Manufacturer", "")))
        vals[labels.INSTANCE_GPU_COUNT] = str(g.get("Count", 0))
        vals[labels.INSTANCE_GPU_MEMORY] = str((g.get("MemoryInfo") or {}).get("SizeInMiB", 0))
    accels = (info.get("InferenceAcceleratorInfo") or {}).get("Accelerators") or []
    neuron = (info.get("NeuronInfo") or {}).get("NeuronDevices") or []
    if len(accels) == 1 and not info.get("NeuronInfo"):
        a = accels[0]
        vals[labels.INSTANCE_ACCELERATOR_NAME] = _kebab(str(a.get("Name", "")))
        vals[labels.INSTANCE_ACCELERATOR_MANUFACTURER] = _kebab(str(a.get("Manufacturer", "")))
        vals[labels.INSTANCE_ACCELERATOR_COUNT] = str(a.get("Count", 0))
    if len(neuron) == 1:
        d = neuron[0]
        vals[labels.INSTANCE_ACCELERATOR_NAME] = _kebab(str(d.get("Name", "")))
        vals[labels.INSTANCE_ACCELERATOR_MANUFACTURER] = "aws"
        vals[labels.INSTANCE_ACCELERATOR_COUNT] = str(d.get("Count", 0))
    if proc:
        vals[labels.INSTANCE_CPU_MANUFACTURER] = _kebab(str(proc.get("Manufacturer", "")))
        ghz = float(proc.get("SustainedClockSpeedInGhz") or 0.0)
        vals[labels.INSTANCE_CPU_SUSTAINED_CLOCK_SPEED_MHZ] = str(math.floor(ghz * 1000 + 0.5))
    ebs = info.get("EbsInfo") or {}
    if ebs.get("EbsOptimizedInfo") and ebs.get("EbsOptimizedSupport") == "default":
        vals[labels.INSTANCE_EBS_BANDWIDTH] = str(ebs["EbsOptimizedInfo"].get("MaximumBandwidthInMbps", 0))
    optional = (
        labels.INSTANCE_CPU_MANUFACTURER,
        labels.INSTANCE_CPU_SUSTAINED_CLOCK_SPEED_MHZ,
        labels.INSTANCE_EBS_BANDWIDTH,
        labels.INSTANCE_NETWORK_BANDWIDTH,
        labels.INSTANCE_CATEGORY,
        labels.INSTANCE_CAPABILITY_FLEX,
        labels.INSTANCE_FAMILY,
        labels.INSTANCE_GENERATION,
        labels.INSTANCE_LOCAL_NVME,
        labels.INSTANCE_SIZE,
        labels.INSTANCE_GPU_NAME,
        labels.INSTANCE_GPU_MANUFACTURER,
        labels.INSTANCE_GPU_COUNT,
        labels.INSTANCE_GPU_MEMORY,
        labels.INSTANCE_ACCELERATOR_NAME,
        labels.INSTANCE_ACCELERATOR_MANUFACTURER,
        labels.INSTANCE_ACCELERATOR_COUNT,
    )
    specs = [
        _req(labels.INSTANCE_TYPE, name),
        _req(labels.ARCH, _arch(info)),
        _req(labels.ZONE, *zones),
        _req(labels.REGION, region),
        _req(labels.CAPACITY_TYPE, *cts),
        _req(labels.INSTANCE_CPU, str(info["VCpuInfo"]["DefaultVCpus"])),
        _req(labels.INSTANCE_MEMORY, str(info["MemoryInfo"]["SizeInMiB"])),
        _req(labels.INSTANCE_HYPERVISOR, str(info.get("Hypervisor", ""))),
        _req(
            labels.INSTANCE_ENCRYPTION_IN_TRANSIT_SUPPORTED,
            "true" if net.get("EncryptionInTransitSupported") else "false",
        ),
    ]
    specs += [_req(k, vals[k]) if k in vals else _absent(k) for k in optional]
    if zone_ids:
        specs.append(_req(labels.ZONE_ID, *zone_ids))
    specs.append(_absent(labels.CAPACITY_RESERVATION_ID))
    return specs


def family_requirements(arch: str, family: str) -> list[RequirementSpec]:
    """OS and windows-build requirements, which depend on the AMI family."""
    if family.startswith("Windows"):
        os_values: tuple[str, ...] = ("windows",) if arch == "amd64" else ()
        return [
            RequirementSpec(labels.OS, "In", os_values),
            _req(labels.WINDOWS_BUILD, _WINDOWS_BUILD[family]),
        ]
    return [_req(labels.OS, "linux"), _absent(labels.WINDOWS_BUILD)]


def make_offerings(
    name: str, info: Mapping[str, Any], *, answers: Ec2Answers, od_prices: Mapping[str, float]
) -> tuple[Offering, ...]:
    """One offering per (offered zone, supported usage class), sorted by zone then capacity type."""
    classes = set(info.get("SupportedUsageClasses") or [])
    od = od_prices.get(name)
    spot_known = bool(answers.spot)
    out: list[Offering] = []
    for zone in sorted(answers.offered.get(name, set()) & set(answers.zones)):
        for ct in _CAPACITY_TYPES:
            if ct not in classes:
                continue
            if ct == labels.CAPACITY_TYPE_ON_DEMAND:
                price = od
            else:
                price = answers.spot.get(name, {}).get(zone) if spot_known else od
            out.append(
                Offering(
                    zone=zone,
                    capacity_type=ct,
                    price=price if price is not None else 0.0,
                    available=price is not None,
                    zone_id=answers.zones.get(zone) or None,
                    unpriced=price is None,
                )
            )
    return tuple(out)


def base_types(answers: Ec2Answers) -> list[BaseType]:
    """Every instance type EC2 offers in a zone of the region, sorted by name."""
    od_prices = on_demand_prices(answers.region)
    out: list[BaseType] = []
    for info in sorted(answers.instance_types, key=lambda i: str(i["InstanceType"])):
        name = str(info["InstanceType"])
        offerings = make_offerings(name, info, answers=answers, od_prices=od_prices)
        if not offerings:
            continue
        specs = base_requirements(info, region=answers.region, offerings=offerings)
        out.append(BaseType(name=name, facts=facts_of(info), specs=tuple(specs), offerings=offerings))
    return out


# -- capacity and overhead ---------------------------------------------------------------------


def compatible(name: str, f: Ec2Facts, options: oh.NodeClassOptions) -> bool:
    """``IsCompatibleWithNodeClass`` (pkg/providers/instancetype/compatibility): a1 types never
    run AL2023, and a type must offer the NodeClass's ``networkInterfaces`` (ENA, the network
    cards and device indices named, as many EFA interfaces as the efa-only entries). An
    incompatible type keeps its offerings, all unavailable. Upstream's secondary-IP check reads
    fields its resolver never copies (v1.14.1), so it never rules a type out and is not here."""
    if options.family == AL2023 and name.startswith("a1."):
        return False
    nics = options.network_interfaces
    if nics is None:
        return True
    if not f.network_cards or not f.ena_supported:
        return False
    cards = dict(f.network_cards)
    for nic in nics:
        if len(f.network_cards) <= nic.network_card_index:
            return False
        if nic.network_card_index not in cards or cards[nic.network_card_index] <= nic.device_index:
            return False
    efa_only = sum(1 for nic in nics if nic.interface_type == EFA_ONLY)
    return not (efa_only and efa_only > f.extended.get(oh.EFA, 0))


def compute(base: BaseType, options: oh.NodeClassOptions) -> InstanceType:
    """The instance type as Karpenter's ``NewInstanceType`` builds it for this NodeClass."""
    f = base.facts
    family = options.family
    kubelet = options.kubelet
    nics = options.network_interfaces
    card0_efa_only = (
        sum(1 for n in nics if n.network_card_index == 0 and n.interface_type == EFA_ONLY)
        if nics is not None
        else options.efa_only_interfaces
    )
    eni_pods = oh.eni_limited_pods(
        f.max_interfaces,
        f.ipv4_per_interface,
        reserved_enis=options.reserved_enis + card0_efa_only,
    )
    pods = oh.max_pods(vcpus=f.vcpus, eni_pods=eni_pods, family=family, kubelet=kubelet)
    memory = oh.memory_capacity(
        f.memory_mib, arm64=f.arm64, overhead_percent=options.vm_memory_overhead_percent
    )
    storage = oh.ephemeral_storage(instance_storage_gb=f.instance_storage_gb, options=options)
    capacity = {
        res.CPU: f.vcpus * oh.MILLI,
        res.MEMORY: memory,
        res.EPHEMERAL_STORAGE: storage,
        res.PODS: pods * oh.MILLI,
        **{k: v * oh.MILLI for k, v in f.extended.items() if k != oh.EFA},
    }
    efa = f.extended.get(oh.EFA, 0)
    if options.network_interfaces is not None:  # the NodeClass's efa-only interfaces override it
        efa = sum(1 for nic in options.network_interfaces if nic.interface_type == EFA_ONLY)
    if efa:
        capacity[oh.EFA] = efa * oh.MILLI
    branch = branch_interfaces(base.name)
    if branch:
        capacity[POD_ENI] = branch * oh.MILLI
    _, _, eni_memory = oh.family_traits(family)
    reserved_pods = (
        oh.eni_limited_pods(f.max_interfaces, f.ipv4_per_interface, reserved_enis=card0_efa_only)
        if eni_memory
        else pods
    )
    arch = next((s.values[0] for s in base.specs if s.key == labels.ARCH and s.values), "amd64")
    specs = list(base.specs)
    specs[2:2] = family_requirements(arch, family)  # after instance-type and arch, like upstream
    if family.startswith("Windows") and arch == "amd64" and f.ipv4_per_interface > 0:
        capacity[PRIVATE_IPV4] = (f.ipv4_per_interface - 1) * oh.MILLI
    return InstanceType(
        name=base.name,
        capacity=capacity,
        overhead=Overhead(
            kube_reserved=oh.kube_reserved(
                cpu_milli=f.vcpus * oh.MILLI, pods=reserved_pods, overrides=kubelet.kube_reserved
            ),
            system_reserved=oh.system_reserved(kubelet.system_reserved),
            eviction_threshold=oh.eviction_threshold(
                memory_milli=memory, storage_milli=storage, eviction_hard=kubelet.eviction_hard
            ),
        ),
        requirement_specs=tuple(specs),
        offerings=base.offerings
        if compatible(base.name, f, options)
        else tuple(replace(o, available=False, unpriced=False) for o in base.offerings),
        facts=f,
        nodeclass=options,
    )


def base_of(it: InstanceType) -> BaseType | None:
    """The family-independent part of an AWS-computed type (None for types from a file)."""
    if it.facts is None:
        return None
    specs = tuple(s for s in it.requirement_specs if s.key not in (labels.OS, labels.WINDOWS_BUILD))
    return BaseType(name=it.name, facts=it.facts, specs=specs, offerings=it.offerings)
