"""`nodewright drift` and `nodewright preview` give one answer to "how does this roll", through real
processes, on a state where budget arithmetic (ceil(drifted / allowedPerWave)) and Karpenter's
disruption simulation differ (kubernetes-sigs/karpenter v1.14.1 ``pkg/controllers/disruption``:
``controller.go`` emptiness before drift, ``drift.go`` empty candidates first and replacements that
must schedule, ``helpers.go`` ``BuildDisruptionBudgetMapping`` NotReady nodes consuming budgets).

The branch relabels three NodePools (``team``), so each of their NodeClaims drifts:

* ``web``: budgets Drifted 1 and Empty 100%, two of four nodes empty: emptiness takes both empty
  nodes in the first wave, then drift one busy node per wave: 3 waves (arithmetic: 4);
* ``batch``: its pods select ``team: batch``, which the branch takes away: no replacement can
  schedule; one node's pod moves to the other, which then cannot roll (arithmetic: all in 1 wave);
* ``api``: budget 2 with one drifted node NotReady (it consumes the budget once, and rolls within
  it): 2 waves (arithmetic: 1 per wave, 3 waves).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from nodewright import crd
from nodewright.drift.inputs import defaulted_nodepool_hash

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "tests" / "data" / "catalogs" / "us-east-1-spot.yaml"
AT = "2026-11-23T10:00:00Z"
OLD = "2026-11-01T00:00:00Z"
RS = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs-uid", "controller": True}


def _pool(name: str, team: str, budgets: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "metadata": {"labels": {"team": team}},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                    "requirements": [
                        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                    ],
                    "expireAfter": "720h",
                },
            },
            "disruption": {
                "consolidationPolicy": "WhenEmptyOrUnderutilized",
                "consolidateAfter": "0s",
                "budgets": budgets,
            },
        },
    }


POOLS = {
    "web": [{"nodes": "1", "reasons": ["Drifted"]}, {"nodes": "100%", "reasons": ["Empty"]}],
    "batch": [{"nodes": "100%"}],
    "api": [{"nodes": "2"}],
}


def _node_and_claim(
    name: str, pool: str, team: str, pool_hash: str, *, ready: bool = True
) -> list[dict[str, Any]]:
    node_name = f"ip-{name}.ec2.internal"
    lbl = {
        "karpenter.sh/nodepool": pool,
        "team": team,
        "node.kubernetes.io/instance-type": "m5.xlarge",
        "topology.kubernetes.io/zone": "us-east-1a",
        "karpenter.sh/capacity-type": "on-demand",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
        "karpenter.sh/registered": "true",
        "karpenter.sh/initialized": "true",
    }
    res = {"cpu": "4", "memory": "16Gi", "pods": "58"}
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node_name, "labels": {**lbl, "kubernetes.io/hostname": node_name}},
        "spec": {"providerID": f"aws:///us-east-1a/i-{name}"},
        "status": {
            "capacity": res,
            "allocatable": res,
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }
    claim = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {
            "name": name,
            "creationTimestamp": OLD,
            "labels": lbl,
            "annotations": {
                "karpenter.sh/nodepool-hash": pool_hash,
                "karpenter.sh/nodepool-hash-version": "v3",
            },
        },
        "spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "requirements": [],
        },
        "status": {
            "nodeName": node_name,
            "providerID": f"aws:///us-east-1a/i-{name}",
            "capacity": res,
            "allocatable": res,
            "conditions": [
                {"type": t, "status": "True", "lastTransitionTime": OLD}
                for t in ("Launched", "Registered", "Initialized")
            ],
        },
    }
    return [node, claim]


def _pod(name: str, node: str, *, selector: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "nodeName": node,
        "containers": [
            {"name": "app", "image": "app:1", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
        ],
    }
    if selector:
        spec["nodeSelector"] = selector
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "ownerReferences": [RS]},
        "spec": spec,
        "status": {"phase": "Running", "startTime": OLD, "conditions": [{"type": "Ready", "status": "True"}]},
    }


def _scenario(d: Path) -> tuple[Path, Path]:
    """(branch NodePools file, cluster state file) in ``d``."""
    release = crd.default_release()
    items: list[dict[str, Any]] = []
    for name, budgets in POOLS.items():
        old = _pool(name, name, budgets)
        h = defaulted_nodepool_hash(old, release=release)
        old["metadata"]["annotations"] = {
            "karpenter.sh/nodepool-hash": h,
            "karpenter.sh/nodepool-hash-version": "v3",
        }
        items.append(old)
        for i in range(4 if name == "web" else 2 if name == "batch" else 3):
            claim = f"{name}-{i}"
            items += _node_and_claim(claim, name, name, h, ready=not (name == "api" and i == 0))
            node = f"ip-{claim}.ec2.internal"
            if (name == "web" and i >= 2) or name == "api":
                items.append(_pod(f"{claim}-pod", node))
            if name == "batch":
                items.append(_pod(f"{claim}-pod", node, selector={"team": "batch"}))
    cluster = d / "cluster.json"
    cluster.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    branch = d / "nodepools.yaml"
    branch.write_text(yaml.safe_dump_all([_pool(n, f"{n}-new", b) for n, b in POOLS.items()]))
    return branch, cluster


def _run(args: list[str], cwd: Path = ROOT) -> str:
    res = subprocess.run(
        [sys.executable, "-m", "nodewright.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=cwd,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    d = tmp_path_factory.mktemp("rollout")
    branch, cluster = _scenario(d)
    nodeclasses = ROOT / "stacks" / "nodeclasses.yaml"
    out = _run(
        ["drift", "-f", str(nodeclasses), "-f", str(branch), "--cluster", str(cluster),
         "--catalog", str(CATALOG), "--at", AT, "-o", "json"]
    )  # fmt: skip
    return branch, cluster, json.loads(out)


def _rollouts(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["name"]: p["rollout"] for p in doc["nodePools"]}


def test_empty_drifted_nodes_go_first_under_their_own_budget(
    scenario: tuple[Path, Path, dict[str, Any]],
) -> None:
    r = _rollouts(scenario[2])["web"]
    assert (r["drifted"], r["allowedPerWave"], r["blocked"], r["simulated"]) == (4, 1, False, True)
    assert r["waves"] == 3  # arithmetic: ceil(4 / 1) = 4
    assert r["emptyFirst"] == 2
    steps = [(s["nodeClaim"], s["wave"], s["method"], s["reason"]) for s in r["order"]]
    assert steps[:2] == [("web-0", 1, "emptiness", "Empty"), ("web-1", 1, "emptiness", "Empty")]
    assert [s[1:] for s in steps[2:]] == [(2, "drift", "Drifted"), (3, "drift", "Drifted")]


def test_a_replacement_that_does_not_schedule_blocks_the_rollout(
    scenario: tuple[Path, Path, dict[str, Any]],
) -> None:
    r = _rollouts(scenario[2])["batch"]
    assert (r["drifted"], r["allowedPerWave"], r["waves"]) == (2, 2, 1)
    # batch-0's pod still fits batch-1 (labelled team=batch until it rolls): batch-0 goes, and
    # then nothing is left for batch-1's pods: it stays, with drift's DisruptionBlocked message
    assert [(s["nodeClaim"], s["decision"]) for s in r["order"]] == [("batch-0", "delete")]
    assert [n["nodeClaim"] for n in r["notRolled"]] == ["batch-1"]
    assert r["notRolled"][0]["reason"].startswith("Not all pods would schedule, default/batch-0-pod => ")
    assert any(n.startswith("batch-1 does not roll: Not all pods would schedule") for n in r["notes"])


def test_a_not_ready_node_consumes_the_budget(scenario: tuple[Path, Path, dict[str, Any]]) -> None:
    r = _rollouts(scenario[2])["api"]
    assert (r["drifted"], r["disrupting"], r["allowedPerWave"]) == (3, 1, 1)
    assert r["waves"] == 2  # arithmetic: ceil(3 / 1) = 3
    assert [s["nodeClaim"] for s in r["order"] if s["wave"] == 1] == ["api-0", "api-1"]


def test_table_and_markdown_show_the_simulated_waves(scenario: tuple[Path, Path, dict[str, Any]]) -> None:
    branch, cluster, _ = scenario
    base = ["drift", "-f", str(ROOT / "stacks" / "nodeclasses.yaml"), "-f", str(branch), "--cluster", str(cluster),
            "--catalog", str(CATALOG), "--at", AT]  # fmt: skip
    table = _run(base)
    row = next(line.split() for line in table.splitlines() if line.startswith("web "))
    assert row[3:5] == ["1", "3"]  # PER WAVE, WAVES
    assert "note: batch: batch-1 does not roll: Not all pods would schedule" in table
    md = _run([*base, "-o", "markdown"])
    assert "| web | 4 | 4 | 1 | 3 |" in md


def test_preview_shows_the_same_waves_as_drift(
    scenario: tuple[Path, Path, dict[str, Any]], tmp_path: Path
) -> None:
    """One answer: the preview's drift section is the drift command's rollout."""
    branch, cluster, drift = scenario
    project = tmp_path / "project"
    project.mkdir()
    for name in ("Pulumi.yaml", "__main__.py", "nodewright_pulumi", "policies", "nodewright", "stacks"):
        (project / name).symlink_to(ROOT / name)
    stack = yaml.safe_load((ROOT / "tests/data/pulumi/stacks/Pulumi.cost-base.yaml").read_text())
    stack["config"]["nodewright:files"] = ["stacks/nodeclasses.yaml", str(branch)]
    stack["config"]["nodewright:clusterState"] = str(cluster)
    stack["config"]["nodewright:catalog"] = str(CATALOG)
    (project / "Pulumi.rollout.yaml").write_text(yaml.safe_dump(stack))
    sf = str(project / "Pulumi.rollout.yaml")
    doc = json.loads(_run(["preview", "--stack-file", sf, "--at", AT, "-o", "json"], cwd=project))
    assert _rollouts(doc["drift"]) == _rollouts(drift)
    md = _run(["preview", "--stack-file", sf, "--at", AT, "-o", "markdown"], cwd=project)
    assert "| web | " in md and "4 of 4, 1 at a time, 3 wave(s)" in md


def test_a_state_without_pods_is_simulated_with_empty_nodes(tmp_path: Path) -> None:
    """A state of Nodes and NodeClaims only (no Pod listed): every node is empty, so emptiness takes
    ``web``'s drifted nodes under its Empty budget and drift the others, empty first."""
    branch, cluster = _scenario(tmp_path)
    doc = json.loads(cluster.read_text())
    doc["items"] = [i for i in doc["items"] if i["kind"] != "Pod"]
    cluster.write_text(json.dumps(doc))
    out = _run(["drift", "-f", str(ROOT / "stacks" / "nodeclasses.yaml"), "-f", str(branch), "--cluster",
                str(cluster), "--catalog", str(CATALOG), "--at", AT, "-o", "json"])  # fmt: skip
    r = _rollouts(json.loads(out))
    assert all(x["simulated"] and x["notRolled"] == [] for x in r.values())
    assert r["web"]["emptyFirst"] == 4 and r["web"]["waves"] == 1
    assert {s["method"] for s in r["web"]["order"]} == {"emptiness"}
    assert r["batch"]["waves"] == 1 and r["batch"]["emptyFirst"] == 2
