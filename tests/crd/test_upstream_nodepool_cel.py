"""Port of kubernetes-sigs/karpenter v1.14.1 ``pkg/apis/v1/nodepool_validation_cel_test.go``
(Describe "CEL/Validation"): every ``It``/``Entry`` that runs on create, against the shipped CRD.

``create_ok`` stands for ``env.Client.Create`` (the API server: schema, CEL, defaults) and
``runtime_ok`` for ``nodePool.RuntimeValidate(ctx)``. Test names follow the upstream ones. The
update scenarios (transition rules with ``oldSelf``) are ported as updates in
``test_upstream_updates.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
from crd_helpers import (
    LONG,
    TEMPLATE_SPEC,
    base_nodepool,
    create_ok,
    pool,
    runtime_ok,
    set_path,
    with_budgets,
    with_requirements,
    with_taints,
)

from nodewright import labels

# -- Context("Disruption") ---------------------------------------------------------------------


def test_should_succeed_on_a_disabled_expire_after() -> None:
    """It("should succeed on a disabled expireAfter")"""
    assert create_ok(set_path(base_nodepool(), f"{TEMPLATE_SPEC}.expireAfter", "Never"))


@pytest.mark.parametrize("value", ["30s", "1h30m5s", "Never"])
def test_should_succeed_on_a_valid_expire_after(value: str) -> None:
    """DescribeTable("should succeed on a valid expireAfter"): single unit, multiple units, never."""
    assert create_ok(set_path(base_nodepool(), f"{TEMPLATE_SPEC}.expireAfter", value))


@pytest.mark.parametrize("value", ["-1s", "1hr", "FooNever"])
def test_should_fail_on_an_invalid_expire_after(value: str) -> None:
    """DescribeTable("should fail on an invalid expireAfter"): negative, invalid unit, partial match."""
    assert not create_ok(set_path(base_nodepool(), f"{TEMPLATE_SPEC}.expireAfter", value))


def test_should_succeed_on_a_disabled_consolidate_after() -> None:
    """It("should succeed on a disabled consolidateAfter")"""
    assert create_ok(pool(spec__disruption={"consolidateAfter": "Never"}))


@pytest.mark.parametrize("value", ["30s", "1h30m5s", "Never"])
def test_should_succeed_on_a_valid_consolidate_after(value: str) -> None:
    """DescribeTable("should succeed on a valid consolidateAfter")"""
    assert create_ok(pool(spec__disruption={"consolidateAfter": value}))


@pytest.mark.parametrize("value", ["-1s", "1hr", "FooNever"])
def test_should_fail_on_an_invalid_consolidate_after(value: str) -> None:
    """DescribeTable("should fail on an invalid consolidateAfter")"""
    assert not create_ok(pool(spec__disruption={"consolidateAfter": value}))


@pytest.mark.parametrize(
    ("after", "policy"),
    [
        ("30s", "WhenEmpty"),
        ("30s", "WhenEmptyOrUnderutilized"),
        ("Never", "WhenEmptyOrUnderutilized"),
        ("Never", "WhenEmpty"),
    ],
)
def test_should_succeed_when_setting_consolidate_after_with_a_policy(after: str, policy: str) -> None:
    """It("should succeed when setting consolidateAfter [to 'Never'] with consolidationPolicy=...")"""
    assert create_ok(pool(spec__disruption={"consolidateAfter": after, "consolidationPolicy": policy}))


@pytest.mark.parametrize("value", ["WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"])
def test_should_succeed_on_a_valid_consolidation_policy(value: str) -> None:
    """DescribeTable("should succeed on a valid consolidationPolicy") and
    DescribeTable("should pass RuntimeValidate for valid consolidationPolicy")"""
    body = pool(spec__disruption={"consolidateAfter": "0s", "consolidationPolicy": value})
    assert create_ok(body) and runtime_ok(body)


@pytest.mark.parametrize(
    "value", ["1", "2", "3", "0", "4", "10", "balanced", "whenempty", "", "WhenUnderutilized", "foo"]
)
def test_should_fail_on_an_invalid_consolidation_policy(value: str) -> None:
    """DescribeTable("should fail on an invalid consolidationPolicy")"""
    assert not create_ok(pool(spec__disruption={"consolidateAfter": "0s", "consolidationPolicy": value}))


@pytest.mark.parametrize(
    ("name", "budget"),
    [
        ("an invalid cron", {"nodes": "10", "schedule": "*", "duration": "20m"}),
        ("a schedule with less than 5 entries", {"nodes": "10", "schedule": "* * * * ", "duration": "20m"}),
        ("a negative duration", {"nodes": "10", "schedule": "* * * * *", "duration": "-20m"}),
        ("a seconds duration", {"nodes": "10", "schedule": "* * * * *", "duration": "30s"}),
        ("a negative value int", {"nodes": "-10"}),
        ("a negative value percent", {"nodes": "-10%"}),
        ("a value percent with more than 3 digits", {"nodes": "1000%"}),
        ("a cron but no duration", {"nodes": "10", "schedule": "* * * * *"}),
        ("a duration but no cron", {"nodes": "10", "duration": "20m"}),
    ],
)
def test_should_fail_when_creating_a_budget_with(name: str, budget: dict[str, Any]) -> None:
    """It("should fail when creating a budget with <name>")"""
    assert not create_ok(with_budgets(budget)), name


@pytest.mark.parametrize(
    ("name", "budget"),
    [
        ("both duration and cron", {"nodes": "10", "schedule": "* * * * *", "duration": "20m"}),
        ("hours and minutes in duration", {"nodes": "10", "schedule": "* * * * *", "duration": "2h20m"}),
        ("neither duration nor cron", {"nodes": "10"}),
        ("special cased crons", {"nodes": "10", "schedule": "@annually", "duration": "20m"}),
    ],
)
def test_should_succeed_when_creating_a_budget_with(name: str, budget: dict[str, Any]) -> None:
    """It("should succeed when creating a budget with <name>")"""
    assert create_ok(with_budgets(budget)), name


def test_should_fail_when_creating_two_budgets_where_one_has_an_invalid_crontab() -> None:
    """It("should fail when creating two budgets where one has an invalid crontab")"""
    assert not create_ok(
        with_budgets(
            {"nodes": "10", "schedule": "@annually", "duration": "20m"},
            {"nodes": "10", "schedule": "*", "duration": "20m"},
        )
    )


def test_should_fail_when_one_budget_does_not_have_both_schedule_and_duration() -> None:
    """It("should fail when creating multiple budgets where one doesn't have both schedule and duration")"""
    assert not create_ok(
        with_budgets(
            {"nodes": "10", "duration": "20m"},
            {"nodes": "10", "schedule": "* * * * *", "duration": "20m"},
            {"nodes": "10"},
        )
    )


@pytest.mark.parametrize("reason", ["Drifted", "Underutilized", "Empty"])
def test_should_succeed_when_creating_a_budget_with_valid_reasons(reason: str) -> None:
    """DescribeTable("should succeed when creating a budget with valid reasons")"""
    assert create_ok(
        with_budgets({"nodes": "10", "schedule": "* * * * *", "duration": "20m", "reasons": [reason]})
    )


@pytest.mark.parametrize("reason", ["invalid", "expired", ""])
def test_should_fail_when_creating_a_budget_with_invalid_reasons(reason: str) -> None:
    """DescribeTable("should fail when creating a budget with invalid reasons")"""
    assert not create_ok(
        with_budgets({"nodes": "10", "schedule": "* * * * *", "duration": "20m", "reasons": [reason]})
    )


def test_should_allow_setting_multiple_reasons() -> None:
    """It("should allow setting multiple reasons")"""
    assert create_ok(
        with_budgets(
            {"nodes": "10", "schedule": "* * * * *", "duration": "20m", "reasons": ["Drifted", "Empty"]}
        )
    )


# -- Context("Taints") -------------------------------------------------------------------------


def test_should_succeed_for_valid_taints() -> None:
    """It("should succeed for valid taints")"""
    body = with_taints(
        {"key": "a", "value": "b", "effect": "NoSchedule"},
        {"key": "c", "value": "d", "effect": "NoExecute"},
        {"key": "e", "value": "f", "effect": "PreferNoSchedule"},
        {"key": "Test", "value": "f", "effect": "PreferNoSchedule"},
        {"key": "test.com/Test", "value": "f", "effect": "PreferNoSchedule"},
        {"key": "test.com.com/test", "value": "f", "effect": "PreferNoSchedule"},
        {"key": "key-only", "effect": "NoExecute"},
    )
    assert create_ok(body) and runtime_ok(body)


@pytest.mark.parametrize("key", ["test.com.com}", "Test.com/test", "test/test/test", "test/", "/test"])
def test_should_fail_for_invalid_taint_keys(key: str) -> None:
    """It("should fail for invalid taint keys")"""
    body = with_taints({"key": key, "effect": "NoSchedule"})
    assert not create_ok(body) and not runtime_ok(body)


@pytest.mark.parametrize("key", [f"test.com.test.{LONG}/test", f"test.com.test/test-{LONG}"])
def test_should_fail_at_runtime_for_taint_keys_that_are_too_long(key: str) -> None:
    """It("should fail at runtime for taint keys that are too long"): the CRD accepts, RuntimeValidate not."""
    body = with_taints({"key": key, "effect": "NoSchedule"})
    assert create_ok(body) and not runtime_ok(body)


def test_should_fail_for_missing_taint_key() -> None:
    """It("should fail for missing taint key") (Go serializes the empty key as "")"""
    body = with_taints({"key": "", "effect": "NoSchedule"})
    assert not create_ok(body) and not runtime_ok(body)


def test_should_fail_for_invalid_taint_value() -> None:
    """It("should fail for invalid taint value")"""
    body = with_taints({"key": "invalid-value", "effect": "NoSchedule", "value": "???"})
    assert not create_ok(body) and not runtime_ok(body)


def test_should_fail_for_invalid_taint_effect() -> None:
    """It("should fail for invalid taint effect")"""
    body = with_taints({"key": "invalid-effect", "effect": "???"})
    assert not create_ok(body) and not runtime_ok(body)


def test_should_not_fail_for_same_key_with_different_effects() -> None:
    """It("should not fail for same key with different effects")"""
    body = with_taints({"key": "a", "effect": "NoSchedule"}, {"key": "a", "effect": "NoExecute"})
    assert create_ok(body) and runtime_ok(body)


# -- Context("Requirements") -------------------------------------------------------------------


def test_should_succeed_for_valid_requirement_keys() -> None:
    """It("should succeed for valid requirement keys")"""
    body = with_requirements(
        *(
            {"key": k, "operator": "Exists"}
            for k in ("Test", "test.com/Test", "test.com.com/test", "key-only")
        )
    )
    assert create_ok(body) and runtime_ok(body)


@pytest.mark.parametrize("key", ["test.com.com}", "Test.com/test", "test/test/test", "test/", "/test"])
def test_should_fail_for_invalid_requirement_keys(key: str) -> None:
    """It("should fail for invalid requirement keys")"""
    body = with_requirements({"key": key, "operator": "Exists"})
    assert not create_ok(body) and not runtime_ok(body)


@pytest.mark.parametrize("key", [f"test.com.test.{LONG}/test", f"test.com.test/test-{LONG}"])
def test_should_fail_at_runtime_for_requirement_keys_that_are_too_long(key: str) -> None:
    """It("should fail at runtime for requirement keys that are too long")"""
    body = with_requirements({"key": key, "operator": "Exists"})
    assert create_ok(body) and not runtime_ok(body)


def test_should_fail_for_the_nodepool_label_in_requirements() -> None:
    """Context("Requirements") It("should fail for the karpenter.sh/nodepool label")"""
    body = with_requirements({"key": labels.NODEPOOL, "operator": "In", "values": ["silly"]})
    assert not create_ok(body) and not runtime_ok(body)


def test_should_allow_supported_ops() -> None:
    """It("should allow supported ops") (Go serializes absent values as omitted)"""
    z = labels.ZONE
    body = with_requirements(
        {"key": z, "operator": "In", "values": ["test"]},
        {"key": z, "operator": "Gt", "values": ["1"]},
        {"key": z, "operator": "Lt", "values": ["1"]},
        {"key": z, "operator": "NotIn"},
        {"key": z, "operator": "Exists"},
    )
    assert create_ok(body) and runtime_ok(body)


def test_should_fail_for_unsupported_ops() -> None:
    """It("should fail for unsupported ops")"""
    body = with_requirements({"key": labels.ZONE, "operator": "unknown", "values": ["test"]})
    assert not create_ok(body) and not runtime_ok(body)


@pytest.mark.parametrize("domain", sorted(labels.RESTRICTED_LABEL_DOMAINS))
def test_should_fail_for_restricted_domains(domain: str) -> None:
    """It("should fail for restricted domains") (the AWS provider adds karpenter.k8s.aws)"""
    body = with_requirements({"key": f"{domain}/test", "operator": "In", "values": ["test"]})
    assert not create_ok(body) and not runtime_ok(body)


@pytest.mark.parametrize("label", sorted(labels.RESTRICTED_LABELS))
def test_should_fail_for_restricted_labels(label: str) -> None:
    """It("should fail for restricted labels") (upstream appends "/test" to the label)"""
    body = with_requirements({"key": f"{label}/test", "operator": "In", "values": ["test"]})
    assert not create_ok(body)


@pytest.mark.parametrize("key", ["kubernetes.io/test", "k8s.io/test"])
def test_should_allow_kubernetes_domains(key: str) -> None:
    """It("should allow kubernetes domains") (since v1.9, kubernetes-sigs/karpenter#2586)"""
    body = with_requirements({"key": key, "operator": "In", "values": ["test"]})
    assert create_ok(body) and runtime_ok(body)


@pytest.mark.parametrize("key", ["subdomain.kubernetes.io/test", "subdomain.k8s.io/test"])
def test_should_allow_kubernetes_subdomains_exceptions(key: str) -> None:
    """It("should allow kubernetes subdomains exceptions")"""
    body = with_requirements({"key": key, "operator": "In", "values": ["test"]})
    assert create_ok(body) and runtime_ok(body)


@pytest.mark.parametrize(
    "key", sorted(labels.WELL_KNOWN_LABELS - {labels.NODEPOOL, labels.CAPACITY_TYPE, labels.INSTANCE_TENANCY})
)
def test_should_allow_well_known_label_exceptions(key: str) -> None:
    """It("should allow well known label exceptions") (capacity type and, on AWS, instance tenancy
    are runtime validated against their known values)"""
    body = with_requirements({"key": key, "operator": "In", "values": ["test"]})
    assert create_ok(body) and runtime_ok(body)


def test_should_allow_non_empty_set_after_removing_overlapped_value() -> None:
    """It("should allow non-empty set after removing overlapped value")"""
    body = with_requirements(
        {"key": labels.ZONE, "operator": "In", "values": ["test", "foo"]},
        {"key": labels.ZONE, "operator": "NotIn", "values": ["test", "bar"]},
    )
    assert create_ok(body) and runtime_ok(body)


def test_should_allow_empty_requirements() -> None:
    """It("should allow empty requirements")"""
    body = with_requirements()
    assert create_ok(body) and runtime_ok(body)


@pytest.mark.parametrize("op", ["Gt", "Lt", "Gte", "Lte"])
@pytest.mark.parametrize("values", [[], ["1", "2"], ["a"], ["-1"]])
def test_should_fail_with_invalid_gt_lt_gte_lte_values(op: str, values: list[str]) -> None:
    """It("should fail with invalid GT or LT values") and It("should fail with invalid GTE or LTE values")"""
    body = with_requirements({"key": labels.ZONE, "operator": op, "values": values})
    assert not create_ok(body) and not runtime_ok(body)


@pytest.mark.parametrize(("name", "min_values"), [("negative", -1), ("zero", 0)])
def test_should_error_when_min_values_is_not_positive(name: str, min_values: int) -> None:
    """It("should error when minValues is negative") / It("should error when minValues is zero")"""
    body = with_requirements(
        {"key": labels.INSTANCE_TYPE, "operator": "In", "values": ["insance-type-1"], "minValues": min_values}
    )
    assert not create_ok(body), name


def test_should_error_when_min_values_is_more_than_50() -> None:
    """It("should error when minValues is more than 50")"""
    assert not create_ok(
        with_requirements({"key": labels.INSTANCE_TYPE, "operator": "Exists", "minValues": 51})
    )


def test_should_allow_more_than_50_values_if_min_values_is_not_specified() -> None:
    """It("should allow more than 50 values if minValues is not specified.")"""
    values = [f"instance{i}" for i in range(90)]
    assert create_ok(with_requirements({"key": labels.INSTANCE_TYPE, "operator": "In", "values": values}))


def test_should_error_when_min_values_exceeds_the_values_of_in() -> None:
    """It("should error when minValues is greater than the number of unique values specified within In operator")"""
    body = with_requirements(
        {"key": labels.INSTANCE_TYPE, "operator": "In", "values": ["insance-type-1"], "minValues": 2}
    )
    assert not create_ok(body)
