"""AMI-family facts, with one owner: family names, alias resolution, the renderer a family selects,
per-family default block devices, the SSM parameter of an ``alias`` term, the EC2NodeClass
``metadataOptions`` default and EC2's user-data size limit.

Every layer that needs one of these facts (drift hashes, the catalog's overhead math, user data,
the stack plan, the policy pack) imports it from here, so they cannot disagree.

Upstream (aws/karpenter-provider-aws v1.14.1):

* ``pkg/apis/v1/ec2nodeclass.go``: ``AMIFamily()``, ``Alias()``, ``amiFamilyFromAlias`` (the
  family of an alias is matched case-insensitively, e.g. ``AL2023@latest`` is AL2023);
* ``pkg/providers/amifamily/resolver.go``: ``GetAMIFamily`` (anything unknown renders as AL2);
* ``pkg/providers/amifamily/{al2,al2023,bottlerocket,custom,windows}.go``:
  ``DefaultBlockDeviceMappings`` and the SSM paths of ``DescribeImageQuery``;
* ``pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml``: the ``metadataOptions`` default;
* ``pkg/providers/launchtemplate/metrics.go``: ``userDataMaxBytes`` and ``userDataWarnBytes``.

Boundary: pure data and string functions over raw (camelCase) mappings; no pydantic models.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from nodewright.errors import InputError

AL2: Final = "AL2"
AL2023: Final = "AL2023"
BOTTLEROCKET: Final = "Bottlerocket"
CUSTOM: Final = "Custom"
WINDOWS_FAMILIES: Final = ("Windows2019", "Windows2022", "Windows2025")
AMI_FAMILIES: Final = (AL2, AL2023, BOTTLEROCKET, CUSTOM, *WINDOWS_FAMILIES)
# alias family (lower case, before "@") -> amiFamily
ALIAS_FAMILIES: Final[Mapping[str, str]] = {f.lower(): f for f in AMI_FAMILIES if f != CUSTOM}

# EC2's limit on the raw user data of a launch template, and Karpenter's warning threshold (90 %).
USER_DATA_MAX_BYTES: Final = 16384
USER_DATA_WARN_BYTES: Final = USER_DATA_MAX_BYTES * 9 // 10

# The EC2NodeClass CRD default of spec.metadataOptions (the API server always applies it).
DEFAULT_METADATA_OPTIONS: Final[Mapping[str, Any]] = {
    "httpEndpoint": "enabled",
    "httpProtocolIPv6": "disabled",
    "httpPutResponseHopLimit": 1,
    "httpTokens": "required",
}


def family_from_alias(alias: str) -> str:
    """``amiFamilyFromAlias``: the family of ``family@version`` (case-insensitive), else Custom."""
    return ALIAS_FAMILIES.get(alias.split("@", 1)[0].lower(), CUSTOM)


def resolve_family(ami_family: str | None, alias: str | None) -> str:
    """``AMIFamily()``: ``spec.amiFamily`` if set, else the alias's family, else Custom."""
    if ami_family:
        return ami_family
    if alias:
        return family_from_alias(alias)
    return CUSTOM


def _term_alias(term: Any) -> str | None:
    value = term.get("alias") if isinstance(term, Mapping) else getattr(term, "alias", None)
    return str(value) if value else None


def spec_alias(terms: Iterable[Any] | None) -> str | None:
    """The first ``alias`` of ``amiSelectorTerms`` (raw mappings or models), as ``Alias()`` finds it."""
    for term in terms or ():
        alias = _term_alias(term)
        if alias:
            return alias
    return None


def ami_family(spec: Mapping[str, Any]) -> str:
    """``AMIFamily()`` of a raw EC2NodeClass ``spec`` mapping (camelCase keys)."""
    fam = spec.get("amiFamily")
    return resolve_family(str(fam) if fam else None, spec_alias(spec.get("amiSelectorTerms")))


def split_alias(alias: str) -> tuple[str, str] | None:
    """``(family, version)`` of ``family@version``, the family lower-cased; None without ``@``."""
    if "@" not in alias:
        return None
    fam, version = alias.split("@", 1)
    return fam.lower(), version


def renderer_family(ami_family: str | None) -> str:
    """``GetAMIFamily``: the user-data renderer a family name selects (anything unknown is AL2)."""
    if ami_family in (AL2023, BOTTLEROCKET, CUSTOM, *WINDOWS_FAMILIES):
        return str(ami_family)
    return AL2


def _ebs(size: str) -> dict[str, Any]:
    return {"encrypted": True, "volumeSize": size, "volumeType": "gp3"}


def default_block_device_mappings(family: str) -> list[dict[str, Any]]:
    """``DefaultBlockDeviceMappings()`` as EC2NodeClass-shaped mappings (Custom: none)."""
    resolved = renderer_family(family)
    if resolved == CUSTOM:
        return []
    if resolved == BOTTLEROCKET:
        return [
            {"deviceName": "/dev/xvda", "ebs": _ebs("4Gi")},
            {"deviceName": "/dev/xvdb", "ebs": _ebs("20Gi")},
        ]
    if resolved in WINDOWS_FAMILIES:
        return [{"deviceName": "/dev/sda1", "ebs": _ebs("50Gi")}]
    return [{"deviceName": "/dev/xvda", "ebs": _ebs("20Gi")}]


def ssm_parameter_for_alias(
    alias: str, *, k8s_version: str, arch: str = "amd64", variant: str = "standard"
) -> str:
    """The SSM parameter an ``alias: family@version`` term resolves through.

    ``arch`` is ``amd64`` or ``arm64``; ``variant`` is ``standard``, ``nvidia`` or ``neuron`` (AL2023),
    ``nvidia`` (Bottlerocket, AL2 ``gpu``). A bad alias is an :class:`InputError` at
    ``spec.amiSelectorTerms``.
    """
    parts = split_alias(alias)
    if parts is None:
        raise InputError(
            f'alias "{alias}" must be family@version (al2023@latest)', path="spec.amiSelectorTerms"
        )
    fam, version = parts
    latest = version in ("", "latest")
    x86 = arch != "arm64"
    a = "x86_64" if x86 else "arm64"
    if fam == "al2":
        suffix = ("" if x86 else "-arm64") if variant == "standard" else "-gpu"
        leaf = "recommended" if latest else f"amazon-eks{suffix}-node-{k8s_version}-{version}"
        return f"/aws/service/eks/optimized-ami/{k8s_version}/amazon-linux-2{suffix}/{leaf}/image_id"
    if fam == "al2023":
        leaf = "recommended" if latest else f"amazon-eks-node-al2023-{a}-{variant}-{k8s_version}-{version}"
        return f"/aws/service/eks/optimized-ami/{k8s_version}/amazon-linux-2023/{a}/{variant}/{leaf}/image_id"
    if fam == "bottlerocket":
        flavour = f"aws-k8s-{k8s_version}" + ("-nvidia" if variant == "nvidia" else "")
        return (
            f"/aws/service/bottlerocket/{flavour}/{a}/{'latest' if latest else version.lstrip('v')}/image_id"
        )
    if fam in ("windows2019", "windows2022", "windows2025"):
        if not latest:
            raise InputError(
                f'alias "{alias}": Windows aliases only accept @latest', path="spec.amiSelectorTerms"
            )
        return f"/aws/service/ami-windows-latest/Windows_Server-{fam[-4:]}-English-Core-EKS_Optimized-{k8s_version}/image_id"
    raise InputError(
        f'alias family "{fam}" is not one of al2, al2023, bottlerocket, windows2019/2022/2025',
        path="spec.amiSelectorTerms",
    )
