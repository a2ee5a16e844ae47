"""Micro-benchmark of the requirements algebra (the scheduler's hottest path).

Run: ``.venv/bin/python bench/requirements.py`` (add ``--quick`` for a fast smoke run). Prints
nanoseconds per operation for the shapes the Solve loop produces: a NodeClaim's requirements
(NodePool template + pod) checked against instance-type requirements, pod compatibility with
allow-undefined well-known labels, copy-on-write copies, and single-key intersections.
"""

from __future__ import annotations

import sys
import time
import timeit
from collections.abc import Callable

from nodewright import labels as wk
from nodewright.algebra.requirements import ALLOW_UNDEFINED_WELL_KNOWN, Requirement, Requirements

R = Requirement.new
ZONES = ["us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1f"]


def instance_type(i: int) -> Requirements:
    """Requirements shaped like an AWS instance type's (about 16 keys, single-valued)."""
    reqs = Requirements.from_labels(
        {
            wk.INSTANCE_TYPE: f"m5.{i}xlarge",
            wk.ARCH: "amd64",
            wk.OS: "linux",
            wk.INSTANCE_CATEGORY: "m",
            wk.INSTANCE_FAMILY: "m5",
            wk.INSTANCE_GENERATION: "5",
            wk.INSTANCE_SIZE: f"{i}xlarge",
            wk.INSTANCE_CPU: str(4 * i),
            wk.INSTANCE_MEMORY: str(16384 * i),
            wk.INSTANCE_CPU_MANUFACTURER: "intel",
            wk.INSTANCE_HYPERVISOR: "nitro",
            wk.INSTANCE_NETWORK_BANDWIDTH: str(750 * i),
            wk.INSTANCE_EBS_BANDWIDTH: str(4750 * i),
            wk.INSTANCE_ENCRYPTION_IN_TRANSIT_SUPPORTED: "true",
        }
    )
    reqs.add(R(wk.ZONE, "In", ZONES), R(wk.CAPACITY_TYPE, "In", ["spot", "on-demand"]))
    return reqs


def nodeclaim() -> Requirements:
    """A NodePool template (+ nodepool label) narrowed by one pod, as CanAdd builds it."""
    reqs = Requirements(
        [
            R(wk.ARCH, "In", ["amd64", "arm64"]),
            R(wk.OS, "In", ["linux"]),
            R(wk.CAPACITY_TYPE, "In", ["spot", "on-demand"]),
            R(wk.INSTANCE_CATEGORY, "In", ["c", "m", "r"]),
            R(wk.INSTANCE_GENERATION, "Gt", ["2"]),
            R(wk.INSTANCE_CPU, "Lt", ["65"]),
            R(wk.NODEPOOL, "In", ["default"]),
            R(wk.HOSTNAME, "In", ["hostname-placeholder-0001"]),
        ]
    )
    reqs.add(R(wk.ZONE, "In", ZONES[:3]))
    return reqs


def pod() -> Requirements:
    return Requirements(
        [R(wk.ARCH, "In", ["amd64"]), R(wk.ZONE, "NotIn", [ZONES[0]]), R(wk.CAPACITY_TYPE, "In", ["spot"])]
    )


def bench(name: str, fn: Callable[[], object], number: int) -> tuple[str, float]:
    # CPU time of this process, not wall time: the build machine is shared and often overloaded.
    best = min(timeit.repeat(fn, number=number, repeat=5, timer=time.process_time))
    return name, best / number * 1e9


def main() -> None:
    quick = "--quick" in sys.argv
    n = 2_000 if quick else 50_000
    types = [instance_type(i) for i in range(1, 9)]
    claim = nodeclaim()
    claim.add_all(pod())
    p = pod()
    bad = Requirements([R(wk.ARCH, "In", ["arm64"])])
    big_a = R(wk.INSTANCE_TYPE, "In", [f"t{i}" for i in range(600)])
    big_b = R(wk.INSTANCE_TYPE, "In", [f"t{i}" for i in range(300, 900)])
    a_in = R(wk.ZONE, "In", ZONES)
    b_in = R(wk.ZONE, "In", ZONES[1:3])
    bound = R(wk.INSTANCE_CPU, "Gt", ["2"])
    cpu_in = R(wk.INSTANCE_CPU, "In", ["2", "4", "8", "16", "32"])

    def copy_add() -> None:
        c = claim.copy()
        c.add_all(p)

    results = [
        bench("Requirements.intersects (claim vs instance type, ok)", lambda: types[3].intersects(claim), n),
        bench(
            "Requirements.has_intersection (claim vs 8 types)",
            lambda: [t.has_intersection(claim) for t in types],
            n // 8,
        ),
        bench("Requirements.intersects (mismatch, builds error text)", lambda: types[3].intersects(bad), n),
        bench(
            "Requirements.compatible (claim vs pod, allow undefined)",
            lambda: claim.compatible(p, allow_undefined=ALLOW_UNDEFINED_WELL_KNOWN),
            n,
        ),
        bench(
            "Requirements.is_compatible (claim vs pod, allow undefined)",
            lambda: claim.is_compatible(p, allow_undefined=ALLOW_UNDEFINED_WELL_KNOWN),
            n,
        ),
        bench("Requirements.copy() + add 3 pod keys", copy_add, n),
        bench("Requirements.copy() only", claim.copy, n),
        bench("Requirement.intersection (In 5 & In 2)", lambda: a_in.intersection(b_in), n),
        bench("Requirement.intersection (In 5 & Gt bound)", lambda: cpu_in.intersection(bound), n),
        bench("Requirement.has_intersection (In 600 & In 600)", lambda: big_a.has_intersection(big_b), n),
        bench("Requirement.new (In, 5 values)", lambda: R(wk.ZONE, "In", ZONES), n),
        bench("Requirements.from_labels (14 labels)", lambda: instance_type(1), n // 10),
    ]
    width = max(len(name) for name, _ in results)
    print(f"{'operation':<{width}}  ns/op")
    for name, ns in results:
        print(f"{name:<{width}}  {ns:>8.0f}")


if __name__ == "__main__":
    main()
