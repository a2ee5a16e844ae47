"""Examples as tests: every ``nodewright ...`` command in a shell code block of README.md and
docs/*.md runs on the repository's own files and exits as documented.

Rules the docs follow (checked here):

* a fenced block tagged ``sh``, ``bash``, ``shell`` or ``console`` holds runnable examples; every
  line starting with ``nodewright`` (``$ `` prompt and ``\\`` continuations allowed) is run with
  bash from the repository root (in a scratch copy, so ``--write`` and ``>`` do not touch it);
* the exit status is 0 unless the line's comment says ``# exit N``;
* the examples run in document order in one scratch copy, so a later one may read what an earlier
  one wrote (``preview -o json > base.json``, then ``--base base.json``);
* a synopsis with placeholders (``NODEPOOLS.yaml``, ``[--catalog CATALOG]``, ``<file>``) goes in
  an untagged fence, which is not run.

A new example in the docs is picked up automatically.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_FENCES = {"sh", "bash", "shell", "console"}
_FENCE = re.compile(r"^\s*```(\S*)\s*$")
_EXIT = re.compile(r"#.*\bexit (\d+)\b")
_PLACEHOLDER = re.compile(r"<[^<>\s]+>|\[[^\]]*\]|\b[A-Z][A-Z0-9_]*[A-Z0-9]\.(?:ya?ml|json)\b")


@dataclass(frozen=True)
class Example:
    doc: str
    line: int
    command: str
    exit_code: int

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"


def _strip_comment(text: str) -> str:
    """The command without its trailing ``# comment`` (a ``#`` after whitespace, outside quotes)."""
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1].isspace()):
            return text[:i].rstrip()
    return text.rstrip()


def examples(path: Path) -> list[Example]:
    out: list[Example] = []
    lang: str | None = None
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        fence = _FENCE.match(raw)
        if fence:
            lang = None if lang is not None else fence.group(1).lower()
            continue
        if lang not in SHELL_FENCES:
            continue
        line = raw.strip()
        if not pending:
            line = line.removeprefix("$ ")
            if not line.startswith("nodewright "):
                continue
            start = number
        if line.endswith("\\"):
            pending.append(line[:-1].strip())
            continue
        pending.append(line)
        full = " ".join(pending)
        pending = []
        match = _EXIT.search(full)
        out.append(
            Example(
                doc=str(path.relative_to(ROOT)),
                line=start,
                command=_strip_comment(full),
                exit_code=int(match.group(1)) if match else 0,
            )
        )
    return out


ALL = [e for doc in DOCS for e in examples(doc)]


def test_the_docs_show_examples() -> None:
    docs = {e.doc for e in ALL}
    assert "README.md" in docs and "docs/pulumi.md" in docs
    assert len(ALL) >= 10


@pytest.mark.parametrize("example", ALL, ids=lambda e: e.id)
def test_example_has_no_placeholder(example: Example) -> None:
    found = _PLACEHOLDER.findall(example.command)
    assert not found, (
        f"{example.id}: {example.command!r} has placeholders {found}; make it concrete (a file of the "
        "repository) or move the synopsis into an untagged ``` fence"
    )


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository's user-facing files, so examples that write files leave it clean."""
    dest = tmp_path_factory.mktemp("repo")
    for name in ("stacks", "policies", "docs", "tools"):
        shutil.copytree(ROOT / name, dest / name)
    for name in ("Pulumi.yaml", "__main__.py", "README.md", "requirements.txt"):
        shutil.copy2(ROOT / name, dest / name)
    return dest


@pytest.mark.slow
@pytest.mark.parametrize("example", ALL, ids=lambda e: e.id)
def test_example_runs_as_documented(example: Example, scratch: Path) -> None:
    bindir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
    }
    result = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {example.command}"],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == example.exit_code, (
        f"{example.id}: `{example.command}` exited {result.returncode}, the docs say {example.exit_code}\n"
        f"stderr:\n{result.stderr[-2000:]}"
    )
    assert "Traceback" not in result.stderr
