"""Drift-hash rules: a NodePool's hash annotation is the hash Karpenter would compute, and the
instances (NodeClaims) of a pool carry the pool's current hash; plus an advisory on changes to a pool
whose NodePool/NodeClass pair is not healthy.

Pure functions, no ``pulumi``. The hash itself comes from :mod:`nodewright.drift`, the same function
``nodewright hash`` prints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nodewright import crd, labels
from nodewright.policy.resources import (
    INSTANCE,
    NODEPOOL_COMPONENT,
    NODEPOOL_CR,
    ResourceView,
    get_path,
    tags_of,
)


def compute_nodepool_hash(nodepool: Mapping[str, Any], release: crd.Release) -> str | None:
    """The ``karpenter.sh/nodepool-hash`` of a raw ``karpenter.sh/v1`` NodePool mapping: of the
    object as the API server stores it (CRD defaults such as expireAfter: 720h applied). None when
    the cluster would reject the object (the karpenter-crd-valid policy reports why)."""
    from nodewright.drift.inputs import defaulted_nodepool_hash
    from nodewright.errors import NodewrightError

    try:
        return defaulted_nodepool_hash(nodepool, release=release)
    except NodewrightError:
        return None


def _annotations(props: Mapping[str, Any]) -> Mapping[str, Any]:
    ann = get_path(props, "metadata", "annotations")
    return ann if isinstance(ann, Mapping) else {}


def check_nodepool_hashes(
    resources: Sequence[ResourceView], config: Mapping[str, Any]
) -> list[tuple[str, str]]:
    """:func:`check_nodepool_hash` on every NodePool CR, with the stack's release."""
    from nodewright.policy.crd_rules import stack_release

    release = stack_release(resources)
    return [(r.urn, m) for r in resources for m in check_nodepool_hash(r, config, release=release)]


def check_nodepool_hash(
    resource: ResourceView, config: Mapping[str, Any], *, release: crd.Release
) -> list[str]:
    """The NodePool's hash annotation equals ``release``'s hash and its version is ``release``'s."""
    if resource.type != NODEPOOL_CR:
        return []
    ann = _annotations(resource.props)
    out: list[str] = []
    version = ann.get(labels.NODEPOOL_HASH_VERSION)
    current = release.nodepool_hash_version
    if version != current:
        out.append(
            f"{resource.name}: annotation {labels.NODEPOOL_HASH_VERSION}={version or 'missing'}, expected "
            f"{current}; Karpenter would re-stamp it and skip drift detection once. "
            "Let the NodePool component compute it (do not set it by hand)"
        )
    expected = compute_nodepool_hash(resource.props, release)
    actual = ann.get(labels.NODEPOOL_HASH)
    if expected is not None and actual != expected:
        out.append(
            f"{resource.name}: annotation {labels.NODEPOOL_HASH}={actual or 'missing'} but the spec hashes to "
            f"{expected}; a tampered or stale hash hides drift (or drifts every node). Remove the hand-set "
            "annotation; the NodePool component stamps the computed one"
        )
    return out


def check_instances_hash(
    resources: Sequence[ResourceView], config: Mapping[str, Any]
) -> list[tuple[str, str]]:
    """Instances of a pool carry its current hash; a different one means Karpenter would drift them."""
    current: dict[str, str] = {}
    for r in resources:
        if r.type == NODEPOOL_COMPONENT and isinstance(r.props.get("hash"), str):
            current.setdefault(str(r.props.get("nodePool") or r.name), str(r.props["hash"]))
    for r in resources:
        if r.type == NODEPOOL_CR:
            name = str(get_path(r.props, "metadata", "name") or r.name)
            h = _annotations(r.props).get(labels.NODEPOOL_HASH)
            if isinstance(h, str):
                current[name] = h
    out: list[tuple[str, str]] = []
    for r in resources:
        if r.type != INSTANCE:
            continue
        tags = tags_of(r)
        pool = tags.get(labels.NODEPOOL)
        have = tags.get(labels.NODEPOOL_HASH)
        if pool is None or pool not in current or have is None or have == current[pool]:
            continue
        out.append(
            (
                r.urn,
                f"{r.name}: planned with NodePool {pool!r} hash {have}, the pool now hashes to {current[pool]}: "
                "this NodeClaim is drifted (NodePoolDrifted) and would be replaced. Re-run `nodewright plan "
                "--write` to re-plan the capacity",
            )
        )
    return out


def check_pair_health(resource: ResourceView, config: Mapping[str, Any]) -> list[str]:
    """A change to a NodePool whose NodePool/NodeClass pair is Unhealthy or never verified."""
    if resource.type != NODEPOOL_COMPONENT:
        return []
    health = resource.props.get("health")
    if not isinstance(health, Mapping) or not health.get("changed"):
        return []
    status = str(health.get("status") or "Unknown")
    verified = bool(health.get("verified"))
    node_class = str(health.get("nodeClass") or "?")
    if status == "Unhealthy":
        reason = health.get("reason") or "RegistrationFailed"
        return [
            f"{resource.name}: this change targets NodePool {resource.name!r} whose NodeClass {node_class!r} is "
            f"Unhealthy ({reason}): its recent nodes failed to launch or register. Fix the NodeClass (AMI, "
            "network path, user data) before adding capacity to it"
        ]
    if not verified:
        return [
            f"{resource.name}: this change targets NodePool {resource.name!r} whose pair with NodeClass "
            f"{node_class!r} has never launched an initialized node; check it can join the cluster before "
            "relying on it"
        ]
    return []
