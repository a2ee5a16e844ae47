"""Per-family facts a launch template needs besides user data: default block devices, metadata
options and the SSM parameter an ``alias`` AMI selector term resolves through.

Pure data from reference/karpenter-userdata.md sections 4 and 7 (``DefaultBlockDeviceMappings``,
``DefaultMetadataOptions``, the SSM paths in ``al2.go``/``al2023.go``/``bottlerocket.go``/``windows.go``).
"""

from __future__ import annotations

from typing import Any, Final

from nodewright.userdata.options import (
    AL2,
    AL2023,
    BOTTLEROCKET,
    CUSTOM,
    WINDOWS_FAMILIES,
    UserDataError,
    family_of,
)


def _ebs(size: str) -> dict[str, Any]:
    return {"encrypted": True, "volumeSize": size, "volumeType": "gp3"}


def default_block_device_mappings(family: str) -> list[dict[str, Any]]:
    """``amiFamily.DefaultBlockDeviceMappings()`` as EC2NodeClass-shaped mappings (Custom: none)."""
    resolved = family_of(family)
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


# The EC2NodeClass CRD default (always applied by the API server).
DEFAULT_METADATA_OPTIONS: Final[dict[str, Any]] = {
    "httpEndpoint": "enabled",
    "httpProtocolIPv6": "disabled",
    "httpPutResponseHopLimit": 1,
    "httpTokens": "required",
}


def ssm_parameter_for_alias(
    alias: str, *, k8s_version: str, arch: str = "amd64", variant: str = "standard"
) -> str:
    """The SSM parameter an ``alias: family@version`` term resolves through.

    ``arch`` is ``amd64`` or ``arm64``; ``variant`` is ``standard``, ``nvidia`` or ``neuron`` (AL2023),
    ``nvidia`` (Bottlerocket, AL2 ``gpu``).
    """
    if "@" not in alias:
        raise UserDataError(
            f'alias "{alias}" must be family@version (al2023@latest)', path="spec.amiSelectorTerms"
        )
    fam, version = alias.split("@", 1)
    fam = fam.lower()
    latest = version == "latest"
    if fam == "al2":
        suffix = {"amd64": "", "arm64": "-arm64"}[arch] if variant == "standard" else "-gpu"
        leaf = "recommended" if latest else f"amazon-eks{suffix}-node-{k8s_version}-{version}"
        return f"/aws/service/eks/optimized-ami/{k8s_version}/amazon-linux-2{suffix}/{leaf}/image_id"
    if fam == "al2023":
        a = {"amd64": "x86_64", "arm64": "arm64"}[arch]
        leaf = "recommended" if latest else f"amazon-eks-node-al2023-{a}-{variant}-{k8s_version}-{version}"
        return f"/aws/service/eks/optimized-ami/{k8s_version}/amazon-linux-2023/{a}/{variant}/{leaf}/image_id"
    if fam == "bottlerocket":
        flavour = f"aws-k8s-{k8s_version}" + ("-nvidia" if variant == "nvidia" else "")
        a = {"amd64": "x86_64", "arm64": "arm64"}[arch]
        return (
            f"/aws/service/bottlerocket/{flavour}/{a}/{'latest' if latest else version.lstrip('v')}/image_id"
        )
    if fam in ("windows2019", "windows2022", "windows2025"):
        if not latest:
            raise UserDataError(
                f'alias "{alias}": Windows aliases only accept @latest', path="spec.amiSelectorTerms"
            )
        return f"/aws/service/ami-windows-latest/Windows_Server-{fam[-4:]}-English-Core-EKS_Optimized-{k8s_version}/image_id"
    raise UserDataError(
        f'alias family "{fam}" is not one of al2, al2023, bottlerocket, windows2019/2022/2025',
        path="spec.amiSelectorTerms",
    )


__all__ = [
    "AL2",
    "AL2023",
    "DEFAULT_METADATA_OPTIONS",
    "default_block_device_mappings",
    "ssm_parameter_for_alias",
]
