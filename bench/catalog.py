"""Benchmark: loading the ``aws:us-east-1`` catalog cold (moto + math) and warm (disk, memory).

Usage: ``.venv/bin/python bench/catalog.py`` (uses a temporary XDG_CACHE_HOME, so it never touches
your cache). Each phase runs in a fresh interpreter so the in-process memo does not hide the disk
cache; prints one line per phase and a JSON summary.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

_PHASE = """
import time
t0 = time.perf_counter()
from nodewright.catalog import load_catalog
t1 = time.perf_counter()
c = load_catalog("aws:us-east-1")
t2 = time.perf_counter()
load_catalog("aws:us-east-1")
t3 = time.perf_counter()
it = c["m5.large"]
assert it.allocatable()["memory"] == 6903 * 2**20 * 1000
n = sum(1 for t in c for _ in [t.requirements])  # force every type's Requirements
t4 = time.perf_counter()
print(f"{len(c)} {t1 - t0:.3f} {t2 - t1:.3f} {t3 - t2:.6f} {t4 - t3:.3f}")
"""


def _run(env: dict[str, str]) -> list[float]:
    out = subprocess.run([sys.executable, "-c", _PHASE], env=env, check=True, capture_output=True, text=True)
    parts = out.stdout.split()
    return [float(p) for p in parts]


def main() -> int:
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "XDG_CACHE_HOME": home, "NODEWRIGHT_CATALOG_SOURCE": "embedded"}
        env.pop("NODEWRIGHT_NO_CACHE", None)
        cold = _run(env)
        warm = [_run(env) for _ in range(3)]
    best = min(warm, key=lambda r: r[2])
    print(f"types: {int(cold[0])}")
    print(f"cold (moto EC2 calls + math + cache write): {cold[2]:.2f} s")
    print(f"warm (disk cache + math), best of 3:       {best[2]:.3f} s")
    print(f"memoised (same process, same NodeClass):   {best[3] * 1e6:.0f} us")
    print(f"building Requirements for every type:      {best[4]:.3f} s")
    print(f"import nodewright.catalog:                 {best[1]:.3f} s")
    summary = {
        "types": int(cold[0]),
        "cold_s": cold[2],
        "warm_s": best[2],
        "memo_us": best[3] * 1e6,
        "requirements_s": best[4],
        "import_s": best[1],
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
