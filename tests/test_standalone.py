"""The repository stands alone: nothing in it points at material outside it (sibling folders,
private notes, internal request paths). Upstream sources are cited as repo + tag + path instead."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = re.compile(r"\.\./shared\b|reference/karpenter-[\w-]+\.md|/work/(?:requests|shared|main)\b")
SKIP_SUFFIXES = {".png", ".gz", ".lock"}


def _tracked_files() -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / line for line in out.splitlines() if line]


def test_nothing_points_outside_the_repository() -> None:
    hits = []
    for path in _tracked_files():
        if path.suffix in SKIP_SUFFIXES or not path.is_file() or path.name == "test_standalone.py":
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if FORBIDDEN.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert not hits, "\n".join(hits)
