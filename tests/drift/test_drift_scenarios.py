"""Drift scenarios over cluster states: what Karpenter would mark Drifted after a change."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from drift_support import AWS_REF, live, make_claim, make_nodeclass, make_nodepool

from nodewright import crd
from nodewright.drift import drift_impact as _drift_impact
from nodewright.drift import nodeclass_hash, nodepool_hash


def drift_impact(*args: Any, **kwargs: Any) -> Any:
    """The default release's drift (the release is a parameter of every forecast)."""
    return _drift_impact(*args, **{"release": crd.default_release(), **kwargs})


ClusterFile = Callable[[list[dict[str, Any]]], Path]


def _three_claims(pool: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        make_claim("default-a", pool, zone="us-east-1a"),
        make_claim("default-b", pool, zone="us-east-1b"),
        make_claim("default-c", pool, zone="us-east-1c"),
    ]


def test_unchanged_nodepool_drifts_nothing(cluster_file: ClusterFile) -> None:
    pool = make_nodepool()
    path = cluster_file([live(pool), *_three_claims(pool)])
    report = drift_impact([pool], path)
    assert report.drifted == ()
    assert report.by_pool() == {"default": 0}
    assert report.as_dict()["drifted"] == []


def test_label_added_drifts_every_nodeclaim_of_the_pool(cluster_file: ClusterFile) -> None:
    pool = make_nodepool()
    other = make_nodepool("other")
    path = cluster_file([live(pool), live(other), *_three_claims(pool), make_claim("other-a", other)])
    branch = make_nodepool(labels={"team": "payments"})
    report = drift_impact([branch, other], path)
    assert [d.as_dict() for d in report.drifted] == [
        {"nodeClaim": n, "nodePool": "default", "reason": "NodePoolDrifted"}
        for n in ("default-a", "default-b", "default-c")
    ]
    assert report.by_pool() == {"default": 3, "other": 0}
    impact = {p.name: p for p in report.pools}["default"]
    assert impact.hash_changed and impact.hash_after == nodepool_hash(branch)


def test_narrowed_requirement_drifts_only_the_excluded_zone(cluster_file: ClusterFile) -> None:
    pool = make_nodepool()
    path = cluster_file([live(pool), *_three_claims(pool)])
    zones = {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-east-1a", "us-east-1b"]}
    branch = make_nodepool(requirements=[*pool["spec"]["template"]["spec"]["requirements"], zones])
    assert nodepool_hash(branch) == nodepool_hash(pool)  # requirements are not hashed
    report = drift_impact([branch], path)
    assert [d.as_dict() for d in report.drifted] == [
        {"nodeClaim": "default-c", "nodePool": "default", "reason": "RequirementsDrifted"}
    ]
    assert "us-east-1c" in report.drifted[0].message


def test_new_requirement_on_missing_key_drifts_unless_not_in(cluster_file: ClusterFile) -> None:
    pool = make_nodepool()
    path = cluster_file([live(pool), make_claim("default-a", pool)])
    needs = make_nodepool(requirements=[{"key": "example.com/team", "operator": "In", "values": ["a"]}])
    assert [d.reason for d in drift_impact([needs], path).drifted] == ["RequirementsDrifted"]
    excludes = make_nodepool(requirements=[{"key": "example.com/team", "operator": "NotIn", "values": ["a"]}])
    assert drift_impact([excludes], path).drifted == ()


def test_hash_version_bump_alone_drifts_nothing(cluster_file: ClusterFile) -> None:
    pool = make_nodepool()
    # Claims stamped by an older Karpenter (v2 hashes); the live NodePool still carries v2.
    claims = [make_claim(f"default-{i}", pool, hash_="12345", version="v2") for i in range(3)]
    path = cluster_file([live(pool, version="v2", hash_="12345"), *claims])
    report = drift_impact([pool], path)
    assert report.drifted == ()


def test_version_bump_with_change_is_swallowed_by_restamp(cluster_file: ClusterFile) -> None:
    """Upstream: on a version change, non-drifted NodeClaims take the NodePool's new hash."""
    pool = make_nodepool()
    claims = [make_claim("default-a", pool, hash_="12345", version="v2")]
    path = cluster_file([live(pool, version="v2", hash_="12345"), *claims])
    assert drift_impact([make_nodepool(labels={"x": "y"})], path).drifted == ()


def test_drifted_stays_drifted_across_a_version_bump(cluster_file: ClusterFile) -> None:
    pool = make_nodepool()
    claims = [
        make_claim("default-a", pool, hash_="12345", version="v2", drifted=True),
        make_claim("default-b", pool, hash_="12345", version="v2"),
    ]
    path = cluster_file([live(pool, version="v2", hash_="12345"), *claims])
    report = drift_impact([pool], path)
    assert [(d.node_claim, d.reason, d.already_drifted) for d in report.drifted] == [
        ("default-a", "NodePoolDrifted", True)
    ]


def test_claim_with_other_version_and_pool_at_v3_is_not_statically_drifted(cluster_file: ClusterFile) -> None:
    pool = make_nodepool()
    path = cluster_file([live(pool), make_claim("default-a", pool, hash_="1", version="v2")])
    assert drift_impact([pool], path).drifted == ()


@pytest.mark.parametrize(
    "change",
    [
        {"weight": 50},
        {"limits": {"cpu": "1000", "memory": "1000Gi"}},
        {
            "disruption": {
                "consolidationPolicy": "WhenEmpty",
                "consolidateAfter": "5m",
                "budgets": [{"nodes": "0"}],
            }
        },
        {"replicas": 3},
    ],
)
def test_behavioural_fields_never_drift(cluster_file: ClusterFile, change: dict[str, Any]) -> None:
    pool = make_nodepool()
    path = cluster_file([live(pool), *_three_claims(pool)])
    branch = json.loads(json.dumps(pool))
    branch["spec"].update(change)
    assert nodepool_hash(branch) == nodepool_hash(pool)
    assert drift_impact([branch], path).drifted == ()


def test_not_launched_claims_are_not_drifted(cluster_file: ClusterFile) -> None:
    pool = make_nodepool()
    path = cluster_file([live(pool), make_claim("default-a", pool, launched=False)])
    report = drift_impact([make_nodepool(labels={"a": "b"})], path)
    assert report.drifted == ()
    assert report.skipped[0][0] == "default-a"


def test_static_drift_wins_over_requirements(cluster_file: ClusterFile) -> None:
    pool = make_nodepool()
    path = cluster_file([live(pool), make_claim("default-a", pool, zone="us-east-1c")])
    zones = {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-east-1a"]}
    branch = make_nodepool(labels={"a": "b"}, requirements=[zones])
    assert [d.reason for d in drift_impact([branch], path).drifted] == ["NodePoolDrifted"]


def test_live_only_pool_reports_current_drift(cluster_file: ClusterFile) -> None:
    pool = make_nodepool("legacy")
    path = cluster_file([live(pool), make_claim("legacy-a", pool, hash_="999")])
    report = drift_impact([], path)
    assert [d.as_dict() for d in report.drifted] == [
        {"nodeClaim": "legacy-a", "nodePool": "legacy", "reason": "NodePoolDrifted"}
    ]
    assert report.pools[0].source == "cluster"


def test_crd_defaults_auto_follows_the_live_copy(cluster_file: ClusterFile) -> None:
    """A branch NodePool without expireAfter is defaulted to 720h when the cluster shows defaulting."""
    pool = make_nodepool()  # the live copy has expireAfter: 720h (as the API server stores it)
    path = cluster_file([live(pool), make_claim("default-a", pool)])
    branch = make_nodepool()
    del branch["spec"]["template"]["spec"]["expireAfter"]
    assert drift_impact([branch], path).drifted == ()
    assert len(drift_impact([branch], path, defaults="never").drifted) == 1


def test_cluster_state_object_is_accepted() -> None:
    pool = make_nodepool()
    state = SimpleNamespace(nodeclaims=[make_claim("default-a", pool)], nodepools=[live(pool)])
    report = drift_impact([make_nodepool(labels={"a": "b"})], state)
    assert [d.reason for d in report.drifted] == ["NodePoolDrifted"]


def _nodeclass(user_data: str | None = None, version: str = "v5", stamp: bool = True) -> dict[str, Any]:
    nc = make_nodeclass()
    if user_data is not None:
        nc["spec"]["userData"] = user_data
    if stamp:
        nc["metadata"]["annotations"] = {
            "karpenter.k8s.aws/ec2nodeclass-hash": "424242",
            "karpenter.k8s.aws/ec2nodeclass-hash-version": version,
        }
    return nc


def _with_nc_annotations(claim: dict[str, Any], h: str = "424242") -> dict[str, Any]:
    claim["metadata"]["annotations"].update(
        {"karpenter.k8s.aws/ec2nodeclass-hash": h, "karpenter.k8s.aws/ec2nodeclass-hash-version": "v5"}
    )
    return claim


def test_nodeclass_change_drifts_its_claims(cluster_file: ClusterFile) -> None:
    pool = make_nodepool()
    claims = [_with_nc_annotations(c) for c in _three_claims(pool)]
    path = cluster_file([live(pool), _nodeclass(), *claims])
    branch_nc = _nodeclass(user_data="#!/bin/bash\necho hi", stamp=False)
    report = drift_impact([pool], path, nodeclasses=[branch_nc])
    assert {d.reason for d in report.drifted} == {"NodeClassDrift"}
    assert len(report.drifted) == 3
    same = drift_impact([pool], path, nodeclasses=[_nodeclass(stamp=False)])
    assert same.drifted == ()
    # a dynamic (ignored) field does not drift statically
    moved = _nodeclass(stamp=False)
    moved["spec"]["subnetSelectorTerms"] = [{"id": "subnet-123"}]
    assert nodeclass_hash(moved) == nodeclass_hash(_nodeclass(stamp=False))


def test_nodeclass_annotation_mismatch_in_cluster(cluster_file: ClusterFile) -> None:
    pool = make_nodepool()
    claim = _with_nc_annotations(make_claim("default-a", pool), h="1")
    path = cluster_file([live(pool), _nodeclass(), claim])
    assert [d.reason for d in drift_impact([pool], path).drifted] == ["NodeClassDrift"]


def test_nodeclass_ref_is_an_ec2nodeclass() -> None:
    assert AWS_REF["kind"] == "EC2NodeClass"


CATALOG = """
apiVersion: nodewright.dev/v1alpha1
kind: InstanceTypeCatalog
instanceTypes:
- name: m5.large
  capacity: {cpu: "2", memory: 8Gi, pods: "29"}
  requirements:
  - {key: kubernetes.io/arch, operator: In, values: [amd64]}
  offerings:
  - {zone: us-east-1a, capacityType: on-demand, price: 0.096, available: true}
  - {zone: us-east-1b, capacityType: spot, price: 0.03, available: true}
"""


def test_instance_type_not_found(cluster_file: ClusterFile, tmp_path: Path) -> None:
    pytest.importorskip("nodewright.catalog.loader")
    from nodewright.catalog.loader import load_catalog

    (tmp_path / "catalog.yaml").write_text(CATALOG)
    catalog = load_catalog(str(tmp_path / "catalog.yaml"))
    pool = make_nodepool()
    now = datetime(2024, 6, 1, tzinfo=UTC)
    claims = [
        make_claim("ok", pool, zone="us-east-1a"),
        make_claim("gone", pool, instance_type="m4.large"),
        make_claim("nooffer", pool, zone="us-east-1b"),  # on-demand in 1b is not offered
        make_claim("reserved", pool, zone="us-east-1a", capacity_type="reserved"),
        make_claim("young", pool, instance_type="m4.large", created="2024-06-01T00:30:00Z"),
    ]
    path = cluster_file([live(pool), *claims])
    report = drift_impact([pool], path, catalog, now=now)
    assert [(d.node_claim, d.reason) for d in report.drifted] == [
        ("gone", "InstanceTypeNotFound"),
        ("nooffer", "InstanceTypeNotFound"),
    ]


def test_api_models_and_cluster_state_are_accepted(tmp_path: Path) -> None:
    import yaml

    from nodewright.api.loading import load_objects
    from nodewright.cluster import load_cluster

    pool = make_nodepool()
    (tmp_path / "branch.yaml").write_text(yaml.safe_dump(make_nodepool(labels={"a": "b"})))
    (tmp_path / "cluster.json").write_text(
        json.dumps({"apiVersion": "v1", "kind": "List", "items": [live(pool), make_claim("default-a", pool)]})
    )
    branch = load_objects([tmp_path / "branch.yaml"]).nodepools
    assert nodepool_hash(branch[0]) == nodepool_hash(make_nodepool(labels={"a": "b"}))
    report = drift_impact(branch, load_cluster(tmp_path / "cluster.json"))
    assert [d.as_dict() for d in report.drifted] == [
        {"nodeClaim": "default-a", "nodePool": "default", "reason": "NodePoolDrifted"}
    ]
