"""Benchmark of the preview's cost (``nodewright.stack.cost.converged_cost``): before and after
convergence on a large cluster state, CPU time per phase.

Input: ``bench/bigcluster.py`` (half the NodeClaims stamped with a stale NodePool hash, so half
drift and their pods are re-planned with the pending pods), the embedded ``aws:us-east-1`` catalog
(warm cache). Prints CPU seconds of: loading, pricing the NodeClaims (before), converging (drift +
one provisioning round, after).

    python bench/preview_cost.py                      # 100 pools, 2,000 nodes, 2,000 pending pods
    python bench/preview_cost.py --nodes 10000 --pending 20000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bigcluster

from nodewright.catalog import load_catalog
from nodewright.cluster import load_cluster
from nodewright.drift.inputs import read_objects
from nodewright.stack.cost import converged_cost, price_nodeclaims


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pools", type=int, default=100)
    ap.add_argument("--nodes", type=int, default=2000)
    ap.add_argument("--pending", type=int, default=2000)
    args = ap.parse_args()
    load_catalog("aws:us-east-1")  # warm: the catalog build is not what is measured
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        bigcluster.write(out, pools=args.pools, nodes=args.nodes, pending=args.pending)
        t0 = time.process_time()
        objs = read_objects([out / "nodeclasses.yaml", out / "nodepools.yaml"])
        state = load_cluster(str(out / "cluster.json"))
        t1 = time.process_time()
        price_nodeclaims(state.nodeclaims, load_catalog("aws:us-east-1"))
        t2 = time.process_time()
        report = converged_cost(
            state=state, nodepools=objs.nodepools, nodeclasses=objs.nodeclasses, catalog="aws:us-east-1"
        )
        t3 = time.process_time()
    d = report.as_dict()
    print(f"{args.pools} pools, {args.nodes} nodes, {args.pending} pending pods")
    print(
        f"load {t1 - t0:.2f}s CPU; price before {t2 - t1:.3f}s CPU; converge (drift + plan) {t3 - t2:.2f}s CPU"
    )
    print(f"before {d['before']['nodes']} nodes ${d['before']['monthly']:,.2f}/mo; "
          f"after {d['after']['nodes']} nodes ${d['after']['monthly']:,.2f}/mo")  # fmt: skip


if __name__ == "__main__":
    main()
