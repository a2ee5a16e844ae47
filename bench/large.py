"""Scale benchmark: whole ``nodewright`` processes on large generated inputs.

Each row runs one command as a separate process (as CI and users run it) and reports wall time,
CPU time (user + system: steadier than wall time on a shared machine) and peak RSS:

* ``plan`` with 20,000 pending pods beside 5,000 existing nodes (10 NodePools), ``-o json`` and
  ``-o yaml --write`` (the claims file), and the claims file read back (``validate``);
* ``plan`` with 50,000 pending pods and no existing nodes;
* ``plan`` with 48 pending pods beside 5,000 idle tainted nodes (the per-existing-node cost);
* ``drift`` and ``health`` at 10,000 NodeClaims / 100 NodePools;
* ``preview -o markdown`` of a 100-NodePool stack (2,205 resources), without and with that 10,000-NodeClaim state;
* ``render userdata --instance-type all`` (every catalog type in one run).

Inputs come from :mod:`bench.bigcluster` (deterministic). The catalog is ``aws:us-east-1`` (moto,
warm disk cache: run any command once first). No assertion: the figures go to README.md.

    python bench/large.py              # every row
    python bench/large.py --only drift # rows whose name contains "drift"
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


def run(name: str, args: list[str]) -> None:
    t = time.perf_counter()
    proc = subprocess.Popen([*NW, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    err = proc.stderr.read() if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    rss = usage.ru_maxrss / 1024
    note = "" if code in (0, 1) else f"exit {code}: {err[-200:]}"
    print(f"| {name} | {wall:.2f} | {cpu:.2f} | {rss:.0f} | {note} |", flush=True)


def _project(d: Path) -> None:
    """A project directory linking this repository's program, with a stack over ``d``'s files."""
    repo = Path(__file__).resolve().parent.parent
    project = d / "project"
    project.mkdir(exist_ok=True)
    for name in ("Pulumi.yaml", "__main__.py", "nodewright_pulumi", "policies", "nodewright"):
        if not (project / name).exists():
            (project / name).symlink_to(repo / name)
    # the dev stack with launch templates on (preview only): the user data is part of the measured work
    dev = (repo / "tests/data/pulumi/stacks/Pulumi.dev-userdata.yaml").read_text()
    dev = dev.replace("stacks/nodeclasses.yaml", str(d / "nodeclasses.yaml"))
    dev = dev.replace("stacks/nodepools.yaml", str(d / "nodepools.yaml"))
    dev = dev.replace(
        "stacks/osc/provision-node-init.yaml", str(repo / "stacks/osc/provision-node-init.yaml")
    )
    (project / "Pulumi.big.yaml").write_text(dev)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="")
    ap.add_argument("--keep", type=Path, default=None, help="directory for the generated inputs")
    a = ap.parse_args()
    root = a.keep or Path(tempfile.mkdtemp(prefix="nodewright-bench-"))
    sets = {
        "p20k": dict(pools=10, nodes=5000, pending=20000, running_per_node=2),
        "p50k": dict(pools=10, nodes=0, pending=50000, running_per_node=0),
        "idle5k": dict(pools=1, nodes=5000, pending=48, running_per_node=0),
        "c10k": dict(pools=100, nodes=10000, pending=0, running_per_node=2),
    }
    rows = {
        "plan 20k pods + 5k nodes, -o json": ("p20k", ["plan", "-f", "{d}/nodepools.yaml", "--cluster", "{d}/cluster.json", "-o", "json"]),
        "plan 20k pods + 5k nodes, -o yaml --write": ("p20k", ["plan", "-f", "{d}/nodepools.yaml", "--cluster", "{d}/cluster.json", "-o", "yaml", "--write", "{d}/claims.yaml"]),
        "read the 20k claims file back (validate)": ("p20k", ["validate", "-f", "{d}/claims.yaml"]),
        "plan 50k pods, -o json": ("p50k", ["plan", "-f", "{d}/nodepools.yaml", "--cluster", "{d}/cluster.json", "-o", "json"]),
        "plan 48 pods beside 5k idle tainted nodes": ("idle5k", ["plan", "-f", "{d}/nodepools.yaml", "--cluster", "{d}/cluster.json", "-o", "json"]),
        "drift 10k NodeClaims / 100 NodePools": ("c10k", ["drift", "-f", "{d}/nodepools.yaml", "--cluster", "{d}/cluster.json", "-o", "json"]),
        "health 10k NodeClaims / 100 NodePools": ("c10k", ["health", "--cluster", "{d}/cluster.json", "-o", "json"]),
        "preview -o markdown, 100 NodePools (no cluster state)": ("c10k", ["preview", "--stack-file", "{d}/project/Pulumi.big.yaml", "-o", "markdown"]),
        "preview -o markdown, 100 NodePools + 10k NodeClaims": ("c10k", ["preview", "--stack-file", "{d}/project/Pulumi.big.yaml", "--cluster-state", "{d}/cluster.json", "-o", "markdown"]),
        "render userdata --instance-type all": ("c10k", ["render", "userdata", "-f", "{d}/nodeclasses.yaml", "--nodepool", "{d}/nodepools.yaml", "--nodepool-name", "pool-000", "--cluster-info", "stacks/cluster-info.yaml", "--instance-type", "all", "-o", "json"]),
    }  # fmt: skip
    made: set[str] = set()
    print("| path | wall s | CPU s | peak RSS MiB | |\n|---|---:|---:|---:|---|")
    for name, (key, args) in rows.items():
        if a.only and a.only not in name:
            continue
        d = root / key
        if key not in made and not (d / "cluster.json").exists():
            write(d, **sets[key])  # type: ignore[arg-type]
        made.add(key)
        if key == "idle5k" and not (d / ".tainted").exists():
            doc = json.loads((d / "cluster.json").read_text())
            for item in doc["items"]:
                if item["kind"] == "Node":
                    item["spec"]["taints"] = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
            (d / "cluster.json").write_text(json.dumps(doc))
            (d / ".tainted").touch()
        if "preview" in name:
            _project(d)
        run(name, [x.format(d=d) for x in args])
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; inputs in {root}")


if __name__ == "__main__":
    main()
