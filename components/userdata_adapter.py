"""Adapter from the components to :mod:`nodewright.userdata` (the user-data engineer's renderers).

Boundary: pure. Uses the core renderer when it is available; until then a minimal fallback that
renders the AL2-style bootstrap flags (labels, taints, the unregistered startup taint) and logs a
warning so nobody mistakes it for Karpenter's exact output.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from nodewright import labels

log = logging.getLogger("nodewright")


def _core() -> Any:
    try:
        from nodewright.userdata import render_for_pulumi  # type: ignore[attr-defined]
    except ImportError:
        return None
    return render_for_pulumi


def render(
    nodeclass: Mapping[str, Any],
    nodepool: Mapping[str, Any],
    cluster: Mapping[str, str],
    *,
    instance_type: str | None,
) -> Any:
    from components.families import RenderedUserData, family_of_nodeclass

    core = _core()
    if core is not None:
        text, max_pods = core(nodeclass, nodepool, cluster, instance_type=instance_type)
        return RenderedUserData(text=text, max_pods=max_pods)
    family = family_of_nodeclass(nodeclass)
    spec = nodeclass.get("spec") or {}
    custom = str(spec.get("userData") or "")
    if family == "Custom":
        return RenderedUserData(text=custom, max_pods=None)
    tmpl = nodepool.get("spec", {}).get("template", {})
    pool_labels = dict(tmpl.get("metadata", {}).get("labels") or {})
    pool_labels[labels.NODEPOOL] = str(nodepool.get("metadata", {}).get("name", ""))
    node_labels = ",".join(
        f"{k}={v}"
        for k, v in sorted(pool_labels.items())
        if not any(
            labels.label_domain(k) == d or labels.label_domain(k).endswith("." + d)
            for d in labels.KUBELET_FORBIDDEN_LABEL_DOMAINS
        )
    )
    taints = [
        f"{t['key']}{'=' + t['value'] if t.get('value') else ''}:{t['effect']}"
        for f in ("taints", "startupTaints")
        for t in tmpl.get("spec", {}).get(f) or []
    ]
    taints.append(f"{labels.UNREGISTERED_TAINT_KEY}:NoExecute")
    max_pods = (spec.get("kubelet") or {}).get("maxPods")
    kubelet = f"--node-labels={node_labels} --register-with-taints={','.join(taints)}"
    if max_pods:
        kubelet += f" --max-pods={max_pods}"
    script = (
        "#!/bin/bash -xe\n"
        + (custom + "\n" if custom else "")
        + f"/etc/eks/bootstrap.sh '{cluster.get('clusterName', '')}' --apiserver-endpoint "
        f"'{cluster.get('clusterEndpoint', '')}' --b64-cluster-ca '{cluster.get('caBundle', '')}' \\\n"
        f"--kubelet-extra-args '{kubelet}'\n"
    )
    log.debug("nodewright.userdata renderer not available: fallback bootstrap for %s", family)
    return RenderedUserData(text=script, max_pods=int(max_pods) if max_pods else None)
