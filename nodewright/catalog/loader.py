"""``load_catalog``: a catalog from a file or ``aws:<region>``, shaped by an EC2NodeClass.

``load_catalog("aws:us-east-1")`` asks EC2 (or moto) once per machine (disk cache, see
:mod:`.cache`) and once per process and NodeClass options (memory cache). ``apply_kubelet``
recomputes capacity and overhead for the EC2NodeClass kubelet settings and AMI family, so the
capacity the scheduler assumes is the capacity the node gets.

Boundary: orchestration; the math is :mod:`.overhead`/:mod:`.aws`, the format :mod:`.fileformat`.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final, TypeVar, overload

from nodewright.algebra import resources as res
from nodewright.catalog import aws, cache, ec2calls
from nodewright.catalog import overhead as oh
from nodewright.catalog.fileformat import load_catalog_file
from nodewright.catalog.model import Catalog, InstanceType, Overhead
from nodewright.catalog.overhead import KubeletOptions, NodeClassOptions
from nodewright.catalog.prices import has_table, price_table_version
from nodewright.errors import CatalogError, InputError

progress = logging.getLogger("nodewright.progress")
"""Progress lines (INFO): the CLI shows them on stderr when it is a terminal, unless ``-q``."""

AWS_PREFIX: Final = "aws:"
DEFAULT_SPEC: Final = "aws:us-east-1"

_lock = threading.Lock()
_base_memo: dict[tuple[str, str], list[aws.BaseType]] = {}
_catalog_memo: dict[tuple[str, str], Catalog] = {}
_file_memo: dict[tuple[str, str], Catalog] = {}

T = TypeVar("T", Catalog, InstanceType)


def raw_mapping(nodeclass: Any) -> Mapping[str, Any]:
    """The camelCase mapping of an EC2NodeClass (or part of one): a mapping as is, a model dumped."""
    if isinstance(nodeclass, Mapping):
        return nodeclass
    dump = getattr(nodeclass, "model_dump", None)
    if callable(dump):
        result = dump(by_alias=True, exclude_none=True)
        if isinstance(result, Mapping):
            return result
    raise TypeError(f"expected an EC2NodeClass (mapping or model), got {type(nodeclass).__name__}")


def str_map(raw: Any) -> dict[str, str]:
    if not isinstance(raw, Mapping):
        return {}
    return {str(k): str(v) for k, v in raw.items()}


def kubelet_options(raw: Any) -> KubeletOptions:
    """EC2NodeClass ``spec.kubelet`` (a mapping, camelCase) as :class:`KubeletOptions`."""
    if raw is None:
        return KubeletOptions()
    m = raw if isinstance(raw, Mapping) else raw_mapping(raw)
    max_pods, per_core = m.get("maxPods"), m.get("podsPerCore")
    return KubeletOptions(
        max_pods=int(max_pods) if max_pods is not None else None,
        pods_per_core=int(per_core) if per_core is not None else None,
        kube_reserved=str_map(m.get("kubeReserved")),
        system_reserved=str_map(m.get("systemReserved")),
        eviction_hard=str_map(m.get("evictionHard")),
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
    embedded = not ec2calls.has_aws_credentials()
    inputs = _source_inputs(region, embedded)
    memo_key = (region, repr(sorted(inputs.items())))
    with _lock:
        if memo_key in _base_memo:
            return _base_memo[memo_key]
    path = cache.cache_path(region, inputs)
    types = cache.read(path, ttl_seconds=None if embedded else cache.AWS_TTL_SECONDS)
    if types is None:
        progress.info(
            "building the instance-type catalog of %s from %s (first run only; cached in %s)",
            region,
            "the embedded EC2 model" if embedded else "EC2",
            path.parent,
        )
        answers, _ = ec2calls.fetch(region, embedded=embedded)
        types = aws.base_types(answers)
        if not types and embedded:
            raise CatalogError(
                f"the embedded EC2 data (moto) has no instance-type offerings for {region}; "
                f"give AWS credentials for that partition (or NODEWRIGHT_CATALOG_SOURCE=aws)"
            )
        if not types:
            raise CatalogError(f"EC2 lists no instance types offered in {region}; check the region name")
        cache.write(path, types, meta=inputs)
        progress.info("catalog of %s: %d instance types", region, len(types))
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


def load_catalog(spec: str = DEFAULT_SPEC, *, options: NodeClassOptions | None = None) -> Catalog:
    """A catalog from an ``InstanceTypeCatalog`` file or ``aws:<region>``.

    ``options`` (resolved from an EC2NodeClass by :func:`nodewright.userdata.nodeclass_options`)
    shape capacity and overhead: kubelet maxPods/podsPerCore/kubeReserved/systemReserved/evictionHard,
    AMI family, block device mappings. For a file catalog only the kubelet overrides apply.
    """
    shape = options is not None
    options = options or NodeClassOptions()
    if spec.startswith(AWS_PREFIX):
        region = spec[len(AWS_PREFIX) :].strip()
        if not region or not all(ch.isalnum() or ch == "-" for ch in region):
            raise InputError(
                f'invalid catalog "{spec}"; expected aws:<region> such as aws:us-east-1', file=spec
            )
        if not has_table(region):
            ec2calls.check_region(region)
        return load_aws_catalog(region, options=options)
    catalog = _file_catalog(spec)
    if not shape:
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
def apply_kubelet(target: Catalog, kubelet: Any, family: str | None = None) -> Catalog: ...
@overload
def apply_kubelet(target: InstanceType, kubelet: Any, family: str | None = None) -> InstanceType: ...
def apply_kubelet(
    target: Catalog | InstanceType, kubelet: Any, family: str | None = None
) -> Catalog | InstanceType:
    """Recompute capacity/overhead for an EC2NodeClass kubelet (mapping, model or KubeletOptions).

    AWS types are recomputed from their EC2 facts with Karpenter's math for ``family`` (default:
    the family they were computed for); file types get the generic overrides. A mapping or model
    ``kubelet`` is ``spec.kubelet`` alone; pass :class:`KubeletOptions` from
    :func:`nodewright.userdata.effective_kubelet_options` to count what the user data sets too.
    """
    k = kubelet if isinstance(kubelet, KubeletOptions) else kubelet_options(kubelet)

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
            network_interfaces=prev.network_interfaces,
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
        capacity[res.PODS] = kubelet.max_pods * oh.MILLI
    if kubelet.pods_per_core and kubelet.pods_per_core > 0 and res.CPU in capacity:
        per_core = kubelet.pods_per_core * -(-capacity[res.CPU] // oh.MILLI) * oh.MILLI
        capacity[res.PODS] = min(capacity.get(res.PODS, per_core), per_core)
    kube = dict(it.overhead.kube_reserved)
    kube.update({k: oh.parse_milli(v) for k, v in kubelet.kube_reserved.items()})
    system = dict(it.overhead.system_reserved)
    system.update({k: oh.parse_milli(v) for k, v in kubelet.system_reserved.items()})
    evict = dict(it.overhead.eviction_threshold)
    if oh.MEMORY_AVAILABLE in kubelet.eviction_hard:
        evict[res.MEMORY] = oh.eviction_signal(
            capacity.get(res.MEMORY, 0), kubelet.eviction_hard[oh.MEMORY_AVAILABLE]
        )
    if oh.NODEFS_AVAILABLE in kubelet.eviction_hard:
        evict[res.EPHEMERAL_STORAGE] = oh.eviction_signal(
            capacity.get(res.EPHEMERAL_STORAGE, 0), kubelet.eviction_hard[oh.NODEFS_AVAILABLE]
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
