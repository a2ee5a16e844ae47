"""nodewright.userdata: EC2 user data exactly as Karpenter's AWS provider renders it.

Public API (pure functions; no pulumi, no click):

* :class:`Options`, :class:`KubeletConfig`, :class:`BootstrapTaint`, :class:`ClusterInfo` and
  :func:`resolve_options` (Karpenter's launch-template pipeline);
* :func:`render` (dispatch by AMI family, size check, CA redaction) and the per-family renderers
  :func:`render_al2`, :func:`render_al2023`, :func:`render_bottlerocket`, :func:`render_custom`,
  :func:`render_windows`;
* :func:`check_size` / :func:`is_within_size` (16384-byte limit, warning at 90 %);
* :func:`effective_kubelet` -> :class:`KubeletFacts` (what the node's kubelet really gets);
* :func:`render_user_data` / :func:`launch_options` (from NodePool + EC2NodeClass models) and
  :func:`cluster_info_from_mapping` (``INFO.yaml`` / stack config);
* :func:`nodeclass_options` / :func:`effective_kubelet_options` / :func:`nodeclass_catalog`: the
  catalog's resolved :class:`~nodewright.catalog.NodeClassOptions` of an EC2NodeClass (family,
  kubelet as the user data leaves it);
* :func:`render_report` -> :class:`UserDataReport` of :class:`RenderedUserData` (what
  ``nodewright render userdata`` prints, one per instance type);
* :class:`UserDataError` (a :class:`~nodewright.errors.RenderError` with a ``path``).

AMI-family facts (families, default block devices, metadata options, alias SSM parameters, the
16384-byte limit) are :mod:`nodewright.api.amifamily`'s.
"""

from nodewright.userdata.al2 import render_al2
from nodewright.userdata.al2023 import render_al2023
from nodewright.userdata.bottlerocket import render_bottlerocket
from nodewright.userdata.custom import render_custom, render_windows
from nodewright.userdata.dispatch import MAX_BYTES, WARN_BYTES, Rendered, check_size, is_within_size, render
from nodewright.userdata.facts import KubeletFacts, effective_kubelet
from nodewright.userdata.launch import cluster_info_from_mapping, launch_options, render_user_data
from nodewright.userdata.nodeclass import (
    effective_kubelet_options,
    nodeclass_catalog,
    nodeclass_options,
    pool_catalogs,
)
from nodewright.userdata.options import (
    BootstrapTaint,
    ClusterInfo,
    KubeletConfig,
    Options,
    UserDataError,
    resolve_options,
)
from nodewright.userdata.report import RenderedUserData, UserDataReport, render_report

__all__ = [
    "MAX_BYTES",
    "WARN_BYTES",
    "BootstrapTaint",
    "ClusterInfo",
    "KubeletConfig",
    "KubeletFacts",
    "Options",
    "Rendered",
    "RenderedUserData",
    "UserDataError",
    "UserDataReport",
    "check_size",
    "cluster_info_from_mapping",
    "effective_kubelet",
    "effective_kubelet_options",
    "is_within_size",
    "launch_options",
    "nodeclass_catalog",
    "nodeclass_options",
    "pool_catalogs",
    "render",
    "render_al2",
    "render_al2023",
    "render_bottlerocket",
    "render_custom",
    "render_report",
    "render_user_data",
    "render_windows",
    "resolve_options",
]
