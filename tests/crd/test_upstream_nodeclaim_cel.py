"""Port of kubernetes-sigs/karpenter v1.14.1 ``pkg/apis/v1/nodeclaim_validation_cel_test.go``
(Describe "Validation"), against the shipped NodeClaim CRD. ``create_ok`` = ``env.Client.Create``.
"""

from __future__ import annotations

from typing import Any

import pytest
from crd_helpers import base_nodeclaim, create_ok, set_path

from nodewright import labels


def claim(path: str, value: Any) -> dict[str, Any]:
    return set_path(base_nodeclaim(), path, value)


# -- Context("Taints") -------------------------------------------------------------------------


def test_should_succeed_for_valid_taints() -> None:
    """It("should succeed for valid taints")"""
    taints = [
        {"key": "a", "value": "b", "effect": "NoSchedule"},
        {"key": "c", "value": "d", "effect": "NoExecute"},
        {"key": "e", "value": "f", "effect": "PreferNoSchedule"},
        {"key": "key-only", "effect": "NoExecute"},
    ]
    assert create_ok(claim("spec.taints", taints))


@pytest.mark.parametrize(
    ("name", "taint"),
    [
        ("invalid taint keys", {"key": "???", "effect": ""}),
        ("missing taint key", {"key": "", "effect": "NoSchedule"}),
        ("invalid taint value", {"key": "invalid-value", "effect": "NoSchedule", "value": "???"}),
        ("invalid taint effect", {"key": "invalid-effect", "effect": "???"}),
    ],
)
def test_should_fail_for_bad_taints(name: str, taint: dict[str, Any]) -> None:
    """It("should fail for invalid taint keys" / "missing taint key" / "invalid taint value" / "invalid taint effect")"""
    assert not create_ok(claim("spec.taints", [taint])), name


def test_should_not_fail_for_same_key_with_different_effects() -> None:
    """It("should not fail for same key with different effects")"""
    taints = [{"key": "a", "effect": "NoSchedule"}, {"key": "a", "effect": "NoExecute"}]
    assert create_ok(claim("spec.taints", taints))


# -- Context("NodeClassRef") -------------------------------------------------------------------


def test_should_succeed_for_valid_group() -> None:
    """It("should succeed for valid group")"""
    ref = {"kind": "TestNodeClass", "name": "nodeclass-test", "group": "karpenter.test.sh"}
    assert create_ok(claim("spec.nodeClassRef", ref))


def test_should_fail_for_invalid_group() -> None:
    """It("should fail for invalid group") (a version in the group: pattern ^[^/]*$)"""
    ref = {"kind": "TestNodeClass", "name": "nodeclass-test", "group": "karpenter.test.sh/v1"}
    assert not create_ok(claim("spec.nodeClassRef", ref))


# -- Context("Requirements") -------------------------------------------------------------------


def reqs(*items: dict[str, Any]) -> dict[str, Any]:
    return claim("spec.requirements", list(items))


def test_should_allow_supported_ops() -> None:
    """It("should allow supported ops")"""
    z = labels.ZONE
    assert create_ok(
        reqs(
            {"key": z, "operator": "In", "values": ["test"]},
            {"key": z, "operator": "Gt", "values": ["1"]},
            {"key": z, "operator": "Lt", "values": ["1"]},
            {"key": z, "operator": "NotIn"},
            {"key": z, "operator": "Exists"},
        )
    )


def test_should_fail_for_unsupported_ops() -> None:
    """It("should fail for unsupported ops")"""
    assert not create_ok(reqs({"key": labels.ZONE, "operator": "unknown", "values": ["test"]}))


@pytest.mark.parametrize("domain", sorted(labels.RESTRICTED_LABEL_DOMAINS))
def test_should_fail_for_restricted_domains(domain: str) -> None:
    """It("should fail for restricted domains")"""
    assert not create_ok(reqs({"key": f"{domain}/test", "operator": "In", "values": ["test"]}))


@pytest.mark.parametrize("label", sorted(labels.RESTRICTED_LABELS))
def test_should_fail_for_restricted_labels(label: str) -> None:
    """It("should fail for restricted labels")"""
    assert not create_ok(reqs({"key": f"{label}/test", "operator": "In", "values": ["test"]}))


@pytest.mark.parametrize(
    "key", ["kubernetes.io/test", "k8s.io/test", "subdomain.kubernetes.io/test", "subdomain.k8s.io/test"]
)
def test_should_allow_kubernetes_domains_and_subdomains(key: str) -> None:
    """It("should allow kubernetes domains"), It("should allow kubernetes subdomains")"""
    assert create_ok(reqs({"key": key, "operator": "In", "values": ["test"]}))


@pytest.mark.parametrize("key", sorted(labels.WELL_KNOWN_LABELS - {labels.NODEPOOL}))
def test_should_allow_well_known_label_exceptions(key: str) -> None:
    """It("should allow well known label exceptions")"""
    assert create_ok(reqs({"key": key, "operator": "In", "values": ["test"]}))


def test_should_allow_non_empty_set_after_removing_overlapped_value() -> None:
    """It("should allow non-empty set after removing overlapped value")"""
    assert create_ok(
        reqs(
            {"key": labels.ZONE, "operator": "In", "values": ["test", "foo"]},
            {"key": labels.ZONE, "operator": "NotIn", "values": ["test", "bar"]},
        )
    )


def test_should_allow_empty_requirements() -> None:
    """It("should allow empty requirements")"""
    assert create_ok(reqs())


@pytest.mark.parametrize("op", ["Gt", "Lt", "Gte", "Lte"])
@pytest.mark.parametrize("values", [[], ["1", "2"], ["a"], ["-1"]])
def test_should_fail_with_invalid_gt_lt_gte_lte_values(op: str, values: list[str]) -> None:
    """It("should fail with invalid GT or LT values"), It("should fail with invalid GTE or LTE values")"""
    assert not create_ok(reqs({"key": labels.ZONE, "operator": op, "values": values}))


@pytest.mark.parametrize(
    "req",
    [
        {"key": labels.INSTANCE_TYPE, "operator": "In", "values": ["insance-type-1"], "minValues": -1},
        {"key": labels.INSTANCE_TYPE, "operator": "In", "values": ["insance-type-1"], "minValues": 0},
        {"key": labels.INSTANCE_TYPE, "operator": "Exists", "minValues": 51},
        {"key": labels.INSTANCE_TYPE, "operator": "In", "values": ["insance-type-1"], "minValues": 2},
    ],
    ids=["negative", "zero", "more-than-50", "more-than-values"],
)
def test_should_error_on_bad_min_values(req: dict[str, Any]) -> None:
    """It("should error when minValues is negative" / "is zero" / "is more than 50" / "is greater
    than the number of unique values specified within In operator")"""
    assert not create_ok(reqs(req))


def test_should_allow_more_than_50_values_if_min_values_is_not_specified() -> None:
    """It("should allow more than 50 values if minValues is not specified.")"""
    values = [f"instance{i}" for i in range(90)]
    assert create_ok(reqs({"key": labels.INSTANCE_TYPE, "operator": "In", "values": values}))


def test_should_error_when_requirements_is_greater_than_100() -> None:
    """It("should error when requirements is greater than 100")"""
    assert not create_ok(
        reqs(*({"key": f"key{i}", "operator": "In", "values": [f"v{i}"]} for i in range(101)))
    )


# -- Context("TerminationGracePeriod") / Context("ExpireAfter") --------------------------------


@pytest.mark.parametrize("value", ["30s", "1h30m5s"])
def test_should_succeed_on_a_valid_termination_grace_period(value: str) -> None:
    """DescribeTable("should succeed on a valid terminationGracePeriod")"""
    assert create_ok(claim("spec.terminationGracePeriod", value))


@pytest.mark.parametrize("value", ["-1s", "1hr", "Never", "FooNever"])
def test_should_fail_on_an_invalid_termination_grace_period(value: str) -> None:
    """DescribeTable("should fail on an invalid terminationGracePeriod")"""
    assert not create_ok(claim("spec.terminationGracePeriod", value))


@pytest.mark.parametrize("value", ["30s", "1h30m5s", "Never"])
def test_should_succeed_on_a_valid_expire_after(value: str) -> None:
    """DescribeTable("should succeed on a valid expireAfter")"""
    assert create_ok(claim("spec.expireAfter", value))


@pytest.mark.parametrize("value", ["-1s", "1hr", "FooNever"])
def test_should_fail_on_an_invalid_expire_after(value: str) -> None:
    """DescribeTable("should fail on an invalid expireAfter")"""
    assert not create_ok(claim("spec.expireAfter", value))
