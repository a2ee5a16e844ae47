"""Benchmark: ``plan`` beside many existing nodes none of the pending pods can use.

Every pending pod asks (``nodeSelector``) for a label no existing node has, so each pod is
refused by every node for its requirements. Karpenter's refusal text carries a "typo of" hint
(``labelHint``: edit distance against every label of the node); it is only printed for what is
reported, so building it per node and per pod was wasted time (82% of a 50,002-node plan).

One ``nodewright plan -o json`` process per row, as users run it; wall and CPU time (user +
system, steadier on a shared machine) and peak RSS. The catalog is ``aws:us-east-1`` (warm disk
cache: run any command once first).

    python bench/hints.py                   # 50,002 nodes, 48 pods
    python bench/hints.py --nodes 5000      # a quicker row
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bigcluster import write

SELECTOR = {"example.com/tier": "gold"}


def make(out: Path, nodes: int, pending: int) -> None:
    """The bigcluster state (1 pool, ``nodes`` idle nodes, ``pending`` pods), the pods selecting a
    label no node carries."""
    write(out, pools=1, nodes=nodes, pending=pending, running_per_node=0)
    path = out / "cluster.json"
    doc = json.loads(path.read_text())
    for item in doc["items"]:
        if item["kind"] == "Pod" and "nodeName" not in item["spec"]:
            item["spec"]["nodeSelector"] = dict(SELECTOR)
    path.write_text(json.dumps(doc))


def run(out: Path) -> tuple[float, float, float, int]:
    cmd = [sys.executable, "-m", "nodewright.cli", "plan", "-f", str(out / "nodepools.yaml"),
           "--cluster", str(out / "cluster.json"), "-o", "json"]  # fmt: skip
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=50_002)
    ap.add_argument("--pending", type=int, default=48)
    ap.add_argument("--keep", type=Path, default=None, help="directory for the generated input")
    a = ap.parse_args()
    out = a.keep or Path(tempfile.mkdtemp(prefix="nodewright-hints-"))
    if not (out / "cluster.json").exists():
        make(out, a.nodes, a.pending)
    wall, cpu, rss, code = run(out)
    print("| path | wall s | CPU s | peak RSS MiB | exit |\n|---|---:|---:|---:|---:|")
    print(
        f"| plan, {a.pending} pods beside {a.nodes:,} nodes they cannot use | {wall:.1f} | {cpu:.1f} | {rss:.0f} | {code} |"
    )
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; input in {out}")


if __name__ == "__main__":
    main()
