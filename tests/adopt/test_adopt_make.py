"""`make preview` installs only what running nodewright needs and says so; `make test` adds the dev
extra. Checked with ``make -n`` (what make would run), on a venv path that does not exist."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from adopt_helpers import ROOT


def _plan(target: str, venv: Path) -> list[str]:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    done = subprocess.run(
        ["make", "-n", target, f"VENV={venv}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_make_preview_installs_runtime_only_and_says_so(tmp_path: Path) -> None:
    lines = _plan("preview", tmp_path / "venv")
    installs = [line for line in lines if "pip install" in line and "--upgrade pip" not in line]
    assert installs == [
        f"{tmp_path / 'venv'}/bin/python -m pip install -q -c requirements-lock.txt -e '.[live]'"
    ]
    said = [line for line in lines if line.startswith("echo ")]
    assert any("runtime dependencies" in line for line in said)
    assert lines[-1].endswith("nodewright preview --stack dev")


def test_make_test_installs_the_dev_extra(tmp_path: Path) -> None:
    lines = _plan("test", tmp_path / "venv")
    assert any("pip install -q -c requirements-lock.txt -e '.[dev,live]'" in line for line in lines)
