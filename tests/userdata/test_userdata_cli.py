"""`nodewright render userdata` through click, as users and acceptance checks drive it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from nodewright.cli import main

CA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tClkyRXRZblZ1Wkd4bAotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg=="  # base64 of a PEM block
NODECLASS = """apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: %s}]
  role: KarpenterNodeRole
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: test}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: test}}]
%s"""
NODEPOOL = """apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: web}
spec:
  template:
    metadata: {labels: {team: a}}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}
      - {key: tier, operator: In, values: [web]}
      startupTaints: [{key: node.cilium.io/agent-not-ready, effect: NoExecute}]
"""
INFO = f"clusterName: test-cluster\nclusterEndpoint: https://test-cluster\ncaBundle: {CA}\nclusterCIDR: 10.100.0.0/16\nclusterDNS: 10.0.100.10\n"


def _files(tmp_path: Path, alias: str = "al2023@latest", extra: str = "", info: str = INFO) -> list[str]:
    (tmp_path / "nc.yaml").write_text(NODECLASS % (alias, extra))
    (tmp_path / "np.yaml").write_text(NODEPOOL)
    (tmp_path / "info.yaml").write_text(info)
    return [
        "render",
        "userdata",
        "-f",
        str(tmp_path / "nc.yaml"),
        "--nodepool",
        str(tmp_path / "np.yaml"),
        "--cluster-info",
        str(tmp_path / "info.yaml"),
    ]


def _catalog(tmp_path: Path) -> str:
    path = tmp_path / "catalog.yaml"
    path.write_text(
        "apiVersion: nodewright.dev/v1alpha1\nkind: InstanceTypeCatalog\ninstanceTypes:\n"
        "- name: m5.large\n  capacity: {cpu: '2', memory: 8Gi, pods: '29'}\n"
        "  offerings: [{zone: us-east-1a, capacityType: spot, price: 0.04, available: true}]\n"
    )
    return str(path)


def test_raw_is_the_user_data(tmp_path: Path) -> None:
    args = [*_files(tmp_path), "--instance-type", "m5.large", "--catalog", _catalog(tmp_path)]
    result = CliRunner().invoke(main, [*args, "--show-secrets"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("MIME-Version: 1.0\n") and out.endswith("--//--\n")
    assert "maxPods: 29" in out
    assert f"certificateAuthority: {CA}" in out
    # without --show-secrets the same bytes, the CA bundle as [secret]
    hidden = CliRunner().invoke(main, args).stdout
    assert CA not in hidden and hidden == out.replace(CA, "[secret]")
    assert (
        "karpenter.sh/capacity-type=spot" in out and "karpenter.sh/nodepool=web" in out and "tier=web" in out
    )


def test_json_marks_the_ca_bundle(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            *_files(tmp_path, "al2@latest"),
            "-o",
            "json",
            "--instance-type",
            "m5.large",
            "--catalog",
            _catalog(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["amiFamily"] == "AL2" and data["maxPods"] == 29
    assert CA not in result.stdout and "[secret]" in data["userData"]
    assert data["secrets"] == ["caBundle"]
    assert data["size"]["limit"] == 16384


def test_kubelet_max_pods_needs_no_catalog(tmp_path: Path) -> None:
    extra = "  kubelet: {maxPods: 42}\n"
    result = CliRunner().invoke(main, [*_files(tmp_path, "bottlerocket@latest", extra)])
    assert result.exit_code == 0, result.output
    assert "max-pods = 42" in result.stdout


def test_without_instance_type_warns(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, _files(tmp_path, "al2@latest"))
    assert result.exit_code == 0
    assert "warning: no instance type and no spec.kubelet.maxPods" in result.stderr
    assert "--max-pods=110" in result.stdout


def test_broken_user_data_is_an_error_line(tmp_path: Path) -> None:
    extra = '  userData: |\n    MIME-Version: 1.0\n    Content-Type: multipart/mixed; boundary="BOUNDARY"\n    --BOUNDARY\n'
    args = _files(tmp_path, "al2@latest", extra)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    assert (
        f"\nerror: {tmp_path / 'nc.yaml'}:spec.userData: parsing custom user data input unreadable user data malformed MIME header: missing colon:"
    ) in result.stderr
    assert "Traceback" not in result.output


def test_bad_cluster_info(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, _files(tmp_path, info="clusterName: x\nclusterDNS: not-an-ip\n"))
    assert result.exit_code == 1
    assert "clusterEndpoint: clusterEndpoint is required" in result.stderr
    assert '"not-an-ip" is not an IP address' in result.stderr


@pytest.mark.parametrize("alias", ["windows2022@latest"])
def test_windows(tmp_path: Path, alias: str) -> None:
    result = CliRunner().invoke(main, [*_files(tmp_path, alias, "  kubelet: {maxPods: 110}\n")])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("<powershell>\n") and result.stdout.endswith("</powershell>")


REPO = Path(__file__).resolve().parents[2]


def test_readme_example_with_stacks() -> None:
    args = [
        "render",
        "userdata",
        "-f",
        str(REPO / "stacks/nodeclasses.yaml"),
        "--nodepool",
        str(REPO / "stacks/nodepools.yaml"),
        "--cluster-info",
        str(REPO / "stacks/cluster-info.yaml"),
        "--instance-type",
        "m5.large",
        "--nodepool-name",
        "default",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("MIME-Version: 1.0\n")
    assert "maxPods: 29" in result.stdout


def test_several_nodepools_need_a_name(tmp_path: Path) -> None:
    repo_pools = REPO / "stacks/nodepools.yaml"
    args = ["render", "userdata", "-f", str(REPO / "stacks/nodeclasses.yaml"), "--nodepool", str(repo_pools)]
    result = CliRunner().invoke(main, [*args, "--cluster-info", str(REPO / "stacks/cluster-info.yaml")])
    assert result.exit_code == 1
    assert "several NodePool objects (default, gpu); choose one with --nodepool-name NAME" in result.stderr


def test_json_describes_the_launch_template(tmp_path: Path) -> None:
    """`-o json` carries the launch template Karpenter would create (core LaunchTemplateSpec), without user data."""
    extra = (
        "  kubelet: {maxPods: 29}\n"
        "  blockDeviceMappings:\n"
        "  - {deviceName: /dev/xvda, ebs: {volumeSize: 1T, volumeType: gp3}}\n"
    )
    result = CliRunner().invoke(main, [*_files(tmp_path, extra=extra), "-o", "json"])
    assert result.exit_code == 0, result.output
    lt = json.loads(result.stdout)["launchTemplate"]
    assert "userData" not in lt and CA not in result.stdout
    assert lt["name"].startswith("karpenter.k8s.aws/")
    assert lt["blockDeviceMappings"][0]["volumeSizeGib"] == 932
    assert [t["resourceType"] for t in lt["tagSpecifications"]] == [
        "network-interface",
        "spot-instances-request",
    ]
    assert lt["tags"]["karpenter.sh/nodepool"] == "web"
    assert lt["networkInterfaces"][0]["deviceIndex"] == 0


def test_bad_volume_size_is_one_line(tmp_path: Path) -> None:
    extra = "  kubelet: {maxPods: 29}\n  blockDeviceMappings:\n  - {deviceName: /dev/xvda, ebs: {volumeSize: big}}\n"
    result = CliRunner().invoke(main, [*_files(tmp_path, extra=extra)])
    assert result.exit_code == 1
    assert "spec.blockDeviceMappings[0].ebs.volumeSize" in result.stderr and "Traceback" not in result.output
