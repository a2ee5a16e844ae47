"""The ``nodewright`` command line (click). Thin: parse, call one core function, print.

Each command lives in its own module and is registered here; shared options, output formats and
the error contract (``error: <file>:<path>: <what>`` on stderr, exit 1; click usage errors exit 2;
never a traceback) live in :mod:`nodewright.cli._common`.
"""

from __future__ import annotations

import click

from nodewright import __version__
from nodewright.cli import catalog, cluster, drift, hashes, health, plan, preview, render, validate


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nodewright")
def main() -> None:
    """Karpenter NodePools, EC2NodeClasses and node bootstrap from Git, as real infrastructure."""


for _module in (catalog, plan, hashes, drift, render, preview, health, validate, cluster):
    main.add_command(_module.command)
