"""The instance-type catalog model: offerings, instance types with overhead, and the catalog.

Mirrors Karpenter's ``cloudprovider.InstanceType`` / ``Offering``: an instance type has a capacity
(a :data:`nodewright.algebra.resources.ResourceList` in milli-units), an overhead (kube-reserved,
system-reserved, eviction threshold), requirements (its labels as node selector requirements,
including ``node.kubernetes.io/instance-type``) and offerings (zone x capacity type, priced).
``allocatable()`` = capacity − overhead total (memory also minus hugepages, never below zero),
computed once.

Boundary: plain data and the arithmetic on it. Reading files is :mod:`.fileformat`, EC2 is
:mod:`.aws`. Requirements are stored as plain ``(key, operator, values)`` triples and turned into
:class:`nodewright.algebra.requirements.Requirements` lazily, so loading a cached catalog of
~1400 types stays cheap.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from nodewright import labels
from nodewright.algebra.requirements import Requirement, Requirements
from nodewright.algebra.resources import (
    HUGEPAGES_PREFIX,
    MEMORY,
    PODS,
    ResourceList,
    add,
    format_resource_list,
    subtract,
)

if TYPE_CHECKING:
    from nodewright.catalog.overhead import NodeClassOptions


@dataclass(frozen=True, slots=True)
class RequirementSpec:
    """One node selector requirement as plain data: ``{key, operator, values}``."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "operator": self.operator}
        if self.values or self.operator in ("In", "NotIn"):
            out["values"] = list(self.values)
        return out


def _build_requirements(specs: Iterable[RequirementSpec]) -> Requirements:
    return Requirements(Requirement.new(s.key, s.operator, s.values) for s in specs)


@dataclass(frozen=True, kw_only=True)
class Offering:
    """One way to buy an instance type: a zone and a capacity type (and reservation), priced."""

    zone: str
    capacity_type: str
    price: float
    available: bool = True
    reservation_id: str | None = None
    reservation_capacity: int | None = None
    zone_id: str | None = None
    # unavailable only because no price is known (an AWS type the price list lacks); a NodeOverlay
    # with a price can make it available (nodewright.catalog.overlay)
    unpriced: bool = False

    @property
    def requirement_specs(self) -> tuple[RequirementSpec, ...]:
        specs = [
            RequirementSpec(labels.CAPACITY_TYPE, "In", (self.capacity_type,)),
            RequirementSpec(labels.ZONE, "In", (self.zone,)),
        ]
        if self.reservation_id is not None:
            specs.append(RequirementSpec(labels.CAPACITY_RESERVATION_ID, "In", (self.reservation_id,)))
        return tuple(specs)

    @cached_property
    def requirements(self) -> Requirements:
        """Zone + capacity type (+ reservation id) as Requirements, each with a single value."""
        return _build_requirements(self.requirement_specs)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "zone": self.zone,
            "capacityType": self.capacity_type,
            "price": self.price,
            "available": self.available,
        }
        if self.zone_id is not None:
            out["zoneID"] = self.zone_id
        if self.reservation_id is not None:
            out["reservationID"] = self.reservation_id
        if self.reservation_capacity is not None:
            out["reservationCapacity"] = self.reservation_capacity
        return out


@dataclass(frozen=True, kw_only=True)
class Overhead:
    """Karpenter's ``InstanceTypeOverhead``; ``total()`` is the sum of the three lists."""

    kube_reserved: ResourceList = field(default_factory=dict)
    system_reserved: ResourceList = field(default_factory=dict)
    eviction_threshold: ResourceList = field(default_factory=dict)

    def total(self) -> ResourceList:
        return add(self.kube_reserved, self.system_reserved, self.eviction_threshold)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kubeReserved": format_resource_list(self.kube_reserved),
            "systemReserved": format_resource_list(self.system_reserved),
            "evictionThreshold": format_resource_list(self.eviction_threshold),
        }


@dataclass(frozen=True, kw_only=True)
class Ec2Facts:
    """The EC2 facts an AWS instance type was computed from; lets kubelet settings be re-applied."""

    vcpus: int
    memory_mib: int
    arm64: bool
    max_interfaces: int
    ipv4_per_interface: int
    instance_storage_gb: int | None = None
    extended: Mapping[str, int] = field(default_factory=dict)  # GPUs, neuron, EFA: resource -> count
    network_cards: tuple[tuple[int, int], ...] = ()  # (NetworkCardIndex, MaximumNetworkInterfaces)
    ena_supported: bool = True


@dataclass(frozen=True, kw_only=True, eq=False)
class InstanceType:
    """One instance type: capacity, overhead, requirements and offerings.

    Equality and hashing are by identity (the scheduler indexes types); loaders memoise, so the
    same catalog spec and NodeClass yield the same objects.
    """

    name: str
    capacity: ResourceList
    overhead: Overhead = field(default_factory=Overhead)
    requirement_specs: tuple[RequirementSpec, ...] = ()
    offerings: tuple[Offering, ...] = ()
    facts: Ec2Facts | None = None
    nodeclass: NodeClassOptions | None = None

    @cached_property
    def requirements(self) -> Requirements:
        """The type's labels as Requirements (always includes the instance-type label)."""
        specs = self.requirement_specs
        if not any(s.key == labels.INSTANCE_TYPE for s in specs):
            specs = (RequirementSpec(labels.INSTANCE_TYPE, "In", (self.name,)), *specs)
        return _build_requirements(specs)

    @cached_property
    def _allocatable(self) -> ResourceList:
        alloc = dict(subtract(self.capacity, self.overhead.total()))
        for name, quantity in self.capacity.items():
            if name.startswith(HUGEPAGES_PREFIX):  # computeAllocatable: never below zero
                alloc[MEMORY] = max(alloc.get(MEMORY, 0) - quantity, 0)
        return alloc

    def allocatable(self) -> ResourceList:
        """Capacity − overhead total, memory also minus hugepages but not below zero (Karpenter
        ``computeAllocatable``)."""
        return self._allocatable

    def available_offerings(self) -> tuple[Offering, ...]:
        return tuple(o for o in self.offerings if o.available)

    def cheapest(self, capacity_type: str | None = None) -> Offering | None:
        """The cheapest available offering (of ``capacity_type`` if given); ties by zone name."""
        offers = [o for o in self.offerings if o.available and (capacity_type in (None, o.capacity_type))]
        if not offers:
            return None
        return min(offers, key=lambda o: (o.price, o.zone, o.capacity_type, o.reservation_id or ""))

    @property
    def max_pods(self) -> int:
        return self.capacity.get(PODS, 0) // 1000

    def to_dict(self) -> dict[str, Any]:
        """The JSON form used by ``nodewright catalog list -o json``."""
        od = self.cheapest("on-demand")
        any_offer = self.cheapest()
        return {
            "name": self.name,
            "capacity": format_resource_list(self.capacity),
            "allocatable": format_resource_list(self.allocatable()),
            "overhead": self.overhead.to_dict(),
            "maxPods": self.max_pods,
            "price": od.price if od is not None else (any_offer.price if any_offer is not None else None),
            "offerings": [o.to_dict() for o in self.offerings],
            "requirements": [s.to_dict() for s in self.requirement_specs],
        }


class Catalog(Sequence[InstanceType]):
    """An ordered list of instance types with lookup by name."""

    def __init__(self, instance_types: Iterable[InstanceType], *, source: str = "") -> None:
        self._types: tuple[InstanceType, ...] = tuple(instance_types)
        self._by_name: dict[str, InstanceType] = {it.name: it for it in self._types}
        self.source = source

    def __len__(self) -> int:
        return len(self._types)

    def __iter__(self) -> Iterator[InstanceType]:
        return iter(self._types)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, str):
            return self._by_name[index]
        return self._types[index]

    def __contains__(self, item: object) -> bool:
        if isinstance(item, str):
            return item in self._by_name
        return item in self._types

    def get(self, name: str) -> InstanceType | None:
        return self._by_name.get(name)

    def names(self) -> list[str]:
        return [it.name for it in self._types]

    @property
    def instance_types(self) -> tuple[InstanceType, ...]:
        return self._types

    def __repr__(self) -> str:
        return f"Catalog({len(self._types)} instance types from {self.source or '<memory>'})"
