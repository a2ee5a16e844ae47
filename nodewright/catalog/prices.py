"""The shipped on-demand price table (package data) and its conversion from the public CSV.

``nodewright/data/prices-<region>.json`` holds ``{"region", "source", "prices": {type: usd/h}}``,
converted from ``tools/data/ec2-on-demand-prices.csv`` by
``python -m nodewright.catalog.prices CSV [OUTDIR]``; the GovCloud and China tables
(``prices-us-gov-*.json``, ``prices-cn-*.json``) are the AWS provider's generated static tables
(v1.14.1 ``pkg/providers/pricing/zz_generated.pricing_aws_us_gov.go`` / ``_aws_cn.go``, converted
by ``tools/convert_upstream_tables.py``; provenance in each file). Like Karpenter's static
pricing, a region without a table falls back to us-east-1, with one warning per region.

Boundary: price data only; offerings are built in :mod:`.aws`.
"""

from __future__ import annotations

import csv
import hashlib
import json
import logging
import sys
from functools import cache
from importlib import resources as importlib_resources
from pathlib import Path
from typing import Final

from nodewright import atomicfile
from nodewright.errors import CatalogError

log = logging.getLogger("nodewright")

FALLBACK_REGION: Final = "us-east-1"
HOURS_PER_MONTH: Final = 730
"""A month of an hourly price, as infracost (and AWS's pricing pages) count it: 730 hours."""
DATA_PACKAGE: Final = "nodewright.data"


def convert_csv(path: str | Path) -> dict[str, dict[str, float]]:
    """``region,instance_type,usd_per_hour`` rows as ``{region: {instance_type: price}}`` (sorted)."""
    out: dict[str, dict[str, float]] = {}
    with open(path, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            out.setdefault(row["region"], {})[row["instance_type"]] = float(row["usd_per_hour"])
    return {r: dict(sorted(p.items())) for r, p in sorted(out.items())}


def write_tables(csv_path: str | Path, outdir: str | Path) -> list[Path]:
    written = []
    for region, prices in convert_csv(csv_path).items():
        target = Path(outdir) / f"prices-{region}.json"
        body = {"region": region, "source": Path(csv_path).name, "prices": prices}
        atomicfile.write_text(target, json.dumps(body, indent=0, sort_keys=False) + "\n")
        written.append(target)
    return written


def _read_table(region: str) -> str | None:
    try:
        return (importlib_resources.files(DATA_PACKAGE) / f"prices-{region}.json").read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        return None


@cache
def _table(region: str) -> tuple[str, dict[str, float]]:
    text = _read_table(region)
    used = region
    if text is None:
        log.warning(
            f"{region}: on-demand prices are read live by Karpenter and cannot be known offline; "
            f"using the {FALLBACK_REGION} table as Karpenter does before its first price update"
        )
        text = _read_table(FALLBACK_REGION)
        used = FALLBACK_REGION
    if text is None:
        raise CatalogError(
            f"the shipped price table prices-{FALLBACK_REGION}.json is missing; reinstall nodewright"
        )
    data = json.loads(text)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    return f"{used}:{digest}", {str(k): float(v) for k, v in data["prices"].items()}


def has_table(region: str) -> bool:
    """True when a price table for ``region`` is shipped (so the region is certainly real)."""
    return _read_table(region) is not None


def on_demand_prices(region: str) -> dict[str, float]:
    """USD per hour by instance type for ``region`` (us-east-1's table when none is shipped)."""
    return _table(region)[1]


def price_table_version(region: str) -> str:
    """A short digest of the table in use, for cache keys."""
    return _table(region)[0]


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m nodewright.catalog.prices CSV [OUTDIR]", file=sys.stderr)
        return 2
    outdir = argv[1] if len(argv) > 1 else str(Path(__file__).resolve().parent.parent / "data")
    for p in write_tables(argv[0], outdir):
        print(p)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
