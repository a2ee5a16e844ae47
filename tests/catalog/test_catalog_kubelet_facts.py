"""Kubelet facts back into scheduling: the catalog's allocatable follows what the node's
kubelet really gets, including reservations set in the EC2NodeClass's user data
(``nodewright.userdata.effective_kubelet``), through ``nodeclass_catalog(spec, nodeclass)``,
``apply_kubelet(..., effective_kubelet_options(...))`` and ``nodewright catalog list --nodeclass``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from nodewright.catalog import Catalog, apply_kubelet
from nodewright.cli.catalog import command
from nodewright.userdata import effective_kubelet_options, nodeclass_catalog

BOTTLEROCKET_TOML = """\
[settings.kubernetes]
image-gc-high-threshold-percent = "85"

[settings.kubernetes.kube-reserved]
memory = "1Gi"
"""


def _nodeclass(*, family_alias: str, user_data: str | None = None, kubelet: Any = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "amiSelectorTerms": [{"alias": family_alias}],
        "role": "KarpenterNodeRole-demo",
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
    }
    if user_data is not None:
        spec["userData"] = user_data
    if kubelet is not None:
        spec["kubelet"] = kubelet
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "br"},
        "spec": spec,
    }


def _list_json(tmp_path: Path, nodeclass: dict[str, Any]) -> dict[str, Any]:
    path = tmp_path / "nodeclass.yaml"
    path.write_text(yaml.safe_dump(nodeclass))
    result = CliRunner().invoke(
        command, ["list", "--catalog", "aws:us-east-1", "--nodeclass", str(path), "-o", "json"]
    )
    assert result.exit_code == 0, result.output
    by_name: dict[str, Any] = {d["name"]: d for d in json.loads(result.output)}
    return by_name


def test_bottlerocket_user_toml_kube_reserved_changes_allocatable(us_east_1: Catalog, tmp_path: Path) -> None:
    plain = _list_json(tmp_path, _nodeclass(family_alias="bottlerocket@latest"))["m5.large"]
    toml = _list_json(tmp_path, _nodeclass(family_alias="bottlerocket@latest", user_data=BOTTLEROCKET_TOML))[
        "m5.large"
    ]
    # Karpenter's default: 11 x 29 pods + 255 = 574Mi; the TOML's 1Gi is what the kubelet reserves.
    assert plain["overhead"]["kubeReserved"]["memory"] == "574Mi"
    assert toml["overhead"]["kubeReserved"]["memory"] == "1Gi"
    assert toml["overhead"]["kubeReserved"]["cpu"] == plain["overhead"]["kubeReserved"]["cpu"]  # key by key
    assert plain["allocatable"]["memory"] == "6903Mi"  # 7577 - 574 - 100 (eviction)
    assert toml["allocatable"]["memory"] == "6453Mi"  # 7577 - 1024 - 100
    assert toml["capacity"] == plain["capacity"]


def test_spec_kubelet_wins_over_bottlerocket_toml(us_east_1: Catalog) -> None:
    nc = _nodeclass(
        family_alias="bottlerocket@latest",
        user_data=BOTTLEROCKET_TOML,
        kubelet={"kubeReserved": {"memory": "300Mi"}},
    )
    m5 = nodeclass_catalog("aws:us-east-1", nc)["m5.large"]
    assert m5.to_dict()["overhead"]["kubeReserved"]["memory"] == "300Mi"


def test_al2023_nodeconfig_kube_reserved_counts(us_east_1: Catalog) -> None:
    user_data = (
        "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n"
        "      kubeReserved:\n        memory: 2Gi\n"
    )
    m5 = nodeclass_catalog("aws:us-east-1", _nodeclass(family_alias="al2023@latest", user_data=user_data))[
        "m5.large"
    ]
    assert m5.to_dict()["overhead"]["kubeReserved"]["memory"] == "2Gi"
    assert m5.to_dict()["allocatable"]["memory"] == "5429Mi"  # 7577 - 2048 - 100


def test_apply_kubelet_takes_user_data(us_east_1: Catalog) -> None:
    bottlerocket = nodeclass_catalog("aws:us-east-1", _nodeclass(family_alias="bottlerocket@latest"))
    shaped = apply_kubelet(
        bottlerocket["m5.large"],
        effective_kubelet_options("Bottlerocket", None, BOTTLEROCKET_TOML),
        "Bottlerocket",
    )
    assert shaped.to_dict()["allocatable"]["memory"] == "6453Mi"


def test_invalid_user_data_is_an_input_error(us_east_1: Catalog, tmp_path: Path) -> None:
    path = tmp_path / "nodeclass.yaml"
    path.write_text(yaml.safe_dump(_nodeclass(family_alias="bottlerocket@latest", user_data="[settings\n")))
    result = CliRunner().invoke(command, ["list", "--catalog", "aws:us-east-1", "--nodeclass", str(path)])
    assert result.exit_code == 1
    assert result.output.startswith("error: ") and "spec.userData" in result.output, result.output
    assert "Traceback" not in result.output
