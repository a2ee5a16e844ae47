"""Cost benchmark: LP lower bound, karpenter strategy and cost strategy side by side, one run each.

Workloads (reusing bench/scheduling.py: upstream's ``scheduling_benchmark_test.go`` pods and its
400-type fake catalog):

* fake catalog: ``makeDiversePods`` and generic-only pods at several sizes;
* real catalog (``aws:us-east-1``, the embedded offline default), one unconstrained NodePool,
  4,000 generic pods, plus the karpenter strategy under a 64-vCPU cap
  (``karpenter.k8s.aws/instance-cpu Lt 65``) for reference;
* the whole ``nodewright plan --strategy cost`` process at 20,000 diverse pods;
* the solver comparison on the real catalog's aggregate covering model (integer counts per
  type): HiGHS LP, HiGHS MIP and OR-Tools CP-SAT (in a child process: the two libraries ship
  clashing HiGHS symbols and cannot share one).

The bound is the covering LP (``nodewright.costplan.lp``) over the pods' total cpu, memory and
pod count by each type's allocatable at its cheapest offering; it ignores topology, so for the
diverse workload it is far below anything feasible.

    python bench/cost.py                     # everything (a few minutes on 2 busy cores)
    python bench/cost.py --quick             # 1,000-pod sizes, no real catalog, no CLI run
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scheduling as sched

from nodewright.api.core import Pod
from nodewright.api.karpenter import NodePool
from nodewright.catalog import dump_catalog, fake_instance_types, load_catalog
from nodewright.catalog.model import InstanceType
from nodewright.cluster.state import ClusterState
from nodewright.costplan.lp import cover_lp
from nodewright.costplan.strategy import plan_cost
from nodewright.scheduling.plan import plan

KEYS = ("cpu", "memory", "pods")
CAP_64 = {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Lt", "values": ["65"]}


def _pool(requirements: list[dict[str, Any]] | None = None) -> NodePool:
    body = json.loads(json.dumps(sched.NODEPOOL))
    body["spec"]["template"]["spec"]["requirements"] = requirements or []
    return NodePool.model_validate(body)


def _model(types: list[InstanceType]) -> tuple[list[float], list[list[float]]]:
    prices, caps = [], []
    for it in types:
        offer = [o.price for o in it.offerings if o.available]
        if not offer:
            continue
        alloc = it.allocatable()
        prices.append(min(offer))
        caps.append([float(alloc.get(k, 0)) for k in KEYS])
    return prices, caps


def bound(types: list[InstanceType], demand: dict[str, int]) -> float:
    prices, caps = _model(types)
    return cover_lp(prices, caps, [float(demand.get(k, 0)) for k in KEYS]).value


def row(label: str, raw: list[dict[str, Any]], types: list[InstanceType]) -> dict[str, Any]:
    pods = tuple(Pod.model_validate(p) for p in raw)
    start = time.perf_counter()
    doc = plan_cost(nodepools=[_pool()], cluster=ClusterState(pods=pods), catalog_for=lambda _np: types)
    secs = time.perf_counter() - start
    s = doc.summary
    lb = bound(types, sched._demand(raw))
    out = {
        "workload": label,
        "pods": len(raw),
        "lpBound": lb,
        "karpenter": s.karpenter_hourly_cost,
        "cost": s.hourly_cost,
        "claimsCost": len(doc.node_claims),
        "seconds": secs,
        "scheduled": s.scheduled,
    }
    print(
        f"{label:<28} {len(raw):>6} {lb:>10.2f} {out['karpenter']:>10.2f} {out['cost']:>10.2f} "
        f"{out['karpenter'] / lb:>7.3f} {out['cost'] / lb:>7.3f} {secs:>7.1f}",
        flush=True,
    )
    return out


def _header() -> None:
    print(
        f"{'workload':<28} {'pods':>6} {'LP bound':>10} {'karpenter':>10} {'cost':>10} "
        f"{'k/LP':>7} {'c/LP':>7} {'secs':>7}"
    )


def capped_karpenter(raw: list[dict[str, Any]], types: list[InstanceType]) -> float:
    pods = tuple(Pod.model_validate(p) for p in raw)
    doc = plan(nodepools=[_pool([CAP_64])], cluster=ClusterState(pods=pods), catalog_for=lambda _np: types)
    return doc.summary.hourly_cost


# -- solver comparison ----------------------------------------------------------------------------
def highs_solve(
    prices: list[float], caps: list[list[float]], demand: list[float], mip: bool
) -> tuple[float, float]:
    import highspy
    import numpy as np

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("time_limit", 60.0)
    n = len(prices)
    h.addVars(n, np.zeros(n), np.full(n, highspy.kHighsInf))
    h.changeColsCost(n, np.arange(n, dtype=np.int32), np.asarray(prices))
    if mip:
        h.changeColsIntegrality(
            n, np.arange(n, dtype=np.int32), np.full(n, highspy.HighsVarType.kInteger, dtype=np.uint8)
        )
    for r, d in enumerate(demand):  # scaled by the demand, as nodewright.costplan.lp does
        vals = np.asarray([c[r] / d for c in caps])
        h.addRow(1.0, highspy.kHighsInf, n, np.arange(n, dtype=np.int32), vals)
    start = time.perf_counter()
    h.run()
    secs = time.perf_counter() - start
    return float(h.getInfo().objective_function_value), secs


def cpsat_child(path: str) -> None:
    """Child process: CP-SAT on the integer covering model in ``path`` (scaled to integers)."""
    from ortools.sat.python import cp_model

    m = json.loads(Path(path).read_text())
    prices, caps, demand = m["prices"], m["caps"], m["demand"]
    model = cp_model.CpModel()
    ub = [int(max(d / c[r] for r, d in enumerate(demand) if c[r] > 0)) + 1 for c in caps]
    xs = [model.NewIntVar(0, u, f"x{i}") for i, u in enumerate(ub)]
    units = (1, 1000 * 2**20, 1000)  # millicores, MiB, pods (CP-SAT wants integers)
    for r, d in enumerate(demand):
        u = units[r]
        model.Add(sum(int(c[r] // u) * x for c, x in zip(caps, xs, strict=True)) >= -(-int(d) // u))
    model.Minimize(sum(round(p * 10000) * x for p, x in zip(prices, xs, strict=True)))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = 60.0
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    start = time.perf_counter()
    status = solver.Solve(model)
    secs = time.perf_counter() - start
    print(
        json.dumps(
            {"value": solver.ObjectiveValue() / 10000, "seconds": secs, "status": solver.StatusName(status)}
        )
    )


def compare_solvers(types: list[InstanceType], demand: dict[str, int]) -> None:
    prices, caps = _model(types)
    d = [float(demand.get(k, 0)) for k in KEYS]
    start = time.perf_counter()
    lp = cover_lp(prices, caps, d)
    lp_secs = time.perf_counter() - start
    mip, mip_secs = highs_solve(prices, caps, d, mip=True)
    print(f"solver comparison (aggregate covering, {len(prices)} types):")
    print(f"  HiGHS LP       {lp.value:>10.4f}/h  {lp_secs * 1000:>8.1f} ms")
    print(f"  HiGHS MIP      {mip:>10.4f}/h  {mip_secs * 1000:>8.1f} ms")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"prices": prices, "caps": caps, "demand": d}, f)
    proc = subprocess.run(
        [sys.executable, __file__, "--cpsat-child", f.name], capture_output=True, text=True, check=False
    )
    Path(f.name).unlink()
    if proc.returncode != 0:
        print(f"  CP-SAT         unavailable ({proc.stderr.strip().splitlines()[-1:]})")
        return
    got = json.loads(proc.stdout)
    print(f"  CP-SAT         {got['value']:>10.4f}/h  {got['seconds'] * 1000:>8.1f} ms  ({got['status']})")


def cli_run(count: int, types: list[InstanceType], strategy: str = "cost") -> tuple[float, float]:
    """The whole ``nodewright plan --strategy S`` process: (wall seconds, CPU seconds). CPU time
    is what a quiet machine's wall time would be; on the shared 2-core build machine wall time
    mostly measures the neighbours."""
    import resource

    import yaml

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "nodepool.yaml").write_text(yaml.safe_dump(sched.NODEPOOL))
        (d / "catalog.json").write_text(json.dumps(dump_catalog(types)))
        (d / "cluster.json").write_text(
            json.dumps({"apiVersion": "v1", "kind": "List", "items": sched.diverse_pods(count)})
        )
        cmd = [sys.executable, "-c", "from nodewright.cli import main; main()", "plan"]
        cmd += ["-f", str(d / "nodepool.yaml")]
        cmd += ["--cluster", str(d / "cluster.json"), "--catalog", str(d / "catalog.json")]
        cmd += ["--strategy", strategy, "-o", "json"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        secs = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            raise SystemExit(f"nodewright plan failed: {proc.stderr[-2000:]}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return secs, cpu


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cpsat-child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.cpsat_child:
        cpsat_child(args.cpsat_child)
        return 0
    fake = fake_instance_types(400)
    _header()
    sizes = [1000] if args.quick else [1000, 4000]
    for n in sizes:
        row("fake, diverse", sched.diverse_pods(n), fake)
    for n in [1000] if args.quick else [1000, 4000, 10000]:
        row("fake, generic", sched.generic_pods(n), fake)
    if args.quick:
        return 0
    real = list(load_catalog("aws:us-east-1"))
    raw = sched.generic_pods(4000)
    got = row("aws:us-east-1, generic", raw, real)
    capped = capped_karpenter(raw, real)
    print(
        f"aws:us-east-1, 4000 generic: karpenter with a 64-vCPU cap {capped:.2f}/h; "
        f"cost strategy {got['cost']:.2f}/h ({got['cost'] / capped:.3f}x the capped plan)"
    )
    compare_solvers(real, sched._demand(raw))
    for strategy in ("karpenter", "cost"):
        secs, cpu = cli_run(20000, fake, strategy)
        print(
            f"whole process `nodewright plan --strategy {strategy}` at 20000 diverse pods: "
            f"{secs:.1f} s wall, {cpu:.1f} s CPU"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
