"""`nodewright preview` (see ../shared/spec/cli.md)."""

from __future__ import annotations

import click

from nodewright.cli._common import handle_errors
from nodewright.errors import NodewrightError


@click.command("preview")
@handle_errors
def command() -> None:
    """Not yet implemented."""
    raise NodewrightError("nodewright preview is not implemented yet")
