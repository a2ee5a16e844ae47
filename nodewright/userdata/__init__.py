"""nodewright.userdata: EC2 user data exactly as Karpenter's AWS provider renders it.

Public API (pure functions; no pulumi, no click):

* :class:`Options`, :class:`KubeletConfig`, :class:`Taint`, :class:`ClusterInfo` and
  :func:`resolve_options` (Karpenter's launch-template pipeline, reference section 0);
* :func:`render` (dispatch by AMI family, size check, CA redaction) and the per-family renderers
  :func:`render_al2`, :func:`render_al2023`, :func:`render_bottlerocket`, :func:`render_custom`,
  :func:`render_windows`;
* :func:`check_size` / :func:`is_within_size` (16384-byte limit, warning at 90 %);
* :func:`effective_kubelet` -> :class:`KubeletFacts` (what the node's kubelet really gets);
* :func:`render_user_data` / :func:`launch_options` (from NodePool + EC2NodeClass models) and
  :func:`cluster_info_from_mapping` (``INFO.yaml`` / stack config);
* :func:`default_block_device_mappings`, :data:`DEFAULT_METADATA_OPTIONS`, :func:`ssm_parameter_for_alias`;
* :class:`UserDataError` (a :class:`~nodewright.errors.RenderError` with a ``path``).
"""

from nodewright.userdata.al2 import render_al2
from nodewright.userdata.al2023 import render_al2023
from nodewright.userdata.bottlerocket import render_bottlerocket
from nodewright.userdata.custom import render_custom, render_windows
from nodewright.userdata.facts import KubeletFacts, effective_kubelet
from nodewright.userdata.families import (
    DEFAULT_METADATA_OPTIONS,
    default_block_device_mappings,
    ssm_parameter_for_alias,
)
from nodewright.userdata.launch import cluster_info_from_mapping, launch_options, render_user_data
from nodewright.userdata.options import (
    FAMILIES,
    ClusterInfo,
    KubeletConfig,
    Options,
    Taint,
    UserDataError,
    family_of,
    resolve_options,
)
from nodewright.userdata.render import MAX_BYTES, WARN_BYTES, Rendered, check_size, is_within_size, render

__all__ = [
    "DEFAULT_METADATA_OPTIONS",
    "FAMILIES",
    "MAX_BYTES",
    "WARN_BYTES",
    "ClusterInfo",
    "KubeletConfig",
    "KubeletFacts",
    "Options",
    "Rendered",
    "Taint",
    "UserDataError",
    "check_size",
    "cluster_info_from_mapping",
    "default_block_device_mappings",
    "effective_kubelet",
    "family_of",
    "is_within_size",
    "launch_options",
    "render",
    "render_al2",
    "render_al2023",
    "render_bottlerocket",
    "render_custom",
    "render_user_data",
    "render_windows",
    "resolve_options",
    "ssm_parameter_for_alias",
]
