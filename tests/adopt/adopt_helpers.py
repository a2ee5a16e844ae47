"""Helpers for the "use it from your own repository" tests: run the CLI as a user runs it.

A uniquely named module (not ``conftest``), as tests/pulumi_helpers.py is.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHA = "0123456789abcdef0123456789abcdef01234567"
"""A commit-SHA-shaped ``--action`` ref (the scaffold's workflow must then lint clean)."""


def run(
    args: Sequence[str],
    cwd: Path,
    *,
    exe: Sequence[str] = (sys.executable, "-m", "nodewright.cli"),
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``nodewright ARGS`` as a real process in ``cwd`` (default: this interpreter, this source)."""
    return subprocess.run(
        [*exe, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env=env if env is not None else dict(os.environ),
        timeout=600,
    )
