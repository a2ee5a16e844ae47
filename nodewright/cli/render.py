"""`nodewright render userdata|osc` (see docs/cli.md)."""

from __future__ import annotations

import click

from nodewright.cli import render_osc, render_userdata


@click.group("render")
def command() -> None:
    """Render node bootstrap: EC2 user data or Gardener OperatingSystemConfigs."""


command.add_command(render_userdata.command)
command.add_command(render_osc.command)
