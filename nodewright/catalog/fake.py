"""Karpenter's fake cloud provider instance types, for tests and benchmarks.

Replicates ``pkg/cloudprovider/fake/instancetype.go`` (``NewInstanceType``, ``InstanceTypes(n)``,
``PriceFromResources``) and ``cloudprovider.go`` (``GetInstanceTypes`` defaults) of
kubernetes-sigs/karpenter, so scheduling scenarios of its test suites can be replayed with the
same numbers. ``tests/data/catalogs/fake.yaml`` and ``fake-5.yaml`` are these, written out.

Boundary: builds model objects only; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from nodewright import labels
from nodewright.algebra.quantity import parse_quantity
from nodewright.algebra.resources import ResourceList
from nodewright.catalog.model import Catalog, InstanceType, Offering, Overhead, RequirementSpec

# Label keys private to the fake provider (Karpenter inserts them into its well-known labels).
LABEL_INSTANCE_SIZE: Final = "size"
EXOTIC_INSTANCE_LABEL_KEY: Final = "special"
INTEGER_INSTANCE_LABEL_KEY: Final = "integer"
RESOURCE_GPU_VENDOR_A: Final = "fake.com/vendor-a"
RESOURCE_GPU_VENDOR_B: Final = "fake.com/vendor-b"
FAKE_WELL_KNOWN_LABELS: Final = frozenset(
    {LABEL_INSTANCE_SIZE, EXOTIC_INSTANCE_LABEL_KEY, INTEGER_INSTANCE_LABEL_KEY}
)

# (capacity type, zone) of the five default offerings, in upstream order (zone-3 has no spot).
DEFAULT_OFFERINGS: Final = (
    ("spot", "test-zone-1"),
    ("spot", "test-zone-2"),
    ("on-demand", "test-zone-1"),
    ("on-demand", "test-zone-2"),
    ("on-demand", "test-zone-3"),
)
_DEFAULT_OS: Final = ("darwin", "linux", "windows")


def _q(text: str) -> int:
    return parse_quantity(text).milli


def price_from_resources(resources: ResourceList) -> float:
    """``0.1*cpu + 0.1*memoryBytes/1e9`` (+1.0 per GPU vendor key), as upstream's float64 sum."""
    price = 0.0
    for name, milli in resources.items():
        if name == "cpu":
            price += 0.1 * (milli / 1000)
        elif name == "memory":
            price += 0.1 * (milli / 1000) / 1e9
        elif name in (RESOURCE_GPU_VENDOR_A, RESOURCE_GPU_VENDOR_B):
            price += 1.0
    return round(price, 10)


def new_instance_type(
    name: str,
    *,
    resources: Mapping[str, str] | None = None,
    architecture: str = "amd64",
    operating_systems: tuple[str, ...] = _DEFAULT_OS,
    offerings: tuple[Offering, ...] | None = None,
) -> InstanceType:
    """Upstream ``NewInstanceType``: defaults cpu 4, memory 4Gi, pods 5; five offerings."""
    res: ResourceList = {k: _q(v) for k, v in (resources or {}).items()}
    for key, default in (("cpu", "4"), ("memory", "4Gi"), ("pods", "5")):
        if not res.get(key):
            res[key] = _q(default)
    if not offerings:
        price = price_from_resources(res)
        offerings = tuple(Offering(zone=z, capacity_type=ct, price=price) for ct, z in DEFAULT_OFFERINGS)
    avail = [o for o in offerings if o.available]
    cpu_value = -(-res["cpu"] // 1000)
    large = res["cpu"] > _q("4") and res["memory"] > _q("8Gi")
    specs = (
        RequirementSpec(labels.INSTANCE_TYPE, "In", (name,)),
        RequirementSpec(labels.ARCH, "In", (architecture,)),
        RequirementSpec(labels.OS, "In", tuple(sorted(operating_systems))),
        RequirementSpec(labels.ZONE, "In", tuple(dict.fromkeys(o.zone for o in avail))),
        RequirementSpec(labels.CAPACITY_TYPE, "In", tuple(dict.fromkeys(o.capacity_type for o in avail))),
        RequirementSpec(LABEL_INSTANCE_SIZE, "In", ("large",) if large else ("small",)),
        RequirementSpec(EXOTIC_INSTANCE_LABEL_KEY, "In", ("optional",))
        if large
        else RequirementSpec(EXOTIC_INSTANCE_LABEL_KEY, "DoesNotExist"),
        RequirementSpec(INTEGER_INSTANCE_LABEL_KEY, "In", (str(cpu_value),)),
    )
    return InstanceType(
        name=name,
        capacity=res,
        overhead=Overhead(kube_reserved={"cpu": _q("100m"), "memory": _q("10Mi")}),
        requirement_specs=specs,
        offerings=offerings,
    )


def default_instance_types() -> list[InstanceType]:
    """The fake cloud provider's ``GetInstanceTypes`` answer when no types are set."""
    return [
        new_instance_type("default-instance-type"),
        new_instance_type("small-instance-type", resources={"cpu": "2", "memory": "2Gi"}),
        new_instance_type("gpu-vendor-instance-type", resources={RESOURCE_GPU_VENDOR_A: "2"}),
        new_instance_type("gpu-vendor-b-instance-type", resources={RESOURCE_GPU_VENDOR_B: "2"}),
        new_instance_type(
            "arm-instance-type",
            architecture="arm64",
            operating_systems=("ios", "linux", "windows", "darwin"),
            resources={"cpu": "16", "memory": "128Gi"},
        ),
        new_instance_type("single-pod-instance-type", resources={"pods": "1"}),
    ]


def fake_instance_types(n: int) -> list[InstanceType]:
    """Upstream ``fake.InstanceTypes(n)``: ``fake-it-i`` with cpu i+1, memory 2(i+1)Gi, pods 10(i+1)."""
    return [
        new_instance_type(
            f"fake-it-{i}",
            resources={"cpu": str(i + 1), "memory": f"{(i + 1) * 2}Gi", "pods": str((i + 1) * 10)},
        )
        for i in range(n)
    ]


def instance_types_assorted() -> list[InstanceType]:
    """Upstream ``fake.InstanceTypesAssorted()``: one type per cpu {1..64} x memory {1..128}Gi x zone
    x capacity type x os {linux, windows} x arch {amd64, arm64}, each with its single offering."""
    out = []
    for cpu in (1, 2, 4, 8, 16, 32, 64):
        for mem in (1, 2, 4, 8, 16, 32, 64, 128):
            res = {"cpu": str(cpu), "memory": f"{mem}Gi"}
            price = price_from_resources({k: _q(v) for k, v in res.items()})
            for zone in ("test-zone-1", "test-zone-2", "test-zone-3"):
                for ct in (labels.CAPACITY_TYPE_SPOT, labels.CAPACITY_TYPE_ON_DEMAND):
                    for os_name in ("linux", "windows"):
                        for arch in ("amd64", "arm64"):
                            out.append(
                                new_instance_type(
                                    f"{cpu}-cpu-{mem}-mem-{arch}-{os_name}-{zone}-{ct}",
                                    resources=res,
                                    architecture=arch,
                                    operating_systems=(os_name,),
                                    offerings=(Offering(zone=zone, capacity_type=ct, price=price),),
                                )
                            )
    return out


def fake_catalog(n: int | None = None) -> Catalog:
    """The default fake types (``n is None``) or ``fake.InstanceTypes(n)`` as a catalog."""
    if n is None:
        return Catalog(default_instance_types(), source="fake")
    return Catalog(fake_instance_types(n), source=f"fake-{n}")
