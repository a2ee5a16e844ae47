"""Layering, enforced: the import-linter contracts of pyproject.toml hold, and the docs say what they say.

The contracts (``[tool.importlinter]``): the core imports neither click nor pulumi, even
transitively (``nodewright.cli`` and ``nodewright.preview`` excepted, and only the preview imports
pulumi itself); the preview does not import the CLI; the core never imports its adapters
(``nodewright_pulumi``: program, components, policy pack) nor does that adapter import the CLI; and the declared layers, each importing only those below it.
Function-level imports count, so a lazy import cannot hide a cycle. ``make lint`` runs the same
check with ``lint-imports``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _config() -> dict[str, object]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    linter = data["tool"]["importlinter"]
    assert isinstance(linter, dict)
    return linter


def test_import_linter_contracts_hold() -> None:
    """Runs ``lint-imports`` in its own process: it reconfigures logging (disabling existing loggers)."""
    pytest.importorskip("importlinter.cli")
    code = (
        "import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "BROKEN" not in done.stdout


def test_contracts_ignore_nothing() -> None:
    """No ``ignore_imports`` escape hatch: a contract that needs one is a design problem to fix."""
    for contract in _config()["contracts"]:  # type: ignore[attr-defined]
        assert "ignore_imports" not in contract, contract["id"]


def test_readme_architecture_lists_the_declared_layers() -> None:
    """README's architecture picture names every layer of the contract, top to bottom, in order."""
    layers = next(c for c in _config()["contracts"] if c["id"] == "layers")["layers"]  # type: ignore[attr-defined]
    readme = (ROOT / "README.md").read_text()
    picture = readme.split("## Architecture", 1)[1].split("```", 2)[1]
    positions = []
    for layer in layers:
        names = [n.strip() for n in layer.split("|")]
        for name in names:
            assert f"nodewright.{name} " in picture, f"README lacks layer nodewright.{name}"
        positions.append(min(picture.index(f"nodewright.{name} ") for name in names))
    assert positions == sorted(positions), "README's layers are not in the contract's order"


def test_every_core_module_has_a_layer() -> None:
    """A new top-level module or package of ``nodewright`` is placed in the layers contract (and so
    in the no-click-no-pulumi contract and the README picture), never left outside the check."""
    layers = next(c for c in _config()["contracts"] if c["id"] == "layers")["layers"]  # type: ignore[attr-defined]
    declared = {n.strip() for layer in layers for n in layer.split("|")} | {"cli"}
    core = ROOT / "nodewright"
    present = {
        p.stem if p.is_file() else p.name
        for p in core.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p.is_dir() and (p / "__init__.py").exists())
    }
    assert present - declared - {"data"} == set(), "modules outside the layers contract"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module == "nodewright":
            found.update(f"nodewright.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


@pytest.mark.parametrize(
    "path", sorted((ROOT / "nodewright_pulumi" / "components").glob("*.py")), ids=lambda p: p.name
)
def test_components_only_adapt(path: Path) -> None:
    """Components read the core's stack plan; they import no parser, renderer or loader themselves."""
    allowed = ("nodewright.stack", "nodewright.labels", "nodewright.policy.resources", "nodewright.errors")
    allowed_adapter = "nodewright_pulumi.components."
    for name in _imports(path):
        if name.startswith("nodewright") and not name.startswith(allowed_adapter):
            assert name.startswith(allowed), f"nodewright_pulumi/components/{path.name} imports {name}"


def test_no_reexport_shadows_a_submodule() -> None:
    """``from pkg.mod import mod`` in ``pkg/__init__`` makes ``pkg.mod`` the function, not the module
    (``nodewright.drift.nodepool_hash`` was both); each package keeps the names apart."""
    import importlib
    import pkgutil
    import types

    import nodewright

    clashes = []
    for info in pkgutil.walk_packages(nodewright.__path__, "nodewright."):
        if not info.ispkg or info.name.startswith("nodewright.preview"):
            continue
        pkg = importlib.import_module(info.name)
        for sub in pkgutil.iter_modules(pkg.__path__):
            value = pkg.__dict__.get(sub.name)
            if value is not None and not isinstance(value, types.ModuleType):
                clashes.append(f"{info.name}.{sub.name}")
    assert not clashes
