"""Node repair (feature gate NodeRepair) in ``nodewright health``.

Ported from kubernetes-sigs/karpenter v1.14.1 ``pkg/controllers/node/health/suite_test.go``
(Describe "Node Health"); each test names its It. Like the upstream suite, the policy is the fake
provider's (``BadNode=False`` tolerated 30m); the AWS provider's policies
(aws/karpenter-provider-aws v1.14.1 ``pkg/cloudprovider/cloudprovider.go`` ``RepairPolicies``) are
checked through the CLI.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import builders

from nodewright.health.repair import BLOCKED, GATE_OFF, REPAIR, TOLERATING, RepairPolicy, node_repairs

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 1, 1, tzinfo=UTC)
FAKE_POLICY = (RepairPolicy("BadNode", "False", timedelta(minutes=30)),)


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _pair(
    i: int, pool: str | None = "default", cond: tuple[str, str] | None = None, **claim_meta: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    name = f"node-{i}"
    node_labels = {"karpenter.sh/nodepool": pool} if pool else {}
    node = builders.node(name, labels=node_labels, capacity={"cpu": "4"})
    node["status"]["conditions"] = [{"type": "Ready", "status": "True", "lastTransitionTime": _iso(T0)}]
    if cond is not None:
        node["status"]["conditions"].append(
            {"type": cond[0], "status": cond[1], "lastTransitionTime": _iso(T0)}
        )
    claim = builders.nodeclaim(
        f"claim-{i}", nodepool_name=pool or "", provider_id=f"fake://{name}", node_name=name
    )
    if pool is None:
        del claim["metadata"]["labels"]["karpenter.sh/nodepool"]
    claim["metadata"].update(claim_meta)
    return node, claim


def _run(
    pairs: list[tuple[dict[str, Any], dict[str, Any]]], after: timedelta, enabled: bool = True
) -> dict[str, str]:
    got = node_repairs(
        [n for n, _ in pairs], [c for _, c in pairs], now=T0 + after, enabled=enabled, policies=FAKE_POLICY
    )
    return {r.node: r.state for r in got}


def test_unhealthy_node_is_repaired() -> None:
    """Context "Reconciliation" It "should delete nodes that are unhealthy by the cloud provider"."""
    assert _run([_pair(0, cond=("BadNode", "False"))], timedelta(minutes=60)) == {"node-0": REPAIR}


def test_other_condition_type_is_ignored() -> None:
    """It "should not delete node when unhealthy type does not match cloud provider passed in value"."""
    assert _run([_pair(0, cond=("FakeHealthyNode", "False"))], timedelta(minutes=60)) == {}


def test_other_condition_status_is_ignored() -> None:
    """It "should not delete node when health status does not match cloud provider passed in value"."""
    assert _run([_pair(0, cond=("BadNode", "True"))], timedelta(minutes=60)) == {}


def test_toleration_not_reached() -> None:
    """It "should not delete node when health duration is not reached" (20m of 30m), and It "should
    return the requeue interval for the time between now and when the nodeClaim termination time":
    eligible at lastTransitionTime + 30m."""
    pairs = [_pair(0, cond=("BadNode", "False"))]
    assert _run(pairs, timedelta(minutes=20)) == {"node-0": TOLERATING}
    got = node_repairs(
        [pairs[0][0]], [pairs[0][1]], now=T0 + timedelta(minutes=27), enabled=True, policies=FAKE_POLICY
    )
    assert got[0].eligible_at == T0 + timedelta(minutes=30)


def test_condition_closest_to_its_toleration_counts() -> None:
    """It "should return the requeue interval for the condition closest to its terminationDuration":
    BadNode (60m) and ValidUnhealthyCondition (30m) both False: eligible after 30m."""
    policies = (
        RepairPolicy("BadNode", "False", timedelta(minutes=60)),
        RepairPolicy("ValidUnhealthyCondition", "False", timedelta(minutes=30)),
    )
    node, claim = _pair(0, cond=("BadNode", "False"))
    node["status"]["conditions"].append(
        {"type": "ValidUnhealthyCondition", "status": "False", "lastTransitionTime": _iso(T0)}
    )
    got = node_repairs([node], [claim], now=T0 + timedelta(minutes=27), enabled=True, policies=policies)
    assert got[0].condition == "ValidUnhealthyCondition=False" and got[0].eligible_at == T0 + timedelta(
        minutes=30
    )


def test_more_than_twenty_percent_of_a_nodepool() -> None:
    """Context "Forceful termination" It "should ignore unhealthy nodes if more then 20% of the nodes
    are unhealthy in a nodepool": 3 of 10 unhealthy, all wait."""
    pairs = [_pair(i, cond=("BadNode", "False") if i < 3 else None) for i in range(10)]
    assert set(_run(pairs, timedelta(minutes=60)).values()) == {BLOCKED}


def test_more_than_twenty_percent_of_the_cluster() -> None:
    """It "should ignore unhealthy nodes if more then 20% of the nodes are unhealthy in a cluster"
    (NodeClaims without a NodePool)."""
    pairs = [_pair(i, pool=None, cond=("BadNode", "False") if i < 3 else None) for i in range(10)]
    assert set(_run(pairs, timedelta(minutes=60)).values()) == {BLOCKED}


def test_rounding_up_for_small_pools() -> None:
    """It "should consider round up when there is a low number of nodes for a nodepool": 1 of 3."""
    pairs = [_pair(i, cond=("BadNode", "False") if i == 0 else None) for i in range(3)]
    assert _run(pairs, timedelta(minutes=60)) == {"node-0": REPAIR}


def test_gate_off_repairs_nothing() -> None:
    """controllers.go: the health controller runs only with the NodeRepair gate."""
    assert _run([_pair(0, cond=("BadNode", "False"))], timedelta(minutes=60), enabled=False) == {
        "node-0": GATE_OFF
    }


def test_cli_aws_policies_and_the_clock(tmp_path: Path) -> None:
    """AWS policy Ready=False tolerated 30m; ``--now`` is the clock; ``--feature-gates NodeRepair=true``."""
    node, claim = _pair(0, cond=None)
    node["status"]["conditions"] = [{"type": "Ready", "status": "False", "lastTransitionTime": _iso(T0)}]
    pool = builders.nodepool("default")
    cluster = builders.write_cluster(tmp_path / "c.json", [pool, node, claim])

    def health(now: datetime, *extra: str) -> list[dict[str, Any]]:
        proc = subprocess.run(
            [sys.executable, "-m", "nodewright.cli", "health", "--cluster", str(cluster), "--now", _iso(now), "-o", "json", *extra],
            capture_output=True, text=True, check=False, cwd=ROOT,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        repairs: list[dict[str, Any]] = json.loads(proc.stdout)["nodeRepairs"]
        return repairs

    early = health(T0 + timedelta(minutes=10), "--feature-gates", "NodeRepair=true")
    assert early[0]["state"] == "Tolerating" and early[0]["eligibleAt"] == "2026-01-01T00:30:00Z"
    assert health(T0 + timedelta(minutes=31), "--feature-gates", "NodeRepair=true")[0]["state"] == "Repair"
    assert health(T0 + timedelta(minutes=31))[0]["state"] == "NotRepaired"
