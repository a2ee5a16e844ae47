"""NodeClassDrift from a cluster CA rotation: the CA bundle is part of ``EC2NodeClass.Hash`` since
aws/karpenter-provider-aws v1.12 (v1.14.1 ``pkg/apis/v1/ec2nodeclass.go`` ``Hash(caBundle)``;
``pkg/controllers/nodeclass/hash/suite_test.go`` "should update the drift hash when the CA bundle
changes"). With the cluster info's ``caBundle``, ``nodewright drift`` predicts it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from drift_support import live, make_claim, make_nodeclass, make_nodepool, write_cluster

from nodewright import crd
from nodewright.cli import main
from nodewright.drift import drift_impact as _drift_impact
from nodewright.drift import nodeclass_hash


def drift_impact(*args: Any, **kwargs: Any) -> Any:
    """The default release's drift (the release is a parameter of every forecast)."""
    return _drift_impact(*args, **{"release": crd.default_release(), **kwargs})


OLD_CA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCmIyeGsKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="  # base64 of a PEM block
NEW_CA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCmJtVjMKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="  # base64 of another PEM block


def nodeclass() -> dict[str, Any]:
    return make_nodeclass()


def stamped(obj: dict[str, Any], h: str) -> dict[str, Any]:
    out = json.loads(json.dumps(obj))
    out["metadata"].setdefault("annotations", {}).update(
        {"karpenter.k8s.aws/ec2nodeclass-hash": h, "karpenter.k8s.aws/ec2nodeclass-hash-version": "v5"}
    )
    return out


def cluster(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    pool = make_nodepool()
    h = nodeclass_hash(nodeclass(), ca_bundle=OLD_CA)
    claims = [stamped(make_claim(f"default-{i}", pool), h) for i in range(2)]
    return write_cluster(tmp_path / "cluster.json", [live(pool), stamped(nodeclass(), h), *claims]), pool


def test_same_ca_no_drift(tmp_path: Path) -> None:
    path, pool = cluster(tmp_path)
    report = drift_impact([pool], path, nodeclasses=[nodeclass()], ca_bundle=OLD_CA)
    assert report.drifted == ()


def test_rotated_ca_drifts_every_claim(tmp_path: Path) -> None:
    path, pool = cluster(tmp_path)
    report = drift_impact([pool], path, nodeclasses=[nodeclass()], ca_bundle=NEW_CA)
    assert [d.reason for d in report.drifted] == ["NodeClassDrift", "NodeClassDrift"]
    assert any("CA changed" in n for n in report.notes)
    # a live-only EC2NodeClass (not in the branch) is re-stamped too
    only_live = drift_impact([pool], path, ca_bundle=NEW_CA)
    assert len(only_live.drifted) == 2


def test_without_ca_the_comparison_is_relative(tmp_path: Path) -> None:
    path, pool = cluster(tmp_path)
    report = drift_impact([pool], path, nodeclasses=[nodeclass()])
    assert report.drifted == ()
    assert any("no cluster CA bundle" in n for n in report.notes)


def test_cli_cluster_info(tmp_path: Path) -> None:
    path, pool = cluster(tmp_path)
    files = tmp_path / "branch.yaml"
    files.write_text(yaml.safe_dump_all([pool, nodeclass()]))
    info = tmp_path / "info.yaml"
    info.write_text(
        yaml.safe_dump(
            {
                "clusterName": "c",
                "clusterEndpoint": "https://example.com",
                "caBundle": NEW_CA,
                "clusterCIDR": "10.100.0.0/16",
                "clusterDNS": "10.100.0.10",
            }
        )
    )
    args = ["drift", "-f", str(files), "--cluster", str(path), "--cluster-info", str(info), "-o", "json"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert [d["reason"] for d in data["drifted"]] == ["NodeClassDrift", "NodeClassDrift"]
    assert NEW_CA not in res.output


def test_hash_prints_nodeclasses_with_the_ca(tmp_path: Path) -> None:
    files = tmp_path / "objs.yaml"
    files.write_text(yaml.safe_dump_all([make_nodepool(), nodeclass()]))
    info = tmp_path / "info.yaml"
    info.write_text(
        yaml.safe_dump({"clusterName": "c", "clusterEndpoint": "https://example.com", "caBundle": NEW_CA})
    )
    res = CliRunner().invoke(main, ["hash", "-f", str(files), "--cluster-info", str(info), "-o", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data[0]["name"] == "default" and "kind" not in data[0]
    assert data[1] == {
        "name": "default",
        "hash": nodeclass_hash(nodeclass(), ca_bundle=NEW_CA),
        "version": "v5",
        "kind": "EC2NodeClass",
    }
    no_ca = CliRunner().invoke(main, ["hash", "-f", str(files), "-o", "json"])
    assert json.loads(no_ca.stdout)[1]["hash"] == nodeclass_hash(nodeclass())
    assert "--cluster-info" in no_ca.stderr


# -- aws/karpenter-provider-aws v1.14.1 pkg/controllers/nodeclass/hash/suite_test.go, through drift ----

CA = "dGVzdC1jYS1idW5kbGU="


def _custom() -> dict[str, Any]:
    return make_nodeclass(
        amiFamily="Custom",
        amiSelectorTerms=[{"tags": {"*": "*"}}],
        subnetSelectorTerms=[{"tags": {"*": "*"}}],
        securityGroupSelectorTerms=[{"tags": {"*": "*"}}],
    )


def _annotated(obj: dict[str, Any], h: str, version: str) -> dict[str, Any]:
    out = json.loads(json.dumps(obj))
    out["metadata"].setdefault("annotations", {}).update(
        {"karpenter.k8s.aws/ec2nodeclass-hash": h, "karpenter.k8s.aws/ec2nodeclass-hash-version": version}
    )
    return out


def _world(
    tmp_path: Path, nc_version: str, claim_hash: str, claim_version: str, drifted: bool = False
) -> tuple[Path, Any]:
    pool = make_nodepool()
    claim = _annotated(make_claim("default-a", pool, drifted=drifted), claim_hash, claim_version)
    live_nc = _annotated(_custom(), "abceduefed", nc_version)
    return write_cluster(tmp_path / "cluster.json", [live(pool), live_nc, claim]), pool


@pytest.mark.parametrize(
    "change",
    [
        {"userData": "userdata-test-2"},  # "UserData Drift"
        {"tags": {"keyTag-test-3": "valueTag-test-3"}},  # "Tags Drift"
        {"blockDeviceMappings": [{"deviceName": "map-device-test-3"}]},  # "BlockDeviceMappings Drift"
        {"detailedMonitoring": True},  # "DetailedMonitoring Drift"
        {"metadataOptions": {"httpEndpoint": "disabled"}},  # "MetadataOptions Drift"
        {"context": "context-2"},  # "Context Drift"
        {"cpuOptions": {"nestedVirtualization": "enabled"}},  # "CPUOptions Drift"
    ],
)
def test_static_field_update_drifts(tmp_path: Path, change: dict[str, Any]) -> None:
    """DescribeTable "should update the drift hash when static field is updated" (every Entry)."""
    h = nodeclass_hash(_custom(), ca_bundle=CA)
    path, pool = _world(tmp_path, "v5", h, "v5")
    assert drift_impact([pool], path, nodeclasses=[_custom()], ca_bundle=CA).drifted == ()
    changed = _custom()
    changed["spec"].update(change)
    report = drift_impact([pool], path, nodeclasses=[changed], ca_bundle=CA)
    assert [d.reason for d in report.drifted] == ["NodeClassDrift"]


def test_dynamic_field_update_does_not_drift(tmp_path: Path) -> None:
    """It "should not update the drift hash when dynamic field is updated"."""
    h = nodeclass_hash(_custom(), ca_bundle=CA)
    path, pool = _world(tmp_path, "v5", h, "v5")
    moved = _custom()
    moved["spec"]["subnetSelectorTerms"] = [{"id": "subnet-test1"}]
    moved["spec"]["securityGroupSelectorTerms"] = [{"id": "sg-test1"}]
    moved["spec"]["amiSelectorTerms"] = [{"tags": {"ami-test-key": "ami-test-value"}}]
    assert drift_impact([pool], path, nodeclasses=[moved], ca_bundle=CA).drifted == ()


def test_hash_version_change_restamps_nodeclaims(tmp_path: Path) -> None:
    """It "should update ec2nodeclass-hash-versions on all NodeClaims when the ec2nodeclass-hash-version
    does not match with the controller hash version": re-stamped, so no drift."""
    path, pool = _world(tmp_path, "test", "123456", "test")
    assert drift_impact([pool], path, nodeclasses=[_custom()], ca_bundle=CA).drifted == ()


def test_matching_claim_version_keeps_its_hash(tmp_path: Path) -> None:
    """It "should not update ec2nodeclass-hash on all NodeClaims when the ec2nodeclass-hash-version matches
    the controller hash version": the claim keeps 1234564654, which differs from the class's hash."""
    path, pool = _world(tmp_path, "test-version", "1234564654", "v5")
    report = drift_impact([pool], path, nodeclasses=[_custom()], ca_bundle=CA)
    assert [d.reason for d in report.drifted] == ["NodeClassDrift"]


def test_drifted_claim_keeps_its_hash_on_version_change(tmp_path: Path) -> None:
    """It "should not update ec2nodeclass-hash on the NodeClaim if it's drifted and the
    ec2nodeclass-hash-version does not match the controller hash version"."""
    path, pool = _world(tmp_path, "test", "123456", "test", drifted=True)
    report = drift_impact([pool], path, nodeclasses=[_custom()], ca_bundle=CA)
    assert [(d.reason, d.already_drifted) for d in report.drifted] == [("NodeClassDrift", True)]
