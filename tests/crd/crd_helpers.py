"""Helpers for the ported upstream validation suites: build objects as Go's test code would
serialize them, "create" them (the API server: schema, CEL, defaults) and run Karpenter's
RuntimeValidate. A uniquely named module (not conftest) so imports are unambiguous.
"""

from __future__ import annotations

import copy
from typing import Any, Final

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


# -- NodePool builders of the ported nodepool_validation_cel_test.go --------------------------

TEMPLATE_SPEC: Final = "spec.template.spec"
LONG: Final = "a" * 250


def pool(**changes: Any) -> dict[str, Any]:
    body = base_nodepool()
    for path, value in changes.items():
        body = set_path(body, path.replace("__", "."), value)
    return body


def with_budgets(*budgets: dict[str, Any]) -> dict[str, Any]:
    return pool(spec__disruption={"consolidateAfter": "0s", "budgets": list(budgets)})


def with_taints(*taints: dict[str, Any]) -> dict[str, Any]:
    return set_path(base_nodepool(), f"{TEMPLATE_SPEC}.taints", list(taints))


def with_requirements(*reqs: dict[str, Any]) -> dict[str, Any]:
    return set_path(base_nodepool(), f"{TEMPLATE_SPEC}.requirements", list(reqs))


def with_labels(lbls: dict[str, str]) -> dict[str, Any]:
    return set_path(base_nodepool(), "spec.template.metadata.labels", lbls)


# -- EC2NodeClass builder of the ported ec2nodeclass_validation_cel_test.go ------------------


def ec2nodeclass(**spec: Any) -> dict[str, Any]:
    """The BeforeEach EC2NodeClass with spec fields replaced (None removes a field)."""
    body = base_ec2nodeclass()
    for key, value in spec.items():
        if value is None:
            body["spec"].pop(key, None)
        else:
            body["spec"][key] = value
    return body


def update(old: dict[str, Any], new: dict[str, Any]) -> list[Problem]:
    """What ``env.Client.Update`` reports after ``env.Client.Create(old)``: ``new`` admitted as an
    update of the stored ``old`` (transition rules, ratcheting, immutable metadata)."""
    return crd.admit_update(new, old, kind=new["kind"], file="test.yaml").problems


def update_ok(old: dict[str, Any], new: dict[str, Any]) -> bool:
    return not update(old, new)
