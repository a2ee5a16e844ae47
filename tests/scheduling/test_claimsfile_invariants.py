"""The reviewed claims file (``plan --write``) that fleet mode launches: every NodeClaim names its
launch's instance type, zone and capacity type, and a file without ``metadata.strategy`` was
planned by the karpenter strategy."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from nodewright.errors import InputError
from nodewright.scheduling.claimsfile import load_claims

CLAIM = {
    "name": "default-abcde",
    "nodePool": "default",
    "launch": {"instanceType": "m5.large", "zone": "us-east-1a", "capacityType": "on-demand"},
}


def _file(tmp_path: Path, claim: dict[str, object], metadata: dict[str, object] | None = None) -> Path:
    doc = {"apiVersion": "nodewright.dev/v1alpha1", "kind": "NodeClaimPlan", "nodeClaims": [claim]}
    if metadata is not None:
        doc["metadata"] = metadata
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize("key", ["instanceType", "zone", "capacityType"])
def test_claims_file_requires_each_launch_key(tmp_path: Path, key: str) -> None:
    launch = {k: v for k, v in CLAIM["launch"].items() if k != key}  # type: ignore[attr-defined]
    with pytest.raises(InputError) as err:
        load_claims(_file(tmp_path, {**CLAIM, "launch": launch}))
    assert f"nodeClaims[0].launch.{key}" in str(err.value) and "required" in str(err.value)


def test_a_complete_claim_loads(tmp_path: Path) -> None:
    assert [c["name"] for c in load_claims(_file(tmp_path, CLAIM))] == ["default-abcde"]


def test_claims_file_without_strategy_is_a_karpenter_plan(tmp_path: Path) -> None:
    path = _file(tmp_path, CLAIM, metadata={"generatedBy": "nodewright plan"})
    assert load_claims(path, strategy="karpenter")
    with pytest.raises(InputError) as err:
        load_claims(path, strategy="cost")
    assert "planned with strategy 'karpenter'" in str(err.value)
