"""The first catalog build (~15 s) says what it is doing on stderr when stderr is a terminal, and
nothing otherwise or with ``-q``. Cold cache each run (``XDG_CACHE_HOME``)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from adopt_helpers import ROOT

pytestmark = pytest.mark.slow


def _catalog(tmp: Path, *, tty: bool, quiet: bool = False) -> str:
    """stderr of ``nodewright [-q] catalog list -o json`` on a cold cache."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp / ("tty" if tty else "pipe") / ("q" if quiet else "v"))}
    args = [
        sys.executable,
        "-m",
        "nodewright.cli",
        *(["-q"] if quiet else []),
        "catalog",
        "list",
        "-o",
        "json",
    ]
    if not tty:
        done = subprocess.run(
            args, cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=600
        )
        assert done.returncode == 0, done.stderr
        return done.stderr
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            args, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=follower, check=False, timeout=600
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                data = os.read(leader, 4096)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(leader)
    assert proc.returncode == 0
    return b"".join(chunks).decode(errors="replace")


def test_progress_only_on_a_terminal(tmp_path: Path) -> None:
    shown = _catalog(tmp_path, tty=True)
    assert "... building the instance-type catalog of us-east-1" in shown
    assert "instance types" in shown
    assert "..." not in _catalog(tmp_path, tty=False)


def test_quiet_silences_progress_on_a_terminal(tmp_path: Path) -> None:
    assert "..." not in _catalog(tmp_path, tty=True, quiet=True)
