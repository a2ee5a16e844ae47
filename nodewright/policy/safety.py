"""Safety rules: IMDSv2, encrypted EBS, user data size and plain-text credentials.

Pure functions over :class:`~nodewright.policy.resources.ResourceView`; each returns the list of
violation messages (empty = compliant). Messages say what is wrong and how to fix it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from nodewright import redact
from nodewright.api.amifamily import USER_DATA_MAX_BYTES
from nodewright.policy.resources import (
    EC2NODECLASS_CR,
    INSTANCE,
    LAUNCH_TEMPLATE,
    ResourceView,
    get_path,
    user_data_of,
)
from nodewright.policy.userdata_read import without_cluster_ca

DEFAULT_MAX_HOP_LIMIT: Final = 2

# The credential kinds that must never sit in user data in clear text: the redactor's detectors,
# so whatever this policy detects is also what every output hides.
CREDENTIAL_KINDS: Final = tuple(d.name for d in redact.CREDENTIAL_DETECTORS)


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _check_metadata(metadata: Any, *, where: str, max_hop: float, required: bool) -> list[str]:
    out: list[str] = []
    if not isinstance(metadata, Mapping):
        if required:
            out.append(
                f"{where} sets no metadata options, so EC2 allows IMDSv1; set "
                "metadataOptions.httpTokens: required (IMDSv2)"
            )
        return out
    tokens = metadata.get("httpTokens")
    if (tokens is not None and tokens != "required") or (tokens is None and required):
        out.append(
            f"{where} has metadataOptions.httpTokens={tokens or 'unset'}: IMDSv1 lets any process (or an SSRF) "
            "read the node role's credentials; set httpTokens: required"
        )
    hop = _number(metadata.get("httpPutResponseHopLimit"))
    if hop is not None and hop > max_hop:
        out.append(
            f"{where} has metadataOptions.httpPutResponseHopLimit={int(hop)} > {int(max_hop)}: pods could reach "
            f"IMDS through the node; lower it to {int(max_hop)} or raise the policy's maxHopLimit"
        )
    return out


def check_imdsv2(resource: ResourceView, config: Mapping[str, Any]) -> list[str]:
    """Launch templates, instances and EC2NodeClasses require IMDSv2 (httpTokens: required)."""
    max_hop = _number(config.get("maxHopLimit")) or DEFAULT_MAX_HOP_LIMIT
    p = resource.props
    if resource.type in (LAUNCH_TEMPLATE, INSTANCE):
        return _check_metadata(p.get("metadataOptions"), where=resource.name, max_hop=max_hop, required=True)
    if resource.type == EC2NODECLASS_CR:
        # The CRD defaults metadataOptions to IMDSv2 required; only an explicit value can weaken it.
        return _check_metadata(
            get_path(p, "spec", "metadataOptions"), where=resource.name, max_hop=max_hop, required=False
        )
    return []


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def check_ebs_encrypted(resource: ResourceView, config: Mapping[str, Any]) -> list[str]:
    """Every EBS volume a node gets is encrypted."""
    out: list[str] = []
    p = resource.props
    if resource.type == LAUNCH_TEMPLATE:
        for i, bdm in enumerate(p.get("blockDeviceMappings") or []):
            ebs = get_path(bdm, "ebs")
            if isinstance(ebs, Mapping) and not _truthy(ebs.get("encrypted")):
                out.append(
                    f"{resource.name}: blockDeviceMappings[{i}] ({get_path(bdm, 'deviceName')}) is not encrypted; "
                    'set ebs.encrypted: "true"'
                )
    elif resource.type == INSTANCE:
        root = p.get("rootBlockDevice")
        if isinstance(root, Mapping) and "encrypted" in root and not _truthy(root.get("encrypted")):
            out.append(f"{resource.name}: rootBlockDevice is not encrypted; set encrypted: true")
        for i, bd in enumerate(p.get("ebsBlockDevices") or []):
            if not _truthy(get_path(bd, "encrypted")):
                out.append(f"{resource.name}: ebsBlockDevices[{i}] is not encrypted; set encrypted: true")
    elif resource.type == EC2NODECLASS_CR:
        for i, bdm in enumerate(get_path(p, "spec", "blockDeviceMappings") or []):
            ebs = get_path(bdm, "ebs")
            if isinstance(ebs, Mapping) and not _truthy(ebs.get("encrypted")):
                out.append(
                    f"{resource.name}: spec.blockDeviceMappings[{i}] ({get_path(bdm, 'deviceName')}) is not "
                    "encrypted; set ebs.encrypted: true"
                )
    return out


def check_user_data_safe(resource: ResourceView, config: Mapping[str, Any]) -> list[str]:
    """User data fits EC2's 16 KB limit and carries no plain-text credentials."""
    text = user_data_of(resource)
    if not text:
        return []
    out: list[str] = []
    limit = int(_number(config.get("maxBytes")) or USER_DATA_MAX_BYTES)
    size = len(text.encode("utf-8"))
    if size > limit:
        out.append(
            f"{resource.name}: user data is {size} bytes, over the {limit}-byte limit EC2 enforces; move large "
            "files to S3 or an image and fetch them at boot"
        )
    extra = tuple(str(p) for p in config.get("extraCredentialPatterns") or [])
    # The cluster CA is public (it is redacted in previews, but it is no credential): blank it first.
    for kind in redact.find_credentials(without_cluster_ca(text), extra_patterns=extra):
        out.append(
            f"{resource.name}: user data contains a plain-text {kind}; anyone who can describe the instance "
            "can read it. Fetch it at boot from Secrets Manager/SSM or use the node role"
        )
    return out
