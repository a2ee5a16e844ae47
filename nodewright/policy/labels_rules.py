"""Label and bootstrap rules: restricted label domains, user data that registers the node with its
NodePool's labels and taints, and a custom AMI that comes with user data.

As of Karpenter v1.14: restricted labels follow v1.9's ``IsRestrictedLabel``
(kubernetes-sigs/karpenter#2586: kubernetes.io / k8s.io labels allowed); the
``karpenter.sh/unregistered`` registration taint is not required in user data since v1.3
(kubernetes-sigs/karpenter#1991 "remove registration taint enforcement": Karpenter registers a
node that joins without it).

Pure functions, no ``pulumi``. User data is read per format by
:func:`nodewright.policy.userdata_read.read_registration` (MIME parts, AL2023 NodeConfig
``registerWithTaints`` / ``--node-labels`` flags, Bottlerocket ``node-labels`` / ``node-taints``,
``bootstrap.sh`` / ``-KubeletExtraArgs`` flags); only script parts that are not flags (Custom user
data writing a kubelet configuration its own way) fall back to a textual match.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from nodewright import labels
from nodewright.policy.resources import (
    EC2NODECLASS_CR,
    LAUNCH_TEMPLATE,
    NODEPOOL_COMPONENT,
    NODEPOOL_CR,
    ResourceView,
    get_path,
    tags_of,
    user_data_of,
)
from nodewright.policy.userdata_read import Registration, read_registration


def nodepool_labels(props: Mapping[str, Any]) -> dict[str, str]:
    raw = get_path(props, "spec", "template", "metadata", "labels")
    return {str(k): str(v) for k, v in raw.items()} if isinstance(raw, Mapping) else {}


def nodepool_taints(props: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(key, value, effect) of the pool's taints and startup taints."""
    out: list[tuple[str, str, str]] = []
    for field in ("taints", "startupTaints"):
        for t in get_path(props, "spec", "template", "spec", field) or []:
            if isinstance(t, Mapping):
                out.append((str(t.get("key", "")), str(t.get("value") or ""), str(t.get("effect", ""))))
    return out


def pool_bodies(resources: Sequence[ResourceView]) -> dict[str, Mapping[str, Any]]:
    """NodePool name -> a NodePool-shaped mapping, from the CRs or (fleet mode) the NodePool components."""
    out: dict[str, Mapping[str, Any]] = {}
    for r in resources:
        if r.type == NODEPOOL_COMPONENT and isinstance(r.props.get("template"), Mapping):
            out.setdefault(
                str(r.props.get("nodePool") or r.name), {"spec": {"template": r.props["template"]}}
            )
    for r in resources:
        if r.type == NODEPOOL_CR:
            out[str(get_path(r.props, "metadata", "name") or r.name)] = r.props
    return out


def check_restricted_labels(resource: ResourceView, config: Mapping[str, Any]) -> list[str]:
    """NodePool labels and requirement keys stay out of restricted domains (Karpenter rejects them)."""
    if resource.type != NODEPOOL_CR:
        return []
    extra = tuple(str(d) for d in config.get("extraRestrictedDomains") or [])
    out: list[str] = []

    def restricted(key: str) -> bool:
        dom = labels.label_domain(key)
        return labels.is_restricted_label(key) or any(dom == d or dom.endswith("." + d) for d in extra)

    for key in sorted(nodepool_labels(resource.props)):
        if restricted(key):
            out.append(
                f"{resource.name}: spec.template.metadata.labels has {key!r}, a restricted label "
                f"(domain {labels.label_domain(key) or key!r}); Karpenter rejects the NodePool. Use your own "
                "domain, e.g. example.com/" + key.rsplit("/", 1)[-1]
            )
    for i, req in enumerate(get_path(resource.props, "spec", "template", "spec", "requirements") or []):
        key = str(get_path(req, "key") or "")
        if key and restricted(key):
            out.append(
                f"{resource.name}: spec.template.spec.requirements[{i}].key {key!r} is a restricted label; "
                "Karpenter rejects the NodePool. Use a well-known label or your own domain"
            )
    return out


def _registers_label(text: str, key: str, value: str) -> bool:
    sep = r"""["']?\s*[=:]\s*["']?"""
    return re.search(re.escape(key) + sep + re.escape(value) + r"""(?:["',\s]|$)""", text, re.M) is not None


def _registers_taint(text: str, key: str, value: str, effect: str) -> bool:
    flag = (
        re.escape(key) + (r"=" + re.escape(value) if value else r"(?:=[^:,\s]*)?") + r":" + re.escape(effect)
    )
    if re.search(flag, text):
        return True
    # TOML (Bottlerocket node-taints: "key" = ["value:Effect"]) or YAML one-liners.
    for line in text.splitlines():
        if key in line and effect in line and (not value or value in line):
            return True
    # YAML list item (nodeadm registerWithTaints style): key/value/effect on neighbouring lines, any order.
    lines = text.splitlines()
    key_re = re.compile(r"^\s*-?\s*key:\s*['\"]?" + re.escape(key) + r"['\"]?\s*$")
    for i, line in enumerate(lines):
        if key_re.match(line):
            window = "\n".join(lines[max(0, i - 3) : i + 4])
            if re.search(r"effect:\s*['\"]?" + re.escape(effect), window) and (not value or value in window):
                return True
    return False


def _has_label(reg: Registration, key: str, value: str) -> bool:
    return reg.has_label(key, value) or any(_registers_label(t, key, value) for t in reg.opaque)


def _has_taint(reg: Registration, key: str, value: str | None, effect: str) -> bool:
    if reg.has_taint(key, value, effect):
        return True
    return any(_registers_taint(t, key, value or "", effect) for t in reg.opaque)


def kubelet_labels(pool_labels: Mapping[str, str]) -> dict[str, str]:
    """Labels that kubelet may set (Karpenter's RejectForbiddenLabels drops the rest)."""
    out: dict[str, str] = {}
    for k, v in pool_labels.items():
        dom = labels.label_domain(k)
        if any(dom == d or dom.endswith("." + d) for d in labels.KUBELET_FORBIDDEN_LABEL_DOMAINS):
            continue
        if labels.is_restricted_label(k):
            continue  # Karpenter rejects the pool (nodepool-restricted-labels says so); never rendered
        out[k] = v
    return out


def check_user_data_registers(
    resources: Sequence[ResourceView], config: Mapping[str, Any]
) -> list[tuple[str, str]]:
    """Each launch template tagged with a NodePool registers its labels and taints.

    The ``karpenter.sh/unregistered`` taint is not required (Karpenter >= v1.3, kubernetes-sigs/karpenter#1991).
    """
    pools = pool_bodies(resources)
    out: list[tuple[str, str]] = []
    for lt in resources:
        if lt.type != LAUNCH_TEMPLATE:
            continue
        pool_name = tags_of(lt).get(labels.NODEPOOL)
        text = user_data_of(lt) or ""
        if not pool_name or not text:
            continue
        pool = pools.get(pool_name)
        reg = read_registration(text)
        missing: list[str] = []
        if pool is not None:
            for k, v in sorted(kubelet_labels(nodepool_labels(pool)).items()):
                if not _has_label(reg, k, v):
                    missing.append(f"label {k}={v}")
            for k, v, e in nodepool_taints(pool):
                if not _has_taint(reg, k, v, e):
                    missing.append(f"taint {k}{'=' + v if v else ''}:{e}")
        if missing:
            out.append(
                (
                    lt.urn,
                    f"{lt.name}: user data for NodePool {pool_name!r} does not register the node with "
                    + ", ".join(missing)
                    + "; Karpenter cannot match the node to its NodeClaim (it never initialises). Add them to "
                    "--node-labels/--register-with-taints (or the family's equivalent)",
                )
            )
    return out


def check_custom_ami_user_data(resource: ResourceView, config: Mapping[str, Any]) -> list[str]:
    """A Custom-family AMI needs user data: Karpenter merges nothing into it."""
    if resource.type == EC2NODECLASS_CR:
        family = get_path(resource.props, "spec", "amiFamily")
        if family == "Custom" and not user_data_of(resource):
            return [
                f"{resource.name}: amiFamily Custom without spec.userData: the node never bootstraps (Karpenter "
                "merges nothing for Custom). Provide user data that joins the cluster, or use an alias"
            ]
    if (
        resource.type == LAUNCH_TEMPLATE
        and tags_of(resource).get(labels.AMI_FAMILY_TAG) == "Custom"
        and not user_data_of(resource)
    ):
        return [
            f"{resource.name}: launch template for a Custom AMI has no user data; the node never joins. "
            "Set the EC2NodeClass's spec.userData"
        ]
    return []
