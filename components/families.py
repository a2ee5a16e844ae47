"""AMI-family facts the NodeClass component needs, as pure data (no ``pulumi`` import).

SSM parameter names for ``alias`` AMI selector terms (reference/karpenter-userdata.md section 4).
Block devices and metadata options are the core's
(:func:`nodewright.userdata.launch_template.launch_template_spec`); the user data comes from
:mod:`components.userdata_adapter`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nodewright import labels
from nodewright.errors import InputError

log = logging.getLogger("nodewright")


@dataclass(frozen=True, kw_only=True)
class AmiSource:
    """Where the image id comes from: an SSM parameter (alias) or a literal id."""

    ssm_parameter: str | None = None
    image_id: str | None = None
    alias: str | None = None


def _spec(nodeclass: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = nodeclass.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _alias(nodeclass: Mapping[str, Any]) -> str | None:
    for term in _spec(nodeclass).get("amiSelectorTerms") or []:
        if isinstance(term, Mapping) and term.get("alias"):
            return str(term["alias"])
    return None


def family_of_nodeclass(nodeclass: Mapping[str, Any]) -> str:
    """``EC2NodeClass.AMIFamily()``: ``spec.amiFamily`` if set, else the alias family."""
    fam = _spec(nodeclass).get("amiFamily")
    if fam:
        return str(fam)
    alias = _alias(nodeclass)
    if alias:
        name = alias.split("@", 1)[0].lower()
        return {
            "al2": "AL2",
            "al2023": "AL2023",
            "bottlerocket": "Bottlerocket",
            "windows2019": "Windows2019",
            "windows2022": "Windows2022",
            "windows2025": "Windows2025",
        }.get(name, "Custom")
    return "Custom"


def _arch(pools: Sequence[Mapping[str, Any]]) -> str:
    for pool in pools:
        reqs = pool.get("spec", {}).get("template", {}).get("spec", {}).get("requirements") or []
        for r in reqs:
            if r.get("key") == labels.ARCH and r.get("operator") == "In" and r.get("values") == ["arm64"]:
                return "arm64"
    return "amd64"


def ssm_parameter_for_alias(alias: str, *, kubernetes_version: str, arch: str) -> str:
    """The SSM parameter Karpenter reads for an ``alias`` term (``al2023@latest``, ``bottlerocket@v1.20.3``)."""
    name, _, version = alias.partition("@")
    name = name.lower()
    k8s = kubernetes_version
    latest = version in ("", "latest")
    x86 = arch != "arm64"
    if name == "al2023":
        a = "x86_64" if x86 else "arm64"
        leaf = "recommended" if latest else f"amazon-eks-node-al2023-{a}-standard-{k8s}-{version}"
        return f"/aws/service/eks/optimized-ami/{k8s}/amazon-linux-2023/{a}/standard/{leaf}/image_id"
    if name == "al2":
        suffix = "" if x86 else "-arm64"
        leaf = "recommended" if latest else f"amazon-eks{suffix}-node-{k8s}-{version}"
        return f"/aws/service/eks/optimized-ami/{k8s}/amazon-linux-2{suffix}/{leaf}/image_id"
    if name == "bottlerocket":
        a = "x86_64" if x86 else "arm64"
        v = "latest" if latest else version.lstrip("v")
        return f"/aws/service/bottlerocket/aws-k8s-{k8s}/{a}/{v}/image_id"
    if name.startswith("windows"):
        year = name[len("windows") :]
        return (
            f"/aws/service/ami-windows-latest/Windows_Server-{year}-English-Core-EKS_Optimized-{k8s}/image_id"
        )
    raise InputError(
        f"unknown AMI alias family {name!r}; use al2, al2023, bottlerocket or windows20xx",
        path="spec.amiSelectorTerms",
    )


def ami_source(
    nodeclass: Mapping[str, Any], *, pools: Sequence[Mapping[str, Any]], kubernetes_version: str
) -> AmiSource:
    alias = _alias(nodeclass)
    if alias:
        return AmiSource(
            ssm_parameter=ssm_parameter_for_alias(
                alias, kubernetes_version=kubernetes_version, arch=_arch(pools)
            ),
            alias=alias,
        )
    for term in _spec(nodeclass).get("amiSelectorTerms") or []:
        if isinstance(term, Mapping) and term.get("id"):
            return AmiSource(image_id=str(term["id"]))
        if isinstance(term, Mapping) and term.get("ssmParameter"):
            return AmiSource(ssm_parameter=str(term["ssmParameter"]))
    raise InputError(
        "nodewright resolves AMIs from an alias, id or ssmParameter term; tag/name selectors need "
        "DescribeImages at deploy time - pin the AMI id instead",
        file=str(nodeclass.get("metadata", {}).get("name", "<EC2NodeClass>")),
        path="spec.amiSelectorTerms",
    )
