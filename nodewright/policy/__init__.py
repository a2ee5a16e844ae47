"""nodewright's CrossGuard rules as pure functions (no ``pulumi`` import).

Public API: :data:`~nodewright.policy.catalog.POLICIES` (each a :class:`PolicySpec` with name,
description, default enforcement, config schema and rule), :class:`ResourceView`, and
:func:`resolve_config` (engine-side policy config semantics). ``policies/__main__.py`` and
``nodewright preview`` both run these through ``pulumi_policy`` (see :mod:`nodewright.preview.pack`).
"""

from nodewright.policy.catalog import PACK_NAME, POLICIES, PolicySpec, get_policy, policy_names
from nodewright.policy.config import ResolvedPolicyConfig, load_config_file, resolve_config
from nodewright.policy.resources import ResourceView

__all__ = [
    "PACK_NAME",
    "POLICIES",
    "PolicySpec",
    "ResolvedPolicyConfig",
    "ResourceView",
    "get_policy",
    "load_config_file",
    "policy_names",
    "resolve_config",
]
