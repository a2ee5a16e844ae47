"""Helpers for the ported upstream validation suites: build objects as Go's test code would
serialize them, "create" them (the API server: schema, CEL, defaults) and run Karpenter's
RuntimeValidate. A uniquely named module (not conftest) so imports are unambiguous.
"""

from __future__ import annotations

import copy
from typing import Any

from nodewright import crd
from nodewright.crd.runtime import nodepool_problems
from nodewright.errors import Problem


def base_nodepool() -> dict[str, Any]:
    """kubernetes-sigs/karpenter pkg/apis/v1/nodepool_validation_cel_test.go BeforeEach."""
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "test-pool"},
        "spec": {
            "template": {
                "spec": {
                    "nodeClassRef": {
                        "group": "karpenter.test.sh",
                        "kind": "TestNodeClass",
                        "name": "default",
                    },
                    "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "Exists"}],
                }
            }
        },
    }


def base_nodeclaim() -> dict[str, Any]:
    """kubernetes-sigs/karpenter pkg/apis/v1/nodeclaim_validation_cel_test.go BeforeEach."""
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {"name": "test-claim"},
        "spec": {
            "nodeClassRef": {"group": "karpenter.test.sh", "kind": "TestNodeClass", "name": "default"},
            "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}],
        },
    }


def base_ec2nodeclass() -> dict[str, Any]:
    """aws/karpenter-provider-aws pkg/apis/v1/ec2nodeclass_validation_cel_test.go BeforeEach
    (test.EC2NodeClass(): an al2023@latest alias, a role, tag selectors)."""
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "test-class"},
        "spec": {
            "amiFamily": "AL2023",
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "role": "role-1",
            "securityGroupSelectorTerms": [{"tags": {"*": "*"}}],
            "subnetSelectorTerms": [{"tags": {"*": "*"}}],
        },
    }


def set_path(body: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """``body`` with ``value`` at the dotted ``path`` (intermediate mappings created)."""
    out = copy.deepcopy(body)
    cur = out
    parts = path.split(".")
    for part in parts[:-1]:
        cur = cur.setdefault(part, {})
    cur[parts[-1]] = value
    return out


def create(body: dict[str, Any]) -> list[Problem]:
    """What ``env.Client.Create`` reports: the API server's problems (schema, CEL)."""
    return crd.admit(body, kind=body["kind"], file="test.yaml").problems


def create_ok(body: dict[str, Any]) -> bool:
    return not create(body)


def runtime_ok(body: dict[str, Any]) -> bool:
    """``nodePool.RuntimeValidate(ctx)`` on the object as stored (after the API server's defaults)."""
    stored = crd.admit(body, kind=body["kind"]).body
    return not nodepool_problems(stored, file="test.yaml", base="")


def messages(body: dict[str, Any]) -> list[str]:
    return [p.message for p in create(body)]
