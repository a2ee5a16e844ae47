"""Bootstrap options: the input of every user-data renderer, and Karpenter's launch-template pipeline.

:class:`Options` mirrors the AWS provider's ``bootstrap.Options`` (cluster name, endpoint, CIDR,
CA bundle, kubelet configuration, labels, taints, instance-store policy, custom user data).
:func:`resolve_options` is the part of ``launchtemplate.go``/``resolver.go`` that fills it
(aws/karpenter-provider-aws v1.14.1 ``pkg/providers/launchtemplate/launchtemplate.go``,
``pkg/providers/amifamily/resolver.go``): capacity-type label, ``do-not-sync-taints`` (every
family but Custom), ``RejectForbiddenLabels``, the unregistered taint appended, ``maxPods`` always
set and ``clusterDNS`` defaulted to the kube-dns IP. Pure data; no I/O, no pydantic, no click.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from nodewright import labels as L
from nodewright import redact
from nodewright.api.amifamily import CUSTOM, renderer_family
from nodewright.errors import RenderError
from nodewright.goduration import format_duration as format_go_duration
from nodewright.goduration import parse_duration as parse_go_duration

# -- families (owned by nodewright.api.amifamily) ----------------------------------------------
RAID0: Final = "RAID0"


class UserDataError(RenderError):
    """User data that cannot be rendered; ``path`` says where (``spec.userData``, ``spec.kubelet``...)."""

    def __init__(self, message: str, *, path: str = "spec.userData") -> None:
        self.path = path
        self.message = message
        super().__init__(message)


# -- kubelet -----------------------------------------------------------------------------------
_KUBELET_KEYS: Final = {
    "clusterDNS": "cluster_dns",
    "maxPods": "max_pods",
    "podsPerCore": "pods_per_core",
    "systemReserved": "system_reserved",
    "kubeReserved": "kube_reserved",
    "evictionHard": "eviction_hard",
    "evictionSoft": "eviction_soft",
    "evictionSoftGracePeriod": "eviction_soft_grace_period",
    "evictionMaxPodGracePeriod": "eviction_max_pod_grace_period",
    "imageGCHighThresholdPercent": "image_gc_high_threshold_percent",
    "imageGCLowThresholdPercent": "image_gc_low_threshold_percent",
    "cpuCFSQuota": "cpu_cfs_quota",
}


@dataclass(frozen=True, kw_only=True)
class KubeletConfig:
    """``EC2NodeClass.spec.kubelet`` (v1.14.1 fields); None means "not set"."""

    cluster_dns: tuple[str, ...] | None = None
    max_pods: int | None = None
    pods_per_core: int | None = None
    system_reserved: Mapping[str, str] | None = None
    kube_reserved: Mapping[str, str] | None = None
    eviction_hard: Mapping[str, str] | None = None
    eviction_soft: Mapping[str, str] | None = None
    eviction_soft_grace_period: Mapping[str, str] | None = None
    eviction_max_pod_grace_period: int | None = None
    image_gc_high_threshold_percent: int | None = None
    image_gc_low_threshold_percent: int | None = None
    cpu_cfs_quota: bool | None = None

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any] | None) -> KubeletConfig:
        """From the camelCase ``spec.kubelet`` mapping (``model_dump(by_alias=True)`` works too)."""
        if not raw:
            return cls()
        values: dict[str, Any] = {}
        for key, value in raw.items():
            attr = _KUBELET_KEYS.get(key) or (key if key in _KUBELET_KEYS.values() else None)
            if attr is None or value is None:
                continue
            if attr == "cluster_dns":
                value = tuple(str(v) for v in value)
            elif isinstance(value, Mapping):
                value = {str(k): str(v) for k, v in value.items()}
            values[attr] = value
        return cls(**values)

    def grace_periods(self) -> dict[str, str] | None:
        """``evictionSoftGracePeriod`` as Go's ``Duration.String()`` writes it (``1m`` -> ``1m0s``)."""
        if self.eviction_soft_grace_period is None:
            return None
        out = {}
        for key, value in self.eviction_soft_grace_period.items():
            try:
                out[key] = format_go_duration(parse_go_duration(value))
            except ValueError as exc:
                raise UserDataError(
                    f"{exc}; use a Go duration such as 1m30s",
                    path=f"spec.kubelet.evictionSoftGracePeriod.{key}",
                ) from None
        return out

    def to_json(self) -> dict[str, Any]:
        """The ``omitempty`` JSON Karpenter marshals into the AL2023 NodeConfig (declaration order)."""
        out: dict[str, Any] = {}
        if self.cluster_dns:
            out["clusterDNS"] = list(self.cluster_dns)
        for key in ("maxPods", "podsPerCore"):
            v = getattr(self, _KUBELET_KEYS[key])
            if v:
                out[key] = v
        for key in ("systemReserved", "kubeReserved", "evictionHard", "evictionSoft"):
            m = getattr(self, _KUBELET_KEYS[key])
            if m:
                out[key] = dict(m)
        grace = self.grace_periods()
        if grace:
            out["evictionSoftGracePeriod"] = grace
        for key in ("evictionMaxPodGracePeriod", "imageGCHighThresholdPercent", "imageGCLowThresholdPercent"):
            v = getattr(self, _KUBELET_KEYS[key])
            if v:
                out[key] = v
        if self.cpu_cfs_quota is not None:
            out["cpuCFSQuota"] = self.cpu_cfs_quota
        return out


# -- taints and options -------------------------------------------------------------------------


@dataclass(frozen=True)
class BootstrapTaint:
    """A ``corev1.Taint`` as the bootstrap flags take it (``--register-with-taints``); the API model is
    :class:`nodewright.api.core.Taint`."""

    key: str
    effect: str
    value: str = ""

    def to_string(self) -> str:
        """``Taint.ToString()``: ``key=value:Effect``, or ``key:Effect`` when the value is empty."""
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any]) -> BootstrapTaint:
        return cls(key=str(raw["key"]), effect=str(raw["effect"]), value=str(raw.get("value") or ""))


UNREGISTERED_TAINT: Final = BootstrapTaint(L.UNREGISTERED_TAINT_KEY, "NoExecute")


@dataclass(frozen=True, kw_only=True)
class Options:
    """``bootstrap.Options``: everything a family's bootstrapper needs to render user data.

    ``ca_bundle`` is a secret: it appears in the user data itself and nowhere else.
    ``bottlerocket_default_mount_paths`` is Karpenter's ``EnableDefaultMountPaths`` (Bottlerocket
    1.46.0+ or ``latest``): the RAID0 bind command then has no ``--dirs``.
    """

    cluster_name: str
    cluster_endpoint: str
    cluster_cidr: str | None = None
    ca_bundle: str | None = field(default=None, repr=False)
    kubelet: KubeletConfig | None = None
    taints: tuple[BootstrapTaint, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    instance_store_policy: str | None = None
    custom_user_data: str | None = None
    bottlerocket_default_mount_paths: bool = False

    def is_ipv6(self) -> bool:
        """``isIPv6``: the first clusterDNS address is not IPv4."""
        dns = self.kubelet.cluster_dns if self.kubelet else None
        if not dns:
            return False
        try:
            return ipaddress.ip_address(dns[0]).version != 4
        except ValueError:
            return True  # net.ParseIP returns nil, and nil.To4() == nil

    def redact(self, text: str) -> str:
        """``text`` with the CA bundle and every other secret replaced by ``[secret]``."""
        return redact.redact(text, extra=(self.ca_bundle,) if self.ca_bundle else ())


@dataclass(frozen=True, kw_only=True)
class ClusterInfo:
    """``INFO.yaml``: what Karpenter learns from its flags, EKS and the kube-dns Service."""

    name: str
    endpoint: str
    ca_bundle: str | None = field(default=None, repr=False)
    cidr: str | None = None
    dns: tuple[str, ...] = ()
    ip_family: str | None = None


def is_forbidden_label(key: str) -> bool:
    """``RejectForbiddenLabels``: the domain is, or ends in, a kubelet-reserved domain."""
    domain = L.label_domain(key)
    return any(domain == d or domain.endswith("." + d) for d in L.KUBELET_FORBIDDEN_LABEL_DOMAINS)


def reject_forbidden_labels(labels: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in labels.items() if not is_forbidden_label(k)}


def resolve_options(
    *,
    family: str,
    info: ClusterInfo,
    labels: Mapping[str, str],
    capacity_type: str,
    taints: Sequence[BootstrapTaint] = (),
    startup_taints: Sequence[BootstrapTaint] = (),
    kubelet: KubeletConfig | None = None,
    instance_type_pods: int | None = None,
    instance_store_policy: str | None = None,
    user_data: str | None = None,
    bottlerocket_default_mount_paths: bool = False,
) -> Options:
    """Karpenter's ``EnsureAll`` + ``CreateAMIOptions`` + ``resolveLaunchTemplates`` for one launch.

    ``labels`` are the NodeClaim's labels; ``instance_type_pods`` is the instance type's computed pod
    capacity, used when ``kubelet.maxPods`` is unset (raises when both are missing).
    """
    family = renderer_family(family)
    merged = {**labels, L.CAPACITY_TYPE: capacity_type}
    if family != CUSTOM:
        merged[L.DO_NOT_SYNC_TAINTS] = "true"
    merged = reject_forbidden_labels(merged)
    all_taints = list(taints) + list(startup_taints)
    if not any(t.key == UNREGISTERED_TAINT.key and t.effect == UNREGISTERED_TAINT.effect for t in all_taints):
        all_taints.append(UNREGISTERED_TAINT)
    k = kubelet or KubeletConfig()
    if k.max_pods is None:
        if instance_type_pods is None:
            raise UserDataError(
                "maxPods is unknown: set spec.kubelet.maxPods or name the instance type (its pod capacity is used)",
                path="spec.kubelet.maxPods",
            )
        k = replace(k, max_pods=instance_type_pods)
    if not k.cluster_dns and info.dns:
        k = replace(k, cluster_dns=(info.dns[0],))
    return Options(
        cluster_name=info.name,
        cluster_endpoint=info.endpoint,
        cluster_cidr=info.cidr,
        ca_bundle=info.ca_bundle,
        kubelet=k,
        taints=tuple(all_taints),
        labels=merged,
        instance_store_policy=instance_store_policy,
        custom_user_data=user_data,
        bottlerocket_default_mount_paths=bottlerocket_default_mount_paths,
    )


def taints_from(raw: Iterable[Mapping[str, Any]] | None) -> list[BootstrapTaint]:
    return [BootstrapTaint.from_mapping(t) for t in raw or ()]
