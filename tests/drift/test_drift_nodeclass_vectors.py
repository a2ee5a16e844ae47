"""The 31 static EC2NodeClass hash values of aws/karpenter-provider-aws v1.14.1.

Ported from ``pkg/apis/v1/ec2nodeclass_hash_test.go`` (Describe "Hash": the DescribeTable
"should match static hash on field value change" and the four static ``It`` blocks); the data is
``tests/data/drift/ec2nodeclass-hash-vectors.yaml``. Also ``pkg/controllers/nodeclass/hash/
suite_test.go`` "should update the drift hash when the CA bundle changes".
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from nodewright.drift import nodeclass_hash

DATA = yaml.safe_load((Path(__file__).parents[1] / "data/drift/ec2nodeclass-hash-vectors.yaml").read_text())


def mergo_merge(dst: Any, src: Any) -> Any:
    """``mergo.Merge(dst, src, WithOverride, WithSliceDeepCopy)`` on JSON-shaped values."""
    if isinstance(dst, dict) and isinstance(src, dict):
        out = dict(dst)
        for k, v in src.items():
            out[k] = mergo_merge(out[k], v) if k in out else copy.deepcopy(v)
        return out
    if isinstance(dst, list) and isinstance(src, list):
        out_list = list(dst)
        for i, v in enumerate(src):
            if i < len(out_list):
                out_list[i] = mergo_merge(out_list[i], v)
        return out_list
    return copy.deepcopy(src)


def spec_of(vector: dict[str, Any]) -> dict[str, Any]:
    spec = mergo_merge(copy.deepcopy(DATA["base"]), vector.get("merge") or {})
    for k, v in (vector.get("set") or {}).items():
        if v is None:
            spec.pop(k, None)
        else:
            spec[k] = v
    if vector.get("reorder"):
        spec[vector["reorder"]] = list(reversed(spec[vector["reorder"]]))
    return spec


def test_thirty_one_vectors() -> None:
    assert len(DATA["vectors"]) == 31


@pytest.mark.parametrize("vector", DATA["vectors"], ids=[v["name"] for v in DATA["vectors"]])
def test_static_hash(vector: dict[str, Any]) -> None:
    nodeclass = {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "spec": spec_of(vector)}
    assert nodeclass_hash(nodeclass, ca_bundle=DATA["caBundle"]) == vector["hash"]


def test_ca_bundle_rotation_changes_the_hash() -> None:
    """hash/suite_test.go: "should update the drift hash when the CA bundle changes"."""
    nodeclass = {"spec": spec_of({"merge": {}})}
    before = nodeclass_hash(nodeclass, ca_bundle="test-ca-bundle")
    after = nodeclass_hash(nodeclass, ca_bundle="new-ca-bundle")
    assert before == DATA["vectors"][0]["hash"]
    assert after != before
