"""The user-data cases of aws/karpenter-provider-aws v1.14.1 ``pkg/providers/launchtemplate/suite_test.go``
(Context "User Data" and its "Bottlerocket" / "AL2023" sub-contexts), each citing its It/Entry.

Upstream provisions a pod and decodes every created launch template's user data; here the same
expectations run on :func:`nodewright.userdata.render_user_data` (what ``nodewright render userdata``
prints and the Pulumi launch templates carry). The byte-exact golden cases (``*_userdata_*.golden``)
are in ``tests/data/userdata/*/upstream_*``. The suite's environment: cluster ``test-cluster`` at
``https://test-cluster``, CA ``Y2EtYnVuZGxlCg==``, kube-dns ``10.0.100.10``, default alias al2023@latest.
"""

from __future__ import annotations

import tomllib
from typing import Any

import pytest
import yaml
from userdata_support import SUITE_CLUSTER, suite_nodeclass, suite_nodepool

from nodewright.errors import RenderError
from nodewright.userdata import ClusterInfo, render_user_data
from nodewright.userdata.gomime import read_multipart

INFO = SUITE_CLUSTER


def render(
    *,
    alias: str = "al2023@latest",
    kubelet: dict[str, Any] | None = None,
    user_data: str | None = None,
    instance_store_policy: str | None = None,
    labels: dict[str, str] | None = None,
    requirements: list[dict[str, Any]] | None = None,
    info: ClusterInfo = INFO,
    max_pods: int | None = 110,
) -> str:
    spec: dict[str, Any] = {"amiSelectorTerms": [{"alias": alias}]}
    if kubelet is not None:
        spec["kubelet"] = kubelet
    if user_data is not None:
        spec["userData"] = user_data
    if instance_store_policy:
        spec["instanceStorePolicy"] = instance_store_policy
    nc = suite_nodeclass(**spec)
    np = suite_nodepool(labels=labels, requirements=requirements or [])
    return render_user_data(nc, np, info, max_pods=None if (kubelet or {}).get("maxPods") else max_pods)


def kubelet_config(text: str) -> dict[str, Any]:
    """``ExpectParseNodeConfigKubeletField``: Karpenter's NodeConfig (the last part) kubelet.config."""
    doc = yaml.safe_load(read_multipart(text)[-1].body)
    config: dict[str, Any] = doc["spec"]["kubelet"]["config"]
    return config


def kubernetes_toml(text: str) -> dict[str, Any]:
    settings: dict[str, Any] = tomllib.loads(text)["settings"]["kubernetes"]
    return settings


RESOURCES = {"cpu": "500m", "memory": "1Gi", "ephemeral-storage": "2Gi"}
THRESHOLDS = {"memory.available": "10%", "nodefs.available": "15%", "nodefs.inodesFree": "5%"}
GRACE = {"memory.available": "1m", "nodefs.available": "180s", "nodefs.inodesFree": "5m"}


def test_al2_use_max_pods_false() -> None:
    """It "should specify --use-max-pods=false when using ENI-based pod density"."""
    assert "--use-max-pods false" in render(alias="al2@latest")


def test_al2_use_max_pods_false_with_user_max_pods() -> None:
    """It "should specify --use-max-pods=false and --max-pods user value when user specifies maxPods in NodePool"."""
    text = render(alias="al2@latest", kubelet={"maxPods": 10})
    assert "--use-max-pods false" in text and "--max-pods=10" in text


@pytest.mark.parametrize("field", ["systemReserved", "kubeReserved"])
def test_reserved(field: str) -> None:
    """It "should specify systemReserved when overriding system reserved values" / "... kubeReserved ..."."""
    assert kubelet_config(render(kubelet={field: RESOURCES}))[field] == RESOURCES


@pytest.mark.parametrize("field", ["evictionHard", "evictionSoft"])
def test_eviction_thresholds(field: str) -> None:
    """It "should pass evictionHard threshold values when specified" / "should pass evictionSoft threshold values when specified"."""
    kubelet: dict[str, Any] = {field: THRESHOLDS}
    if field == "evictionSoft":
        kubelet["evictionSoftGracePeriod"] = GRACE
    assert kubelet_config(render(kubelet=kubelet))[field] == THRESHOLDS


def test_eviction_soft_grace_period() -> None:
    """It "should pass evictionSoftGracePeriod values when specified" (Go's Duration.String())."""
    config = kubelet_config(render(kubelet={"evictionSoft": THRESHOLDS, "evictionSoftGracePeriod": GRACE}))
    assert config["evictionSoftGracePeriod"] == {
        "memory.available": "1m0s",
        "nodefs.available": "3m0s",
        "nodefs.inodesFree": "5m0s",
    }


@pytest.mark.parametrize(
    ("kubelet", "want"),
    [
        (
            {"evictionMaxPodGracePeriod": 300},
            {"evictionMaxPodGracePeriod": 300},
        ),  # "should pass evictionMaxPodGracePeriod when specified"
        ({"podsPerCore": 2}, {"podsPerCore": 2}),  # "should specify podsPerCore"
        (
            {"podsPerCore": 2, "maxPods": 100},
            {"podsPerCore": 2, "maxPods": 100},
        ),  # "... with maxPods enabled"
        (
            {"imageGCHighThresholdPercent": 50},
            {"imageGCHighThresholdPercent": 50},
        ),  # "should pass ImageGCHighThresholdPercent ..."
        (
            {"imageGCLowThresholdPercent": 50},
            {"imageGCLowThresholdPercent": 50},
        ),  # "should pass ImageGCLowThresholdPercent ..."
        ({"cpuCFSQuota": False}, {"cpuCFSQuota": False}),  # "should pass cpuCFSQuota when specified"
    ],
)
def test_al2023_kubelet_fields(kubelet: dict[str, Any], want: dict[str, Any]) -> None:
    config = kubelet_config(render(kubelet=kubelet))
    assert {k: config[k] for k in want} == want


def test_cluster_dns_ipv4_and_ipv6() -> None:
    """It "should specify clusterDNS when running in an ipv4 cluster" / "... ipv6 cluster"."""
    assert kubelet_config(render())["clusterDNS"] == ["10.0.100.10"]
    v6 = ClusterInfo(
        name="test-cluster",
        endpoint="https://test-cluster",
        ca_bundle="Y2E=",
        cidr="fd00::/108",
        dns=("fd4b:121b:812b::a",),
    )
    assert kubelet_config(render(info=v6))["clusterDNS"] == ["fd4b:121b:812b::a"]


@pytest.mark.parametrize(
    "label",
    [
        "node-restriction.kubernetes.io/bar",
        "kubernetes.io/bar",
        "k8s.io/bar",
        "foo.node-restriction.kubernetes.io/bar",
        "foo.kubernetes.io/bar",
        "foo.k8s.io/bar",
    ],
)
def test_no_labels_in_restricted_domains(label: str) -> None:
    """DescribeTable "should not pass any labels in restricted domains" (all six Entries)."""
    assert label not in render(
        labels={label: "foobar"}, requirements=[{"key": label, "operator": "In", "values": ["foobar"]}]
    )


def test_al2_raid0() -> None:
    """It "should specify --local-disks raid0 when instance-store policy is set on AL2"."""
    assert "--local-disks raid0" in render(alias="al2@latest", instance_store_policy="RAID0")


BIND = "commands = [['apiclient', 'ephemeral-storage', 'init'], ['apiclient', 'ephemeral-storage', 'bind']]"
BIND_DIRS = (
    "commands = [['apiclient', 'ephemeral-storage', 'init'], ['apiclient', 'ephemeral-storage', 'bind', "
    "'--dirs', '/var/lib/containerd', '/var/lib/kubelet', '/var/log/pods']]"
)


@pytest.mark.parametrize(
    ("alias", "commands"),
    [("bottlerocket@latest", BIND), ("bottlerocket@v1.45.0", BIND_DIRS), ("bottlerocket@v1.46.0", BIND)],
    ids=["RAID0 bootstrap-command", "explicit directories for v1.45.0", "default bind for v1.46.0"],
)
def test_bottlerocket_raid0(alias: str, commands: str) -> None:
    """Its "should specify RAID0 bootstrap-command when instance-store policy is set on Bottlerocket",
    "should use explicit directories for Bottlerocket v1.45.0", "should use default bind for Bottlerocket v1.46.0"."""
    text = render(alias=alias, instance_store_policy="RAID0")
    assert (
        f"\n[settings.bootstrap-commands.000-mount-instance-storage]\n{commands}\nmode = 'always'\nessential = true\n"
        in text
    )


def test_bottlerocket_merges_bootstrap_commands() -> None:
    """It "should merge bootstrap-commands when instance-store policy is set on Bottlerocket"."""
    user = "\n[settings.bootstrap-commands.111-say-hello]\ncommands = [['echo', 'hello']]\nmode = 'always'\nessential = true\n"
    text = render(alias="bottlerocket@latest", instance_store_policy="RAID0", user_data=user)
    assert (
        "\n[settings.bootstrap-commands]\n[settings.bootstrap-commands.000-mount-instance-storage]\n"
        f"{BIND}\nmode = 'always'\nessential = true\n\n"
        "[settings.bootstrap-commands.111-say-hello]\ncommands = [['echo', 'hello']]\nmode = 'always'\nessential = true\n"
    ) in text


def test_bottlerocket_invalid_toml_does_not_bootstrap() -> None:
    """Context "Bottlerocket" / It "should not bootstrap on invalid toml user data": an error, no user data."""
    with pytest.raises(RenderError):
        render(alias="bottlerocket@latest", user_data="#/bin/bash\n ./not-toml.sh")


@pytest.mark.parametrize("field", ["systemReserved", "kubeReserved"])
def test_bottlerocket_reserved(field: str) -> None:
    """Context "Bottlerocket" / It "should override system reserved values in user data" / "... kube reserved ..."."""
    values = {"cpu": "2", "memory": "3Gi", "ephemeral-storage": "10Gi"}
    key = {"systemReserved": "system-reserved", "kubeReserved": "kube-reserved"}[field]
    assert kubernetes_toml(render(alias="bottlerocket@latest", kubelet={field: values}))[key] == values


def test_bottlerocket_eviction_soft() -> None:
    """Context "Bottlerocket" / It "should override soft eviction values in user data"."""
    text = render(
        alias="bottlerocket@latest",
        kubelet={
            "evictionSoft": {"memory.available": "10%"},
            "evictionSoftGracePeriod": {"memory.available": "1m"},
        },
    )
    assert (
        "\n[settings.kubernetes.eviction-soft]\n'memory.available' = '10%'\n\n"
        "[settings.kubernetes.eviction-soft-grace-period]\n'memory.available' = '1m0s'\n"
    ) in text


def test_bottlerocket_max_pod_grace_period() -> None:
    """Context "Bottlerocket" / It "should override max pod grace period in user data"."""
    text = render(alias="bottlerocket@latest", kubelet={"maxPods": 35, "evictionMaxPodGracePeriod": 10})
    assert (
        "\n[settings.kubernetes]\napi-server = 'https://test-cluster'\ncluster-certificate = 'Y2EtYnVuZGxlCg=='\n"
        "cluster-name = 'test-cluster'\ncluster-dns-ip = '10.0.100.10'\nmax-pods = 35\neviction-max-pod-grace-period = 10\n"
    ) in text


@pytest.mark.parametrize(
    ("kubelet", "key", "want"),
    [
        (
            {"evictionHard": THRESHOLDS},
            "eviction-hard",
            THRESHOLDS,
        ),  # "should override kube reserved values" (evictionHard)
        (
            {"maxPods": 10},
            "max-pods",
            10,
        ),  # "should specify max pods value when passing maxPods in configuration"
        ({"imageGCHighThresholdPercent": 50}, "image-gc-high-threshold-percent", "50"),
        ({"imageGCLowThresholdPercent": 50}, "image-gc-low-threshold-percent", "50"),
        ({}, "cluster-dns-ip", "10.0.100.10"),  # "should pass ClusterDNSIP when discovered"
        ({"cpuCFSQuota": False}, "cpu-cfs-quota-enforced", False),  # "should pass CPUCFSQuota when specified"
    ],
)
def test_bottlerocket_kubelet_settings(kubelet: dict[str, Any], key: str, want: Any) -> None:
    assert kubernetes_toml(render(alias="bottlerocket@latest", kubelet=kubelet or None))[key] == want


@pytest.mark.parametrize(
    "as_requirements", [False, True], ids=["template labels", "single value requirements"]
)
def test_bottlerocket_node_labels(as_requirements: bool) -> None:
    """Context "Bottlerocket" / Its "should specify labels in the Kubelet flags when specified in NodePool" /
    "... when single value requirements are specified in NodePool"."""
    desired = {"test-label-1": "value-1", "test-label-2": "value-2"}
    reqs = [{"key": k, "operator": "In", "values": [v]} for k, v in desired.items()]
    text = render(
        alias="bottlerocket@latest",
        labels=None if as_requirements else desired,
        requirements=reqs if as_requirements else None,
    )
    labels = kubernetes_toml(text)["node-labels"]
    assert all(labels[k] == v for k, v in desired.items())


# -- Context "AL2023" ----------------------------------------------------------------------------


def _node_configs(text: str) -> list[dict[str, Any]]:
    """``ExpectParseNodeConfigs``: every application/node.eks.aws part."""
    return [
        yaml.safe_load(p.body)
        for p in read_multipart(text)
        if p.get("Content-Type").split(";")[0].strip() == "application/node.eks.aws"
    ]


def test_al2023_taints_in_register_with_taints() -> None:
    """Context "AL2023" / "Kubelet" / It "should specify taints in the KubeletConfiguration when specified in NodePool"."""
    taints = [{"key": "test-taint-1", "effect": "NoSchedule"}, {"key": "test-taint-2", "effect": "NoExecute"}]
    spec: dict[str, Any] = {
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
    }
    nc = suite_nodeclass(**spec)
    np = suite_nodepool(taints=taints)
    (config,) = _node_configs(render_user_data(nc, np, INFO, max_pods=110))
    registered = config["spec"]["kubelet"]["config"]["registerWithTaints"]
    assert len(registered) == 3 and all(t in registered for t in taints)


@pytest.mark.parametrize(
    "as_requirements", [False, True], ids=["template labels", "single value requirements"]
)
def test_al2023_labels_in_kubelet_flags(as_requirements: bool) -> None:
    """Context "AL2023" / "Kubelet" / Its "should specify labels in the Kubelet flags when specified in NodePool" /
    "... when single value requirements are specified in NodePool"."""
    desired = {"test-label-1": "value-1", "test-label-2": "value-2"}
    reqs = [{"key": k, "operator": "In", "values": [v]} for k, v in desired.items()]
    text = render(labels=None if as_requirements else desired, requirements=reqs if as_requirements else None)
    (config,) = _node_configs(text)
    flag = next(f for f in config["spec"]["kubelet"]["flags"] if f.startswith("--node-labels"))
    assert all(f"{k}={v}" in flag for k, v in desired.items())


@pytest.mark.parametrize(
    ("field", "kubelet", "want"),
    [
        ("systemReserved", {"systemReserved": RESOURCES}, RESOURCES),
        ("kubeReserved", {"kubeReserved": RESOURCES}, RESOURCES),
        ("evictionHard", {"evictionHard": THRESHOLDS}, THRESHOLDS),
        ("evictionSoft", {"evictionSoft": THRESHOLDS, "evictionSoftGracePeriod": GRACE}, THRESHOLDS),
        (
            "evictionSoftGracePeriod",
            {"evictionSoft": THRESHOLDS, "evictionSoftGracePeriod": GRACE},
            {"memory.available": "1m0s", "nodefs.available": "3m0s", "nodefs.inodesFree": "5m0s"},
        ),
        ("evictionMaxPodGracePeriod", {"evictionMaxPodGracePeriod": 300}, 300),
        ("podsPerCore", {"podsPerCore": 2}, 2),
        ("clusterDNS", {"clusterDNS": ["10.0.100.0"]}, ["10.0.100.0"]),
        ("imageGCHighThresholdPercent", {"imageGCHighThresholdPercent": 50}, 50),
        ("imageGCLowThresholdPercent", {"imageGCLowThresholdPercent": 50}, 50),
        ("cpuCFSQuota", {"cpuCFSQuota": False}, False),
    ],
)
def test_al2023_kubelet_configuration_field(field: str, kubelet: dict[str, Any], want: Any) -> None:
    """Context "AL2023" / "Kubelet" / DescribeTable "should specify KubletConfiguration field when specified in NodePool" (every Entry)."""
    (config,) = _node_configs(render(kubelet=kubelet))
    assert config["spec"]["kubelet"]["config"][field] == want


def test_al2023_raid0_local_storage() -> None:
    """Context "AL2023" / It "should set LocalDiskStrategy to Raid0 when specified by the InstanceStorePolicy"."""
    (config,) = _node_configs(render(instance_store_policy="RAID0"))
    assert config["spec"]["instance"]["localStorage"]["strategy"] == "RAID0"


def test_al2023_unresolved_cluster_cidr_fails() -> None:
    """Context "AL2023" / It "should fail to create launch templates if cluster CIDR is unresolved"."""
    no_cidr = ClusterInfo(
        name="test-cluster", endpoint="https://test-cluster", ca_bundle="Y2E=", dns=("10.0.100.10",)
    )
    with pytest.raises(RenderError):
        render(info=no_cidr)


def test_custom_user_data_is_copied_untouched() -> None:
    """Context "Custom AMI Selector" / It "should copy over userData untouched when AMIFamily is Custom"."""
    user = "special user data"
    spec = {"amiFamily": "Custom", "amiSelectorTerms": [{"tags": {"*": "*"}}], "userData": user}
    nc = suite_nodeclass(**spec)
    np = suite_nodepool()
    assert render_user_data(nc, np, INFO, max_pods=110) == user
