"""Custom and Windows families: user data as-is, or wrapped in Karpenter's PowerShell bootstrap.

``Custom`` (``bootstrap/custom.go``) passes ``spec.userData`` through untouched; nodewright warns
when that user data does not register the node with the ``karpenter.sh/unregistered:NoExecute``
taint. Since Karpenter v1.3 (kubernetes-sigs/karpenter#1991) a node without it still registers,
with an ``UnregisteredTaintMissing`` warning event; the taint keeps pods off the node until
Karpenter has synced the NodePool's labels and taints. Windows 2019/2022/2025 (``bootstrap/windows.go``)
prepend the user's PowerShell to ``Start-EKSBootstrap.ps1`` inside one ``<powershell>`` block.
"""

from __future__ import annotations

import logging

from nodewright import labels as L
from nodewright.userdata.al2 import kubelet_extra_args
from nodewright.userdata.options import Options

log = logging.getLogger("nodewright")


def registers_unregistered_taint(user_data: str | None) -> bool:
    """True when the user data mentions the ``karpenter.sh/unregistered`` taint with NoExecute."""
    if not user_data:
        return False
    return L.UNREGISTERED_TAINT_KEY in user_data and "NoExecute" in user_data


def render_custom(options: Options) -> str:
    """``Custom``: the user data unchanged (empty when there is none), with a warning when unsafe."""
    user_data = options.custom_user_data or ""
    if not registers_unregistered_taint(user_data):
        log.warning(
            "amiFamily Custom: the user data does not register the node with the %s:NoExecute taint: "
            "Karpenter (>= v1.3, kubernetes-sigs/karpenter#1991) registers it anyway with an "
            "UnregisteredTaintMissing event, but pods can land before it syncs the NodePool's labels and "
            "taints; add it to the kubelet's --register-with-taints (or "
            "registerWithTaints / node-taints) and mirror spec.kubelet yourself",
            L.UNREGISTERED_TAINT_KEY,
        )
    return user_data


def render_windows(options: Options) -> str:
    """Windows2019/2022/2025: ``<powershell>`` + user data + ``Start-EKSBootstrap.ps1`` call."""
    out = ["<powershell>\n"]
    if options.custom_user_data:
        out.append(options.custom_user_data + "\n")
    out.append('[string]$EKSBootstrapScriptFile = "$env:ProgramFiles\\Amazon\\EKS\\Start-EKSBootstrap.ps1"\n')
    out.append(
        f"& $EKSBootstrapScriptFile -EKSClusterName '{options.cluster_name}' -APIServerEndpoint '{options.cluster_endpoint}'"
    )
    if options.ca_bundle is not None:
        out.append(f" -Base64ClusterCA '{options.ca_bundle}'")
    args = kubelet_extra_args(options)
    if args:
        out.append(f" -KubeletExtraArgs '{' '.join(args)}'")
    if options.kubelet is not None and options.kubelet.cluster_dns:
        out.append(f" -DNSClusterIP '{options.kubelet.cluster_dns[0]}'")
    out.append("\n</powershell>")
    return "".join(out)
