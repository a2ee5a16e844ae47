"""InstanceTypeCatalog files: the fake fixtures load and match the generator; malformed files fail
with exactly one ``<file>:<path>: <what>`` line naming the place."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from nodewright import labels
from nodewright.catalog import catalog_from_text, dump_catalog, fake_catalog, load_catalog, load_catalog_file
from nodewright.errors import InputError, NodewrightError

CATALOGS = Path(__file__).resolve().parent.parent / "data" / "catalogs"
INVALID = sorted((CATALOGS / "invalid").glob("*.yaml"))


def _expected(path: Path) -> str:
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# expect: "), f"{path} lacks its '# expect:' line"
    return first.removeprefix("# expect: ")


def test_invalid_cases_exist() -> None:
    assert len(INVALID) >= 10


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_malformed_file_gives_one_line_naming_file_and_path(path: Path) -> None:
    with pytest.raises(NodewrightError) as info:
        load_catalog_file(path)
    lines = info.value.lines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"{path}"), lines[0]
    assert _expected(path) in lines[0], lines[0]


def test_bad_quantity_names_the_resource_path() -> None:
    with pytest.raises(InputError) as info:
        load_catalog_file(CATALOGS / "invalid" / "bad-quantity.yaml")
    assert info.value.path == "instanceTypes[3].capacity.memory"


def test_all_problems_reported_at_once() -> None:
    text = """
apiVersion: nodewright.dev/v1alpha1
kind: InstanceTypeCatalog
instanceTypes:
- {name: a, capacity: {cpu: x}, offerings: [{zone: z, capacityType: spot, price: 1}]}
- {name: b, capacity: {cpu: "1"}}
"""
    with pytest.raises(NodewrightError) as info:
        catalog_from_text(text, file="two.yaml")
    lines = info.value.lines()
    assert len(lines) == 2
    assert lines[0].startswith("two.yaml:instanceTypes[0].capacity.cpu: ")
    assert lines[1].startswith("two.yaml:instanceTypes[1].offerings: ")


def test_multi_document_paths_name_the_document() -> None:
    text = """apiVersion: nodewright.dev/v1alpha1
kind: InstanceTypeCatalog
instanceTypes:
- {name: a, capacity: {cpu: "1"}, offerings: [{zone: z, capacityType: spot, price: 1}]}
---
apiVersion: nodewright.dev/v1alpha1
kind: InstanceTypeCatalog
instanceTypes:
- {name: b, capacity: {cpu: 1.5.3}, offerings: [{zone: z, capacityType: spot, price: 1}]}
"""
    with pytest.raises(InputError) as info:
        catalog_from_text(text, file="m.yaml")
    assert info.value.path == "documents[1].instanceTypes[0].capacity.cpu"


@pytest.mark.parametrize(
    ("name", "catalog"), [("fake.yaml", fake_catalog()), ("fake-5.yaml", fake_catalog(5))]
)
def test_fixture_files_match_the_generator(name: str, catalog: object) -> None:
    on_disk = yaml.safe_load((CATALOGS / name).read_text(encoding="utf-8"))
    assert on_disk == dump_catalog(fake_catalog() if name == "fake.yaml" else fake_catalog(5))
    loaded = load_catalog_file(CATALOGS / name)
    generated = fake_catalog() if name == "fake.yaml" else fake_catalog(5)
    assert [it.name for it in loaded] == [it.name for it in generated]
    for a, b in zip(loaded, generated, strict=True):
        assert a.capacity == b.capacity
        assert a.allocatable() == b.allocatable()
        assert a.offerings == b.offerings
        assert a.requirements == b.requirements


def test_fake_default_types_match_upstream() -> None:
    cat = load_catalog(str(CATALOGS / "fake.yaml"))
    assert cat.names() == [
        "default-instance-type",
        "small-instance-type",
        "gpu-vendor-instance-type",
        "gpu-vendor-b-instance-type",
        "arm-instance-type",
        "single-pod-instance-type",
    ]
    small = cat["small-instance-type"]
    assert small.cheapest() is not None and small.cheapest().price == pytest.approx(0.4147483648)
    assert cat["default-instance-type"].offerings[0].price == pytest.approx(0.8294967296)
    gpu = cat["gpu-vendor-instance-type"]
    assert gpu.capacity["fake.com/vendor-a"] == 2000 and gpu.capacity["cpu"] == 4000
    assert gpu.offerings[0].price == pytest.approx(1.8294967296)
    arm = cat["arm-instance-type"]
    assert arm.requirements.get(labels.ARCH).has("arm64")
    assert arm.requirements.get("size").has("large") and arm.requirements.get("special").has("optional")
    assert set(arm.requirements.get(labels.OS).values) == {"ios", "linux", "windows", "darwin"}
    assert not small.requirements.get("special").has("optional")
    assert small.requirements.get("integer").has("2")
    assert cat["single-pod-instance-type"].max_pods == 1
    # allocatable = capacity - kubeReserved (100m, 10Mi)
    assert small.allocatable()["cpu"] == 1900 and small.allocatable()["memory"] == (2048 - 10) * 2**20 * 1000
    # zone-3 has no spot offering
    zones = {(o.zone, o.capacity_type) for o in small.offerings}
    assert ("test-zone-3", "spot") not in zones and ("test-zone-3", "on-demand") in zones


def test_fake_instance_types_n() -> None:
    cat = fake_catalog(5)
    assert cat.names() == [f"fake-it-{i}" for i in range(5)]
    it = cat["fake-it-2"]
    assert it.capacity == {"cpu": 3000, "memory": 6 * 2**30 * 1000, "pods": 30000}
    assert len(it.offerings) == 5


def test_zone_and_capacity_type_derived_from_offerings() -> None:
    text = """apiVersion: nodewright.dev/v1alpha1
kind: InstanceTypeCatalog
instanceTypes:
- name: t
  capacity: {cpu: "2", memory: 2Gi, pods: "10", hugepages-2Mi: 1Gi}
  offerings:
  - {zone: a, capacityType: spot, price: 0.1}
  - {zone: b, capacityType: on-demand, price: 0.2, available: false}
"""
    it = catalog_from_text(text)["t"]
    assert it.requirements.get(labels.ZONE).values == frozenset({"a"})
    assert it.requirements.get(labels.CAPACITY_TYPE).values == frozenset({"spot"})
    assert it.requirements.get(labels.INSTANCE_TYPE).values == frozenset({"t"})
    # hugepages are taken out of allocatable memory
    assert it.allocatable()["memory"] == 1 * 2**30 * 1000
    assert it.cheapest() is not None and it.cheapest().zone == "a"
    assert it.cheapest("on-demand") is None
