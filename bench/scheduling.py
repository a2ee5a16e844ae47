"""Scheduling benchmark: Karpenter's ``scheduling_benchmark_test.go`` workload on nodewright.

400 fake instance types ``fake-it-i`` (cpu i+1, memory 2(i+1)Gi, pods 10(i+1), five offerings),
one NodePool with limits cpu 10,000,000 / memory 10,000,000Gi, no existing nodes or daemonsets,
and ``makeDiversePods(n)``: five equal groups (generic; zone spread; hostname spread; zone
self-affinity; hostname self anti-affinity), cpu from {100m,250m,500m,1000m,1500m}, memory from
{100,256,512,1024,2048,4096}Mi, seeded 42 (Python's generator, so not Go's exact draw).

Prints per size: pods, NodeClaims, seconds, pods/s, µs/pod, peak RSS; then the cost quality of
the generic group (plan hourly cost over the LP-relaxation lower bound: cheapest fractional cover
of the group's total cpu, memory and pods by the instance types' allocatable), and the whole
``nodewright plan`` process time at the largest size.

    python bench/scheduling.py                 # 1 100 1000 5000 20000
    python bench/scheduling.py --sizes 1000    # what CI runs as a smoke test
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from nodewright.api.core import Pod
from nodewright.api.karpenter import NodePool
from nodewright.catalog import dump_catalog, fake_instance_types
from nodewright.catalog.model import InstanceType
from nodewright.cluster.state import ClusterState
from nodewright.scheduling.plan import plan
from nodewright.scheduling.plandoc import PlanDocument

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
CPUS = ("100m", "250m", "500m", "1000m", "1500m")
MEMS = (100, 256, 512, 1024, 2048, 4096)
VALUES = ("a", "b", "c", "d", "e", "f", "g")
UNSCHEDULABLE = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]

NODEPOOL: dict[str, Any] = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "default"},
    "spec": {
        "limits": {"cpu": "10000000", "memory": "10000000Gi"},
        "template": {
            "spec": {
                "requirements": [],
                "nodeClassRef": {"group": "karpenter.test.sh", "kind": "TestNodeClass", "name": "default"},
            }
        },
    },
}


class _Gen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.n = 0

    def value(self) -> str:
        return VALUES[self.r.randrange(len(VALUES))]

    def pod(self, labels: dict[str, str], **spec: Any) -> dict[str, Any]:
        cpu = CPUS[self.r.randrange(len(CPUS))]
        mem = f"{MEMS[self.r.randrange(len(MEMS))]}Mi"
        self.n += 1
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"bench-{self.n:06d}",
                "namespace": "default",
                "uid": f"00000000-0000-0000-0000-{self.n:012d}",
                "creationTimestamp": "2024-01-01T00:00:00Z",
                "labels": labels,
            },
            "spec": {
                "containers": [{"name": "app", "resources": {"requests": {"cpu": cpu, "memory": mem}}}],
                **spec,
            },
            "status": {"phase": "Pending", "conditions": UNSCHEDULABLE},
        }

    def generic(self, n: int) -> list[dict[str, Any]]:
        return [self.pod({"my-label": self.value()}) for _ in range(n)]

    def spread(self, n: int, key: str) -> list[dict[str, Any]]:
        out = []
        for _ in range(n):
            labels = {"my-label": self.value()}
            tsc = {
                "maxSkew": 1,
                "topologyKey": key,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"my-label": self.value()}},
            }
            out.append(self.pod(labels, topologySpreadConstraints=[tsc]))
        return out

    def affinity(self, n: int, key: str) -> list[dict[str, Any]]:
        out = []
        for _ in range(n):
            labels = {"my-affininity": self.value()}
            term = {"labelSelector": {"matchLabels": labels}, "topologyKey": key}
            out.append(
                self.pod(
                    labels,
                    affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
                )
            )
        return out

    def anti_affinity(self, n: int, key: str) -> list[dict[str, Any]]:
        labels = {"app": "nginx"}
        term = {"labelSelector": {"matchLabels": labels}, "topologyKey": key}
        return [
            self.pod(
                dict(labels),
                affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
            )
            for _ in range(n)
        ]


def diverse_pods(count: int, seed: int = 42) -> list[dict[str, Any]]:
    """Upstream ``makeDiversePods``."""
    g = _Gen(seed)
    k = count // 5
    pods = (
        g.generic(k)
        + g.spread(k, ZONE)
        + g.spread(k, HOSTNAME)
        + g.affinity(k, ZONE)
        + g.anti_affinity(k, HOSTNAME)
    )
    pods += g.generic(count - len(pods))
    return pods


def generic_pods(count: int, seed: int = 42) -> list[dict[str, Any]]:
    return _Gen(seed).generic(count)


def run_plan(raw_pods: list[dict[str, Any]], types: list[InstanceType]) -> tuple[PlanDocument, float]:
    pods = tuple(Pod.model_validate(p) for p in raw_pods)
    nodepool = NodePool.model_validate(NODEPOOL)
    start = time.perf_counter()
    doc = plan(nodepools=[nodepool], cluster=ClusterState(pods=pods), catalog_for=lambda _np: types)
    return doc, time.perf_counter() - start


# -- LP lower bound ----------------------------------------------------------------------------------
def lp_lower_bound(types: list[InstanceType], demand: dict[str, int]) -> float:
    """min Σ price_i x_i  s.t.  Σ alloc_i[r] x_i >= demand[r] (r = cpu, memory, pods), x >= 0.

    Solved through its dual (max demand·y s.t. alloc_i·y <= price_i, y >= 0), whose origin is
    feasible, by a dense simplex with Bland's rule (3 variables, one row per instance type).
    """
    keys = ("cpu", "memory", "pods")
    scale = [max(1, demand[k]) for k in keys]  # normalise so y is well conditioned
    rows: list[list[float]] = []
    rhs: list[float] = []
    for it in types:
        offer = [o.price for o in it.offerings if o.available]
        if not offer:
            continue
        alloc = it.allocatable()
        rows.append([alloc.get(k, 0) / s for k, s in zip(keys, scale, strict=True)])
        rhs.append(min(offer))
    m, n = len(rows), len(keys)
    # tableau: m rows of [a_1..a_n, slack_1..slack_m | rhs]; objective maximise sum(y) (demand scaled to 1)
    tab = [row + [1.0 if j == i else 0.0 for j in range(m)] + [rhs[i]] for i, row in enumerate(rows)]
    obj = [-1.0] * n + [0.0] * m + [0.0]
    basis = [n + i for i in range(m)]
    for _ in range(10_000):
        col = next((j for j in range(n + m) if obj[j] < -1e-12), None)
        if col is None:
            break
        best, row_i = None, None
        for i in range(m):
            a = tab[i][col]
            if a > 1e-12:
                ratio = tab[i][-1] / a
                if (
                    best is None
                    or ratio < best - 1e-15
                    or (abs(ratio - best) <= 1e-15 and basis[i] < basis[row_i or 0])
                ):
                    best, row_i = ratio, i
        if row_i is None:
            return float("inf")
        piv = tab[row_i][col]
        tab[row_i] = [v / piv for v in tab[row_i]]
        for i in range(m):
            if i != row_i and tab[i][col] != 0.0:
                f = tab[i][col]
                tab[i] = [a - f * b for a, b in zip(tab[i], tab[row_i], strict=True)]
        f = obj[col]
        obj = [a - f * b for a, b in zip(obj, tab[row_i], strict=True)]
        basis[row_i] = col
    return obj[-1]


def _demand(raw_pods: list[dict[str, Any]]) -> dict[str, int]:
    from nodewright.algebra.resources import add, requests_for_pod

    return add({}, *(requests_for_pod(Pod.model_validate(p)) for p in raw_pods))


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cli_run(count: int, types: list[InstanceType], output: str = "yaml") -> tuple[float, float, float, int]:
    """Time the whole ``nodewright plan -o OUTPUT`` process, as users run it; returns (wall s,
    CPU s of the child, peak MiB, NodeClaims)."""
    import yaml

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "nodepool.yaml").write_text(yaml.safe_dump(NODEPOOL))
        (d / "catalog.json").write_text(json.dumps(dump_catalog(types)))
        (d / "cluster.json").write_text(
            json.dumps({"apiVersion": "v1", "kind": "List", "items": diverse_pods(count)})
        )
        cmd = [sys.executable, "-m", "nodewright.cli", "plan", "-f", str(d / "nodepool.yaml")]
        cmd += ["--cluster", str(d / "cluster.json"), "--catalog", str(d / "catalog.json"), "-o", output]
        out = d / "out"
        # A child's peak RSS counts its parent's at the fork, and this process is big by now: a
        # small runner process starts the command and reports its wait4 figures.
        proc = subprocess.run(
            [sys.executable, "-c", _RUNNER, str(out), *cmd], capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            raise SystemExit(f"nodewright plan failed: {proc.stderr[-2000:]}")
        elapsed, cpu, mib = (float(x) for x in proc.stdout.split())
        text = out.read_text()
        doc = json.loads(text) if output == "json" else yaml.load(text, Loader=yaml.CSafeLoader)
        return elapsed, cpu, mib, len(doc["nodeClaims"])


_RUNNER = """
import os, subprocess, sys, time
start = time.perf_counter()
with open(sys.argv[1], "w") as out:
    proc = subprocess.Popen(sys.argv[2:], stdout=out, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
wall = time.perf_counter() - start
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit(proc.stderr.read().decode()[-2000:])
print(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 100, 1000, 5000, 20000])
    ap.add_argument("--no-cli", action="store_true", help="skip the whole-process run")
    ap.add_argument("--no-cost", action="store_true", help="skip the cost-quality figure")
    args = ap.parse_args(argv)
    types = fake_instance_types(400)
    print(
        f"{'pods':>7} {'claims':>7} {'errors':>6} {'seconds':>8} {'pods/s':>9} {'us/pod':>8} {'peakMiB':>8}"
    )
    per_pod: dict[int, float] = {}
    for n in args.sizes:
        doc, secs = run_plan(diverse_pods(n), types)
        per_pod[n] = secs / n * 1e6
        print(
            f"{n:>7} {len(doc.node_claims):>7} {len(doc.pod_errors):>6} {secs:>8.3f} "
            f"{n / secs:>9.0f} {per_pod[n]:>8.1f} {_rss_mib():>8.0f}"
        )
    if 1000 in per_pod and max(per_pod) > 1000:
        big = max(per_pod)
        print(f"per-pod time ratio {big}/1000: {per_pod[big] / per_pod[1000]:.2f}x")
    if not args.no_cost:
        n = max(args.sizes) // 5 or 1
        raw = generic_pods(n)
        doc, _ = run_plan(raw, types)
        bound = lp_lower_bound(types, _demand(raw))
        cost = doc.summary.hourly_cost
        print(
            f"cost quality (generic group, {n} pods): plan {cost:.4f}/h, LP bound {bound:.4f}/h, ratio {cost / bound:.3f}"
        )
    if not args.no_cli:
        n = max(args.sizes)
        for output in ("yaml", "json"):
            secs, cpu, mib, claims = cli_run(n, types, output)
            print(
                f"whole process `nodewright plan -o {output}` at {n} pods: {secs:.2f} s wall, {cpu:.2f} s CPU, "
                f"peak {mib:.0f} MiB, {claims} NodeClaims"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
