"""The 27 static EC2NodeClass hash values of aws/karpenter-provider-aws v1.11.3 (hash version v4).

Ported from v1.11.3 ``pkg/apis/v1/ec2nodeclass_hash_test.go`` (Describe "Hash": the DescribeTable
"should match static hash on field value change" and the static ``It`` blocks "should match static
hash when updating blockDeviceMapping volumeSize", "... for instanceProfile", "... when reordering
tags", "... when reordering blockDeviceMappings"); the data is
``tests/data/drift/ec2nodeclass-hash-vectors-v4.yaml``. At that tag ``EC2NodeClass.Hash()`` takes no
CA bundle (v1.12 added it: hash v5), so the release decides whether the bundle is hashed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from test_drift_nodeclass_vectors import spec_of

from nodewright import crd
from nodewright.drift import nodeclass_hash

DATA = yaml.safe_load(
    (Path(__file__).parents[1] / "data/drift/ec2nodeclass-hash-vectors-v4.yaml").read_text()
)
V4 = crd.release("1.11.3")


def test_twenty_seven_vectors_and_the_release_says_v4() -> None:
    assert len(DATA["vectors"]) == 27
    assert (V4.ec2nodeclass_hash_version, V4.ec2nodeclass_hash_ca_bundle) == ("v4", False)


@pytest.mark.parametrize("vector", DATA["vectors"], ids=[v["name"] for v in DATA["vectors"]])
def test_static_hash_v4(vector: dict[str, Any]) -> None:
    nodeclass = {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "spec": spec_of(vector)}
    assert nodeclass_hash(nodeclass, release=V4) == vector["hash"]


def test_v4_ignores_the_ca_bundle_and_v5_does_not() -> None:
    """v1.11.3 Hash() has no CA bundle argument; v1.14.1 hash/suite_test.go "should update the drift
    hash when the CA bundle changes"."""
    nodeclass = {"spec": spec_of({"merge": {}})}
    assert nodeclass_hash(nodeclass, ca_bundle="a", release=V4) == nodeclass_hash(nodeclass, release=V4)
    v5 = crd.release("1.14.1")
    assert nodeclass_hash(nodeclass, ca_bundle="a", release=v5) != nodeclass_hash(nodeclass, release=v5)
