"""Installs follow ``requirements-lock.txt`` (the Makefile passes it to pip as constraints), so a new
release of a dependency cannot break a green main. The lock must cover every dependency the project
declares, at a version its specifier admits: a dependency added without ``make lock`` fails here."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent


def _locked() -> dict[str, str]:
    out: dict[str, str] = {}
    for line in (ROOT / "requirements-lock.txt").read_text().splitlines():
        m = re.match(r"([A-Za-z0-9_.\-]+)==([^\s;]+)", line)
        if m:
            out[re.sub(r"[-_.]+", "-", m.group(1)).lower()] = m.group(2)
    return out


def _declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = [Requirement(r) for r in project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        reqs += [Requirement(r) for r in extra]
    return reqs


def test_every_declared_dependency_is_locked_within_its_specifier() -> None:
    locked = _locked()
    for req in _declared():
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        assert name in locked, f"{req.name} is not in requirements-lock.txt: run `make lock`"
        assert req.specifier.contains(locked[name], prereleases=True), (
            f"{req.name}=={locked[name]} in the lock is outside {req.specifier}: run `make lock`"
        )


def test_the_makefile_installs_through_the_lock() -> None:
    makefile = (ROOT / "Makefile").read_text()
    installs = [line for line in makefile.splitlines() if "pip install" in line and "-e '." in line]
    assert installs and all("-c $(LOCK)" in line for line in installs)
