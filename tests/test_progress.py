"""Progress lines for long steps: on stderr only when it is a terminal, never with
``-q/--quiet``, never into a pipe; stdout is the same either way. Real processes on a pseudo-terminal."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STACK = ROOT / "tests" / "data" / "pulumi" / "stacks" / "Pulumi.karpenter.yaml"


def _run(*global_opts: str, tty: bool) -> tuple[int, str, str]:
    args = [
        sys.executable,
        "-m",
        "nodewright.cli",
        *global_opts,
        "preview",
        "--stack-file",
        str(STACK),
        "-o",
        "json",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if not tty:
        res = subprocess.run(args, capture_output=True, text=True, env=env, cwd=ROOT, check=False)
        return res.returncode, res.stdout, res.stderr
    master, slave = pty.openpty()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=slave, env=env, cwd=ROOT, text=True)
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([master], [], [], 120)
        if not ready:
            break
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    out = proc.stdout.read() if proc.stdout else ""
    code = proc.wait()
    os.close(master)
    return code, out, b"".join(chunks).decode(errors="replace")


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_progress_only_on_a_terminal_and_never_with_quiet() -> None:
    code, out_tty, err_tty = _run(tty=True)
    assert code == 0 and "... running the Pulumi program of stack karpenter offline" in err_tty
    code, out_quiet, err_quiet = _run("-q", tty=True)
    assert code == 0 and "..." not in err_quiet
    code, out_pipe, err_pipe = _run(tty=False)
    assert code == 0 and err_pipe == ""
    assert out_tty == out_quiet == out_pipe
