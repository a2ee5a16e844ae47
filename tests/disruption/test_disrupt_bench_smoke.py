"""The disruption benchmark (``bench/disrupt.py``) on a small generated cluster with DaemonSets, as
CI's smoke test: it runs as users run it (a subprocess), the forecast reaches quiet, and its table
row carries the figures (no timing assertion)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_benchmark_runs_a_small_cluster_with_daemonsets_to_quiet() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "bench/disrupt.py",
            "--nodes",
            "30",
            "--pools",
            "3",
            "--pods-per-node",
            "3",
            "--daemonsets",
            "2",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    ).stdout
    row = [line for line in out.splitlines() if line.startswith("| disrupt --until-quiet")]
    assert len(row) == 1, out
    cells = [c.strip() for c in row[0].strip("|").split("|")]
    assert cells[0] == "disrupt --until-quiet 30 nodes / 90 pods / 3 pools / 2 DaemonSets"
    assert float(cells[1]) > 0 and float(cells[2]) > 0 and int(cells[3]) > 0
    assert "stopped: quiet" in cells[4]


def test_the_generated_daemonsets_have_a_pod_on_every_node(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT))
    try:
        from bench.bigcluster import write
    finally:
        sys.path.remove(str(ROOT))
    write(tmp_path, pools=2, nodes=4, pending=0, running_per_node=1, daemonsets=2)
    items = json.loads((tmp_path / "cluster.json").read_text())["items"]
    nodes = {i["metadata"]["name"] for i in items if i["kind"] == "Node"}
    sets = [i for i in items if i["kind"] == "DaemonSet"]
    agents = [i for i in items if i["kind"] == "Pod" and i["metadata"]["namespace"] == "kube-system"]
    assert len(sets) == 2
    for ds in sets:
        mine = [p for p in agents if p["metadata"]["ownerReferences"][0]["name"] == ds["metadata"]["name"]]
        assert {p["spec"]["nodeName"] for p in mine} == nodes
