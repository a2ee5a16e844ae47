"""From a NodePool, an EC2NodeClass and cluster facts to the :class:`Options` of one launch.

What Karpenter core puts on a NodeClaim (template labels, single-valued ``In`` requirements that
are not restricted node labels, ``karpenter.sh/nodepool``, ``karpenter.k8s.aws/ec2nodeclass``) and
the cluster facts file (``INFO.yaml``) validated with every problem collected. Reads models from
:mod:`nodewright.api`; no I/O beyond what callers pass in, no click.
"""

from __future__ import annotations

import base64
import ipaddress
import logging
import re
from collections.abc import Mapping
from typing import Any, Final

from nodewright import labels as L
from nodewright import redact
from nodewright.api import EC2NodeClass, NodePool
from nodewright.api.amifamily import renderer_family
from nodewright.catalog.loader import DEFAULT_SPEC
from nodewright.errors import Collector, InputError, clip
from nodewright.settings import KarpenterSettings
from nodewright.userdata.dispatch import render
from nodewright.userdata.nodeclass import nodeclass_catalog
from nodewright.userdata.options import (
    BootstrapTaint,
    ClusterInfo,
    KubeletConfig,
    Options,
    resolve_options,
)

log = logging.getLogger("nodewright")

INFO_KEYS: Final = ("clusterName", "clusterEndpoint", "caBundle", "clusterCIDR", "clusterDNS", "ipFamily")


is_restricted_node_label = L.is_restricted_node_label


def nodeclaim_labels(nodepool: NodePool, nodeclass_name: str) -> dict[str, str]:
    """The labels Karpenter core puts on a NodeClaim of ``nodepool`` (before the launch adds its own)."""
    template = nodepool.spec.template
    out: dict[str, str] = dict(template.metadata.labels)
    for req in template.spec.requirements:
        if req.operator == "In" and len(req.values) == 1 and not is_restricted_node_label(req.key):
            out[req.key] = req.values[0]
    out[L.NODEPOOL] = nodepool.name
    out[L.EC2NODECLASS] = nodeclass_name
    return out


def capacity_type_for(nodepool: NodePool) -> str:
    """The capacity type a launch of ``nodepool`` uses by default: its only value, else on-demand if allowed."""
    for req in nodepool.spec.template.spec.requirements:
        if req.key != L.CAPACITY_TYPE:
            continue
        if req.operator == "In" and req.values:
            if L.CAPACITY_TYPE_ON_DEMAND in req.values:
                return L.CAPACITY_TYPE_ON_DEMAND
            return sorted(req.values)[0]
        if req.operator == "NotIn" and L.CAPACITY_TYPE_ON_DEMAND in req.values:
            return L.CAPACITY_TYPE_SPOT
    return L.CAPACITY_TYPE_ON_DEMAND


class _Prefixed(Collector):
    """A collector whose paths sit below ``at`` (cluster info nested in a stack config)."""

    def __init__(self, file: str, at: str) -> None:
        super().__init__(file)
        self.at = at

    def add(self, path: str, message: str) -> None:
        super().add(f"{self.at}.{path}" if self.at and path else self.at or path, message)


# EKS CreateCluster's name rule (what Karpenter's --cluster-name must match to find the cluster).
_CLUSTER_NAME = re.compile(r"[0-9A-Za-z][A-Za-z0-9\-_]*")
_ENDPOINT = re.compile(
    r"https://(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?)*"
    r"|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~\-/]*)?"
)
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")


def _valid_cluster_name(name: str) -> bool:
    return len(name) <= 100 and _CLUSTER_NAME.fullmatch(name) is not None


def _ca_problem(ca: str) -> str | None:
    """Why ``ca`` is not base64 of a PEM certificate (line-wrapped base64 accepted), else None."""
    compact = "".join(ca.split())
    if not compact or len(compact) % 4 or not _BASE64.fullmatch(compact):
        return "caBundle is not base64"
    try:
        pem = base64.b64decode(compact, validate=True)
    except ValueError:
        return "caBundle is not base64"
    if b"-----BEGIN CERTIFICATE-----" not in pem:
        return "caBundle does not decode to a PEM certificate (-----BEGIN CERTIFICATE-----)"
    return None


def cluster_info_from_mapping(raw: Any, *, file: str, at: str = "") -> ClusterInfo:
    """``INFO.yaml`` (``clusterName, clusterEndpoint, caBundle, clusterCIDR, clusterDNS``, ``ipFamily``).

    Validated as EKS and Karpenter would have it (every value ends up in a shell line or a TOML/YAML
    document of the user data); ``at`` prefixes error paths (``config.nodewright:cluster``).
    """
    c = _Prefixed(file, at)
    if not isinstance(raw, Mapping):
        c.add("", "expected a mapping with clusterName, clusterEndpoint, caBundle, clusterCIDR, clusterDNS")
        c.raise_if_any()
        raise AssertionError
    for key in ("clusterName", "clusterEndpoint"):
        if not isinstance(raw.get(key), str) or not raw.get(key):
            c.add(key, f"{key} is required (a non-empty string)")
    for key in ("caBundle", "clusterCIDR", "ipFamily"):
        if raw.get(key) is not None and not isinstance(raw.get(key), str):
            c.add(key, f"{key} must be a string")
    name, endpoint, ca = raw.get("clusterName"), raw.get("clusterEndpoint"), raw.get("caBundle")
    if isinstance(name, str) and name and not _valid_cluster_name(name):
        c.add(
            "clusterName",
            f"invalid cluster name {clip(repr(name), 60)}: EKS names are 1-100 characters, letters, digits, "
            "'-' and '_', starting with a letter or digit",
        )
    if isinstance(endpoint, str) and endpoint and not _ENDPOINT.fullmatch(endpoint):
        c.add(
            "clusterEndpoint",
            f"invalid endpoint {clip(repr(endpoint), 60)}: expected an https URL such as "
            "https://ABCDEF.gr7.us-east-1.eks.amazonaws.com",
        )
    if isinstance(ca, str):
        problem = _ca_problem(ca)
        if problem:
            c.add(
                "caBundle", f"{problem}; give the cluster's certificateAuthority.data (base64 of the PEM CA)"
            )
    dns_raw = raw.get("clusterDNS")
    dns: list[str] = []
    if isinstance(dns_raw, str):
        dns = [dns_raw]
    elif isinstance(dns_raw, list):
        dns = [str(d) for d in dns_raw]
    elif dns_raw is not None:
        c.add(
            "clusterDNS",
            "clusterDNS must be an IP address (the kube-dns Service ClusterIP) or a list of them",
        )
    for i, ip in enumerate(dns):
        try:
            ipaddress.ip_address(ip)
        except ValueError:
            c.add(
                f"clusterDNS[{i}]" if isinstance(dns_raw, list) else "clusterDNS",
                f'"{ip}" is not an IP address',
            )
    cidr = raw.get("clusterCIDR")
    if isinstance(cidr, str):
        try:
            ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            c.add("clusterCIDR", f'"{cidr}" is not a CIDR such as 10.100.0.0/16')
    family = raw.get("ipFamily")
    if isinstance(family, str) and family not in ("ipv4", "ipv6"):
        c.add("ipFamily", f'ipFamily "{family}" must be ipv4 or ipv6')
    for key in sorted(str(k) for k in raw):
        if key not in INFO_KEYS:
            log.warning(
                "%s:%s: unknown cluster-info key ignored (known: %s)", file, key, ", ".join(INFO_KEYS)
            )
    c.raise_if_any()
    redact.mark_secret(raw.get("caBundle"))
    info = ClusterInfo(
        name=str(raw["clusterName"]),
        endpoint=str(raw["clusterEndpoint"]),
        ca_bundle=raw.get("caBundle"),
        cidr=cidr,
        dns=tuple(dns),
        ip_family=family,
    )
    if dns and family:
        is_v6 = ipaddress.ip_address(dns[0]).version == 6
        if is_v6 != (family == "ipv6"):
            log.warning(
                "%s: ipFamily is %s but clusterDNS %s is %s; Karpenter derives the IP family from clusterDNS",
                file,
                family,
                dns[0],
                "IPv6" if is_v6 else "IPv4",
            )
    return info


def options_for(
    nodeclass: EC2NodeClass,
    nodepool: NodePool,
    info: ClusterInfo,
    *,
    instance_type_pods: int | None,
    capacity_type: str | None = None,
) -> tuple[str, Options]:
    """The family and the bootstrap :class:`Options` for one launch of ``nodepool`` on ``nodeclass``."""
    family = renderer_family(nodeclass.ami_family())
    spec = nodeclass.spec
    kubelet = (
        KubeletConfig.from_mapping(spec.kubelet.model_dump(by_alias=True, exclude_none=True))
        if spec.kubelet is not None
        else None
    )
    template = nodepool.spec.template.spec
    default_mounts = family == "Bottlerocket" and supports_default_bind(bottlerocket_ami_version(nodeclass))
    options = resolve_options(
        family=family,
        info=info,
        labels=nodeclaim_labels(nodepool, nodeclass.name),
        capacity_type=capacity_type or capacity_type_for(nodepool),
        taints=[BootstrapTaint(t.key, t.effect, t.value or "") for t in template.taints],
        startup_taints=[BootstrapTaint(t.key, t.effect, t.value or "") for t in template.startup_taints],
        kubelet=kubelet,
        instance_type_pods=instance_type_pods,
        instance_store_policy=spec.instance_store_policy,
        user_data=spec.user_data,
        bottlerocket_default_mount_paths=default_mounts,
    )
    return family, options


_GO_ATOI: Final = re.compile(r"[+-]?[0-9]+")


def _version_from_name(name: str) -> str:
    """``extractVersionFromName``: the first ``-``-separated part that starts with ``v`` and has a dot
    (``bottlerocket-aws-k8s-1.33-x86_64-v1.46.0-431fe75a`` -> ``v1.46.0``)."""
    for part in name.split("-"):
        if part.startswith("v") and "." in part:
            return part
    return ""


def bottlerocket_ami_version(nodeclass: EC2NodeClass) -> str:
    """``Bottlerocket.resolveAMIVersion`` (aws/karpenter-provider-aws v1.14.1 amifamily/bottlerocket.go):
    the version of the first alias term, else parsed from the first ``name`` term that has one, else
    from the status AMI an ``id`` term names, else from any resolved Bottlerocket AMI in the status;
    ``""`` when none is known."""
    terms = nodeclass.spec.ami_selector_terms
    for term in terms:
        if term.alias:
            parts = term.alias.split("@")
            if len(parts) == 2:
                return parts[1]
    for term in terms:
        if term.name and (version := _version_from_name(term.name)):
            return version
    amis = [a for a in nodeclass.status.amis if isinstance(a, dict)]
    for term in terms:
        if not term.id:
            continue
        for ami in amis:
            name = str(ami.get("name") or "")
            if ami.get("id") == term.id and "bottlerocket" in name and (version := _version_from_name(name)):
                return version
    for ami in amis:
        name = str(ami.get("name") or "")
        if "bottlerocket" in name and (version := _version_from_name(name)):
            return version
    return ""


def supports_default_bind(version: str) -> bool:
    """``version.SupportsDefaultBind``: ``latest``, or major.minor >= 1.46 with at least three parts."""
    if not version:
        return False
    if version == "latest":
        return True
    parts = version.lstrip("v").split(".")
    if len(parts) < 3:
        return False
    if not all(_GO_ATOI.fullmatch(p) for p in parts[:2]):
        return False  # strconv.Atoi: an optional sign and ASCII digits only
    major, minor = int(parts[0]), int(parts[1])
    return major > 1 or (major == 1 and minor >= 46)


FALLBACK_MAX_PODS: Final = 110


def instance_type_pods(
    catalog: str, instance_type: str, nodeclass: EC2NodeClass, settings: KarpenterSettings | None = None
) -> int:
    """The pod capacity Karpenter computes for ``instance_type`` under ``nodeclass`` (from the
    catalog) with Karpenter's ``settings`` (RESERVED_ENIS lowers the ENI-limited max pods)."""
    cat = nodeclass_catalog(catalog, nodeclass, settings)
    it = cat.get(instance_type)
    if it is None:
        close = [n for n in cat.names() if n.split(".")[0] == instance_type.split(".")[0]][:5]
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise InputError(f'instance type "{instance_type}" is not in the catalog{hint}', file=catalog)
    return int(it.max_pods)


def launch_options(
    nodeclass: EC2NodeClass,
    nodepool: NodePool,
    cluster: ClusterInfo,
    *,
    instance_type: str | None = None,
    max_pods: int | None = None,
    catalog: str = DEFAULT_SPEC,
    capacity_type: str | None = None,
    settings: KarpenterSettings | None = None,
) -> tuple[str, Options]:
    """:func:`options_for` with max-pods resolved: ``max_pods``, else the instance type's pod count
    (from ``catalog``) when ``spec.kubelet.maxPods`` is unset, else 110 with a warning."""
    pods = max_pods
    kubelet = nodeclass.spec.kubelet
    if pods is None and (kubelet is None or kubelet.max_pods is None):
        if instance_type is not None:
            pods = instance_type_pods(catalog, instance_type, nodeclass, settings)
        else:
            log.warning(
                "no instance type and no spec.kubelet.maxPods: max-pods is %d; Karpenter uses the instance "
                "type's pod capacity (one launch template per value), pass --instance-type to see it",
                FALLBACK_MAX_PODS,
            )
            pods = FALLBACK_MAX_PODS
    return options_for(nodeclass, nodepool, cluster, instance_type_pods=pods, capacity_type=capacity_type)


def render_user_data(
    nodeclass: EC2NodeClass,
    nodepool: NodePool,
    cluster: ClusterInfo,
    *,
    instance_type: str | None = None,
    max_pods: int | None = None,
    catalog: str = DEFAULT_SPEC,
    capacity_type: str | None = None,
) -> str:
    """The decoded user data a node of ``nodepool`` on ``nodeclass`` receives (what the CLI prints raw)."""
    family, options = launch_options(
        nodeclass,
        nodepool,
        cluster,
        instance_type=instance_type,
        max_pods=max_pods,
        catalog=catalog,
        capacity_type=capacity_type,
    )
    return render(family, options).text
