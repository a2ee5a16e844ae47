"""Port of kubernetes-sigs/karpenter v1.14.1 ``pkg/apis/v1alpha1/nodeoverlay_validation_test.go``
(Describe "CEL/Validation"), against the shipped NodeOverlay CRD (the AWS provider's copy, which
also restricts the karpenter.k8s.aws domain). ``create_ok`` = ``env.Client.Create``;
``runtime_ok`` = ``nodeOverlay.RuntimeValidate(ctx)``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from crd_helpers import create_ok

from nodewright import crd, labels
from nodewright.crd.runtime import nodeoverlay_problems


def overlay(**spec: Any) -> dict[str, Any]:
    """The BeforeEach NodeOverlay (one ``karpenter.sh/capacity-type Exists`` requirement)."""
    body: dict[str, Any] = {
        "apiVersion": "karpenter.sh/v1alpha1",
        "kind": "NodeOverlay",
        "metadata": {"name": "test-overlay"},
        "spec": {"requirements": [{"key": labels.CAPACITY_TYPE, "operator": "Exists"}]},
    }
    body["spec"].update(spec)
    return body


def reqs(*items: dict[str, Any]) -> dict[str, Any]:
    return overlay(requirements=list(items))


def runtime_ok(body: dict[str, Any]) -> bool:
    return not nodeoverlay_problems(body, file="test.yaml", base="")


def both_fail(body: dict[str, Any]) -> bool:
    return not create_ok(body) and not runtime_ok(body)


def both_pass(body: dict[str, Any]) -> bool:
    return create_ok(body) and runtime_ok(body)


# -- Context("Requirements") -------------------------------------------------------------------


def test_should_fail_for_no_values_for_in_operator() -> None:
    """It("should fail for no values for In operator")"""
    assert both_fail(reqs({"key": "Test", "operator": "In"}))


def test_should_fail_for_no_values_for_notin_operator() -> None:
    """It("should fail for no values for NotIn operator")"""
    assert both_fail(reqs({"key": "Test", "operator": "NotIn"}))


def test_should_succeed_for_valid_requirement_keys() -> None:
    """It("should succeed for valid requirement keys") (both Its of that name)"""
    assert both_pass(reqs({"key": "Test", "operator": "Exists"}))
    keys = ["Test", "test.com/Test", "test.com.com/test", "key-only"]
    assert both_pass(reqs(*({"key": k, "operator": "Exists"} for k in keys)))


@pytest.mark.parametrize("key", ["test.com.com}", "Test.com/test", "test/test/test", "test/", "/test"])
def test_should_fail_for_invalid_requirement_keys(key: str) -> None:
    """It("should fail for invalid requirement keys")"""
    assert both_fail(reqs({"key": key, "operator": "Exists"}))


def test_should_allow_for_the_nodepool_label() -> None:
    """It("should allow for the karpenter.sh/nodepool label")"""
    assert both_pass(reqs({"key": labels.NODEPOOL, "operator": "In", "values": ["silly-name"]}))


def test_should_fail_at_runtime_for_requirement_keys_that_are_too_long() -> None:
    """It("should fail at runtime for requirement keys that are too long"): the API server accepts
    them (key maxLength 316), RuntimeValidate does not (a qualified name's parts are bounded)."""
    for key in (f"test.com.test.{'a' * 250}/test", f"test.com.test/test-{'a' * 250}"):
        body = reqs({"key": key, "operator": "Exists"})
        assert create_ok(body)
        assert not runtime_ok(body)


def test_should_allow_supported_ops() -> None:
    """It("should allow supported ops")"""
    z = labels.ZONE
    body = reqs(
        {"key": z, "operator": "In", "values": ["test"]},
        {"key": z, "operator": "Gt", "values": ["1"]},
        {"key": z, "operator": "Lt", "values": ["1"]},
        {"key": z, "operator": "Gte", "values": ["1"]},
        {"key": z, "operator": "Lte", "values": ["1"]},
        {"key": z, "operator": "NotIn", "values": ["1"]},
        {"key": z, "operator": "Exists"},
    )
    assert both_pass(body)


def test_should_fail_for_unsupported_ops() -> None:
    """It("should fail for unsupported ops")"""
    assert both_fail(reqs({"key": labels.ZONE, "operator": "unknown", "values": ["test"]}))


@pytest.mark.parametrize("domain", labels.RESTRICTED_LABEL_DOMAINS)
def test_should_fail_for_restricted_domains(domain: str) -> None:
    """It("should fail for restricted domains")"""
    assert both_fail(reqs({"key": f"{domain}/test", "operator": "In", "values": ["test"]}))


@pytest.mark.parametrize("domain", ["kubernetes.io", "k8s.io"])
def test_should_allow_kubernetes_domains_exceptions(domain: str) -> None:
    """It("should allow kubernetes domains exceptions") and It("should allow kubernetes
    subdomains exceptions")"""
    assert both_pass(reqs({"key": f"{domain}/test", "operator": "In", "values": ["test"]}))
    assert both_pass(reqs({"key": f"subdomain.{domain}/test", "operator": "In", "values": ["test"]}))


# Upstream's loop runs over core's WellKnownLabels. The AWS provider's NodeOverlay CRD allows
# only its older list of karpenter.k8s.aws labels (no capacity reservation, tenancy or placement
# group labels), so on an AWS cluster the API server refuses those six: a fact of the shipped CRD.
_AWS_OVERLAY_REFUSED = frozenset(
    {
        labels.CAPACITY_RESERVATION_ID,
        "karpenter.k8s.aws/capacity-reservation-interruptible",
        "karpenter.k8s.aws/capacity-reservation-type",
        labels.INSTANCE_TENANCY,
        "karpenter.k8s.aws/placement-group-id",
        "karpenter.k8s.aws/placement-group-partition",
    }
)


@pytest.mark.parametrize(
    "label",
    sorted(labels.WELL_KNOWN_LABELS - {labels.NODEPOOL, labels.CAPACITY_TYPE} - _AWS_OVERLAY_REFUSED),
)
def test_should_allow_well_known_label_exceptions(label: str) -> None:
    """It("should allow well known label exceptions") (capacity type is runtime validated)"""
    assert both_pass(reqs({"key": label, "operator": "In", "values": ["test"]}))


@pytest.mark.parametrize("label", sorted(_AWS_OVERLAY_REFUSED))
def test_aws_overlay_crd_refuses_the_newer_aws_labels(label: str) -> None:
    assert not create_ok(reqs({"key": label, "operator": "In", "values": ["test"]}))


def test_should_allow_non_empty_set_after_removing_overlapped_value() -> None:
    """It("should allow non-empty set after removing overlapped value")"""
    body = reqs(
        {"key": labels.ZONE, "operator": "In", "values": ["test", "foo"]},
        {"key": labels.ZONE, "operator": "NotIn", "values": ["test", "bar"]},
    )
    assert both_pass(body)


def test_should_allow_empty_requirements() -> None:
    """It("should allow empty requirements")"""
    assert both_pass(reqs({"key": "test", "operator": "Exists"}))


@pytest.mark.parametrize("op", ["Gt", "Lt", "Gte", "Lte"])
@pytest.mark.parametrize("values", [[], ["1", "2"], ["a"], ["-1"]])
def test_should_fail_with_invalid_gt_lt_gte_lte_values(op: str, values: list[str]) -> None:
    """It("should fail with invalid GT or LT values") and It("should fail with invalid GTE or LTE values")"""
    assert both_fail(reqs({"key": labels.ZONE, "operator": op, "values": values}))


def test_should_not_be_able_to_set_both_price_and_price_adjustment() -> None:
    """It("shout not be able to set both price and priceAdjustment")"""
    assert not create_ok(overlay(price="0.432", priceAdjustment="+10%"))


_INVALID_PRICES = [
    "+42",
    ".5",
    "42.",
    "42%",
    "3,14",
    "1e10",
    "0x42",
    "forty-two",
    "42a",
    "42 ",
    " 42",
    "42.0.0",
    "-",
    ".",
]


@pytest.mark.parametrize("value", [*_INVALID_PRICES, "-100.0%", "-101.1%", "-129"])
def test_price_adjustment_context_invalid_input(value: str) -> None:
    """Context("priceAdjustment") DescribeTable("Invalid Input"): upstream's table sets ``price``."""
    assert not create_ok(overlay(price=value))


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("1%", False),  # It("should not allow an unsigned priceAdjustment percentage")
        ("1", False),  # It("should not allow an unsigned priceAdjustment integer")
        ("1.3", False),  # It("should not allow an unsigned priceAdjustment float")
        ("+1%", True),  # It("should allow positive percentage value for priceAdjustment field")
        ("-1%", True),  # It("should allow negative percentage less then 0%")
        ("-100%", True),  # It("should allow negative percentage -100%")
        ("+100.102%", True),  # It("should allow positive percentage greater then 100%")
        ("+298%", True),  # It("should allow positive percentage greater then 100% with an integer")
        ("+43", True),  # It("should allow positive integer value")
        ("-43", True),  # It("should allow negative integer value")
        ("+34.43", True),  # It("should allow positive float value")
        ("-34.43", True),  # It("should allow negative float value")
    ],
)
def test_price_adjustment_values(value: str, ok: bool) -> None:
    """Context("priceAdjustment"): the Its named in the comments."""
    assert create_ok(overlay(priceAdjustment=value)) is ok


@pytest.mark.parametrize("value", [*_INVALID_PRICES, "-.42"])
def test_price_context_invalid_input(value: str) -> None:
    """Context("price") DescribeTable("Invalid Input")"""
    assert not create_ok(overlay(price=value))


@pytest.mark.parametrize("value", ["43", "34.43"])
def test_price_allows_integer_and_float(value: str) -> None:
    """Context("price") It("should allow integer value") / It("should allow float value")"""
    assert create_ok(overlay(price=value))


def test_capacity_should_allow_custom_resources() -> None:
    """Context("Capacity") It("should allow custom resources")"""
    assert both_pass(overlay(capacity={"smarter-devices/fuse": "1"}))


@pytest.mark.parametrize(("name", "value"), [("cpu", "1"), ("memory", "34Gi"), ("pods", "324")])
def test_capacity_should_not_allow_well_known_resource_overrides(name: str, value: str) -> None:
    """Context("Capacity") It("should not allow cpu / memory / pod resources override")"""
    assert both_fail(overlay(capacity={name: value}))


# -- nodewright's own: every problem located, counted truthfully by `validate` ---------------------


def test_admit_object_runs_runtime_validate_for_node_overlays() -> None:
    body = overlay(requirements=[{"key": f"test.com.test.{'a' * 250}/test", "operator": "Exists"}])
    problems = crd.admit_object(body, kind="NodeOverlay", file="o.yaml").problems
    assert [p.path for p in problems] == ["spec.requirements[0]"]
    assert "ValidationSucceeded" in problems[0].message


def test_validate_reports_every_overlay_problem_and_counts_valid_ones(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {name: bad}\nspec:\n"
        "  requirements: [{key: karpenter.sh/foo, operator: In, values: []}]\n"
        "  price: '+1'\n  priceAdjustment: '-10%'\n  capacity: {cpu: '1'}\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "nodewright.cli", "validate", "-f", str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1
    errors = [line for line in run.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) >= 4
    assert any("spec.capacity[cpu]:" in e for e in errors)
    assert any("spec.price:" in e for e in errors)
    assert "valid" not in run.stdout
    good = tmp_path / "good.yaml"
    good.write_text(
        "apiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {name: good}\nspec:\n"
        "  requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}]\n"
        "  priceAdjustment: '-10%'\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "nodewright.cli", "validate", "-f", str(good), "-o", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert '"NodeOverlay": 1' in run.stdout
    assert "ignoring unknown kind" not in run.stderr
