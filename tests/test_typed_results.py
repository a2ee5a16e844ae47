"""Commands only format typed results of one core call: each command's core call returns a frozen
dataclass with one ``as_dict()`` (the ``-o json|yaml`` document), and the command modules read
those results by attribute, never by a document key.

A module not there yet would be listed in ``_PENDING`` (now empty); the list only shrinks (the
test fails once a pending module complies).
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from nodewright.costplan.strategy import plan_cost
from nodewright.disruption import forecast
from nodewright.drift import drift_impact_files
from nodewright.health import nodepool_health
from nodewright.osc import render_osc
from nodewright.preview import preview
from nodewright.scheduling.plan import plan
from nodewright.userdata import render_report

ROOT = Path(__file__).resolve().parents[1]
CLI = ROOT / "nodewright" / "cli"

CORE_CALLS: dict[str, Callable[..., Any]] = {
    "plan": plan,
    "plan --strategy cost": plan_cost,
    "disrupt": forecast,
    "drift": drift_impact_files,
    "health": nodepool_health,
    "preview": preview,
    "render userdata": render_report,
    "render osc": render_osc,
}

# modules that format a typed result (no document-key reads), and those not there yet
_TYPED = (
    "plan.py",
    "disrupt.py",
    "drift.py",
    "health.py",
    "preview.py",
    "render_userdata.py",
    "render_osc.py",
)
_PENDING: frozenset[str] = frozenset()


@pytest.mark.parametrize("command", sorted(CORE_CALLS))
def test_the_core_call_returns_a_frozen_typed_result(command: str) -> None:
    fn = CORE_CALLS[command]
    result = eval(fn.__annotations__["return"], fn.__globals__)  # the return annotation only
    assert dataclasses.is_dataclass(result), f"{command}: {result} is not a dataclass"
    assert result.__dataclass_params__.frozen, f"{command}: {result.__name__} is not frozen"  # type: ignore[attr-defined]
    if command != "preview":  # the preview's result carries its report, which has the as_dict
        assert callable(getattr(result, "as_dict", None)), f"{command}: {result.__name__} has no as_dict()"


def _document_key_reads(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, str)
    ]


@pytest.mark.parametrize("module", _TYPED)
def test_commands_read_their_result_by_attribute(module: str) -> None:
    assert _document_key_reads(CLI / module) == [], f"nodewright/cli/{module} reads a document by key"


def test_the_pending_modules_still_read_documents_by_key() -> None:
    done = sorted(m for m in _PENDING if not _document_key_reads(CLI / m))
    assert not done, f"move {done} from _PENDING to _TYPED"


def test_plan_parts_are_frozen_with_slots() -> None:
    from nodewright.scheduling import plandoc

    parts = [
        obj
        for obj in vars(plandoc).values()
        if isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__ == plandoc.__name__
    ]
    assert len(parts) >= 8
    for part in parts:
        assert part.__dataclass_params__.frozen and "__slots__" in vars(part), part.__name__  # type: ignore[attr-defined]
