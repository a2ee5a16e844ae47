"""The mutation check: plant each behaviour-changing bug of tools/mutants.py, one at a time, and run
the tests that should notice it. A mutant the tests do not notice "survives"; the score is the share
caught.

    python tools/mutate.py                 # every mutant, score, exit 1 below --min-score
    python tools/mutate.py --list          # the mutants, one a line
    python tools/mutate.py --only NAME ... # some of them

Each mutant runs in a private copy of the repository (the tracked files and the untracked ones git
does not ignore, as they are in the work tree), so the work tree is never touched. A mutant whose
``find`` text no longer occurs exactly once in its file is reported as stale and fails the run: the
list must follow the code. The unmutated tests of every mutant run first; a failing baseline fails
the run.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from mutants import MUTANTS, Mutant  # noqa: E402


def _tracked_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout
    return [p for p in out.decode().split("\0") if p and (ROOT / p).is_file()]


def _copy_repo(dest: Path, files: list[str]) -> None:
    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, target)


def _check_applies(m: Mutant) -> str | None:
    path = ROOT / m.file
    if not path.is_file():
        return f"{m.file} does not exist"
    count = path.read_text().count(m.find)
    if count != 1:
        return f"its text occurs {count} times in {m.file} (must be exactly once)"
    return None


def _pytest(copy: Path, tests: tuple[str, ...], timeout: float) -> tuple[int, str]:
    env = dict(os.environ, PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1")
    cmd = [sys.executable, "-m", "pytest", "-x", "-p", "no:cacheprovider", "--no-header", *tests]
    try:
        proc = subprocess.run(cmd, cwd=copy, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, "timeout"
    tail = (proc.stdout.strip().splitlines() or [""])[-1]
    return proc.returncode, tail


_baselines: dict[tuple[str, ...], tuple[int, str]] = {}
_baseline_locks: dict[tuple[str, ...], threading.Lock] = {}
_guard = threading.Lock()


def _baseline(copy: Path, tests: tuple[str, ...], timeout: float) -> tuple[int, str]:
    """The unmutated run of ``tests``, once per selection (every copy holds the same tree)."""
    with _guard:
        lock = _baseline_locks.setdefault(tests, threading.Lock())
    with lock:
        if tests not in _baselines:
            _baselines[tests] = _pytest(copy, tests, timeout)
        return _baselines[tests]


def _run_one(m: Mutant, copy: Path, timeout: float) -> tuple[str, str, float]:
    start = time.monotonic()
    code, tail = _baseline(copy, m.tests, timeout)
    if code != 0:
        return "error", f"baseline pytest exit {code}: {tail}", time.monotonic() - start
    path = copy / m.file
    original = path.read_text()
    path.write_text(original.replace(m.find, m.replace, 1))
    try:
        code, tail = _pytest(copy, m.tests, timeout)
    finally:
        path.write_text(original)
    verdict = "caught" if code in (1, 124) else ("survived" if code == 0 else "error")
    return verdict, tail, time.monotonic() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--only", nargs="+", default=None, help="run only these mutants (by name)")
    ap.add_argument("--jobs", type=int, default=2, help="mutants run at once (default 2)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per pytest run (default 600)")
    ap.add_argument("--min-score", type=float, default=0.9, help="exit 1 below this share caught")
    args = ap.parse_args(argv)

    names = [m.name for m in MUTANTS]
    if len(set(names)) != len(names):
        print("error: tools/mutants.py: two mutants share a name", file=sys.stderr)
        return 2
    chosen = [m for m in MUTANTS if args.only is None or m.name in args.only]
    if args.only is not None and len(chosen) != len(set(args.only)):
        print(f"error: unknown mutant(s): {sorted(set(args.only) - set(names))}", file=sys.stderr)
        return 2
    if args.list:
        for m in MUTANTS:
            print(f"{m.name:40} {m.area:12} {m.file}: {m.what}")
        return 0

    stale = [(m, why) for m in chosen if (why := _check_applies(m)) is not None]
    for m, why in stale:
        print(f"stale   {m.name}: {why}")
    files = _tracked_files()
    jobs = max(1, min(args.jobs, len(chosen)))
    copies = [Path(tempfile.mkdtemp(prefix="nodewright-mutate-")) for _ in range(jobs)]
    try:
        for c in copies:
            _copy_repo(c, files)
        todo = [m for m in chosen if m not in {s for s, _ in stale}]
        results: dict[str, tuple[str, str, float]] = {}
        free = list(copies)
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            pending: dict[concurrent.futures.Future[tuple[str, str, float]], tuple[Mutant, Path]] = {}
            queue = list(todo)
            while queue or pending:
                while queue and free:
                    m, c = queue.pop(0), free.pop()
                    pending[pool.submit(_run_one, m, c, args.timeout)] = (m, c)
                done, _ = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for fut in done:
                    m, c = pending.pop(fut)
                    free.append(c)
                    results[m.name] = fut.result()
                    verdict, tail, secs = results[m.name]
                    print(f"{verdict:8} {m.name:40} {secs:6.1f}s  {tail}", flush=True)
    finally:
        for c in copies:
            shutil.rmtree(c, ignore_errors=True)

    caught = sum(1 for v, _, _ in results.values() if v == "caught")
    survived = [n for n, (v, _, _) in results.items() if v == "survived"]
    errors = [n for n, (v, _, _) in results.items() if v == "error"]
    total = len(results)
    score = caught / total if total else 0.0
    by_area: dict[str, list[int]] = {}
    for m in todo:
        v = results[m.name][0]
        tally = by_area.setdefault(m.area, [0, 0])
        tally[0] += v == "caught"
        tally[1] += 1
    print()
    for area, (c, t) in sorted(by_area.items()):
        print(f"  {area:12} {c}/{t}")
    print(f"mutation score: {caught}/{total} caught ({score:.0%}); survived: {', '.join(survived) or 'none'}")
    if stale or errors:
        print(f"error: {len(stale)} stale and {len(errors)} failing mutant run(s): fix tools/mutants.py")
        return 1
    return 0 if score >= args.min_score else 1


if __name__ == "__main__":
    sys.exit(main())
