"""Files nodewright writes are whole or absent, and a failed write is one located line.

`plan --write` is driven as a real process (killed with SIGKILL between write and rename through
the test hook ``NODEWRIGHT_TEST_WRITE_PAUSE``, run concurrently); the disk-full case is injected
in-process (``os.write`` raising ENOSPC) since no small filesystem can be mounted here.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from nodewright import atomicfile
from nodewright.cli import main

PLAN = ["plan", "-f", "stacks/nodepools.yaml", "-f", "stacks/nodeclasses.yaml",
        "--cluster", "stacks/examples/cluster.json", "-o", "json"]  # fmt: skip
OLD = "apiVersion: nodewright.dev/v1alpha1\nkind: NodeClaimPlan\nmetadata: {previous: true}\nnodeClaims: []\n"


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(Path.cwd()), **extra)
    env.pop(atomicfile.PAUSE_ENV, None)
    env.update(extra)
    return env


def _plan(target: Path, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "nodewright.cli", *PLAN, "--write", str(target)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(**env),
    )


def _claims(path: Path) -> dict[str, object]:
    doc = yaml.safe_load(path.read_text())
    assert doc["kind"] == "NodeClaimPlan"
    return doc  # type: ignore[no-any-return]


def test_kill_between_write_and_rename_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "claims.yaml"
    target.write_text(OLD)
    proc = _plan(target, **{atomicfile.PAUSE_ENV: "60"})
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob(".claims.yaml.*.tmp")):  # the new file is written, not yet renamed
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert target.read_text() == OLD
    # the next write replaces it whole and removes the killed writer's temporary file
    done = _plan(target)
    _, err = done.communicate(timeout=300)
    assert done.returncode == 0, err
    assert _claims(target)["metadata"] == {  # type: ignore[comparison-overlap]
        "generatedBy": "nodewright plan",
        "catalog": "aws:us-east-1",
        "strategy": "karpenter",
    }
    assert sorted(p.name for p in tmp_path.iterdir()) == ["claims.yaml"]


def test_kill_at_any_time_leaves_old_or_new_whole(tmp_path: Path) -> None:
    target = tmp_path / "claims.yaml"
    target.write_text(OLD)
    for delay in (0.3, 0.6, 0.9, 1.2, 2.0):
        proc = _plan(target)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        text = target.read_text()
        assert text == OLD or len(_claims(target)["nodeClaims"]) > 0  # type: ignore[arg-type]


def test_concurrent_writers_never_tear(tmp_path: Path) -> None:
    target = tmp_path / "claims.yaml"
    procs = [_plan(target) for _ in range(3)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    assert len(_claims(target)["nodeClaims"]) > 0  # type: ignore[arg-type]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["claims.yaml"]


_WRITER = """
import sys
from nodewright import atomicfile
path, mark = sys.argv[1], sys.argv[2]
for i in range(40):
    atomicfile.write_text(path, (mark * 200_000) + f"\\n{i}\\n")
"""


def test_concurrent_writers_and_a_reader_see_only_whole_files(tmp_path: Path) -> None:
    """Writers of different 200 kB payloads race on one file; every read is one whole payload."""
    target = tmp_path / "f.txt"
    atomicfile.write_text(target, "a" * 200_000 + "\n0\n")
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(target), mark], env=_env()) for mark in "bcd"
    ]
    seen = 0
    while any(w.poll() is None for w in writers):
        text = target.read_text()
        body, _, _ = text.partition("\n")
        assert len(body) == 200_000 and len(set(body)) == 1, len(body)
        seen += 1
    assert all(w.returncode == 0 for w in writers)
    assert seen > 0


def _write_error(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def old_claims(tmp_path: Path) -> Path:
    target = tmp_path / "claims.yaml"
    target.write_text(OLD)
    return target


def _one_error_line(stderr: str, path: Path, reason: str) -> None:
    lines = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert lines == [line for line in stderr.splitlines() if not line.startswith("warning:")], stderr
    assert len(lines) == 1, stderr
    assert lines[0].startswith(f"error: {path}: {reason}; "), lines[0]
    assert "internal error" not in stderr and "Traceback" not in stderr


def test_missing_directory_is_one_line(tmp_path: Path) -> None:
    target = tmp_path / "nope" / "claims.yaml"
    code, _, err = _write_error([*PLAN, "--write", str(target)])
    assert code == 1
    _one_error_line(err, target, "No such file or directory")
    assert "create the directory" in err


def test_read_only_directory_is_one_line(old_claims: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = old_claims.parent
    if os.geteuid() == 0:  # root writes through mode bits: inject what a read-only mount returns

        def refuse(*args: object, **kwargs: object) -> tuple[int, str]:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))

        monkeypatch.setattr(atomicfile.tempfile, "mkstemp", refuse)
        reason = os.strerror(errno.EROFS)
    else:
        directory.chmod(0o555)
        reason = os.strerror(errno.EACCES)
    try:
        code, _, err = _write_error([*PLAN, "--write", str(old_claims)])
    finally:
        directory.chmod(0o755)
    assert code == 1
    _one_error_line(err, old_claims, reason)
    assert old_claims.read_text() == OLD


def test_disk_full_is_one_line_and_keeps_the_old_file(
    old_claims: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write = os.write
    calls = {"n": 0}

    def full_disk(fd: int, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] > 1:  # the first chunk lands, then the disk is full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, bytes(data)[:1000])

    monkeypatch.setattr(atomicfile.os, "write", full_disk)
    code, _, err = _write_error([*PLAN, "--write", str(old_claims)])
    assert code == 1
    _one_error_line(err, old_claims, os.strerror(errno.ENOSPC))
    assert "free space" in err
    assert old_claims.read_text() == OLD
    assert sorted(p.name for p in old_claims.parent.iterdir()) == ["claims.yaml"]


def test_a_directory_as_target_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(atomicfile.WriteError, match=r"(?i)is a directory"):
        atomicfile.write_text(tmp_path, "x")


def test_permissions_follow_the_previous_file(tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_text("old")
    target.chmod(0o640)
    atomicfile.write_text(target, "new")
    assert target.read_text() == "new"
    assert target.stat().st_mode & 0o777 == 0o640
    fresh = tmp_path / "g"
    atomicfile.write_bytes(fresh, b"x")
    umask = os.umask(0)
    os.umask(umask)
    assert fresh.stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_symlink_is_written_through(tmp_path: Path) -> None:
    real = tmp_path / "real.yaml"
    real.write_text("old")
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    atomicfile.write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new"
