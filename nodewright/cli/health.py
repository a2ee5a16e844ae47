"""`nodewright health` (see ../shared/spec/cli.md)."""

from __future__ import annotations

import click

from nodewright.cli._common import handle_errors
from nodewright.errors import NodewrightError


@click.command("health")
@handle_errors
def command() -> None:
    """Not yet implemented."""
    raise NodewrightError("nodewright health is not implemented yet")
