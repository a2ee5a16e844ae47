"""Helpers for the Pulumi tests: run a stack file of tests/data/pulumi/stacks under the mock runtime.

A uniquely named module, not ``conftest``: ``from conftest import ...`` resolves to whichever
conftest.py was imported last when the whole suite runs.
At the top of tests/: pytest puts the folder of tests/conftest.py on ``sys.path`` (no ``__init__.py``,
"prepend" import mode), so tests/pulumi, tests/policy and tests/preview all import it, run alone or together.

The runner resets Pulumi's process-global runtime state before each run, so runs share a process.
"""

from __future__ import annotations

from pathlib import Path

from nodewright.preview.runner import ProgramRun, load_stack, run_program

STACKS = Path(__file__).resolve().parent / "data" / "pulumi" / "stacks"

_cache: dict[str, ProgramRun] = {}


def run_stack(name: str) -> ProgramRun:
    if name not in _cache:
        _cache[name] = run_program(load_stack(stack_file=STACKS / f"Pulumi.{name}.yaml"))
    return _cache[name]
