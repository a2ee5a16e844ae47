"""AL2 (EKS bootstrap.sh) user data: the user's MIME parts first, Karpenter's bootstrap part last.

Port of the AWS provider's ``bootstrap/eksbootstrap.go`` and ``bootstrap.go``
(aws/karpenter-provider-aws v1.14.1 ``pkg/providers/amifamily/bootstrap/eksbootstrap.go``): boundary ``//``, part headers sorted, CRs removed;
bootstrap flags in upstream order; ``kubeletExtraArgs`` shared with Windows. Map-valued kubelet
arguments are sorted by key (Go iterates maps randomly; the result is semantically identical).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from nodewright.userdata.gomime import (
    SHELL_SCRIPT,
    GoMIMEError,
    MediaTypeError,
    MessageError,
    NotMultipartError,
    Part,
    check_no_boundary,
    go_quote,
    looks_like_mime,
    read_multipart,
    write_multipart,
)
from nodewright.userdata.options import RAID0, Options, UserDataError

BOOTSTRAP_HEAD: Final = (
    "#!/bin/bash -xe\nexec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1\n"
)
MIME_ERROR_PREFIX: Final = "parsing custom user data input "
MIME_HINT: Final = (
    "user data that starts with MIME-Version: or Content-Type: must be a valid multipart MIME document: "
    "headers, a blank line, then parts each opened by --BOUNDARY and the whole closed by --BOUNDARY--"
)


def _join(name: str, values: Mapping[str, str] | None, sep: str) -> str:
    if not values:
        return ""
    return f"{name}={go_quote(','.join(f'{k}{sep}{values[k]}' for k in sorted(values)))}"


def node_label_arg(options: Options) -> str:
    """``--node-labels="k=v,..."``, keys sorted, Go ``%q`` quoting; empty without labels."""
    if not options.labels:
        return ""
    return "--node-labels=" + go_quote(",".join(f"{k}={options.labels[k]}" for k in sorted(options.labels)))


def kubelet_extra_args(options: Options) -> list[str]:
    """``Options.kubeletExtraArgs()`` in upstream order, empty entries dropped."""
    args = [node_label_arg(options)]
    if options.taints:
        args.append("--register-with-taints=" + go_quote(",".join(t.to_string() for t in options.taints)))
    k = options.kubelet
    if k is not None:
        if k.max_pods is not None:
            args.append(f"--max-pods={k.max_pods}")
        if k.pods_per_core is not None:
            args.append(f"--pods-per-core={k.pods_per_core}")
        args.append(_join("--system-reserved", k.system_reserved, "="))
        args.append(_join("--kube-reserved", k.kube_reserved, "="))
        args.append(_join("--eviction-hard", k.eviction_hard, "<"))
        args.append(_join("--eviction-soft", k.eviction_soft, "<"))
        args.append(_join("--eviction-soft-grace-period", k.grace_periods(), "="))
        if k.eviction_max_pod_grace_period is not None:
            args.append(f"--eviction-max-pod-grace-period={k.eviction_max_pod_grace_period}")
        if k.image_gc_high_threshold_percent is not None:
            args.append(f"--image-gc-high-threshold={k.image_gc_high_threshold_percent}")
        if k.image_gc_low_threshold_percent is not None:
            args.append(f"--image-gc-low-threshold={k.image_gc_low_threshold_percent}")
        if k.cpu_cfs_quota is not None:
            args.append(f"--cpu-cfs-quota={'true' if k.cpu_cfs_quota else 'false'}")
    return [a for a in args if a]


def bootstrap_script(options: Options) -> str:
    """Karpenter's ``eksBootstrapScript()``: no trailing newline (the MIME close adds it)."""
    ca = f"--b64-cluster-ca '{options.ca_bundle}'" if options.ca_bundle is not None else ""
    out = [
        BOOTSTRAP_HEAD,
        f"/etc/eks/bootstrap.sh '{options.cluster_name}' --apiserver-endpoint '{options.cluster_endpoint}' {ca}",
    ]
    k = options.kubelet
    if options.is_ipv6():
        out.append(" \\\n--ip-family ipv6")
    if k is not None and k.cluster_dns:
        out.append(f" \\\n--dns-cluster-ip '{k.cluster_dns[0]}'")
    if k is not None and k.max_pods is not None:
        out.append(" \\\n--use-max-pods false")
    args = kubelet_extra_args(options)
    if args:
        out.append(f" \\\n--kubelet-extra-args '{' '.join(args)}'")
    if options.instance_store_policy == RAID0:
        out.append(" \\\n--local-disks raid0")
    return "".join(out)


def user_parts(user_data: str | None) -> list[Part]:
    """``mimeify`` + ``copyCustomUserDataParts``: the user's parts with all their headers.

    A plain script becomes one ``text/x-shellscript`` part (the round trip through Go's writer and
    reader leaves its body unchanged). Malformed MIME raises :class:`UserDataError` with Go's text.
    """
    if not user_data:
        return []
    if not looks_like_mime(user_data):
        return [Part(headers=(("Content-Type", SHELL_SCRIPT),), body=user_data)]
    try:
        return read_multipart(user_data)
    except MessageError as exc:
        detail = f"unreadable user data {exc}"
    except MediaTypeError as exc:
        detail = f"user data does not define a content-type header {exc}"
    except NotMultipartError:
        detail = "user data is not in multipart MIME format"
    except GoMIMEError as exc:
        detail = str(exc)
    raise UserDataError(f"{MIME_ERROR_PREFIX}{detail} ({MIME_HINT})")


def render_al2(options: Options) -> str:
    """The decoded AL2 user data: MIME with the user parts, then Karpenter's bootstrap part."""
    parts = user_parts(options.custom_user_data)
    parts.append(Part(headers=(("Content-Type", SHELL_SCRIPT),), body=bootstrap_script(options)))
    _check(parts)
    return write_multipart(parts)


def _check(parts: list[Part]) -> None:
    try:
        check_no_boundary(parts)
    except GoMIMEError as exc:
        raise UserDataError(str(exc)) from None
