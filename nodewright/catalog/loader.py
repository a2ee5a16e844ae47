"""``load_catalog``: a catalog from a file or ``aws:<region>``, shaped by an EC2NodeClass.

``load_catalog("aws:us-east-1")`` asks EC2 (or moto) once per machine (disk cache, see
:mod:`.cache`) and once per process and NodeClass options (memory cache). ``apply_kubelet``
recomputes capacity and overhead for the EC2NodeClass kubelet settings and AMI family, so the
capacity the scheduler assumes is the capacity the node gets.

Boundary: orchestration; the math is :mod:`.overhead`/:mod:`.aws`, the format :mod:`.fileformat`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final, TypeVar, overload

from nodewright.catalog import aws, cache
from nodewright.catalog import overhead as oh
from nodewright.catalog.fileformat import load_catalog_file
from nodewright.catalog.model import Catalog, InstanceType, Overhead
from nodewright.catalog.overhead import (
    AMI_FAMILIES,
    DEFAULT_AMI_FAMILY,
    BlockDevice,
    KubeletOptions,
    NodeClassOptions,
    parse_milli,
)
from nodewright.catalog.prices import has_table, price_table_version
from nodewright.errors import CatalogError, InputError

AWS_PREFIX: Final = "aws:"
DEFAULT_SPEC: Final = "aws:us-east-1"
_ALIAS_FAMILIES: Final = {f.lower(): f for f in AMI_FAMILIES if f != "Custom"}

_lock = threading.Lock()
_base_memo: dict[tuple[str, str], list[aws.BaseType]] = {}
_catalog_memo: dict[tuple[str, str], Catalog] = {}
_file_memo: dict[tuple[str, str], Catalog] = {}

T = TypeVar("T", Catalog, InstanceType)


def _get(obj: Any, key: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def _as_mapping(nodeclass: Any) -> Mapping[str, Any]:
    if isinstance(nodeclass, Mapping):
        return nodeclass
    dump = getattr(nodeclass, "model_dump", None)
    if callable(dump):
        result = dump(by_alias=True, exclude_none=True)
        if isinstance(result, Mapping):
            return result
    raise TypeError(f"expected an EC2NodeClass (mapping or model), got {type(nodeclass).__name__}")


def _str_map(raw: Any) -> dict[str, str]:
    if not isinstance(raw, Mapping):
        return {}
    return {str(k): str(v) for k, v in raw.items()}


def kubelet_options(raw: Any) -> KubeletOptions:
    """EC2NodeClass ``spec.kubelet`` (a mapping, camelCase) as :class:`KubeletOptions`."""
    if raw is None:
        return KubeletOptions()
    m = raw if isinstance(raw, Mapping) else _as_mapping(raw)
    max_pods, per_core = m.get("maxPods"), m.get("podsPerCore")
    return KubeletOptions(
        max_pods=int(max_pods) if max_pods is not None else None,
        pods_per_core=int(per_core) if per_core is not None else None,
        kube_reserved=_str_map(m.get("kubeReserved")),
        system_reserved=_str_map(m.get("systemReserved")),
        eviction_hard=_str_map(m.get("evictionHard")),
    )


def effective_kubelet_options(
    family: str, kubelet: Any, user_data: str | None, *, file: str = "<EC2NodeClass>", path: str = "spec"
) -> KubeletOptions:
    """What the node's kubelet really gets (:func:`nodewright.userdata.effective_kubelet`), as options.

    ``spec.kubelet`` plus what the user data sets and Karpenter keeps: Bottlerocket TOML
    ``settings.kubernetes.kube-reserved`` / ``system-reserved`` / ``eviction-hard``, AL2023
    NodeConfig ``kubelet.config`` maps. Invalid user data is an :class:`InputError` at ``spec.userData``.
    """
    from nodewright.userdata import UserDataError, effective_kubelet

    raw = kubelet if kubelet is None or isinstance(kubelet, Mapping) else _as_mapping(kubelet)
    try:
        facts = effective_kubelet(family=family, kubelet=raw, user_data=user_data or None)
    except UserDataError as exc:
        where = exc.path or "spec.userData"
        raise InputError(
            exc.message, file=file, path=f"{path}.{where[5:]}" if where.startswith("spec.") else where
        ) from None
    return KubeletOptions(
        max_pods=facts.max_pods,
        pods_per_core=facts.pods_per_core,
        kube_reserved=_str_map(facts.kube_reserved),
        system_reserved=_str_map(facts.system_reserved),
        eviction_hard=_str_map(facts.eviction_hard),
    )


def ami_family(spec: Mapping[str, Any]) -> str:
    """Karpenter's ``AMIFamily()``: spec.amiFamily, else the alias term's family, else Custom."""
    fam = spec.get("amiFamily")
    if fam:
        return str(fam)
    for term in spec.get("amiSelectorTerms") or []:
        alias = _get(term, "alias")
        if alias:
            return _ALIAS_FAMILIES.get(str(alias).split("@", 1)[0].lower(), "Custom")
    return "Custom" if spec.get("amiSelectorTerms") else DEFAULT_AMI_FAMILY


def nodeclass_options(nodeclass: Any) -> NodeClassOptions:
    """The capacity-relevant settings of an EC2NodeClass (raw mapping or api model)."""
    if nodeclass is None:
        return NodeClassOptions()
    if isinstance(nodeclass, NodeClassOptions):
        return nodeclass
    body = _as_mapping(nodeclass)
    spec = body.get("spec", body)
    if not isinstance(spec, Mapping):
        spec = {}
    devices = []
    for bdm in spec.get("blockDeviceMappings") or []:
        ebs = _get(bdm, "ebs") or {}
        size = _get(ebs, "volumeSize")
        devices.append(
            BlockDevice(
                device_name=str(_get(bdm, "deviceName") or ""),
                volume_size=parse_milli(str(size)) // 1000 if size is not None else None,
                root_volume=bool(_get(bdm, "rootVolume")),
            )
        )
    efa_only = sum(
        1
        for ni in spec.get("networkInterfaces") or []
        if _get(ni, "interfaceType") == "efa-only" and int(_get(ni, "networkCardIndex") or 0) == 0
    )
    family = ami_family(spec)
    user_data = spec.get("userData")
    origin = getattr(nodeclass, "origin_file", None)
    return NodeClassOptions(
        family=family,
        kubelet=effective_kubelet_options(
            family,
            spec.get("kubelet"),
            str(user_data) if user_data else None,
            file=str(origin) if origin else "<EC2NodeClass>",
            path=nodeclass.origin_path("spec") if origin else "spec",
        ),
        block_devices=tuple(devices),
        instance_store_raid0=spec.get("instanceStorePolicy") == "RAID0",
        efa_only_interfaces=efa_only,
    )


def _source_inputs(region: str, embedded: bool) -> dict[str, Any]:
    if embedded:
        from importlib.metadata import version

        source = f"moto-{version('moto')}"
    else:
        source = "aws"
    return {"region": region, "source": source, "prices": price_table_version(region)}


def aws_base_types(region: str) -> list[aws.BaseType]:
    """The family-independent EC2 catalog of ``region``: memory cache, disk cache, then EC2."""
    embedded = not aws.has_aws_credentials()
    inputs = _source_inputs(region, embedded)
    memo_key = (region, repr(sorted(inputs.items())))
    with _lock:
        if memo_key in _base_memo:
            return _base_memo[memo_key]
    path = cache.cache_path(region, inputs)
    types = cache.read(path, ttl_seconds=None if embedded else cache.AWS_TTL_SECONDS)
    if types is None:
        answers, _ = aws.fetch(region, embedded=embedded)
        types = aws.base_types(answers)
        if not types:
            raise CatalogError(f"EC2 lists no instance types offered in {region}; check the region name")
        cache.write(path, types, meta=inputs)
    with _lock:
        _base_memo[memo_key] = types
    return types


def load_aws_catalog(region: str, *, options: NodeClassOptions | None = None) -> Catalog:
    opts = options or NodeClassOptions()
    key = (region, opts.cache_key())
    with _lock:
        if key in _catalog_memo:
            return _catalog_memo[key]
    bases = aws_base_types(region)
    catalog = Catalog([aws.compute(b, opts) for b in bases], source=f"{AWS_PREFIX}{region}")
    with _lock:
        _catalog_memo[key] = catalog
    return catalog


def _file_catalog(path: str) -> Catalog:
    """A file catalog, memoised on (path, mtime, size) so repeated loads do not re-parse."""
    try:
        st = os.stat(path)
    except OSError:
        return load_catalog_file(path)  # reports the missing file properly
    key = (os.path.abspath(path), f"{st.st_mtime_ns}-{st.st_size}")
    with _lock:
        if key in _file_memo:
            return _file_memo[key]
    catalog = load_catalog_file(path)
    with _lock:
        _file_memo[key] = catalog
    return catalog


def load_catalog(spec: str = DEFAULT_SPEC, *, nodeclass: Any = None) -> Catalog:
    """A catalog from an ``InstanceTypeCatalog`` file or ``aws:<region>``.

    ``nodeclass`` (an EC2NodeClass model or mapping, or :class:`NodeClassOptions`) shapes capacity
    and overhead: kubelet maxPods/podsPerCore/kubeReserved/systemReserved/evictionHard, AMI family,
    block device mappings. For a file catalog only the kubelet overrides apply.
    """
    options = nodeclass_options(nodeclass)
    if spec.startswith(AWS_PREFIX):
        region = spec[len(AWS_PREFIX) :].strip()
        if not region or not all(ch.isalnum() or ch == "-" for ch in region):
            raise InputError(
                f'invalid catalog "{spec}"; expected aws:<region> such as aws:us-east-1', file=spec
            )
        if not has_table(region):
            aws.check_region(region)
        return load_aws_catalog(region, options=options)
    catalog = _file_catalog(spec)
    if nodeclass is None:
        return catalog
    key = (f"file:{id(catalog)}", options.cache_key())
    with _lock:
        if key in _catalog_memo:
            return _catalog_memo[key]
    shaped = apply_kubelet(catalog, options.kubelet, options.family)
    with _lock:
        _catalog_memo[key] = shaped
    return shaped


@overload
def apply_kubelet(
    target: Catalog, kubelet: Any, family: str | None = None, *, user_data: str | None = None
) -> Catalog: ...
@overload
def apply_kubelet(
    target: InstanceType, kubelet: Any, family: str | None = None, *, user_data: str | None = None
) -> InstanceType: ...
def apply_kubelet(
    target: Catalog | InstanceType, kubelet: Any, family: str | None = None, *, user_data: str | None = None
) -> Catalog | InstanceType:
    """Recompute capacity/overhead for an EC2NodeClass kubelet (mapping, model or KubeletOptions).

    AWS types are recomputed from their EC2 facts with Karpenter's math for ``family`` (default:
    the family they were computed for, else AL2023); file types get the generic overrides.
    A mapping or model ``kubelet`` is combined with ``user_data`` (the EC2NodeClass's
    ``spec.userData``) through :func:`effective_kubelet_options`, so reservations the user data sets
    count too; :class:`KubeletOptions` are taken as already effective.
    """
    if isinstance(kubelet, KubeletOptions):
        k = kubelet
    elif user_data:
        first = target if isinstance(target, InstanceType) else next(iter(target), None)
        prev_family = first.nodeclass.family if first is not None and first.nodeclass is not None else None
        k = effective_kubelet_options(family or prev_family or DEFAULT_AMI_FAMILY, kubelet, user_data)
    else:
        k = kubelet_options(kubelet)

    def one(it: InstanceType) -> InstanceType:
        prev = it.nodeclass or NodeClassOptions()
        fam = family or prev.family
        opts = NodeClassOptions(
            family=fam,
            kubelet=k,
            block_devices=prev.block_devices,
            instance_store_raid0=prev.instance_store_raid0,
            efa_only_interfaces=prev.efa_only_interfaces,
            reserved_enis=prev.reserved_enis,
            vm_memory_overhead_percent=prev.vm_memory_overhead_percent,
        )
        return _with_options(it, opts)

    if isinstance(target, InstanceType):
        return one(target)
    return Catalog([one(it) for it in target], source=target.source)


def _with_options(it: InstanceType, options: oh.NodeClassOptions) -> InstanceType:
    """Recompute an AWS type for other NodeClass options; file types get the generic overrides."""
    base = aws.base_of(it)
    if base is not None:
        return aws.compute(base, options)
    return _override_generic(it, options.kubelet)


def _override_generic(it: InstanceType, kubelet: oh.KubeletOptions) -> InstanceType:
    """For types without EC2 facts: maxPods/podsPerCore cap pods, reserved/eviction keys override."""
    capacity = dict(it.capacity)
    if kubelet.max_pods is not None:
        capacity[oh.PODS] = kubelet.max_pods * oh.MILLI
    if kubelet.pods_per_core and kubelet.pods_per_core > 0 and oh.CPU in capacity:
        per_core = kubelet.pods_per_core * -(-capacity[oh.CPU] // oh.MILLI) * oh.MILLI
        capacity[oh.PODS] = min(capacity.get(oh.PODS, per_core), per_core)
    kube = dict(it.overhead.kube_reserved)
    kube.update({k: oh.parse_milli(v) for k, v in kubelet.kube_reserved.items()})
    system = dict(it.overhead.system_reserved)
    system.update({k: oh.parse_milli(v) for k, v in kubelet.system_reserved.items()})
    evict = dict(it.overhead.eviction_threshold)
    if oh.MEMORY_AVAILABLE in kubelet.eviction_hard:
        evict[oh.MEMORY] = oh.eviction_signal(
            capacity.get(oh.MEMORY, 0), kubelet.eviction_hard[oh.MEMORY_AVAILABLE]
        )
    if oh.NODEFS_AVAILABLE in kubelet.eviction_hard:
        evict[oh.EPHEMERAL_STORAGE] = oh.eviction_signal(
            capacity.get(oh.EPHEMERAL_STORAGE, 0), kubelet.eviction_hard[oh.NODEFS_AVAILABLE]
        )
    return replace(
        it,
        capacity=capacity,
        overhead=Overhead(kube_reserved=kube, system_reserved=system, eviction_threshold=evict),
    )


def clear_memory_cache() -> None:
    with _lock:
        _base_memo.clear()
        _catalog_memo.clear()
        _file_memo.clear()
