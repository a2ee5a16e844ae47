"""Ports of aws/karpenter-provider-aws v1.14.1 ``pkg/apis/v1/nodepool_validation_cel_test.go``
(the NodePool CRD as the AWS provider ships it, plus its runtime well-known values) and of
kubernetes-sigs/karpenter v1.14.1 ``pkg/apis/v1/nodepool_default_test.go`` (CEL/Default), plus
the API server's defaulting rules the CRDs rely on.
"""

from __future__ import annotations

from typing import Any

import pytest
from crd_helpers import base_nodepool, create_ok, runtime_ok, set_path

from nodewright import crd, labels


def aws_pool(**changes: Any) -> dict[str, Any]:
    """The AWS suite's BeforeEach: nodeClassRef karpenter.k8s.aws/EC2NodeClass/default."""
    body = set_path(
        base_nodepool(),
        "spec.template.spec.nodeClassRef",
        {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
    )
    for path, value in changes.items():
        body = set_path(body, path, value)
    return body


def one_requirement(key: str, values: list[str]) -> dict[str, Any]:
    return aws_pool(**{"spec.template.spec.requirements": [{"key": key, "operator": "In", "values": values}]})


@pytest.mark.parametrize(
    "key", sorted(labels.WELL_KNOWN_LABELS - {labels.NODEPOOL, labels.CAPACITY_TYPE, labels.INSTANCE_TENANCY})
)
def test_requirements_should_allow_well_known_label_exceptions(key: str) -> None:
    """AWS Context("Requirements") It("should allow well known label exceptions")"""
    body = one_requirement(key, ["test"])
    assert create_ok(body) and runtime_ok(body)


@pytest.mark.parametrize(
    ("name", "key", "values", "runtime"),
    [
        ("only invalid capacity types", labels.CAPACITY_TYPE, ["xspot"], False),
        ("valid capacity types", labels.CAPACITY_TYPE, ["on-demand"], True),
        ("invalid and valid capacity types (fail open)", labels.CAPACITY_TYPE, ["on-demand", "xspot"], True),
        ("only invalid tenancy types", labels.INSTANCE_TENANCY, ["xdedicated"], False),
        ("valid tenancy types", labels.INSTANCE_TENANCY, ["default"], True),
        (
            "invalid and valid tenancy types (fail open)",
            labels.INSTANCE_TENANCY,
            ["default", "xdedicated"],
            True,
        ),
    ],
)
def test_requirements_well_known_values(name: str, key: str, values: list[str], runtime: bool) -> None:
    """AWS It("should fail validation with only invalid capacity types"), It("should pass
    validation with valid capacity types"), It("should fail open if invalid and valid capacity
    types are present") and the same three for tenancy: the CRD accepts all, RuntimeValidate decides."""
    body = one_requirement(key, values)
    assert create_ok(body), name
    assert runtime_ok(body) is runtime, name


@pytest.mark.parametrize("key", sorted(labels.WELL_KNOWN_LABELS - {labels.NODEPOOL}))
def test_labels_should_allow_well_known_label_exceptions(key: str) -> None:
    """AWS Context("Labels") It("should allow well known label exceptions")"""
    body = aws_pool(**{"spec.template.metadata.labels": {key: "test"}})
    assert create_ok(body) and runtime_ok(body)


def test_should_default_the_disruption_stanza_when_undefined() -> None:
    """kubernetes-sigs nodepool_default_test.go It("should default the disruption stanza when undefined")"""
    stored = crd.admit(base_nodepool(), kind="NodePool").body
    assert stored["spec"]["disruption"] == {
        "consolidateAfter": "0s",
        "consolidationPolicy": "WhenEmptyOrUnderutilized",
        "budgets": [{"nodes": "10%"}],
    }
    assert stored["spec"]["template"]["spec"]["expireAfter"] == "720h"


def test_nested_defaults_apply_only_where_the_parent_exists() -> None:
    """The API server defaults a property only inside an object that exists: a given disruption
    keeps its fields and gets the missing defaulted ones; consolidateAfter has no default of its
    own, so a disruption without it is rejected (required)."""
    given = set_path(base_nodepool(), "spec.disruption", {"consolidationPolicy": "WhenEmpty"})
    admitted = crd.admit(given, kind="NodePool")
    assert [p.path for p in admitted.problems] == ["spec.disruption.consolidateAfter"]
    assert admitted.body["spec"]["disruption"]["budgets"] == [{"nodes": "10%"}]
    ok = set_path(base_nodepool(), "spec.disruption", {"consolidateAfter": "5m", "budgets": [{}]})
    stored = crd.admit(ok, kind="NodePool")
    assert stored.ok and stored.body["spec"]["disruption"]["budgets"] == [{"nodes": "10%"}]


def test_explicit_nulls_are_pruned_or_defaulted() -> None:
    """A null in a non-nullable field is dropped, or replaced by the field's default."""
    body = set_path(base_nodepool(), "spec.template.spec.expireAfter", None)
    body = set_path(body, "spec.weight", None)
    body = set_path(body, "spec.template.spec.taints", None)
    stored = crd.admit(body, kind="NodePool")
    assert stored.ok, stored.problems
    spec = stored.body["spec"]
    assert "weight" not in spec and "taints" not in spec["template"]["spec"]
    assert spec["template"]["spec"]["expireAfter"] == "720h"


def test_ec2nodeclass_metadata_options_default() -> None:
    """The EC2NodeClass CRD defaults metadataOptions as a whole."""
    from crd_helpers import base_ec2nodeclass

    stored = crd.admit(base_ec2nodeclass(), kind="EC2NodeClass").body
    assert stored["spec"]["metadataOptions"] == {
        "httpEndpoint": "enabled",
        "httpProtocolIPv6": "disabled",
        "httpPutResponseHopLimit": 1,
        "httpTokens": "required",
    }


def test_an_integral_float_is_an_integer() -> None:
    """`minValues: 2.0` is the integer 2: stored as such and compared as an int by the CEL rules."""
    body = set_path(
        base_nodepool(),
        "spec.template.spec.requirements",
        [
            {
                "key": "node.kubernetes.io/instance-type",
                "operator": "In",
                "values": ["a", "b"],
                "minValues": 2.0,
            }
        ],
    )
    admitted = crd.admit(body, kind="NodePool")
    assert admitted.ok, admitted.problems
    assert admitted.body["spec"]["template"]["spec"]["requirements"][0]["minValues"] == 2
    assert type(admitted.body["spec"]["template"]["spec"]["requirements"][0]["minValues"]) is int
