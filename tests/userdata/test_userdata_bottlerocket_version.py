"""Bottlerocket RAID0 bind command from the AMI version, as aws/karpenter-provider-aws v1.14.1 resolves it.

Ports ``pkg/providers/amifamily/bottlerocket_test.go`` (Describe "Bottlerocket" / "resolveAMIVersion",
every It) and the ``version.SupportsDefaultBind`` rule (``pkg/providers/version/version.go``), then
checks the rendered ``000-mount-instance-storage`` command end to end through ``render_user_data``.
"""

from __future__ import annotations

from typing import Any

import pytest
from userdata_support import suite_nodepool

from nodewright.api import EC2NodeClass
from nodewright.userdata import ClusterInfo
from nodewright.userdata.launch import bottlerocket_ami_version, render_user_data, supports_default_bind


def nodeclass(terms: list[dict[str, Any]], amis: list[dict[str, Any]] | None = None) -> EC2NodeClass:
    return EC2NodeClass.model_validate(
        {
            "metadata": {"name": "default"},
            "spec": {
                "amiFamily": "Bottlerocket",
                "role": "r",
                "amiSelectorTerms": terms,
                "subnetSelectorTerms": [{"id": "subnet-1"}],
                "securityGroupSelectorTerms": [{"id": "sg-1"}],
                "instanceStorePolicy": "RAID0",
                "kubelet": {"maxPods": 29},
            },
            "status": {"amis": amis or []},
        }
    )


@pytest.mark.parametrize(
    ("terms", "amis", "want"),
    [
        # "should resolve version from alias"
        ([{"alias": "bottlerocket@v1.46.0"}], [], "v1.46.0"),
        # "should resolve latest from alias"
        ([{"alias": "bottlerocket@latest"}], [], "latest"),
        # "should resolve version from name"
        ([{"name": "bottlerocket-aws-k8s-1.33-x86_64-v1.46.0-431fe75a"}], [], "v1.46.0"),
        # "should resolve version from ID with resolved AMI"
        (
            [{"id": "ami-12345"}],
            [{"id": "ami-12345", "name": "bottlerocket-aws-k8s-1.33-x86_64-v1.47.0-abc123"}],
            "v1.47.0",
        ),
        # "should resolve version from resolved AMI fallback"
        (
            [{"tags": {"Environment": "prod"}}],
            [{"id": "ami-67890", "name": "bottlerocket-aws-k8s-1.30-arm64-v2.0.1-def456"}],
            "v2.0.1",
        ),
        # "should return empty when no version found"
        ([{"name": "some-other-ami"}], [], ""),
    ],
)
def test_resolve_ami_version(terms: list[dict[str, Any]], amis: list[dict[str, Any]], want: str) -> None:
    assert bottlerocket_ami_version(nodeclass(terms, amis)) == want


@pytest.mark.parametrize(
    ("version", "want"),
    [
        ("", False),
        ("latest", True),
        ("v1.46.0", True),
        ("1.46.0", True),
        ("v1.45.9", False),
        ("v2.0.1", True),
        ("v1.46", False),  # fewer than three parts
        ("v1.x.0", False),
        ("v1.4_6.0", False),  # strconv.Atoi refuses what Python's int() accepts
    ],
)
def test_supports_default_bind(version: str, want: bool) -> None:
    assert supports_default_bind(version) is want


def test_name_selector_version_reaches_the_bind_command() -> None:
    pool = suite_nodepool()
    info = ClusterInfo(
        name="c", endpoint="https://c", ca_bundle="Y2E=", cidr="10.100.0.0/16", dns=("10.100.0.10",)
    )
    new = render_user_data(
        nodeclass([{"name": "bottlerocket-aws-k8s-1.33-x86_64-v1.46.0-431fe75a"}]), pool, info
    )
    old = render_user_data(
        nodeclass([{"name": "bottlerocket-aws-k8s-1.33-x86_64-v1.45.0-431fe75a"}]), pool, info
    )
    assert "'apiclient', 'ephemeral-storage', 'bind'" in new and "--dirs" not in new
    assert "--dirs" in old


@pytest.mark.parametrize("enabled", [True, False])
def test_enable_default_mount_paths_flag(enabled: bool) -> None:
    """aws/karpenter-provider-aws v1.14.1 pkg/providers/amifamily/bootstrap/bottlerocket_test.go
    (Describe "EnableDefaultMountPaths" / It "should use the configured flag value"): the flag alone
    picks the RAID0 bind command."""
    from nodewright.userdata import KubeletConfig, Options, render

    opts = Options(
        cluster_name="c",
        cluster_endpoint="https://c",
        ca_bundle="Y2E=",
        kubelet=KubeletConfig(max_pods=29),
        instance_store_policy="RAID0",
        bottlerocket_default_mount_paths=enabled,
    )
    text = render("Bottlerocket", opts).text
    assert ("--dirs" in text) is not enabled
