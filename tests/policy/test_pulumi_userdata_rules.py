"""The user-data policies on the core renderer's real output, per AMI family.

``user-data-registers-nodepool`` and ``user-data-safe`` must judge what launch templates really
carry: AL2023 MIME + NodeConfig, AL2 MIME + bootstrap.sh flags, Bottlerocket TOML, Windows
PowerShell and Custom (user data as-is).
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from nodewright.api import EC2NodeClass, NodePool
from nodewright.policy import ResourceView
from nodewright.policy.labels_rules import check_user_data_registers
from nodewright.policy.safety import check_user_data_safe
from nodewright.policy.userdata_read import read_registration, without_cluster_ca
from nodewright.userdata import cluster_info_from_mapping, render_user_data

# Valid base64 whose text holds an AWS-access-key-shaped run between word boundaries.
CA = "LS0t/AKIAABCDEFGHIJKLMNOP/AALS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg=="
CLUSTER = {
    "clusterName": "demo",
    "clusterEndpoint": "https://ABCDEF.gr7.us-east-1.eks.amazonaws.com",
    "caBundle": CA,
    "clusterCIDR": "10.100.0.0/16",
    "clusterDNS": "10.100.0.10",
}
POOL: dict[str, Any] = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "web"},
    "spec": {
        "template": {
            "metadata": {"labels": {"team": "web"}},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "nc"},
                "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
                "taints": [{"key": "example.com/dedicated", "value": "web", "effect": "NoSchedule"}],
                "startupTaints": [{"key": "example.com/init", "effect": "NoExecute"}],
            },
        }
    },
}
CUSTOM_GOOD = (
    "#!/bin/bash\n/etc/eks/bootstrap.sh demo --kubelet-extra-args '--node-labels=team=web "
    "--register-with-taints=example.com/dedicated=web:NoSchedule,example.com/init:NoExecute,"
    "karpenter.sh/unregistered:NoExecute'\n"
)
USER_DATA = {
    "AL2": "#!/bin/bash\necho hello\n",
    "AL2023": "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n"
    "      shutdownGracePeriod: 30s\n",
    "Bottlerocket": '[settings.kubernetes]\nimage-gc-high-threshold-percent = "85"\n',
    "Windows2022": "Write-Host hello\n",
    "Custom": CUSTOM_GOOD,
}


def _render(family: str, *, pool: dict[str, Any] = POOL, user_data: str | None = None) -> str:
    nc = EC2NodeClass.model_validate(
        {
            "apiVersion": "karpenter.k8s.aws/v1",
            "kind": "EC2NodeClass",
            "metadata": {"name": "nc"},
            "spec": {
                "amiFamily": family,
                "amiSelectorTerms": [{"id": "ami-0123456789abcdef0"}],
                "role": "r",
                "subnetSelectorTerms": [{"tags": {"a": "b"}}],
                "securityGroupSelectorTerms": [{"tags": {"a": "b"}}],
                "userData": user_data if user_data is not None else USER_DATA[family],
            },
        }
    )
    info = cluster_info_from_mapping(CLUSTER, file="cluster")
    return render_user_data(nc, NodePool.model_validate(pool), info, max_pods=29)


def _lt(text: str) -> ResourceView:
    return ResourceView(
        type="aws:ec2/launchTemplate:LaunchTemplate",
        name="lt",
        props={
            "userData": base64.b64encode(text.encode()).decode(),
            "tags": {"karpenter.sh/nodepool": "web"},
        },
    )


POOL_CR = ResourceView(type="kubernetes:karpenter.sh/v1:NodePool", name="web", props=POOL)


@pytest.mark.parametrize("family", sorted(USER_DATA))
def test_real_renders_register_the_pool_and_are_safe(family: str) -> None:
    text = _render(family)
    assert CA in text or family == "Custom"
    reg = read_registration(text)
    assert check_user_data_registers([POOL_CR, _lt(text)], {}) == [], reg
    assert reg.has_taint("karpenter.sh/unregistered", None, "NoExecute")
    assert reg.has_taint("example.com/dedicated", "web", "NoSchedule")
    assert reg.has_taint("example.com/init", "", "NoExecute")
    if family != "Custom":  # Custom registers what the user wrote, as flags (read as a script)
        assert reg.has_label("karpenter.sh/nodepool", "web") and reg.has_label("team", "web")
        assert reg.opaque == () or family in ("AL2", "Windows2022")
    # the CA bundle is public data (redacted in previews), never mistaken for a credential
    assert check_user_data_safe(_lt(text), {}) == []
    assert CA not in without_cluster_ca(text)


@pytest.mark.parametrize("family", ["AL2", "AL2023", "Bottlerocket", "Windows2022"])
def test_render_of_another_pool_is_refused(family: str) -> None:
    other = {
        **POOL,
        "spec": {
            "template": {
                "metadata": {"labels": {"team": "batch"}},
                "spec": {**POOL["spec"]["template"]["spec"], "taints": [], "startupTaints": []},
            }
        },
    }
    ((_, msg),) = check_user_data_registers([POOL_CR, _lt(_render(family, pool=other))], {})
    assert "label team=web" in msg
    assert "taint example.com/dedicated=web:NoSchedule" in msg and "taint example.com/init:NoExecute" in msg
    assert "karpenter.sh/unregistered" not in msg  # Karpenter always registers it


def test_custom_without_unregistered_taint_is_accepted() -> None:
    """Karpenter >= v1.3 registers a node that joins without karpenter.sh/unregistered
    (kubernetes-sigs/karpenter#1991, "remove registration taint enforcement")."""
    text = _render("Custom", user_data=CUSTOM_GOOD.replace(",karpenter.sh/unregistered:NoExecute", ""))
    assert check_user_data_registers([POOL_CR, _lt(text)], {}) == []


def test_toml_comments_and_other_keys_do_not_register() -> None:
    # Bottlerocket reads node-taints only; a comment or another table naming the taint is not it.
    text = (
        "# example.com/init NoExecute\n[settings.kubernetes]\ncluster-name = 'demo'\n"
        "[settings.kubernetes.node-labels]\nteam = 'web'\n"
        "[settings.kubernetes.node-taints]\n'example.com/dedicated' = ['web:NoSchedule']\n"
        "[settings.oci-defaults]\nnote = 'example.com/init:NoExecute'\n"
    )
    reg = read_registration(text)
    assert reg.formats == ("toml",) and reg.opaque == ()
    ((_, msg),) = check_user_data_registers([POOL_CR, _lt(text)], {})
    assert "taint example.com/init:NoExecute" in msg and "label team" not in msg


def test_mime_part_encodings_are_decoded() -> None:
    flags = "--node-labels=3Dteam=3Dweb"  # quoted-printable of --node-labels=team=web
    text = (
        'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="//"\n\n--//\n'
        "Content-Transfer-Encoding: quoted-printable\nContent-Type: text/x-shellscript\n\n"
        f"kubelet {flags.replace('=3D', '=', 1)}\n--//--\n"
    )
    assert read_registration(text).has_label("team", "web")


def test_credentials_in_a_real_render_are_found() -> None:
    text = _render("AL2", user_data="#!/bin/bash\nexport AWS_ACCESS_KEY_ID=AKIAZZZZZZZZZZZZZZZZ\n")
    (msg,) = check_user_data_safe(_lt(text), {})
    assert "AWS access key id" in msg and "AKIAZZZZ" not in msg


def test_preview_redacts_the_ca_field_whatever_its_spelling() -> None:
    from nodewright.preview.report import _redact

    text = "certificateAuthority: QUJD\n--b64-cluster-ca 'QUJD' x\ncluster-certificate = 'QUJD'\n"
    assert "QUJD" not in _redact(text, ["QUJDRA=="])
    assert _redact(text, []).count("[secret]") == 3
