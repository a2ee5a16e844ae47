"""What an EC2NodeClass means for capacity: the catalog's :class:`NodeClassOptions`.

The catalog computes capacity and overhead from *resolved* options (AMI family, the kubelet
settings the node really gets, block devices, RAID0, EFA-only interfaces). Resolving them needs
the user data (Bottlerocket TOML and AL2023 NodeConfig can set reservations Karpenter keeps), so
it lives here, above the catalog: :func:`nodeclass_options` reads an EC2NodeClass, and
:func:`nodeclass_catalog` loads a catalog shaped by it.

Boundary: no I/O besides :func:`nodewright.catalog.load_catalog`; the catalog never imports this.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from nodewright.algebra.quantity import parse_quantity
from nodewright.api.amifamily import ami_family
from nodewright.catalog import Catalog, InstanceType, load_catalog
from nodewright.catalog.loader import raw_mapping, str_map
from nodewright.catalog.overhead import (
    DEFAULT_AMI_FAMILY,
    DeviceSize,
    KubeletOptions,
    NetworkInterface,
    NodeClassOptions,
)
from nodewright.errors import InputError
from nodewright.labels import CAPACITY_TYPE_RESERVED
from nodewright.settings import KarpenterSettings
from nodewright.userdata.facts import effective_kubelet
from nodewright.userdata.options import UserDataError


def _get(obj: Any, key: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def effective_kubelet_options(
    family: str, kubelet: Any, user_data: str | None, *, file: str = "<EC2NodeClass>", path: str = "spec"
) -> KubeletOptions:
    """What the node's kubelet really gets (:func:`nodewright.userdata.effective_kubelet`), as options.

    ``spec.kubelet`` plus what the user data sets and Karpenter keeps: Bottlerocket TOML
    ``settings.kubernetes.kube-reserved`` / ``system-reserved`` / ``eviction-hard``, AL2023
    NodeConfig ``kubelet.config`` maps. Invalid user data is an :class:`InputError` at ``spec.userData``.
    """
    raw = kubelet if kubelet is None or isinstance(kubelet, Mapping) else raw_mapping(kubelet)
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
        kube_reserved=str_map(facts.kube_reserved),
        system_reserved=str_map(facts.system_reserved),
        eviction_hard=str_map(facts.eviction_hard),
    )


def _settings_options(settings: KarpenterSettings | None) -> dict[str, Any]:
    """The NodeClassOptions fields Karpenter's controller settings decide (RESERVED_ENIS,
    VM_MEMORY_OVERHEAD_PERCENT): part of the options, so of every catalog cache key."""
    if settings is None:
        return {}
    return {
        "reserved_enis": settings.reserved_enis,
        "vm_memory_overhead_percent": settings.vm_memory_overhead_percent,
    }


def nodeclass_options(nodeclass: Any, settings: KarpenterSettings | None = None) -> NodeClassOptions:
    """The capacity-relevant settings of an EC2NodeClass (raw mapping or api model) under
    Karpenter's ``settings`` (reserved ENIs, VM memory overhead; None: Karpenter's defaults).

    A spec with neither ``amiFamily`` nor ``amiSelectorTerms`` (a partial NodeClass, as some
    tests and the catalog CLI give) gets the catalog's default family, AL2023.
    """
    if nodeclass is None:
        return NodeClassOptions(**_settings_options(settings))
    if isinstance(nodeclass, NodeClassOptions):
        return nodeclass
    body = raw_mapping(nodeclass)
    spec = body.get("spec", body)
    if not isinstance(spec, Mapping):
        spec = {}
    devices = []
    for bdm in spec.get("blockDeviceMappings") or []:
        ebs = _get(bdm, "ebs") or {}
        size = _get(ebs, "volumeSize")
        devices.append(
            DeviceSize(
                device_name=str(_get(bdm, "deviceName") or ""),
                volume_size=parse_quantity(str(size)).milli // 1000 if size is not None else None,
                root_volume=bool(_get(bdm, "rootVolume")),
            )
        )
    efa_only = sum(
        1
        for ni in spec.get("networkInterfaces") or []
        if _get(ni, "interfaceType") == "efa-only" and int(_get(ni, "networkCardIndex") or 0) == 0
    )
    raw_nics = spec.get("networkInterfaces")
    nics = (
        tuple(
            NetworkInterface(
                network_card_index=int(_get(ni, "networkCardIndex") or 0),
                device_index=int(_get(ni, "deviceIndex") or 0),
                interface_type=str(_get(ni, "interfaceType") or "interface"),
            )
            for ni in raw_nics
        )
        if isinstance(raw_nics, list)
        else None
    )
    partial = not spec.get("amiFamily") and not spec.get("amiSelectorTerms")
    family = DEFAULT_AMI_FAMILY if partial else ami_family(spec)
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
        network_interfaces=nics,
        **_settings_options(settings),
    )


def nodeclass_catalog(spec: str, nodeclass: Any, settings: KarpenterSettings | None = None) -> Catalog:
    """``load_catalog(spec)`` shaped by ``nodeclass`` (model, mapping, options or None) and by
    Karpenter's ``settings``: reserved ENIs and VM memory overhead change capacity and max pods;
    with the ``ReservedCapacity`` gate off the provider creates no reserved offering
    (aws/karpenter-provider-aws v1.14.1 ``pkg/providers/instancetype/offering/
    reserved_capacity_resolver.go``, ResolveOfferings), so none is in the catalog."""
    shaped = nodeclass is not None or (settings is not None and _settings_options(settings) != _DEFAULTS)
    catalog = load_catalog(spec, options=nodeclass_options(nodeclass, settings) if shaped else None)
    if settings is not None and not settings.feature_gates.reserved_capacity:
        catalog = Catalog(
            [
                replace(
                    it, offerings=tuple(o for o in it.offerings if o.capacity_type != CAPACITY_TYPE_RESERVED)
                )
                for it in catalog
            ],
            source=catalog.source,
        )
    return catalog


_DEFAULTS: dict[str, Any] = _settings_options(KarpenterSettings())


def pool_catalogs(
    spec: str, nodeclasses: Mapping[str, Any], settings: KarpenterSettings | None = None
) -> Callable[[Any], list[InstanceType]]:
    """``catalog_for(nodepool)``: the instance types a NodePool's EC2NodeClass offers (its
    :func:`nodeclass_catalog`, built once per NodeClass); a NodePool whose ``nodeClassRef`` is not
    an EC2NodeClass, or names one not in ``nodeclasses``, gets the catalog without NodeClass options."""
    cache: dict[str, list[InstanceType]] = {}

    def catalog_for(nodepool: Any) -> list[InstanceType]:
        ref = nodepool.spec.template.spec.node_class_ref
        key = ref.name if ref.kind == "EC2NodeClass" else ""
        if key not in cache:
            cache[key] = list(nodeclass_catalog(spec, nodeclasses.get(ref.name) if key else None, settings))
        return cache[key]

    return catalog_for
