"""Kubelet facts back into scheduling: the max-pods and reservations a node will really get.

Karpenter's scheduler assumes the allocatable it computes from ``spec.kubelet``; the node's kubelet
gets what the rendered user data says. On Bottlerocket the user's TOML can set ``kube-reserved``,
``system-reserved`` and ``eviction-hard`` that Karpenter keeps when ``spec.kubelet`` leaves them
unset (the RFC's bin-packing concern). :func:`effective_kubelet` returns what the node gets, so the
catalog can compute allocatable from the same numbers. Pure: no logging of values, no I/O.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from nodewright import reader
from nodewright.api.amifamily import AL2023, BOTTLEROCKET, CUSTOM, renderer_family
from nodewright.userdata.options import KubeletConfig


@dataclass(frozen=True, kw_only=True)
class KubeletFacts:
    """Effective kubelet settings (Kubernetes quantity strings, as written) and where each came from.

    ``max_pods`` None means "the instance type's computed pod count" (Karpenter always fills it in).
    Empty mappings mean "not set": the catalog applies Karpenter's defaults (kube-reserved formula,
    100Mi eviction) and overlays these keys on them, key by key, as Karpenter does for spec.kubelet.
    ``sources`` maps each field name to ``spec.kubelet``, ``userData`` or ``unknown``.
    """

    max_pods: int | None = None
    pods_per_core: int | None = None
    kube_reserved: Mapping[str, str] = field(default_factory=dict)
    system_reserved: Mapping[str, str] = field(default_factory=dict)
    eviction_hard: Mapping[str, str] = field(default_factory=dict)
    sources: Mapping[str, str] = field(default_factory=dict)


def _from_spec(kubelet: KubeletConfig) -> KubeletFacts:
    sources = {}
    for name in ("max_pods", "pods_per_core", "kube_reserved", "system_reserved", "eviction_hard"):
        if getattr(kubelet, name) is not None:
            sources[name] = "spec.kubelet"
    return KubeletFacts(
        max_pods=kubelet.max_pods,
        pods_per_core=kubelet.pods_per_core,
        kube_reserved=dict(kubelet.kube_reserved or {}),
        system_reserved=dict(kubelet.system_reserved or {}),
        eviction_hard=dict(kubelet.eviction_hard or {}),
        sources=sources,
    )


def effective_kubelet(
    *,
    family: str,
    kubelet: KubeletConfig | Mapping[str, Any] | None = None,
    user_data: str | None = None,
) -> KubeletFacts:
    """What the node's kubelet really gets for max-pods / kube-reserved / system-reserved / eviction-hard.

    * AL2, Windows: ``spec.kubelet`` (bootstrap flags; user scripts run before and cannot change them).
    * Bottlerocket: ``spec.kubelet`` where set, else the user's ``settings.kubernetes`` TOML values
      (max-pods is always Karpenter's: ``spec.kubelet.maxPods`` or the instance type's count).
      Invalid TOML raises :class:`~nodewright.userdata.options.UserDataError`.
    * AL2023: ``spec.kubelet`` where set, else the user's NodeConfig ``kubelet.config`` maps merged in
      order (nodeadm deep-merges the inline config; Karpenter's NodeConfig is last and always sets maxPods).
    * Custom: unknown (the user data is opaque); ``spec.kubelet`` is returned with sources ``unknown``.
    """
    spec = kubelet if isinstance(kubelet, KubeletConfig) else KubeletConfig.from_mapping(kubelet)
    facts = _from_spec(spec)
    resolved = renderer_family(family)
    if resolved == CUSTOM:
        return KubeletFacts(
            max_pods=facts.max_pods,
            pods_per_core=facts.pods_per_core,
            kube_reserved=facts.kube_reserved,
            system_reserved=facts.system_reserved,
            eviction_hard=facts.eviction_hard,
            sources=dict.fromkeys(facts.sources, "unknown"),
        )
    user: dict[str, dict[str, str]] = {}
    if resolved == BOTTLEROCKET and user_data:
        user = _bottlerocket_user(user_data)
    elif resolved == AL2023 and user_data:
        user = _al2023_user(user_data)
    if not user:
        return facts
    sources = dict(facts.sources)
    merged: dict[str, Mapping[str, str]] = {}
    for name in ("kube_reserved", "system_reserved", "eviction_hard"):
        spec_value = getattr(spec, name)
        if spec_value is not None:
            merged[name] = (
                dict(spec_value) if resolved == BOTTLEROCKET else {**user.get(name, {}), **spec_value}
            )
        elif name in user:
            merged[name] = user[name]
            sources[name] = "userData"
        else:
            merged[name] = {}
    return KubeletFacts(
        max_pods=facts.max_pods,
        pods_per_core=facts.pods_per_core if resolved != BOTTLEROCKET else None,
        kube_reserved=merged["kube_reserved"],
        system_reserved=merged["system_reserved"],
        eviction_hard=merged["eviction_hard"],
        sources=sources,
    )


def _bottlerocket_user(user_data: str) -> dict[str, dict[str, str]]:
    from nodewright.userdata.bottlerocket import unmarshal_toml

    logger = logging.getLogger("nodewright")
    previous = logger.disabled
    logger.disabled = True  # the renderer already warns about dropped keys; facts stay quiet
    try:
        _raw, typed, _commands = unmarshal_toml(user_data)
    finally:
        logger.disabled = previous
    out: dict[str, dict[str, str]] = {}
    for toml_key, name in (
        ("kube-reserved", "kube_reserved"),
        ("system-reserved", "system_reserved"),
        ("eviction-hard", "eviction_hard"),
    ):
        if typed.get(toml_key):
            out[name] = dict(typed[toml_key])
    return out


def _al2023_user(user_data: str) -> dict[str, dict[str, str]]:
    import yaml

    from nodewright.userdata.al2023 import NODE_CONFIG, user_entries

    out: dict[str, dict[str, str]] = {}
    for entry in user_entries(user_data):
        if entry.get("Content-Type").split(";")[0].strip().lower() != NODE_CONFIG:
            continue
        try:
            doc = reader.safe_load(entry.body)
        except yaml.YAMLError:
            continue
        config = (
            ((doc or {}).get("spec") or {}).get("kubelet", {}).get("config")
            if isinstance(doc, dict)
            else None
        )
        if not isinstance(config, dict):
            continue
        for json_key, name in (
            ("kubeReserved", "kube_reserved"),
            ("systemReserved", "system_reserved"),
            ("evictionHard", "eviction_hard"),
        ):
            value = config.get(json_key)
            if isinstance(value, dict):
                out[name] = {**out.get(name, {}), **{str(k): str(v) for k, v in value.items()}}
    return out
