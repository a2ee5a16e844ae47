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


FALLBACK_MAX_PODS = 110


def _core_render(
    nodeclass: Mapping[str, Any],
    nodepool: Mapping[str, Any],
    cluster: Mapping[str, str],
    *,
    instance_type: str | None,
) -> tuple[str, int | None]:
    """The userdata engineer's renderer, as ``nodewright render userdata`` calls it."""
    from nodewright.api.documents import Document
    from nodewright.api.loading import objects_from_documents
    from nodewright.userdata import render as render_family
    from nodewright.userdata.launch import cluster_info_from_mapping, options_for

    objs = objects_from_documents(
        [Document(file="<stack>", path="", body=nodeclass), Document(file="<stack>", path="", body=nodepool)]
    )
    nc, np = objs.nodeclasses[0], objs.nodepools[0]
    info = cluster_info_from_mapping(dict(cluster), file="nodewright:cluster")
    pods: int | None = None
    if nc.spec.kubelet is None or nc.spec.kubelet.max_pods is None:
        if instance_type:
            from nodewright.catalog import load_catalog

            found = load_catalog("aws:us-east-1", nodeclass=nc).get(instance_type)
            pods = int(found.max_pods) if found is not None else FALLBACK_MAX_PODS
        else:
            pods = FALLBACK_MAX_PODS
    family, options = options_for(nc, np, info, instance_type_pods=pods)
    return render_family(family, options).text, pods


USE_CORE_RENDERER = False  # switch on once the example stacks render (see docs/pulumi.md "Limits")


def _core() -> Any:
    return _core_render if USE_CORE_RENDERER else None


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
