"""Port of kubernetes-sigs/karpenter v1.14.1 ``pkg/apis/v1/nodepool_validation_cel_test.go``, part 2:
Context("Labels"), ("TerminationGracePeriod"), ("NodeClassRef") and ("Replicas"). Part 1 (and the
conventions) is ``test_upstream_nodepool_cel.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
from crd_helpers import LONG, TEMPLATE_SPEC, base_nodepool, create_ok, pool, runtime_ok, set_path, with_labels

from nodewright import labels

# -- Context("Labels") -------------------------------------------------------------------------


def test_should_allow_unrecognized_labels() -> None:
    """It("should allow unrecognized labels")"""
    body = with_labels({"foo": "silly"})
    assert create_ok(body) and runtime_ok(body)


def test_should_fail_for_the_nodepool_label_in_labels() -> None:
    """Context("Labels") It("should fail for the karpenter.sh/nodepool label")"""
    body = with_labels({labels.NODEPOOL: "silly"})
    assert not create_ok(body) and not runtime_ok(body)


def test_should_fail_for_invalid_label_keys() -> None:
    """It("should fail for invalid label keys"): the CRD accepts it, RuntimeValidate does not."""
    body = with_labels({"spaces are not allowed": "silly"})
    assert create_ok(body) and not runtime_ok(body)


@pytest.mark.parametrize("key", [f"test.com.test.{LONG}/test", f"test.com.test/test-{LONG}"])
def test_should_fail_at_runtime_for_label_keys_that_are_too_long(key: str) -> None:
    """It("should fail at runtime for label keys that are too long")"""
    body = with_labels({key: "silly"})
    assert create_ok(body) and not runtime_ok(body)


def test_should_fail_for_invalid_label_values() -> None:
    """It("should fail for invalid label values")"""
    body = with_labels({"silly": "/ is not allowed"})
    assert not create_ok(body) and not runtime_ok(body)


@pytest.mark.parametrize("domain", sorted(labels.RESTRICTED_LABEL_DOMAINS))
def test_should_fail_for_restricted_label_domains(domain: str) -> None:
    """It("should fail for restricted label domains")"""
    body = with_labels({f"{domain}/unknown": "silly"})
    assert not create_ok(body) and not runtime_ok(body)


def test_should_allow_labels_kops_require() -> None:
    """It("should allow labels kOps require")"""
    body = with_labels({"kops.k8s.io/instancegroup": "karpenter-nodes", "kops.k8s.io/gpu": "1"})
    assert create_ok(body) and runtime_ok(body)


@pytest.mark.parametrize(
    "key",
    [
        "kubernetes.io",
        "k8s.io",
        "kubernetes.io/key",
        "k8s.io/key",
        "subdomain.kubernetes.io",
        "subdomain.k8s.io",
        "subdomain.kubernetes.io/key",
        "subdomain.k8s.io/key",
    ],
)
def test_should_allow_labels_in_kubernetes_domains(key: str) -> None:
    """It("should allow labels in kubernetes domains"), It("should allow labels prefixed with the
    kubernetes domain"), It("should allow subdomain labels in restricted domains exceptions list"),
    It("should allow subdomain labels prefixed with the kubernetes domain")"""
    body = with_labels({key: "test-value"})
    assert create_ok(body) and runtime_ok(body)


# -- Context("TerminationGracePeriod") ---------------------------------------------------------


@pytest.mark.parametrize("value", ["30s", "1h30m5s"])
def test_should_succeed_on_a_valid_termination_grace_period(value: str) -> None:
    """DescribeTable("should succeed on a valid terminationGracePeriod")"""
    assert create_ok(set_path(base_nodepool(), f"{TEMPLATE_SPEC}.terminationGracePeriod", value))


@pytest.mark.parametrize("value", ["-1s", "1hr", "Never", "FooNever"])
def test_should_fail_on_an_invalid_termination_grace_period(value: str) -> None:
    """DescribeTable("should fail on an invalid terminationGracePeriod")"""
    assert not create_ok(set_path(base_nodepool(), f"{TEMPLATE_SPEC}.terminationGracePeriod", value))


# -- Context("NodeClassRef") -------------------------------------------------------------------


@pytest.mark.parametrize("field", ["group", "kind", "name"])
def test_should_fail_if_node_class_ref_field_is_unset(field: str) -> None:
    """It("should fail if group is unset"), It("should fail if kind is unset"), It("should fail if name is unset")"""
    assert not create_ok(set_path(base_nodepool(), f"{TEMPLATE_SPEC}.nodeClassRef.{field}", ""))


# -- Context("Replicas") -----------------------------------------------------------------------


@pytest.mark.parametrize("replicas", [5, 0, 1000])
def test_should_succeed_when_replicas_is_valid(replicas: int) -> None:
    """Context("Valid Replicas Values"): positive, zero, large."""
    body = pool(spec__replicas=replicas)
    assert create_ok(body) and runtime_ok(body)


def test_should_fail_when_replicas_is_set_to_a_negative_value() -> None:
    """It("should fail when replicas is set to a negative value")"""
    assert not create_ok(pool(spec__replicas=-100))


@pytest.mark.parametrize(
    "change",
    [
        {"spec.limits": {"cpu": "1k"}},
        {"spec.limits": {"memory": "2000Gi"}},
        {"spec.limits": {"pods": "10"}},
        {"spec.limits": {"ephemeral-storage": "10Gi"}},
        {"spec.weight": 25},
    ],
    ids=["limits.cpu", "limits.memory", "limits.pods", "limits.ephemeral-storage", "weight"],
)
def test_should_fail_for_incompatible_fields(change: dict[str, Any]) -> None:
    """DescribeTable("should fail for incompatible fields") with replicas: 10"""
    body = pool(spec__replicas=10)
    for path, value in change.items():
        body = set_path(body, path, value)
    assert not create_ok(body)


COMPATIBLE: dict[str, dict[str, Any]] = {
    "limits.nodes": {"spec.limits": {"nodes": "100"}},
    "disruption with multiple budgets": {
        "spec.disruption": {
            "consolidationPolicy": "WhenEmptyOrUnderutilized",
            "consolidateAfter": "5m",
            "budgets": [
                {
                    "nodes": "20%",
                    "schedule": "0 9 * * mon-fri",
                    "duration": "8h0m0s",
                    "reasons": ["Drifted", "Empty"],
                },
                {
                    "nodes": "30%",
                    "schedule": "0 22 * * sat,sun",
                    "duration": "4h0m0s",
                    "reasons": ["Underutilized"],
                },
                {"nodes": "5"},
            ],
        }
    },
    "template labels": {"spec.template.metadata.labels": {"environment": "production"}},
    "template annotations": {
        "spec.template.metadata.annotations": {"example.com/last-updated": "2024-01-01"}
    },
    "taints": {
        f"{TEMPLATE_SPEC}.taints": [{"key": "gpu-workload", "value": "enabled", "effect": "NoSchedule"}]
    },
    "startup taints": {
        f"{TEMPLATE_SPEC}.startupTaints": [
            {"key": "example.com/initializing", "value": "true", "effect": "NoSchedule"}
        ]
    },
    "requirements": {
        f"{TEMPLATE_SPEC}.requirements": [
            {
                "key": labels.INSTANCE_TYPE,
                "operator": "In",
                "values": [
                    "m5.large",
                    "m5.xlarge",
                    "m5.2xlarge",
                    "c5.large",
                    "c5.xlarge",
                    "r5.large",
                    "r5.xlarge",
                ],
                "minValues": 3,
            },
            {"key": labels.ZONE, "operator": "In", "values": ["us-west-2a", "us-west-2b", "us-west-2c"]},
            {"key": labels.CAPACITY_TYPE, "operator": "In", "values": ["on-demand", "spot"]},
            {"key": labels.ARCH, "operator": "In", "values": ["amd64"]},
            {"key": "karpenter.k8s.aws/instance-memory", "operator": "Gt", "values": ["8192"]},
            {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Lt", "values": ["64"]},
        ]
    },
    "expireAfter": {f"{TEMPLATE_SPEC}.expireAfter": "72h"},
    "terminationGracePeriod": {f"{TEMPLATE_SPEC}.terminationGracePeriod": "5m0s"},
}


@pytest.mark.parametrize("name", list(COMPATIBLE))
def test_should_succeed_for_compatible_fields(name: str) -> None:
    """DescribeTable("should succeed for compatible fields") with replicas: 10 (durations as Go's
    metav1.Duration serializes them, e.g. 8h0m0s)"""
    body = pool(spec__replicas=10)
    for path, value in COMPATIBLE[name].items():
        body = set_path(body, path, value)
    assert create_ok(body) and runtime_ok(body)


def test_transition_rules_are_not_evaluated_on_create() -> None:
    """Context("NodeClassRef") "should fail to mutate group/kind" and Context("Update Scenarios")
    (static <-> dynamic) are update-time rules (``oldSelf``): on create the API server skips them
    (no old value), so the object itself is accepted. The updates: test_upstream_updates.py."""
    from nodewright.crd import crd

    spec = crd("NodePool").schema.properties["spec"]
    assert [r.transition for r in spec.rules] == [True, False, False]
    ref = spec.properties["template"].properties["spec"].properties["nodeClassRef"]
    assert all(r.transition for r in ref.rules)
    assert create_ok(pool(spec__replicas=3))
