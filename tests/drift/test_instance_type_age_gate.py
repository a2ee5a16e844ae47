"""``InstanceTypeNotFound`` waits until a NodeClaim is more than an hour old.

kubernetes-sigs/karpenter v1.14.1 ``pkg/controllers/nodeclaim/disruption/drift.go``: the instance
type check runs only when ``clock.Since(creationTimestamp) > time.Hour``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from drift_support import live, make_claim, make_nodepool
from test_drift_scenarios import CATALOG, ClusterFile

from nodewright import crd
from nodewright.catalog.loader import load_catalog
from nodewright.drift import drift_impact

NOW = datetime(2024, 6, 1, 12, 0, 0, tzinfo=UTC)


def _drifted(cluster_file: ClusterFile, tmp_path: Path, created: str) -> list[str]:
    (tmp_path / "catalog.yaml").write_text(CATALOG)
    catalog = load_catalog(str(tmp_path / "catalog.yaml"))
    pool = make_nodepool()
    claim = make_claim("gone", pool, instance_type="m4.large", created=created)
    report = drift_impact(
        [pool], cluster_file([live(pool), claim]), catalog, now=NOW, release=crd.default_release()
    )
    return [d.reason for d in report.drifted]


def test_instance_type_not_found_waits_exactly_one_hour(cluster_file: ClusterFile, tmp_path: Path) -> None:
    assert _drifted(cluster_file, tmp_path, "2024-06-01T11:00:00Z") == []  # exactly one hour: not yet


def test_instance_type_not_found_applies_after_one_hour(cluster_file: ClusterFile, tmp_path: Path) -> None:
    assert _drifted(cluster_file, tmp_path, "2024-06-01T10:59:59Z") == ["InstanceTypeNotFound"]


def test_instance_type_not_found_skips_a_young_nodeclaim(cluster_file: ClusterFile, tmp_path: Path) -> None:
    assert _drifted(cluster_file, tmp_path, "2024-06-01T11:59:00Z") == []
