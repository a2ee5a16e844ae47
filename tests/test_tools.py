"""The developer tools under tools/ still produce what the repository ships."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_generate_cluster_reproduces_the_example_cluster_state() -> None:
    spec = importlib.util.spec_from_file_location("generate_cluster", ROOT / "tools" / "generate_cluster.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.build() == (ROOT / "stacks" / "examples" / "cluster.json").read_text()
