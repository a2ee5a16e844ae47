"""The stack plan's data: the stack config nodewright reads and what each component declares.

:func:`read_settings` reads ``nodewright:<key>`` stack config (docs/pulumi.md); the frozen
dataclasses are the output of :func:`nodewright.stack.build.build_stack_plan`, one per Pulumi component
(NodeClass, NodePool, Capacity, OperatingSystemConfig). Pure data; no ``pulumi`` import.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from nodewright import crd
from nodewright.catalog.loader import DEFAULT_SPEC
from nodewright.errors import Collector, InputError
from nodewright.scheduling.claimsfile import STRATEGIES
from nodewright.settings import KarpenterSettings, resolve
from nodewright.stack.ami import AmiSource
from nodewright.userdata.launch_template import LaunchTemplateSpec

MODES: Final = ("karpenter", "fleet")


@dataclass(frozen=True, kw_only=True)
class ClusterSettings:
    """``nodewright:cluster`` stack config (same fields as ``render userdata --cluster-info``)."""

    cluster_name: str
    cluster_endpoint: str
    ca_bundle: str
    cluster_cidr: str = ""
    cluster_dns: str = ""
    ip_family: str = "ipv4"

    def as_mapping(self) -> dict[str, str]:
        return {
            "clusterName": self.cluster_name,
            "clusterEndpoint": self.cluster_endpoint,
            "caBundle": self.ca_bundle,
            "clusterCIDR": self.cluster_cidr,
            "clusterDNS": self.cluster_dns,
            "ipFamily": self.ip_family,
        }


@dataclass(frozen=True, kw_only=True)
class Settings:
    """The stack config nodewright reads (``nodewright:<key>``)."""

    stack: str
    mode: str
    files: tuple[str, ...]
    cluster: ClusterSettings
    kubernetes_version: str = "1.31"
    cluster_state: str | None = None  # a state file, or "live" (kubeconfig/kube_context)
    kubeconfig: str | None = None
    kube_context: str | None = None
    claims: str | None = None
    subnets: Mapping[str, str] = field(default_factory=dict)
    security_groups: tuple[str, ...] = ()
    launch_templates: bool = True
    osc_format: str = "cloud-init"
    osc_namespace: str = "kube-system"
    tags: Mapping[str, str] = field(default_factory=dict)
    catalog: str = DEFAULT_SPEC  # nodewright:catalog, else aws:<aws:region>
    karpenter_version: str = crd.DEFAULT_VERSION
    plan_strategy: str = "karpenter"  # fleet mode: the strategy the claims file must be planned with
    karpenter: KarpenterSettings = field(default_factory=KarpenterSettings)
    """``nodewright:karpenter``: Karpenter's controller settings (featureGates, preferencePolicy...)."""

    @property
    def release(self) -> crd.Release:
        """The Karpenter release of ``karpenter_version`` (validated by :func:`read_settings`)."""
        return crd.release(self.karpenter_version, source="config.nodewright:karpenterVersion")

    def karpenter_dict(self) -> dict[str, object]:
        """What outputs state about Karpenter: ``{version, featureGates, preferencePolicy, ...}``."""
        return {"version": self.karpenter_version, **self.karpenter.as_dict()}


@dataclass(frozen=True, kw_only=True)
class LaunchTemplatePlan:
    """One launch template: a distinct user data (max-pods group) for one NodePool on one NodeClass."""

    key: str  # stable suffix of the resource name
    nodepool: str
    nodeclass: str
    family: str
    user_data: str  # decoded, exactly nodewright.userdata's render
    max_pods: int
    capacity_type: str
    instance_types: tuple[str, ...]
    spec: LaunchTemplateSpec | None = None  # what Karpenter's provider would put in the template
    efa_count: int = 0


@dataclass(frozen=True, kw_only=True)
class NodeClassPlan:
    name: str
    body: Mapping[str, Any]
    family: str
    ami: AmiSource
    block_devices: tuple[Mapping[str, Any], ...]
    metadata_options: Mapping[str, Any]
    launch_templates: tuple[LaunchTemplatePlan, ...]


@dataclass(frozen=True, kw_only=True)
class PoolHealthView:
    status: str = "Unknown"
    reason: str = ""
    verified: bool = False
    changed: bool = True
    node_class: str = ""

    def as_mapping(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "reason": self.reason,
            "verified": self.verified,
            "changed": self.changed,
            "nodeClass": self.node_class,
        }


@dataclass(frozen=True, kw_only=True)
class NodePoolPlan:
    name: str
    body: Mapping[str, Any]  # the CR with hash annotations stamped
    nodeclass: str
    hash: str
    health: PoolHealthView


@dataclass(frozen=True, kw_only=True)
class ClaimPlan:
    name: str
    nodepool: str
    nodeclass: str
    instance_type: str
    zone: str
    capacity_type: str
    nodepool_hash: str
    launch_template: str  # LaunchTemplatePlan.key
    labels: Mapping[str, str]
    metadata_options: Mapping[str, Any]  # the launch template's (its NodeClass's), for the instance


@dataclass(frozen=True, kw_only=True)
class OscPlan:
    name: str
    secret: Mapping[str, Any]  # the v1 Secret manifest (base64 data)


@dataclass(frozen=True, kw_only=True)
class StackPlan:
    settings: Settings
    nodeclasses: tuple[NodeClassPlan, ...]
    nodepools: tuple[NodePoolPlan, ...]
    claims: tuple[ClaimPlan, ...]
    oscs: tuple[OscPlan, ...]
    notes: tuple[str, ...] = ()
    """Why a part of the stack declares nothing (no NodePool, an unused EC2NodeClass, ...)."""


# -- settings ------------------------------------------------------------------------------------


def _json(value: str | None, *, key: str, default: Any) -> Any:
    if value is None or value == "":
        return default
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def _region_catalog(region: str | None) -> str:
    """``nodewright:catalog`` unset: the catalog of the stack's ``aws:region`` (else us-east-1)."""
    region = (region or "").strip()
    return f"aws:{region}" if region else DEFAULT_SPEC


def read_settings(get: Mapping[str, str | None], *, stack: str) -> Settings:
    """Settings from flattened stack config (``key`` -> string, as ``pulumi.Config().get`` gives).

    ``get`` may also hold ``aws:region`` (the Pulumi AWS provider's region): when
    ``nodewright:catalog`` is unset, the catalog is ``aws:<that region>``.
    """
    c = Collector(f"Pulumi.{stack}.yaml")
    mode = get.get("mode") or "karpenter"
    if mode not in MODES:
        c.add("config.nodewright:mode", f"must be one of {', '.join(MODES)}, got {mode!r}")
    strategy = get.get("planStrategy") or "karpenter"
    if strategy not in STRATEGIES:
        c.add("config.nodewright:planStrategy", f"must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    files = _json(get.get("files"), key="files", default=[])
    if isinstance(files, str):
        files = [files]
    if not isinstance(files, list) or not files:
        c.add(
            "config.nodewright:files", "list the NodePool/EC2NodeClass/OperatingSystemConfig files to deploy"
        )
        files = []
    cl = _json(get.get("cluster"), key="cluster", default={})
    if not isinstance(cl, Mapping):
        cl = {}
    for k in ("clusterName", "clusterEndpoint", "caBundle"):
        if not cl.get(k):
            c.add(
                f"config.nodewright:cluster.{k}",
                "required (the same fields as render userdata --cluster-info)",
            )
    subnets = _json(get.get("subnets"), key="subnets", default={})
    sgs = _json(get.get("securityGroups"), key="securityGroups", default=[])
    tags = _json(get.get("tags"), key="tags", default={})
    karpenter_version = get.get("karpenterVersion") or crd.DEFAULT_VERSION
    try:
        karpenter_version = crd.release(karpenter_version).version
    except InputError as exc:
        c.add("config.nodewright:karpenterVersion", exc.message)
    karpenter = KarpenterSettings()
    raw_karpenter = _json(get.get("karpenter"), key="karpenter", default={})
    if not isinstance(raw_karpenter, Mapping):
        c.add(
            "config.nodewright:karpenter",
            "must be a map (featureGates, preferencePolicy, minValuesPolicy, ...)",
        )
    else:
        try:
            karpenter = resolve(stack=raw_karpenter)
            if not c.problems:
                crd.check_gates(karpenter, crd.release(karpenter_version))
        except InputError as exc:
            c.add("config.nodewright:karpenter", exc.message)
    c.raise_if_any()
    # the values end up in shell lines and TOML of user data: validated as EKS/Karpenter would
    from nodewright.userdata.launch import cluster_info_from_mapping

    cluster_info_from_mapping(dict(cl), file=c.file, at="config.nodewright:cluster")
    lt = get.get("launchTemplates")
    return Settings(
        stack=stack,
        mode=mode,
        files=tuple(str(f) for f in files),
        cluster=ClusterSettings(
            cluster_name=str(cl["clusterName"]),
            cluster_endpoint=str(cl["clusterEndpoint"]),
            ca_bundle=str(cl["caBundle"]),
            cluster_cidr=str(cl.get("clusterCIDR", "")),
            cluster_dns=str(cl.get("clusterDNS", "")),
            ip_family=str(cl.get("ipFamily", "ipv4")),
        ),
        kubernetes_version=str(get.get("kubernetesVersion") or "1.31"),
        cluster_state=get.get("clusterState") or None,
        kubeconfig=get.get("kubeconfig") or None,
        kube_context=get.get("kubeContext") or None,
        claims=get.get("claims") or None,
        subnets={str(k): str(v) for k, v in subnets.items()} if isinstance(subnets, Mapping) else {},
        security_groups=tuple(str(s) for s in sgs) if isinstance(sgs, list) else (),
        launch_templates=(lt or "true").lower() != "false",
        osc_format=get.get("oscFormat") or "cloud-init",
        osc_namespace=get.get("oscNamespace") or "kube-system",
        tags={str(k): str(v) for k, v in tags.items()} if isinstance(tags, Mapping) else {},
        catalog=get.get("catalog") or _region_catalog(get.get("aws:region")),
        karpenter_version=karpenter_version,
        plan_strategy=strategy,
        karpenter=karpenter,
    )
