"""Kubelet facts back into scheduling: what the node's kubelet really gets."""

from __future__ import annotations

import logging

import pytest

from nodewright.userdata import KubeletConfig, effective_kubelet

BR_TOML = """
[settings.kubernetes]
max-pods = 250
unknown-thing = 1
[settings.kubernetes.kube-reserved]
memory = "2Gi"
cpu = "300m"
[settings.kubernetes.system-reserved]
memory = "500Mi"
[settings.kubernetes.eviction-hard]
"memory.available" = "5%"
"""


def test_al2_is_spec_kubelet_only() -> None:
    facts = effective_kubelet(
        family="AL2", kubelet={"maxPods": 20, "kubeReserved": {"cpu": "1"}}, user_data="#!/bin/bash\n"
    )
    assert facts.max_pods == 20
    assert facts.kube_reserved == {"cpu": "1"}
    assert facts.sources == {"max_pods": "spec.kubelet", "kube_reserved": "spec.kubelet"}


def test_bottlerocket_user_toml_counts_when_spec_is_unset(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="nodewright"):
        facts = effective_kubelet(family="Bottlerocket", kubelet=None, user_data=BR_TOML)
    assert facts.max_pods is None  # Karpenter always overrides max-pods with its own value
    assert facts.kube_reserved == {"memory": "2Gi", "cpu": "300m"}
    assert facts.system_reserved == {"memory": "500Mi"}
    assert facts.eviction_hard == {"memory.available": "5%"}
    assert facts.sources["kube_reserved"] == "userData"
    assert not caplog.records, "facts must stay quiet (the renderer warns)"


def test_bottlerocket_spec_replaces_the_whole_user_map() -> None:
    spec = KubeletConfig(max_pods=30, kube_reserved={"cpu": "100m"})
    facts = effective_kubelet(family="Bottlerocket", kubelet=spec, user_data=BR_TOML)
    assert facts.max_pods == 30
    assert facts.kube_reserved == {"cpu": "100m"}
    assert facts.system_reserved == {"memory": "500Mi"}
    assert facts.sources["kube_reserved"] == "spec.kubelet"
    assert facts.sources["system_reserved"] == "userData"


def test_al2023_nodeconfig_maps_merge_key_by_key() -> None:
    user = "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      kubeReserved:\n        memory: 1Gi\n        cpu: 250m\n"
    facts = effective_kubelet(family="AL2023", kubelet={"kubeReserved": {"cpu": "100m"}}, user_data=user)
    assert facts.kube_reserved == {"memory": "1Gi", "cpu": "100m"}


def test_custom_is_unknown() -> None:
    facts = effective_kubelet(family="Custom", kubelet={"maxPods": 8}, user_data="#!/bin/bash\n")
    assert facts.max_pods == 8
    assert facts.sources == {"max_pods": "unknown"}


def test_invalid_toml_is_an_error() -> None:
    from nodewright.userdata import UserDataError

    with pytest.raises(UserDataError, match="not valid TOML"):
        effective_kubelet(family="Bottlerocket", user_data="[settings\n")
