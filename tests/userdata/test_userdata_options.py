"""Karpenter's launch-template pipeline (aws/karpenter-provider-aws ``pkg/providers/launchtemplate/launchtemplate.go``) and Go helpers."""

from __future__ import annotations

import pytest

from nodewright import labels as L
from nodewright.api.amifamily import renderer_family
from nodewright.userdata import BootstrapTaint, ClusterInfo, KubeletConfig, resolve_options
from nodewright.userdata.options import format_go_duration, parse_go_duration

INFO = ClusterInfo(name="c", endpoint="https://c", ca_bundle="Y2E=", cidr="10.0.0.0/16", dns=("10.0.0.10",))


def test_family_dispatch_defaults_to_al2() -> None:
    assert renderer_family("Bottlerocket") == "Bottlerocket"
    assert renderer_family("Ubuntu") == "AL2"
    assert renderer_family(None) == "AL2"


@pytest.mark.parametrize("family", ["AL2", "AL2023", "Bottlerocket", "Windows2019"])
def test_do_not_sync_taints_except_custom(family: str) -> None:
    o = resolve_options(family=family, info=INFO, labels={}, capacity_type="spot", instance_type_pods=10)
    assert o.labels[L.DO_NOT_SYNC_TAINTS] == "true"
    assert o.labels[L.CAPACITY_TYPE] == "spot"
    c = resolve_options(family="Custom", info=INFO, labels={}, capacity_type="spot", instance_type_pods=10)
    assert L.DO_NOT_SYNC_TAINTS not in c.labels


def test_forbidden_labels_dropped_and_unregistered_appended_once() -> None:
    o = resolve_options(
        family="AL2",
        info=INFO,
        labels={
            "kubernetes.io/arch": "amd64",
            "a.k8s.io/x": "1",
            "team": "x",
            "node-restriction.kubernetes.io/y": "1",
        },
        capacity_type="on-demand",
        taints=[BootstrapTaint("a", "NoSchedule")],
        startup_taints=[BootstrapTaint(L.UNREGISTERED_TAINT_KEY, "NoExecute")],
        instance_type_pods=10,
    )
    assert set(o.labels) == {"team", L.CAPACITY_TYPE, L.DO_NOT_SYNC_TAINTS}
    assert [t.to_string() for t in o.taints] == ["a:NoSchedule", "karpenter.sh/unregistered:NoExecute"]


def test_max_pods_from_instance_type_and_default_cluster_dns() -> None:
    o = resolve_options(family="AL2", info=INFO, labels={}, capacity_type="spot", instance_type_pods=29)
    assert o.kubelet is not None
    assert o.kubelet.max_pods == 29
    assert o.kubelet.cluster_dns == ("10.0.0.10",)
    user = resolve_options(
        family="AL2",
        info=INFO,
        labels={},
        capacity_type="spot",
        kubelet=KubeletConfig(max_pods=7, cluster_dns=("1.1.1.1",)),
        instance_type_pods=29,
    )
    assert user.kubelet is not None
    assert (user.kubelet.max_pods, user.kubelet.cluster_dns) == (7, ("1.1.1.1",))


def test_ca_bundle_not_in_repr() -> None:
    o = resolve_options(family="AL2", info=INFO, labels={}, capacity_type="spot", instance_type_pods=1)
    assert "Y2E=" not in repr(o) and "Y2E=" not in repr(INFO)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1m", "1m0s"),
        ("90s", "1m30s"),
        ("1h", "1h0m0s"),
        ("1.5s", "1.5s"),
        ("500ms", "500ms"),
        ("0", "0s"),
        ("2h45m", "2h45m0s"),
    ],
)
def test_go_durations(text: str, expected: str) -> None:
    assert format_go_duration(parse_go_duration(text)) == expected


def test_kubelet_from_mapping_accepts_camel_case() -> None:
    k = KubeletConfig.from_mapping(
        {"maxPods": 3, "clusterDNS": ["1.2.3.4"], "cpuCFSQuota": False, "unknownField": 1}
    )
    assert (k.max_pods, k.cluster_dns, k.cpu_cfs_quota) == (3, ("1.2.3.4",), False)
