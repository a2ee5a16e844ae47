"""Convert the AWS provider's generated Go tables into nodewright's package data (facts, not code).

    python tools/convert_upstream_tables.py pricing FILE.go TAG PATH [OUTDIR]
        zz_generated.pricing_aws_us_gov.go / _aws_cn.go -> nodewright/data/prices-<region>.json
    python tools/convert_upstream_tables.py vpclimits FILE.go TAG PATH [OUTDIR]
        zz_generated.vpclimits.go -> nodewright/data/vpc-branch-enis.json (trunking-compatible
        types and their branch ENIs, the vpc.amazonaws.com/pod-eni capacity)

FILE.go is read as text (e.g. ``git show v1.14.1:<path> > FILE.go``); TAG and PATH are recorded
as the provenance (repository aws/karpenter-provider-aws).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

REPO = "aws/karpenter-provider-aws"
OUT = Path(__file__).resolve().parent.parent / "nodewright" / "data"
_REGION = re.compile(r'^\t"([a-z]+(?:-[a-z]+)+-\d+)": \{', re.M)
_PRICE = re.compile(r'"([a-z0-9.\-]+)": ([0-9.]+)')
_TYPE = re.compile(r'^\t"([a-z0-9.\-]+)": \{$', re.M)


def pricing(text: str, tag: str, path: str, outdir: Path) -> list[Path]:
    starts = [(m.group(1), m.end()) for m in _REGION.finditer(text)]
    written = []
    for i, (region, start) in enumerate(starts):
        end = starts[i + 1][1] if i + 1 < len(starts) else len(text)
        prices = {name: float(value) for name, value in _PRICE.findall(text[start:end])}
        body = {"region": region, "source": f"{REPO} {tag} {path}", "prices": dict(sorted(prices.items()))}
        target = outdir / f"prices-{region}.json"
        target.write_text(json.dumps(body, indent=0) + "\n", encoding="utf-8")
        written.append(target)
    return written


def vpclimits(text: str, tag: str, path: str, outdir: Path) -> list[Path]:
    starts = [(m.group(1), m.end()) for m in _TYPE.finditer(text)]
    branch: dict[str, int] = {}
    for i, (name, start) in enumerate(starts):
        end = starts[i + 1][1] if i + 1 < len(starts) else len(text)
        block = text[start:end]
        trunk = re.search(r"IsTrunkingCompatible:\s+(true|false)", block)
        count = re.search(r"BranchInterface:\s+(\d+)", block)
        if trunk and trunk.group(1) == "true" and count:
            branch[name] = int(count.group(1))
    body = {"source": f"{REPO} {tag} {path}", "branchInterfaces": dict(sorted(branch.items()))}
    target = outdir / "vpc-branch-enis.json"
    target.write_text(json.dumps(body, indent=0) + "\n", encoding="utf-8")
    return [target]


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[0] not in ("pricing", "vpclimits"):
        print(__doc__, file=sys.stderr)
        return 2
    kind, file, tag, path = argv[:4]
    outdir = Path(argv[4]) if len(argv) > 4 else OUT
    text = Path(file).read_text(encoding="utf-8")
    for p in (pricing if kind == "pricing" else vpclimits)(text, tag, path, outdir):
        print(p)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
