"""Shared helpers for tests/drift (a uniquely named module: `from conftest import` breaks when the whole suite runs)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from nodewright.drift import nodepool_hash

AWS_REF = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}
ZONE = "topology.kubernetes.io/zone"


def make_nodepool(name: str = "default", **template_spec: Any) -> dict[str, Any]:
    labels = template_spec.pop("labels", None)
    spec: dict[str, Any] = {
        "nodeClassRef": dict(AWS_REF),
        "expireAfter": "720h",
        "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
    }
    spec.update(template_spec)
    template: dict[str, Any] = {"spec": spec}
    if labels is not None:
        template["metadata"] = {"labels": labels}
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {"template": template},
    }


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
    labels = {
        "karpenter.sh/nodepool": pool["metadata"]["name"],
        ZONE: zone,
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": instance_type,
        "karpenter.sh/capacity-type": capacity_type,
    }
    labels.update(extra_labels or {})
    conditions = [{"type": "Launched", "status": "True" if launched else "False"}]
    if drifted:
        conditions.append({"type": "Drifted", "status": "True", "reason": "NodePoolDrifted"})
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {
            "name": name,
            "labels": labels,
            "creationTimestamp": created,
            "annotations": {
                "karpenter.sh/nodepool-hash": hash_ or nodepool_hash(pool),
                "karpenter.sh/nodepool-hash-version": version,
            },
        },
        "spec": {"nodeClassRef": dict(AWS_REF), "requirements": []},
        "status": {"conditions": conditions},
    }


def make_nodeclass(name: str = "default", **spec: Any) -> dict[str, Any]:
    """An EC2NodeClass body (al2023@latest, role, discovery selectors) plus ``spec`` overrides."""
    body: dict[str, Any] = {
        "role": "KarpenterNodeRole",
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "c"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "c"}}],
    }
    body.update(spec)
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": name},
        "spec": body,
    }


def write_cluster(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


@pytest.fixture
def cluster_file(tmp_path: Path) -> Callable[[list[dict[str, Any]]], Path]:
    return lambda items: write_cluster(tmp_path / "cluster.json", items)
