"""The refusal text of an existing node (with Karpenter's "typo of" hint, an edit-distance search
over the node's labels) is built only when printed: ``plan`` beside many nodes a pod cannot use
does hint work independent of the node count, and prints the same document."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from nodewright.algebra import requirements
from nodewright.algebra.requirements import Requirements
from nodewright.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _plan(tmp_path: Path, nodes: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    sys.path.insert(0, str(ROOT))
    from bench.hints import make

    out = tmp_path / f"n{nodes}"
    make(out, nodes, 3)
    calls = {"n": 0}
    real = requirements._levenshtein

    def counting(a: str, b: str) -> int:
        calls["n"] += 1
        return real(a, b)

    monkeypatch.setattr(requirements, "_levenshtein", counting)
    res = CliRunner().invoke(
        main,
        ["plan", "-f", str(out / "nodepools.yaml"), "--cluster", str(out / "cluster.json"), "-o", "json"],
    )
    assert res.exit_code == 0, res.stderr
    return calls["n"], res.stdout


def test_hint_work_does_not_grow_with_the_nodes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    few, _ = _plan(tmp_path, 4, monkeypatch)
    many, doc_many = _plan(tmp_path, 40, monkeypatch)
    assert few == many
    assert '"example.com/tier"' in doc_many or "example.com/tier" in doc_many  # the printed reason


def test_incompatibility_text_is_compatible_text() -> None:
    node = Requirements.from_labels({"topology.kubernetes.io/zone": "a", "team": "x"})
    for labels in ({"zone": "a"}, {"team": "y"}, {"tier": "gold"}, {"team": "x"}):
        pod = Requirements.from_labels(labels)
        lazy = node.incompatibility(pod)
        assert (None if lazy is None else str(lazy)) == node.compatible(pod)
