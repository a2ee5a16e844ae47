"""The ``nodewright`` command line (click). Thin: parse, call one core function, print.

Each command lives in its own module and is registered here; shared options, output formats and
the error contract (``error: <file>:<path>: <what>`` on stderr, exit 1; click usage errors exit 2;
never a traceback) live in :mod:`nodewright.cli._common`.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from typing import Any

import click

from nodewright.cli.examples import attach

_COMMANDS: dict[str, str] = {
    "catalog": "catalog",
    "plan": "plan",
    "hash": "hashes",
    "drift": "drift",
    "disrupt": "disrupt",
    "render": "render",
    "preview": "preview",
    "health": "health",
    "validate": "validate",
    "cluster": "cluster",
    "init": "init",
}
"""Command name -> its module under ``nodewright.cli``, imported when the command is looked up, so
a process imports only what its command uses (start-up time counts for every command)."""


class _Main(click.Group):
    """The top-level group. Run as a process (arguments from ``sys.argv``) it skips the cyclic GC
    and the interpreter's teardown, which cost a third to a half of the CPU on large inputs: the
    process ends with ``os._exit`` once stdout and stderr are flushed, with click's exit code.
    In-process callers (``CliRunner``, which passes ``args``) get click's ordinary behaviour."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            # an unknown name loads them all, so click's "did you mean" still sees every command
            for name in [cmd_name] if cmd_name in _COMMANDS else list(_COMMANDS):
                if name not in self.commands:
                    cmd = importlib.import_module(f"nodewright.cli.{_COMMANDS[name]}").command
                    self.add_command(attach(cmd, name))
        return self.commands.get(cmd_name)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs.get("args") is not None or not kwargs.get("standalone_mode", True):
            return super().main(*args, **kwargs)
        gc.disable()
        _document_owns_stdout()
        code: Any = 0
        try:
            super().main(*args, **kwargs)
        except SystemExit as exc:
            code = exc.code
        if code is not None and not isinstance(code, int):
            print(code, file=sys.stderr)
            code = 1
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (BrokenPipeError, OSError):
            pass
        os._exit(code or 0)


def _document_owns_stdout() -> None:
    """In a process run, stdout carries only what the command prints (the document): Python's
    ``sys.stdout`` keeps writing to the real stdout through a duplicate of fd 1, while fd 1 itself
    is pointed at stderr, so whatever a library writes to fd 1 from C (a solver's banner) lands on
    stderr rather than inside a JSON or YAML document."""
    old = sys.stdout
    try:
        old.flush()
        doc_fd = os.dup(1)
    except (OSError, ValueError):
        return
    try:
        os.dup2(2, 1)
    except OSError:
        os.close(doc_fd)
        return
    sys.stdout = open(  # noqa: SIM115 - lives until os._exit, flushed in main()
        doc_fd,
        "w",
        encoding=old.encoding,
        errors=old.errors,
        newline=None,
        buffering=-1,
        closefd=True,
    )
    if old.line_buffering:
        sys.stdout.reconfigure(line_buffering=True)


@click.group(
    cls=_Main,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="\b\nExamples:\n  nodewright init my-fleet\n  nodewright preview --stack dev\n"
    "\b\nShell completion (bash; zsh and fish alike, docs/cli.md):\n"
    '  eval "$(_NODEWRIGHT_COMPLETE=bash_source nodewright)"',
)
@click.version_option(package_name="nodewright", prog_name="nodewright", message="%(prog)s %(version)s")
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="No progress lines on stderr (shown only when stderr is a terminal, e.g. the first catalog build).",
)
def main(quiet: bool) -> None:
    """Karpenter NodePools, EC2NodeClasses and node bootstrap from Git, as real infrastructure."""
    from nodewright.cli._common import setup_progress

    setup_progress(quiet=quiet)
