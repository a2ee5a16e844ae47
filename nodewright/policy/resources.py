"""What the policies look at: a registered resource as plain JSON, and the resource type tokens.

Boundary: pure data, no ``pulumi`` import. Props are Pulumi's *wire* inputs (camelCase keys, as a
policy pack receives them from the engine); secrets are already unwrapped by the caller.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

LAUNCH_TEMPLATE: Final = "aws:ec2/launchTemplate:LaunchTemplate"
INSTANCE: Final = "aws:ec2/instance:Instance"
INSTANCE_PROFILE: Final = "aws:iam/instanceProfile:InstanceProfile"
NODEPOOL_CR: Final = "kubernetes:karpenter.sh/v1:NodePool"
EC2NODECLASS_CR: Final = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
SECRET: Final = "kubernetes:core/v1:Secret"
NODEPOOL_COMPONENT: Final = "nodewright:index:NodePool"
NODECLASS_COMPONENT: Final = "nodewright:index:NodeClass"
CAPACITY_COMPONENT: Final = "nodewright:index:Capacity"
OSC_COMPONENT: Final = "nodewright:index:OperatingSystemConfig"


@dataclass(frozen=True, kw_only=True)
class ResourceView:
    """One registered resource: its type token, logical name, URN and wire inputs."""

    type: str
    name: str
    urn: str = ""
    props: Mapping[str, Any] = field(default_factory=dict)


def get_path(obj: Any, *keys: str | int) -> Any:
    """``obj[k1][k2]...`` or None when any step is missing."""
    cur = obj
    for k in keys:
        if isinstance(k, int):
            if not isinstance(cur, list) or k >= len(cur):
                return None
            cur = cur[k]
        else:
            if not isinstance(cur, Mapping) or k not in cur:
                return None
            cur = cur[k]
    return cur


def decode_user_data(value: Any, *, encoded: bool) -> str:
    """User data text; ``encoded`` values are base64 (launch templates), others plain (instances)."""
    if not isinstance(value, str) or not value:
        return ""
    if not encoded:
        return value
    try:
        return base64.b64decode(value, validate=True).decode("utf-8", errors="replace")
    except (binascii.Error, ValueError):
        return value


def user_data_of(resource: ResourceView) -> str | None:
    """The decoded user data a resource carries, or None when the type has none."""
    p = resource.props
    if resource.type == LAUNCH_TEMPLATE:
        return decode_user_data(p.get("userData"), encoded=True)
    if resource.type == INSTANCE:
        if p.get("userDataBase64"):
            return decode_user_data(p.get("userDataBase64"), encoded=True)
        return decode_user_data(p.get("userData"), encoded=False)
    if resource.type == EC2NODECLASS_CR:
        ud = get_path(p, "spec", "userData")
        return ud if isinstance(ud, str) else ""
    return None


def tags_of(resource: ResourceView) -> Mapping[str, str]:
    tags = resource.props.get("tags")
    return {str(k): str(v) for k, v in tags.items()} if isinstance(tags, Mapping) else {}
