"""The ``InstanceTypeCatalog`` file format (``apiVersion: nodewright.dev/v1alpha1``): load and dump.

See docs/cli.md "Instance-type catalog". Every problem is reported with its file and
JSON path (``error: cat.yaml:instanceTypes[3].capacity.memory: invalid quantity ...``); all
problems of a file are collected before raising. Zone and capacity-type requirements a type does
not state are derived from its available offerings, as Karpenter's providers do.

Boundary: YAML/JSON documents in, :class:`~nodewright.catalog.model.Catalog` out (and back). No
EC2 here.
"""

from __future__ import annotations

import difflib
import logging
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from nodewright import labels
from nodewright.algebra.quantity import QuantityError, parse_quantity
from nodewright.algebra.resources import ResourceList, format_resource_list
from nodewright.api.documents import Document, documents_from_text, read_input
from nodewright.catalog.model import Catalog, InstanceType, Offering, Overhead, RequirementSpec
from nodewright.errors import Collector, InputError

log = logging.getLogger("nodewright")

API_VERSION: Final = "nodewright.dev/v1alpha1"
KIND: Final = "InstanceTypeCatalog"
CAPACITY_TYPES: Final = (
    labels.CAPACITY_TYPE_SPOT,
    labels.CAPACITY_TYPE_ON_DEMAND,
    labels.CAPACITY_TYPE_RESERVED,
)

_TYPE_KEYS: Final = ("name", "capacity", "overhead", "requirements", "offerings")
_OVERHEAD_KEYS: Final = ("kubeReserved", "systemReserved", "evictionThreshold")
_REQ_KEYS: Final = ("key", "operator", "values", "minValues")
_OFFERING_KEYS: Final = (
    "zone",
    "zoneID",
    "capacityType",
    "price",
    "available",
    "reservationID",
    "reservationCapacity",
)
_TOP_KEYS: Final = ("apiVersion", "kind", "metadata", "instanceTypes")


def _hint(key: str, allowed: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(key, allowed, n=1)
    did = f'did you mean "{close[0]}"? ' if close else ""
    return f'unknown field "{key}"; {did}allowed: {", ".join(allowed)}'


def _check_keys(c: Collector, where: str, obj: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    for key in obj:
        if key not in allowed:
            c.add(f"{where}.{key}" if where else str(key), _hint(str(key), allowed))


def _resource_list(c: Collector, where: str, raw: Any) -> ResourceList:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        c.add(where, f"expected a mapping of resource name to quantity, got {type(raw).__name__}")
        return {}
    out: ResourceList = {}
    for name, value in raw.items():
        if not isinstance(name, str) or not name:
            c.add(where, f"resource name {name!r} must be a non-empty string")
            continue
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            c.add(f"{where}.{name}", f'expected a quantity such as "2", "500m" or "4Gi", got {value!r}')
            continue
        try:
            q = parse_quantity(value)
        except QuantityError as exc:
            c.add(f"{where}.{name}", str(exc))
            continue
        if q.milli < 0:
            c.add(f"{where}.{name}", f'quantity "{value}" must not be negative')
            continue
        out[name] = q.milli
    return out


def _requirement(c: Collector, where: str, raw: Any) -> RequirementSpec | None:
    if not isinstance(raw, Mapping):
        c.add(where, "expected a node selector requirement {key, operator, values}")
        return None
    _check_keys(c, where, raw, _REQ_KEYS)
    key, op, values = raw.get("key"), raw.get("operator"), raw.get("values", [])
    ok = True
    if not isinstance(key, str) or not key:
        c.add(f"{where}.key", "required: a label key such as topology.kubernetes.io/zone")
        ok = False
    if op not in labels.OPERATORS:
        lowered = {o.lower(): o for o in labels.OPERATORS}
        close = [lowered[str(op).lower()]] if str(op).lower() in lowered else []
        close = close or difflib.get_close_matches(str(op), labels.OPERATORS, n=1)
        did = f'did you mean "{close[0]}"? ' if close else ""
        c.add(f"{where}.operator", f"invalid operator {op!r}; {did}one of {', '.join(labels.OPERATORS)}")
        ok = False
    if values is None:
        values = []
    if not isinstance(values, list) or not all(
        isinstance(v, (str, int)) and not isinstance(v, bool) for v in values
    ):
        c.add(f"{where}.values", "expected a list of strings")
        return None
    vals = tuple(str(v) for v in values)
    if ok and op == "NotIn" and not vals:
        c.add(f"{where}.values", "operator NotIn needs at least one value")
        ok = False
    if ok and op in ("Exists", "DoesNotExist") and vals:
        c.add(f"{where}.values", f"operator {op} takes no values; remove them")
        ok = False
    if ok and op in ("Gt", "Lt", "Gte", "Lte") and (len(vals) != 1 or not vals[0].lstrip("-").isdigit()):
        c.add(f"{where}.values", f"operator {op} takes exactly one integer value")
        ok = False
    if not ok:
        return None
    return RequirementSpec(labels.normalize(str(key)), str(op), vals)


def _offering(c: Collector, where: str, raw: Any) -> Offering | None:
    if not isinstance(raw, Mapping):
        c.add(where, "expected an offering {zone, capacityType, price, available}")
        return None
    _check_keys(c, where, raw, _OFFERING_KEYS)
    n = len(c.problems)
    zone, ct, price = raw.get("zone"), raw.get("capacityType"), raw.get("price")
    available = raw.get("available", True)
    if not isinstance(zone, str) or not zone:
        c.add(f"{where}.zone", "required: the zone name, e.g. us-east-1a")
    if ct not in CAPACITY_TYPES:
        c.add(f"{where}.capacityType", f"invalid capacity type {ct!r}; one of {', '.join(CAPACITY_TYPES)}")
    if (
        isinstance(price, bool)
        or not isinstance(price, (int, float))
        or not math.isfinite(price)
        or price < 0
    ):
        c.add(f"{where}.price", f"expected a non-negative number (USD per hour), got {price!r}")
    if not isinstance(available, bool):
        c.add(f"{where}.available", f"expected true or false, got {available!r}")
    rid, rcap, zid = raw.get("reservationID"), raw.get("reservationCapacity"), raw.get("zoneID")
    if rid is not None and (not isinstance(rid, str) or not rid):
        c.add(f"{where}.reservationID", "expected a non-empty string")
    if rcap is not None and (isinstance(rcap, bool) or not isinstance(rcap, int) or rcap < 0):
        c.add(f"{where}.reservationCapacity", "expected a non-negative integer")
    if zid is not None and not isinstance(zid, str):
        c.add(f"{where}.zoneID", "expected a string")
    if ct == labels.CAPACITY_TYPE_RESERVED and rid is None and len(c.problems) == n:
        c.add(f"{where}.reservationID", "a reserved offering needs its capacity reservation id")
    if len(c.problems) != n:
        return None
    return Offering(
        zone=str(zone),
        capacity_type=str(ct),
        price=float(price),  # type: ignore[arg-type]
        available=bool(available),
        reservation_id=rid,
        reservation_capacity=rcap,
        zone_id=zid,
    )


def _derived_requirements(
    name: str, specs: list[RequirementSpec], offerings: list[Offering]
) -> list[RequirementSpec]:
    keys = {s.key for s in specs}
    out = list(specs)
    if labels.INSTANCE_TYPE not in keys:
        out.insert(0, RequirementSpec(labels.INSTANCE_TYPE, "In", (name,)))
    avail = [o for o in offerings if o.available]
    if labels.ZONE not in keys:
        out.append(RequirementSpec(labels.ZONE, "In", tuple(sorted({o.zone for o in avail}))))
    if labels.CAPACITY_TYPE not in keys:
        out.append(
            RequirementSpec(labels.CAPACITY_TYPE, "In", tuple(sorted({o.capacity_type for o in avail})))
        )
    return out


def _instance_type(c: Collector, where: str, raw: Any, seen: dict[str, str]) -> InstanceType | None:
    if not isinstance(raw, Mapping):
        c.add(where, "expected an instance type {name, capacity, overhead, requirements, offerings}")
        return None
    _check_keys(c, where, raw, _TYPE_KEYS)
    n = len(c.problems)
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        c.add(
            f"{where}.name", "required: the instance type name (the node.kubernetes.io/instance-type value)"
        )
        name = ""
    elif name in seen:
        c.add(
            f"{where}.name", f'duplicate instance type "{name}" (first at {seen[name]}); names must be unique'
        )
    else:
        seen[name] = where
    if "capacity" not in raw:
        c.add(f"{where}.capacity", 'required: e.g. {cpu: "2", memory: 4Gi, pods: "110"}')
    capacity = _resource_list(c, f"{where}.capacity", raw.get("capacity"))
    ov_raw = raw.get("overhead") or {}
    overhead = Overhead()
    if not isinstance(ov_raw, Mapping):
        c.add(f"{where}.overhead", "expected a mapping with kubeReserved, systemReserved, evictionThreshold")
    else:
        _check_keys(c, f"{where}.overhead", ov_raw, _OVERHEAD_KEYS)
        overhead = Overhead(
            kube_reserved=_resource_list(c, f"{where}.overhead.kubeReserved", ov_raw.get("kubeReserved")),
            system_reserved=_resource_list(
                c, f"{where}.overhead.systemReserved", ov_raw.get("systemReserved")
            ),
            eviction_threshold=_resource_list(
                c, f"{where}.overhead.evictionThreshold", ov_raw.get("evictionThreshold")
            ),
        )
    specs: list[RequirementSpec] = []
    reqs_raw = raw.get("requirements") or []
    if not isinstance(reqs_raw, list):
        c.add(f"{where}.requirements", "expected a list of node selector requirements")
    else:
        for j, r in enumerate(reqs_raw):
            spec = _requirement(c, f"{where}.requirements[{j}]", r)
            if spec is None:
                continue
            if spec.key == labels.INSTANCE_TYPE and name and spec.values != (name,):
                c.add(
                    f"{where}.requirements[{j}]",
                    f'{labels.INSTANCE_TYPE} must be "In [{name}]" (the type\'s name), or left out',
                )
            specs.append(spec)
    offerings: list[Offering] = []
    offs_raw = raw.get("offerings")
    if not offs_raw:
        c.add(
            f"{where}.offerings",
            f'instance type "{name}" has no offerings; add at least one {{zone, capacityType, price}}',
        )
    elif not isinstance(offs_raw, list):
        c.add(f"{where}.offerings", "expected a list of offerings")
    else:
        seen_off: dict[tuple[str, str, str | None], int] = {}
        for j, o in enumerate(offs_raw):
            off = _offering(c, f"{where}.offerings[{j}]", o)
            if off is None:
                continue
            k = (off.zone, off.capacity_type, off.reservation_id)
            if k in seen_off:
                c.add(
                    f"{where}.offerings[{j}]",
                    f"duplicate of offerings[{seen_off[k]}] (same zone and capacity type)",
                )
                continue
            seen_off[k] = j
            offerings.append(off)
    if len(c.problems) != n:
        return None
    return InstanceType(
        name=name,
        capacity=capacity,
        overhead=overhead,
        requirement_specs=tuple(_derived_requirements(name, specs, offerings)),
        offerings=tuple(offerings),
    )


def catalog_from_documents(docs: list[Document], *, file: str) -> Catalog:
    """Every ``InstanceTypeCatalog`` in ``docs`` as one catalog; other kinds are warned and ignored."""
    c = Collector(file)
    types: list[InstanceType] = []
    seen: dict[str, str] = {}
    found = False
    for doc in docs:
        if doc.kind != KIND:
            log.warning(
                f"{doc.file}:{doc.path or '.'}: ignoring kind {doc.kind or '<none>'!r}; expected {KIND}"
            )
            continue
        found = True
        if doc.api_version != API_VERSION:
            c.add(
                doc.at("apiVersion"),
                f"expected apiVersion {API_VERSION}, got {doc.api_version or '<none>'!r}",
            )
        _check_keys(c, doc.path, doc.body, _TOP_KEYS)
        raw_types = doc.body.get("instanceTypes")
        if not isinstance(raw_types, list):
            c.add(doc.at("instanceTypes"), "required: a list of instance types")
            continue
        if not raw_types:
            c.add(doc.at("instanceTypes"), "the catalog lists no instance types; add at least one")
        for i, raw in enumerate(raw_types):
            it = _instance_type(c, doc.at(f"instanceTypes[{i}]"), raw, seen)
            if it is not None:
                types.append(it)
    if not found:
        raise InputError(
            f"no {KIND} document found; expected apiVersion: {API_VERSION} and kind: {KIND}", file=file
        )
    c.raise_if_any()
    return Catalog(types, source=file)


def load_catalog_file(path: str | Path) -> Catalog:
    """Read an ``InstanceTypeCatalog`` YAML or JSON file."""
    text = read_input(path)
    return catalog_from_documents(documents_from_text(text, file=str(path)), file=str(path))


def catalog_from_text(text: str, *, file: str = "<input>") -> Catalog:
    return catalog_from_documents(documents_from_text(text, file=file), file=file)


def dump_instance_type(it: InstanceType) -> dict[str, Any]:
    """One instance type in the file format (requirements as stored, offerings in order)."""
    out: dict[str, Any] = {"name": it.name, "capacity": format_resource_list(it.capacity)}
    ov: dict[str, Any] = {}
    if it.overhead.kube_reserved:
        ov["kubeReserved"] = format_resource_list(it.overhead.kube_reserved)
    if it.overhead.system_reserved:
        ov["systemReserved"] = format_resource_list(it.overhead.system_reserved)
    if it.overhead.eviction_threshold:
        ov["evictionThreshold"] = format_resource_list(it.overhead.eviction_threshold)
    if ov:
        out["overhead"] = ov
    out["requirements"] = [s.to_dict() for s in it.requirement_specs]
    out["offerings"] = [o.to_dict() for o in it.offerings]
    return out


def dump_catalog(catalog: Catalog | list[InstanceType]) -> dict[str, Any]:
    """The catalog as an ``InstanceTypeCatalog`` document (a plain dict ready for YAML/JSON)."""
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "instanceTypes": [dump_instance_type(it) for it in catalog],
    }
