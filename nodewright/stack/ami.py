"""Per-NodeClass launch-template facts of the stack plan: where the image comes from, the block
devices and the metadata options a launch template gets.

The facts themselves (alias families, SSM parameters, default block devices, the CRD's metadata
defaults) are :mod:`nodewright.api.amifamily`'s; this module only applies them to one raw
EC2NodeClass of the stack.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nodewright import labels
from nodewright.algebra.quantity import to_gib_ceil
from nodewright.api.amifamily import (
    DEFAULT_METADATA_OPTIONS,
    default_block_device_mappings,
    spec_alias,
    ssm_parameter_for_alias,
)
from nodewright.errors import InputError


@dataclass(frozen=True, kw_only=True)
class AmiSource:
    """Where the image id comes from: an SSM parameter (alias) or a literal id."""

    ssm_parameter: str | None = None
    image_id: str | None = None
    alias: str | None = None


def _spec(nodeclass: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = nodeclass.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _arch(pools: Sequence[Mapping[str, Any]]) -> str:
    for pool in pools:
        reqs = pool.get("spec", {}).get("template", {}).get("spec", {}).get("requirements") or []
        for r in reqs:
            if r.get("key") == labels.ARCH and r.get("operator") == "In" and r.get("values") == ["arm64"]:
                return "arm64"
    return "amd64"


def ami_source(
    nodeclass: Mapping[str, Any], *, pools: Sequence[Mapping[str, Any]], kubernetes_version: str
) -> AmiSource:
    """The image of ``nodeclass``: its alias's SSM parameter, else a pinned id or SSM parameter term."""
    name = str(nodeclass.get("metadata", {}).get("name", "<EC2NodeClass>"))
    alias = spec_alias(_spec(nodeclass).get("amiSelectorTerms"))
    if alias:
        try:
            parameter = ssm_parameter_for_alias(alias, k8s_version=kubernetes_version, arch=_arch(pools))
        except InputError as exc:
            raise InputError(exc.message, file=name, path=exc.path) from None
        return AmiSource(ssm_parameter=parameter, alias=alias)
    for term in _spec(nodeclass).get("amiSelectorTerms") or []:
        if isinstance(term, Mapping) and term.get("id"):
            return AmiSource(image_id=str(term["id"]))
        if isinstance(term, Mapping) and term.get("ssmParameter"):
            return AmiSource(ssm_parameter=str(term["ssmParameter"]))
    raise InputError(
        "nodewright resolves AMIs from an alias, id or ssmParameter term; tag/name selectors need "
        "DescribeImages at deploy time - pin the AMI id instead",
        file=name,
        path="spec.amiSelectorTerms",
    )


def block_devices(nodeclass: Mapping[str, Any], family: str) -> tuple[Mapping[str, Any], ...]:
    """``spec.blockDeviceMappings`` if given, else the family's ``DefaultBlockDeviceMappings``."""
    given = _spec(nodeclass).get("blockDeviceMappings")
    if given:
        return tuple(given)
    return tuple(default_block_device_mappings(family))


def volume_size_gib(value: Any) -> int | None:
    """A ``volumeSize`` quantity in whole GiB, rounded up, as the provider's ``volumeSize()`` does
    (aws/karpenter-provider-aws v1.14.1 ``pkg/providers/launchtemplate/launchtemplate.go``): 200G is 187."""
    return None if value is None else to_gib_ceil(value)


def metadata_options(nodeclass: Mapping[str, Any]) -> Mapping[str, Any]:
    """``spec.metadataOptions`` over the CRD default (the API server fills unset fields)."""
    given = _spec(nodeclass).get("metadataOptions") or {}
    return {**DEFAULT_METADATA_OPTIONS, **given}
