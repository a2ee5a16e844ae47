"""A PR that bumps the Karpenter release is forecast as Karpenter handles the upgrade.

On a hash-version mismatch the hash controllers re-stamp the NodePool / EC2NodeClass and every
NodeClaim whose version differs (the new hash, unless already Drifted) instead of drifting them:
kubernetes-sigs/karpenter v1.14.1 ``pkg/controllers/nodepool/hash/suite_test.go`` "should update
nodepool hash versions on all nodeclaims when the hash versions don't match the controller hash
version", and aws/karpenter-provider-aws v1.14.1 ``pkg/controllers/nodeclass/hash/suite_test.go``
"should update ec2nodeclass-hash-versions on all NodeClaims when the ec2nodeclass-hash-version does
not match with the controller hash version" / "should not update ec2nodeclass-hash on the NodeClaim
if it's drifted and the ec2nodeclass-hash-version does not match the controller hash version".
Here the cluster was stamped by v1.11.3 (EC2NodeClass hash v4, no CA bundle) and the branch runs
v1.14.1 (v5, with the CA bundle): every hash changes, no node rolls, and ``drift`` says so.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from drift_support import live, make_claim, make_nodeclass, make_nodepool, write_cluster

from nodewright import crd
from nodewright.drift import drift_impact, nodeclass_hash

CA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCmIyeGsKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="
V11, V14 = crd.release("1.11.3"), crd.release("1.14.1")


def _stamp(obj: dict[str, Any], h: str, version: str) -> dict[str, Any]:
    out = json.loads(json.dumps(obj))
    out["metadata"].setdefault("annotations", {}).update(
        {"karpenter.k8s.aws/ec2nodeclass-hash": h, "karpenter.k8s.aws/ec2nodeclass-hash-version": version}
    )
    return out


def _cluster_at_v11(tmp_path: Path, *, drifted: bool = False) -> Path:
    pool, nc = make_nodepool(), make_nodeclass()
    h4 = nodeclass_hash(nc, release=V11)
    claims = [_stamp(make_claim(f"default-{i}", pool), h4, "v4") for i in range(3)]
    if drifted:
        claims.append(_stamp(make_claim("default-x", pool, drifted=True), "1", "v4"))
    return write_cluster(tmp_path / "cluster.json", [live(pool), _stamp(nc, h4, "v4"), *claims])


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nodewright.cli", *args], capture_output=True, text=True, check=False
    )


def test_upgrade_restamps_and_rolls_no_node(tmp_path: Path) -> None:
    path = _cluster_at_v11(tmp_path)
    report = drift_impact([make_nodepool()], path, nodeclasses=[make_nodeclass()], ca_bundle=CA, release=V14)
    assert report.drifted == ()
    assert any("ec2nodeclass-hash-version v5 (live: v4)" in n and "rolls no node" in n for n in report.notes)
    assert report.karpenter == {"version": "1.14.1"}


def test_upgrade_with_a_nodeclass_change_is_swallowed_by_the_restamp(tmp_path: Path) -> None:
    """The re-stamp gives non-drifted NodeClaims the new hash, the spec change included."""
    path = _cluster_at_v11(tmp_path)
    changed = make_nodeclass(tags={"team": "a"})
    report = drift_impact([make_nodepool()], path, nodeclasses=[changed], ca_bundle=CA, release=V14)
    assert report.drifted == ()


def test_drifted_stays_drifted_across_the_upgrade(tmp_path: Path) -> None:
    path = _cluster_at_v11(tmp_path, drifted=True)
    report = drift_impact([make_nodepool()], path, nodeclasses=[make_nodeclass()], ca_bundle=CA, release=V14)
    assert [(d.node_claim, d.reason) for d in report.drifted] == [("default-x", "NodeClassDrift")]


def test_same_release_change_still_drifts(tmp_path: Path) -> None:
    """Control: the cluster's own release (v1.11.3, v4 both sides) drifts a changed EC2NodeClass."""
    path = _cluster_at_v11(tmp_path)
    changed = make_nodeclass(tags={"team": "a"})
    report = drift_impact([make_nodepool()], path, nodeclasses=[changed], release=V11)
    assert [d.reason for d in report.drifted] == ["NodeClassDrift"] * 3
    assert not any("rolls no node" in n for n in report.notes)


def test_drift_cli_says_so_in_json_and_markdown(tmp_path: Path) -> None:
    path = _cluster_at_v11(tmp_path)
    files = tmp_path / "branch.yaml"
    files.write_text(yaml.safe_dump_all([make_nodepool(), make_nodeclass()]))
    info = tmp_path / "info.yaml"
    info.write_text(
        yaml.safe_dump({"clusterName": "c", "clusterEndpoint": "https://example.com", "caBundle": CA})
    )
    base = ["drift", "-f", str(files), "--cluster", str(path), "--cluster-info", str(info)]
    res = _cli(*base, "--karpenter-version", "1.14.1", "-o", "json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["summary"]["drifted"] == 0
    assert data["karpenter"]["version"] == "1.14.1"
    assert any("rolls no node" in n for n in data["notes"])
    md = _cli(*base, "--karpenter-version", "1.14.1", "-o", "markdown")
    assert md.returncode == 0 and "rolls no node" in md.stdout
    same = _cli(*base, "--karpenter-version", "1.11.3", "-o", "json")
    assert same.returncode == 0, same.stderr
    assert json.loads(same.stdout)["summary"]["drifted"] == 0
    assert not any("rolls no node" in n for n in json.loads(same.stdout)["notes"])
