"""Layering, enforced: the core never imports pulumi or click; the API layer imports no other layer.

(The kopf habit: a stated public surface and layers checked in CI, here by reading imports.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "nodewright"


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "nodewright":
                found.update(f"nodewright.{alias.name}" for alias in node.names)
            else:
                found.add(node.module)
    return found


def modules(sub: str = "") -> list[Path]:
    return sorted((PKG / sub).rglob("*.py"))


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PKG)))
def test_core_never_imports_pulumi_or_click(path: Path) -> None:
    rel = path.relative_to(PKG).parts
    bad = set()
    for name in imports_of(path):
        top = name.split(".")[0]
        if top == "click" and rel[0] != "cli":
            bad.add(name)
        if top.startswith("pulumi") and rel[0] != "preview":
            bad.add(name)
    assert not bad, (
        f"{path.relative_to(PKG)} imports {sorted(bad)}: only nodewright.cli may import click, only nodewright.preview pulumi"
    )


@pytest.mark.parametrize("path", modules("api"), ids=lambda p: str(p.relative_to(PKG)))
def test_api_layer_imports_no_higher_layer(path: Path) -> None:
    allowed = {
        "nodewright.api",
        "nodewright.crd",
        "nodewright.errors",
        "nodewright.labels",
        "nodewright.algebra.quantity",
    }
    for name in imports_of(path):
        if name.startswith("nodewright"):
            assert any(name == a or name.startswith(a + ".") for a in allowed), f"{path.name} imports {name}"


@pytest.mark.parametrize("path", modules("crd"), ids=lambda p: str(p.relative_to(PKG)))
def test_crd_layer_is_below_api(path: Path) -> None:
    """nodewright.crd (the shipped CRDs) sits under the API models: it knows no model, file or CLI."""
    allowed = {"nodewright.crd", "nodewright.errors", "nodewright.labels"}
    for name in imports_of(path):
        if name.startswith("nodewright"):
            assert any(name == a or name.startswith(a + ".") for a in allowed), f"{path.name} imports {name}"
