"""Shared helpers for tests/drift (a uniquely named module: `from conftest import` breaks when the whole suite runs)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import builders
import pytest

from nodewright.drift import nodepool_hash

AWS_REF = builders.AWS_NODECLASS_REF
ZONE = "topology.kubernetes.io/zone"


def make_nodepool(name: str = "default", **template_spec: Any) -> dict[str, Any]:
    """:func:`builders.nodepool` on the AWS NodeClass with ``expireAfter: 720h`` and an amd64 requirement."""
    template_spec.setdefault("expire_after", template_spec.pop("expireAfter", "720h"))
    template_spec.setdefault(
        "requirements", [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]
    )
    return builders.nodepool(name, node_class_ref=AWS_REF, **template_spec)


def live(nodepool: dict[str, Any], *, version: str = "v3", hash_: str | None = None) -> dict[str, Any]:
    """The NodePool as the cluster stores it: stamped by the hash controller."""
    out = json.loads(json.dumps(nodepool))
    out["metadata"]["annotations"] = {
        "karpenter.sh/nodepool-hash": hash_ or nodepool_hash(nodepool),
        "karpenter.sh/nodepool-hash-version": version,
    }
    return out


def make_claim(
    name: str,
    pool: dict[str, Any],
    *,
    zone: str = "us-east-1a",
    hash_: str | None = None,
    version: str = "v3",
    launched: bool = True,
    drifted: bool = False,
    extra_labels: dict[str, str] | None = None,
    instance_type: str = "m5.large",
    capacity_type: str = "on-demand",
    created: str = "2024-01-01T00:00:00Z",
) -> dict[str, Any]:
    """:func:`builders.nodeclaim` of ``pool``, stamped with its hash, launched (and maybe drifted)."""
    labels = {
        ZONE: zone,
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": instance_type,
        "karpenter.sh/capacity-type": capacity_type,
        **(extra_labels or {}),
    }
    conditions = [{"type": "Launched", "status": "True" if launched else "False"}]
    if drifted:
        conditions.append({"type": "Drifted", "status": "True", "reason": "NodePoolDrifted"})
    return builders.nodeclaim(
        name,
        nodepool_name=pool["metadata"]["name"],
        labels=labels,
        annotations={
            "karpenter.sh/nodepool-hash": hash_ or nodepool_hash(pool),
            "karpenter.sh/nodepool-hash-version": version,
        },
        conditions=conditions,
        node_class_ref=AWS_REF,
        created=created,
    )


def make_nodeclass(name: str = "default", **spec: Any) -> dict[str, Any]:
    """:func:`builders.ec2nodeclass` (al2023@latest, role) on discovery-tag selectors, plus ``spec`` overrides."""
    discovery = [{"tags": {"karpenter.sh/discovery": "c"}}]
    return builders.ec2nodeclass(
        name, **{"subnetSelectorTerms": discovery, "securityGroupSelectorTerms": discovery, **spec}
    )


write_cluster = builders.write_cluster


@pytest.fixture
def cluster_file(tmp_path: Path) -> Callable[[list[dict[str, Any]]], Path]:
    return lambda items: write_cluster(tmp_path / "cluster.json", items)
