"""Benchmark: NodeOverlays applied to the embedded aws:us-east-1 catalog (``overlay_catalogs``).

Usage: ``PYTHONPATH=. .venv/bin/python bench/overlay.py [POOLS] [OVERLAYS]`` (defaults 10 and 20).
Every NodePool sees the ~1370 types of the catalog; the overlays mix family price adjustments,
absolute prices for single types (one unpriced), zone/capacity-type prices and capacity
additions, at a few weights. Prints the CPU time (``time.process_time``) of the controller's
evaluation + store application, best of three, and the number of overlaid types per pool.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from nodewright.api.karpenter import NodePool
from nodewright.api.nodeoverlay import NodeOverlay
from nodewright.catalog import load_catalog
from nodewright.catalog.overlay import overlay_catalogs
from nodewright.settings import FeatureGates

FAMILIES = ("m5", "m6i", "c6a", "r6i", "c7g", "m7i", "t3", "r5", "c5", "m6g")


def _overlay(i: int) -> NodeOverlay:
    kind = i % 4
    fam = FAMILIES[i % len(FAMILIES)]
    spec: dict[str, Any] = {"weight": 1 + i % 3}
    if kind == 0:
        spec |= {
            "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": [fam]}],
            "priceAdjustment": f"-{5 + i}%",
        }
    elif kind == 1:
        spec |= {
            "requirements": [
                {
                    "key": "node.kubernetes.io/instance-type",
                    "operator": "In",
                    "values": [f"{fam}.large", "t8i.small"] if i == 1 else [f"{fam}.large"],
                }
            ],
            "price": "0.05",
        }
    elif kind == 2:
        spec |= {
            "requirements": [
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-east-1a"]},
                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
                {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": [fam]},
            ],
            "priceAdjustment": "+0.01",
        }
    else:
        spec |= {
            "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": [fam]}],
            "capacity": {f"example.com/dev-{i}": "4", "hugepages-2Mi": "1Gi"},
        }
    return NodeOverlay.model_validate(
        {
            "apiVersion": "karpenter.sh/v1alpha1",
            "kind": "NodeOverlay",
            "metadata": {"name": f"o{i:03d}"},
            "spec": spec,
        }
    )


def main(argv: list[str]) -> int:
    pools_n = int(argv[0]) if argv else 10
    overlays_n = int(argv[1]) if len(argv) > 1 else 20
    types = list(load_catalog("aws:us-east-1"))
    pools = [
        NodePool.model_validate(
            {
                "apiVersion": "karpenter.sh/v1",
                "kind": "NodePool",
                "metadata": {"name": f"p{i}"},
                "spec": {
                    "template": {
                        "metadata": {"labels": {"team": f"t{i}"}},
                        "spec": {
                            "nodeClassRef": {
                                "group": "karpenter.k8s.aws",
                                "kind": "EC2NodeClass",
                                "name": "default",
                            },
                            "requirements": [],
                        },
                    }
                },
            }
        )
        for i in range(pools_n)
    ]
    overlays = [_overlay(i) for i in range(overlays_n)]
    gates = FeatureGates(node_overlay=True)
    best = float("inf")
    for _ in range(3):
        t0 = time.process_time()
        out = overlay_catalogs(overlays, pools, lambda _np: types, gates=gates)
        best = min(best, time.process_time() - t0)
    changed = sum(1 for a, b in zip(types, out.types["p0"], strict=True) if a is not b)
    ok = sum(1 for c in out.conditions if c.succeeded)
    print(
        f"{len(types)} types x {pools_n} pools, {overlays_n} overlays ({ok} applied): "
        f"{best:.3f} s CPU, {changed} types overlaid per pool"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
