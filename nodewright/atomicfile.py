"""The one way nodewright writes a file: whole or not at all, and a failure says where and why.

:func:`write_text` / :func:`write_bytes` write to a temporary file in the target's directory,
``fsync`` it, rename it over the target and ``fsync`` the directory, so a reader (Git, the
Pulumi program, a second ``plan --write``) sees either the previous file or the new one, never
a prefix: a kill, a full disk or a crash mid-write leaves the previous file as it was. Writers of
the same directory are serialised by an advisory ``flock`` on the directory itself (no lock file
is left behind), and the temporary file a killed writer left is removed by the next; where the filesystem refuses it, the rename alone still keeps every file whole
(the last writer wins). A failure is a :class:`WriteError`, one line
``<path>: <OS reason>; <what to do>``, and the temporary file is removed.

The new file gets the previous file's permission bits, or ``0o666`` less the umask (as ``open``
would create it); a symbolic link is written through (it stays a link).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import glob
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from nodewright.errors import NodewrightError

PAUSE_ENV: Final = "NODEWRIGHT_TEST_WRITE_PAUSE"
"""Test hook: seconds to sleep between writing the temporary file and renaming it (the window a
kill test aims at). Unset in normal use."""

_FIX: Final[dict[int, str]] = {
    errno.ENOSPC: "free space on that filesystem (or write elsewhere) and run again",
    errno.EDQUOT: "free space within your quota (or write elsewhere) and run again",
    errno.EROFS: "the filesystem is read-only; write to another path",
    errno.EACCES: "make the directory writable for you, or write to another path",
    errno.EPERM: "make the directory writable for you, or write to another path",
    errno.ENOENT: "create the directory first, or write to an existing one",
    errno.ENOTDIR: "a parent of the path is a file, not a directory; choose another path",
    errno.EISDIR: "the path is a directory; give a file name",
    errno.ENAMETOOLONG: "use a shorter path",
    errno.EIO: "the device reported an I/O error; check it and run again",
}


class WriteError(NodewrightError):
    """A file could not be written; the previous file, if any, is unchanged."""

    def __init__(self, path: str, reason: str, fix: str) -> None:
        self.path, self.reason, self.fix = path, reason, fix
        super().__init__(f"{path}: {reason}; {fix}")


def _error(path: str, exc: OSError) -> WriteError:
    reason = exc.strerror or str(exc) or type(exc).__name__
    return WriteError(path, reason, _FIX.get(exc.errno or 0, "check the path and run again"))


def write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> None:
    """Replace ``path`` with ``text`` atomically (see module docstring)."""
    write_bytes(path, text.encode(encoding))


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically (see module docstring)."""
    target = Path(path)
    shown = str(path)
    if target.is_symlink():  # write through the link (it stays a link), beside its target
        target = Path(os.path.realpath(target))
    directory = target.parent
    if target.is_dir():
        raise _error(shown, IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR)))
    try:
        with _directory_lock(directory) as locked:
            if locked:
                _remove_stale(target)
            _replace(target, data)
    except OSError as exc:
        raise _error(shown, exc) from exc


@contextlib.contextmanager
def _directory_lock(directory: Path) -> Iterator[bool]:
    """An exclusive ``flock`` on ``directory`` for the block (a missing directory raises ENOENT);
    yields whether the lock was taken (a filesystem without flock: the rename still keeps files whole)."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        locked = True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            locked = False
        yield locked
        with contextlib.suppress(OSError):
            os.fsync(fd)  # the rename is durable once the directory is
    finally:
        os.close(fd)  # releases the lock


def _remove_stale(target: Path) -> None:
    """Remove temporary files a killed writer left (under the lock no live writer owns one)."""
    for stale in target.parent.glob(f".{glob.escape(target.name)}.*.tmp"):
        with contextlib.suppress(OSError):
            stale.unlink()


def _mode(target: Path) -> int:
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _replace(target: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fchmod(fd, _mode(target))
            os.fsync(fd)
        finally:
            os.close(fd)
        pause = os.environ.get(PAUSE_ENV)
        if pause:
            time.sleep(float(pause))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
