"""Scale benchmark of ``nodewright disrupt``: one whole process on a generated cluster.

Default: 5,000 nodes, 50,000 bound pods (10 per node), 100 NodePools (:mod:`bench.bigcluster`,
deterministic), ``--until-quiet``; reports wall time, CPU time (user + system: steadier than wall
time on a shared machine), peak RSS and the forecast's summary. Target: < 30 s and < 1.5 GiB.

    python bench/disrupt.py                       # the target row
    python bench/disrupt.py --nodes 500 --pods-per-node 10 --pools 10 --max-rounds 50
    python bench/disrupt.py --input DIR           # a cluster bench/bigcluster.py wrote before
    python bench/disrupt.py --daemonsets 3        # and three DaemonSets with a pod on every node
    python bench/disrupt.py --max-rounds 20 --profile prof.txt   # py-spy's collapsed stacks too

``--profile`` runs the command under ``py-spy record`` (collapsed stacks, one a line, for a flame
graph or a quick ``sort``); the CPU figures then include py-spy's sampling overhead.
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

NW = [sys.executable, "-m", "nodewright.cli"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5_000)
    ap.add_argument("--pods-per-node", type=int, default=10)
    ap.add_argument("--pools", type=int, default=100)
    ap.add_argument("--daemonsets", type=int, default=0, help="DaemonSets, each with a pod on every node")
    ap.add_argument("--max-rounds", type=int, default=10_000)
    ap.add_argument("--once", action="store_true", help="without --until-quiet")
    ap.add_argument(
        "--input", type=Path, help="nodepools.yaml, nodeclasses.yaml, cluster.json already written"
    )
    ap.add_argument("--profile", type=Path, help="write py-spy's collapsed stacks here")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        src = a.input
        if src is None:
            write(
                d,
                pools=a.pools,
                nodes=a.nodes,
                pending=0,
                running_per_node=a.pods_per_node,
                daemonsets=a.daemonsets,
            )
            src = d
        args = [
            "disrupt",
            "-f",
            str(src / "nodepools.yaml"),
            "-f",
            str(src / "nodeclasses.yaml"),
            "--cluster",
            str(src / "cluster.json"),
            "--at",
            "2026-11-21T00:00:00Z",
            "--max-rounds",
            str(a.max_rounds),
            "-o",
            "json",
            *([] if a.once else ["--until-quiet"]),
        ]
        t = time.perf_counter()
        with open(d / "out.json", "w") as out_f, open(d / "err.txt", "w") as err_f:
            cmd = [*NW, *args]
            if a.profile is not None:
                spy = str(Path(sys.executable).with_name("py-spy"))
                cmd = [spy, "record", "-r", "50", "--format", "raw", "-o", str(a.profile), "--", *cmd]
            proc = subprocess.Popen(cmd, stdout=out_f, stderr=err_f, text=True)
            _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        code = os.waitstatus_to_exitcode(status)
        out = (d / "out.json").read_text()
        if code != 0:
            err = (d / "err.txt").read_text()
            print(f"exit {code}: {err[-500:]}")
            return
    ru = usage
    # under --profile, py-spy's own messages share the child's stdout around the document
    doc, _ = json.JSONDecoder().raw_decode(out[out.find("{") :])
    s = doc["summary"]
    shape = (
        f"{a.nodes} nodes / {a.nodes * a.pods_per_node} pods / {a.pools} pools"
        + (f" / {a.daemonsets} DaemonSets" if a.daemonsets else "")
        if a.input is None
        else a.input.name
    )
    print(
        f"| disrupt {'' if a.once else '--until-quiet '}{shape} | {wall:.1f} | {ru.ru_utime + ru.ru_stime:.1f} | {ru.ru_maxrss / 1024:.0f} | "
        f"{s['rounds']} rounds, {s['nodesDisrupted']} disrupted, {s['replacements']} replacements, "
        f"{s['hourlyCostBefore']:.2f} -> {s['hourlyCostAfter']:.2f} $/h, stopped: {s['stopped']} |"
    )


if __name__ == "__main__":
    main()
