"""The repository stands alone: nothing in it points at material outside it (sibling folders,
private notes, internal request paths). Upstream sources are cited as repo + tag + path instead."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Built from parts so that this file spells none of the paths it forbids (it scans itself too).
_UP = re.escape("..")
_SIBLING = "sha" + "red"
_MACHINE_ROOT = "/" + "wo" + "rk" + "/"
FORBIDDEN = re.compile(
    rf"{_UP}/{_SIBLING}\b"  # a sibling folder of the checkout
    r"|reference/karpenter-[\w-]+\.md"  # private notes
    rf"|{_MACHINE_ROOT}\w"  # an absolute path on the machine that built the repository
)
SKIP_SUFFIXES = {".png", ".gz", ".lock"}


def test_the_pattern_catches_what_it_forbids() -> None:
    """The forbidden forms, assembled here so that no line of this file is one of them."""
    for sample in (
        ".." + "/" + _SIBLING + "/notes.md",
        "see " + _MACHINE_ROOT + "main/README.md",
        _MACHINE_ROOT + "requests/x",
        "reference/" + "karpenter-scheduling.md",
    ):
        assert FORBIDDEN.search(sample), sample
    for fine in ('docker run -v "$PWD:/repo"', ".github/workflows/pulumi.yaml", "../stacks/dev.yaml"):
        assert not FORBIDDEN.search(fine), fine


def _tracked_files() -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / line for line in out.splitlines() if line]


def _lines_matching(pattern: re.Pattern[str], *, skip: frozenset[str] = frozenset()) -> list[str]:
    """``file:line: text`` of every tracked text file's lines that ``pattern`` finds."""
    hits = []
    for path in _tracked_files():
        if path.suffix in SKIP_SUFFIXES or not path.is_file() or path.name in skip:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if pattern.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    return hits


def test_nothing_points_outside_the_repository() -> None:
    hits = _lines_matching(FORBIDDEN)
    assert not hits, "\n".join(hits)


# The project's own work items are not part of the product: code, tests and docs say what a
# behaviour is and cite upstream (``kubernetes-sigs/karpenter#711``), never "issue 21".
ISSUE_REF = re.compile(r"\b[Ii]ssue[ #]+#?\d+|\(#\d+\)")


def test_issue_pattern() -> None:
    for sample in ("see issue 21", "Issue #20: replicas", "(#19)", "issue #23, row 1"):
        assert ISSUE_REF.search(sample), sample
    for fine in ("kubernetes-sigs/karpenter#711", "aws/karpenter-provider-aws#3732", "an issue with"):
        assert not ISSUE_REF.search(fine), fine


def test_no_references_to_the_projects_own_issues() -> None:
    hits = _lines_matching(ISSUE_REF, skip=frozenset({"test_standalone.py"}))
    assert not hits, "\n".join(hits)
