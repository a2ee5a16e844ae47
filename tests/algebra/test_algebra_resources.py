"""Resource-list arithmetic and pod requests (Karpenter ``pkg/utils/resources`` semantics)."""

from __future__ import annotations

from typing import Any

import pytest

from nodewright.algebra.quantity import QuantityError
from nodewright.algebra.resources import (
    add,
    exceeded_by,
    fits,
    format_resource_list,
    is_binary_resource,
    is_zero,
    max_resources,
    min_resources,
    parse_resource_list,
    requests_for_pod,
    requests_for_pods,
    resource_list_str,
    subtract,
)
from nodewright.api.core import Pod


def rl(**kw: str) -> dict[str, int]:
    return parse_resource_list({k.replace("_", "-"): v for k, v in kw.items()})


def pod(spec: dict[str, Any]) -> Pod:
    return Pod.model_validate({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec})


def container(
    requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None, **extra: Any
) -> Any:
    return {"name": "c", "resources": {"requests": requests or {}, "limits": limits or {}}, **extra}


def test_algebra_parse_resource_list() -> None:
    assert parse_resource_list({"cpu": "1500m", "memory": "1Gi", "pods": 110}) == {
        "cpu": 1500,
        "memory": 2**30 * 1000,
        "pods": 110_000,
    }


def test_algebra_parse_resource_list_names_resource() -> None:
    with pytest.raises(QuantityError) as info:
        parse_resource_list({"cpu": "1", "memory": "1.5.3Gi"})
    assert str(info.value) == (
        'memory: invalid quantity "1.5.3Gi": expected a number with an optional suffix (m, Ki, Mi, Gi, k, M, G, ...)'
    )
    assert info.value.resource == "memory"


def test_algebra_format_resource_list() -> None:
    assert format_resource_list(rl(memory="1536Mi", cpu="1.5", pods="3", ephemeral_storage="20Gi")) == {
        "cpu": "1500m",
        "ephemeral-storage": "20Gi",
        "memory": "1536Mi",
        "pods": "3",
    }
    assert resource_list_str({}) == "{}"
    assert resource_list_str(rl(cpu="2", memory="1Gi")) == '{"cpu":"2","memory":"1Gi"}'


def test_algebra_binary_resources() -> None:
    assert is_binary_resource("memory")
    assert is_binary_resource("hugepages-2Mi")
    assert not is_binary_resource("cpu")


def test_algebra_add() -> None:
    assert add() == {}
    a, b = {"cpu": 1000}, {"cpu": 500, "memory": 10}
    assert add(a, b) == {"cpu": 1500, "memory": 10}
    assert a == {"cpu": 1000}  # inputs untouched


def test_algebra_subtract_keys_of_lhs_and_negative() -> None:
    assert subtract({"cpu": 1000, "memory": 5}, {"cpu": 1500, "gpu": 1}) == {"cpu": -500, "memory": 5}


def test_algebra_max_min() -> None:
    assert max_resources({"cpu": 1, "memory": 9}, {"cpu": 3}) == {"cpu": 3, "memory": 9}
    assert min_resources({"cpu": 1, "memory": 9}, {"cpu": 3}) == {"cpu": 1, "memory": 9}
    assert max_resources() == {}


def test_algebra_fits() -> None:
    total = {"cpu": 2000, "memory": 1000}
    assert fits({"cpu": 2000}, total)
    assert not fits({"cpu": 2001}, total)
    assert fits({}, total)
    assert fits({"nvidia.com/gpu": 0}, total)  # zero requests always fit
    assert not fits({"nvidia.com/gpu": 1000}, total)  # missing total counts as zero
    assert not fits({}, {"cpu": -1})  # any negative total never fits
    assert not fits({"cpu": 0}, {"cpu": 10, "memory": -1})


def test_algebra_exceeded_by_and_is_zero() -> None:
    assert exceeded_by({"cpu": 1000, "memory": 5}, {"cpu": 1001, "memory": 5, "gpu": 9}) == ["cpu"]
    assert exceeded_by({"cpu": 1000}, {}) == []
    assert is_zero({}) and is_zero({"cpu": 0})
    assert not is_zero({"cpu": 1})


def test_algebra_requests_for_plain_pod() -> None:
    p = pod({"containers": [container()]})
    assert requests_for_pod(p) == {"pods": 1000}


def test_algebra_requests_sum_containers_and_limits_default() -> None:
    p = pod(
        {
            "containers": [
                container({"cpu": "1"}, {"cpu": "2", "memory": "1Gi"}),
                container(None, {"cpu": "500m"}),
            ]
        }
    )
    assert requests_for_pod(p) == {"cpu": 1500, "memory": 2**30 * 1000, "pods": 1000}


def test_algebra_requests_init_container_max() -> None:
    # scenario 21: pod 1cpu/1Gi + init 2cpu/1Gi -> 2cpu/1Gi
    p = pod(
        {
            "containers": [container({"cpu": "1", "memory": "1Gi"})],
            "initContainers": [container({"cpu": "2", "memory": "1Gi"})],
        }
    )
    assert format_resource_list(requests_for_pod(p)) == {"cpu": "2", "memory": "1Gi", "pods": "1"}


def test_algebra_requests_sidecars() -> None:
    p = pod(
        {
            "containers": [container({"cpu": "1"})],
            "initContainers": [
                container({"cpu": "500m"}),  # before the sidecar: 500m
                container({"cpu": "200m"}, restartPolicy="Always"),  # sidecar: adds to containers
                container({"cpu": "1"}),  # after the sidecar: 1 + 200m
            ],
        }
    )
    assert requests_for_pod(p)["cpu"] == 1200
    big = pod(
        {
            "containers": [container({"cpu": "100m"})],
            "initContainers": [
                container({"cpu": "300m"}, restartPolicy="Always"),
                container({"cpu": "2"}),
            ],
        }
    )
    assert requests_for_pod(big)["cpu"] == 2300


def test_algebra_requests_overhead() -> None:
    p = pod({"containers": [container({"cpu": "1"})], "overhead": {"cpu": "2"}})
    assert requests_for_pod(p)["cpu"] == 3000


def test_algebra_requests_for_pods() -> None:
    p = pod({"containers": [container({"cpu": "1"})]})
    assert requests_for_pods([p, p]) == {"cpu": 2000, "pods": 2000}
    assert requests_for_pods([]) == {"pods": 0}


def test_algebra_requests_bad_quantity() -> None:
    p = pod({"containers": [container({"cpu": "1.5.3"})]})
    with pytest.raises(QuantityError, match=r'cpu: invalid quantity "1\.5\.3"'):
        requests_for_pod(p)


# -- pod-level resources: kubernetes-sigs/karpenter v1.14.1 pkg/utils/resources/suite_test.go,
# Context "Pod Level Resources" (resources.Ceiling requests) -------------------------------------
def _sidecar(cpu: str, memory: str) -> Any:
    r = {"cpu": cpu, "memory": memory}
    return container(r, r, restartPolicy="Always")


def test_algebra_pod_level_requests_and_limits() -> None:
    """It "should calculate resource requests when the pod level resources is specified"."""
    p = pod(
        {
            "resources": {"requests": {"cpu": "2", "memory": "2Gi"}, "limits": {"cpu": "4", "memory": "4Gi"}},
            "containers": [container({"cpu": "1", "memory": "1Gi"}, {"cpu": "3", "memory": "3Gi"})],
        }
    )
    assert format_resource_list(requests_for_pod(p)) == {"cpu": "2", "memory": "2Gi", "pods": "1"}


def test_algebra_pod_level_requests_only() -> None:
    """It "should calculate resource requests when only the pod level resources request is specified"."""
    p = pod(
        {
            "resources": {"requests": {"cpu": "2", "memory": "2Gi"}},
            "containers": [container({"cpu": "1", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"})],
            "initContainers": [_sidecar("1", "1Gi")],
        }
    )
    assert format_resource_list(requests_for_pod(p)) == {"cpu": "2", "memory": "2Gi", "pods": "1"}


def test_algebra_pod_level_requests_defaulted_from_limits() -> None:
    """It "should calculate resource requests when the pod level resources requests is defaulted from
    limits" (requests given as the API server defaults them)."""
    both = {"cpu": "10", "memory": "10Gi"}
    p = pod(
        {
            "resources": {"requests": both, "limits": both},
            "containers": [container({"cpu": "1", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"})],
            "initContainers": [_sidecar("1", "1Gi")],
        }
    )
    assert format_resource_list(requests_for_pod(p)) == {"cpu": "10", "memory": "10Gi", "pods": "1"}


def test_algebra_pod_level_limits_default_requests_like_the_api_server() -> None:
    """Manifests not yet defaulted: a pod-level limit is the request of a resource no container
    requests; otherwise the containers' aggregate stands. Unsupported resources and overhead are
    unaffected."""
    p = pod(
        {
            "resources": {"limits": {"cpu": "4", "memory": "4Gi", "nvidia.com/gpu": "1"}},
            "containers": [container({"cpu": "1"})],
            "overhead": {"cpu": "100m"},
        }
    )
    assert format_resource_list(requests_for_pod(p)) == {"cpu": "1100m", "memory": "4Gi", "pods": "1"}
