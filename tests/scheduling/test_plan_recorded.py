"""``plan``'s output is byte-for-byte what it was when recorded: the speed work on the scheduler and
the writers must not change a decision or a byte. Each case runs the real CLI as a subprocess and
compares the SHA-256 of its stdout with ``tests/data/recorded/plan.json``.

After a deliberate change of output, re-record with ``NODEWRIGHT_RECORD=1 pytest
tests/scheduling/test_plan_recorded.py`` and say why in the commit.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from nodewright.catalog import dump_catalog, fake_instance_types

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "tests" / "data" / "recorded" / "plan.json"


def _bench() -> object:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        return importlib.import_module("scheduling")
    finally:
        sys.path.remove(str(ROOT / "bench"))


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("recorded")
    bench = _bench()
    (d / "nodepool.yaml").write_text(yaml.safe_dump(bench.NODEPOOL))  # type: ignore[attr-defined]
    (d / "catalog.json").write_text(json.dumps(dump_catalog(fake_instance_types(400))))
    for kind, make in (("diverse", bench.diverse_pods), ("generic", bench.generic_pods)):  # type: ignore[attr-defined]
        items = make(1000)
        (d / f"{kind}.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return d


CASES = {
    "diverse-1000-json": ["-f", "{d}/nodepool.yaml", "--cluster", "{d}/diverse.json", "--catalog", "{d}/catalog.json", "-o", "json"],
    "diverse-1000-yaml": ["-f", "{d}/nodepool.yaml", "--cluster", "{d}/diverse.json", "--catalog", "{d}/catalog.json", "-o", "yaml"],
    "generic-1000-json": ["-f", "{d}/nodepool.yaml", "--cluster", "{d}/generic.json", "--catalog", "{d}/catalog.json", "-o", "json"],
    "example-stack-yaml": ["-f", "{root}/stacks/nodepools.yaml", "-f", "{root}/stacks/nodeclasses.yaml", "--cluster", "{root}/stacks/examples/cluster.json", "-o", "yaml"],
    "example-stack-table": ["-f", "{root}/stacks/nodepools.yaml", "-f", "{root}/stacks/nodeclasses.yaml", "--cluster", "{root}/stacks/examples/cluster.json"],
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_plan_output_is_as_recorded(inputs: Path, case: str) -> None:
    args = [a.format(d=inputs, root=ROOT) for a in CASES[case]]
    proc = subprocess.run(
        [sys.executable, "-m", "nodewright.cli", "plan", *args], capture_output=True, check=False, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    digest = hashlib.sha256(proc.stdout).hexdigest()
    recorded = json.loads(RECORD.read_text()) if RECORD.exists() else {}
    if os.environ.get("NODEWRIGHT_RECORD"):
        recorded[case] = {"sha256": digest, "bytes": len(proc.stdout)}
        RECORD.write_text(json.dumps(dict(sorted(recorded.items())), indent=2) + "\n")
        return
    assert case in recorded, f"no recording for {case}: run with NODEWRIGHT_RECORD=1"
    assert {"sha256": digest, "bytes": len(proc.stdout)} == recorded[case], f"plan output of {case} changed"
