"""A cluster state big enough for the fast JSON path (jiter, from the file's bytes) reads as the
standard decoder reads it, through the real CLI: the same answers, and the same one-line errors
for what the proof refuses (a repeated key, a number out of range) wherever it sits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nodewright import decoding

_POOL = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "default", "uid": "uid-pool", "generation": 1},
    "spec": {"template": {"spec": {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
        "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
    }}},
}  # fmt: skip


def _claim(i: int) -> dict[str, object]:
    registered = "True" if i % 3 else "False"
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {
            "name": f"claim-{i}",
            "labels": {"karpenter.sh/nodepool": "default", "note": "x:y"},
            "ownerReferences": [{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "name": "default", "uid": "uid-pool"}],
            "creationTimestamp": "2026-11-20T09:00:00Z",
        },
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}},
        "status": {"conditions": [
            {"type": "Launched", "status": "True", "lastTransitionTime": "2026-11-20T09:00:00Z"},
            {"type": "Registered", "status": registered, "lastTransitionTime": f"2026-11-20T09:{i % 60:02d}:00Z"},
        ]},
    }  # fmt: skip


def _state(items: list[dict[str, object]]) -> str:
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=1)
    assert len(text) >= decoding.FAST_FROM  # the fast path's size, not the small-file decoder's
    return text


def _health(path: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "nodewright.cli", "health", "--cluster", str(path), "-o", "json"]
    argv += ["--at", "2026-11-21T00:00:00Z"]
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)


@pytest.fixture(scope="module")
def items() -> list[dict[str, object]]:
    return [_POOL, *(_claim(i) for i in range(4_000))]


def test_a_big_state_reads_as_the_standard_decoder_reads_it(
    items: list[dict[str, object]], tmp_path: Path
) -> None:
    """The same state twice: plain (the fast path) and with one colon written ``\\u003a`` (which
    the proof cannot see through: the standard decoder reads it). Same data, same answer."""
    text = _state(items)
    fast, slow = tmp_path / "fast.json", tmp_path / "slow.json"
    fast.write_text(text)
    at = text.rindex('"x:y"')
    slow.write_text(text[:at] + '"x\\u003ay"' + text[at + len('"x:y"') :])
    assert decoding._fast_loads(fast.read_bytes()) is not decoding._UNPROVEN
    assert decoding._fast_loads(slow.read_bytes()) is decoding._UNPROVEN
    got = {p.name: _health(p) for p in (fast, slow)}
    assert got["fast.json"].returncode == 0, got["fast.json"].stderr
    assert json.loads(got["fast.json"].stdout)["nodePools"]  # a real answer, not an empty one
    assert got["fast.json"].stdout == got["slow.json"].stdout
    assert got["fast.json"].stderr.replace("fast.json", "slow.json") == got["slow.json"].stderr


@pytest.mark.parametrize(
    ("replacement", "problem"),
    [
        ('"note": "x:y", "note": "c"', "duplicate key 'note'"),
        ('"note": 1e400', "out of range"),
        ('"note": ' + "9" * 41, "out of range"),
    ],
    ids=["repeated-key", "float-overflow", "41-digits"],
)
def test_what_the_proof_refuses_is_a_located_one_line_error(
    items: list[dict[str, object]], replacement: str, problem: str, tmp_path: Path
) -> None:
    text = _state(items)
    at = text.rindex('"note": "x:y"')  # in the last NodeClaim, far into the file
    bad = tmp_path / "bad.json"
    bad.write_text(text[:at] + replacement + text[at + len('"note": "x:y"') :])
    # a repeated key is reported at its object's opening brace, a number where it stands
    where = text.rindex("{", 0, at) if "duplicate" in problem else at
    line = text.count("\n", 0, where) + 1
    proc = _health(bad)
    assert proc.returncode == 1 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert str(bad) in lines[0] and problem in lines[0] and f"line {line} " in lines[0], lines[0]
