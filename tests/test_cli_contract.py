"""docs/cli.md is the contract of the program as it is: every command and every option the click
tree declares appears in the command's section, so an option cannot be added undocumented."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from nodewright.cli import main

CONTRACT = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def _commands(cmd: click.Command, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    if isinstance(cmd, click.Group):
        # through list_commands/get_command: the CLI imports a command's module when it is looked up
        ctx = click.Context(cmd)
        subs = [(name, cmd.get_command(ctx, name)) for name in cmd.list_commands(ctx)]
        return [c for name, sub in subs if sub is not None for c in _commands(sub, (*path, name))]
    return [(path, cmd)]


COMMANDS = _commands(main)


def test_the_walk_sees_every_command() -> None:
    """The parametrized check below would pass vacuously on an empty walk."""
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"validate", "plan", "hash", "drift", "preview", "cluster snapshot", "render userdata"} <= names


def _section(path: tuple[str, ...]) -> str:
    text = CONTRACT.read_text()
    for n in range(len(path), 0, -1):
        heading = "## `nodewright " + " ".join(path[:n]) + "`"
        if heading in text:
            body = text.split(heading, 1)[1]
            return re.split(r"^## ", body, flags=re.M)[0]
    raise AssertionError(f"docs/cli.md has no section for nodewright {' '.join(path)}")


@pytest.mark.parametrize(("path", "cmd"), COMMANDS, ids=lambda v: " ".join(v) if isinstance(v, tuple) else "")
def test_every_option_is_in_the_contract(path: tuple[str, ...], cmd: click.Command) -> None:
    section = _section(path)
    assert "nodewright " + " ".join(path) in section
    for param in cmd.params:
        if not isinstance(param, click.Option) or param.hidden:
            continue
        # -f or --filename: either spelling documents an option; a --x/--no-x pair needs both
        for spellings in (param.opts, *([o] for o in param.secondary_opts)):
            assert any(re.search(r"(?<![\w-])" + re.escape(o) + r"\b", section) for o in spellings), (
                f"docs/cli.md: nodewright {' '.join(path)} lacks {'/'.join(spellings)}"
            )
        if isinstance(param.type, click.Choice):
            for choice in param.type.choices:
                assert str(choice) in section, (
                    f"docs/cli.md: {param.opts[0]} of {' '.join(path)} lacks {choice!r}"
                )


def test_the_readme_points_to_the_contract() -> None:
    assert "docs/cli.md" in (CONTRACT.parents[1] / "README.md").read_text()


@pytest.mark.parametrize(("path", "cmd"), COMMANDS, ids=lambda v: " ".join(v) if isinstance(v, tuple) else "")
def test_every_command_help_has_an_example_that_parses(
    path: tuple[str, ...], cmd: click.Command, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each command's --help ends with examples (nodewright.cli.examples); each parses with the
    command's own options, from the repository root (the examples use its files)."""
    import shlex

    monkeypatch.chdir(CONTRACT.parents[1])
    epilog = cmd.epilog or ""
    name = "nodewright " + " ".join(path)
    lines = [line.strip() for line in epilog.splitlines() if line.strip().startswith(name)]
    assert lines, f"nodewright {' '.join(path)} --help has no example: add one to nodewright/cli/examples.py"
    for line in lines:
        words = shlex.split(line.split(" > ", 1)[0].split(" && ", 1)[0])
        cmd.make_context(name, words[1 + len(path) :])
