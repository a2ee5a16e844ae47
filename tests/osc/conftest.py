"""Fixtures for the osc tests: the real validators (Debian cloud-init, ignition-validate, bash -n)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

VALIDATE_USERDATA = Path(__file__).resolve().parents[2] / "tools" / "validate_userdata.py"
SYSTEM_PYTHON = Path("/usr/bin/python3")

Validator = Callable[[Path], None]


def _has_cloudinit() -> bool:
    if not SYSTEM_PYTHON.exists() or not VALIDATE_USERDATA.exists():
        return False
    probe = subprocess.run([str(SYSTEM_PYTHON), "-c", "import cloudinit"], capture_output=True, check=False)
    return probe.returncode == 0


@pytest.fixture(scope="session")
def validate_cloudinit() -> Validator:
    """Debian cloud-init's own splitter + strict schema (tools/validate_userdata.py)."""
    if not _has_cloudinit():
        pytest.skip("Debian cloud-init missing: apt-get install -y cloud-init (.ci/system-deps.sh)")

    def check(path: Path) -> None:
        run = subprocess.run(
            [str(SYSTEM_PYTHON), "-W", "ignore", str(VALIDATE_USERDATA), str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == 0, f"cloud-init rejects {path}:\n{run.stdout}{run.stderr}"
        assert "text/cloud-config" in run.stdout, run.stdout

    return check


@pytest.fixture(scope="session")
def validate_ignition() -> Validator:
    """ignition-validate with no output at all (warnings exit 0, so any output fails)."""
    tool = shutil.which("ignition-validate")
    if tool is None:
        pytest.skip("ignition-validate missing: apt-get install -y ignition (.ci/system-deps.sh)")

    def check(path: Path) -> None:
        run = subprocess.run([tool, str(path)], capture_output=True, text=True, check=False)
        assert run.returncode == 0 and not run.stdout and not run.stderr, (
            f"ignition-validate on {path}: rc={run.returncode}\n{run.stdout}{run.stderr}"
        )

    return check


@pytest.fixture(scope="session")
def validate_bash() -> Validator:
    """``bash -n`` (syntax only)."""
    tool = shutil.which("bash")
    if tool is None:
        pytest.skip("bash missing")

    def check(path: Path) -> None:
        run = subprocess.run([tool, "-n", str(path)], capture_output=True, text=True, check=False)
        assert run.returncode == 0 and not run.stderr, f"bash -n {path}:\n{run.stderr}"

    return check
