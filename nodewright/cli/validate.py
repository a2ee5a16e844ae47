"""`nodewright validate`: check NodePools, EC2NodeClasses and cluster files the way Karpenter would.

Every problem in every file is reported (one ``error:`` line each) and the exit code is 1 when
there is any; with none it prints what it read. Useful as a fast pre-commit or CI gate.
"""

from __future__ import annotations

from collections import Counter

import click

from nodewright.api.loading import load_objects
from nodewright.cli._common import INPUT_PATH, emit, handle_errors, karpenter_version_option, output_option
from nodewright.tables import format_table


@click.command("validate")
@click.option(
    "-f", "--filename", "files", multiple=True, type=INPUT_PATH, help="YAML or JSON file (repeatable)."
)
@click.argument("more", nargs=-1, type=INPUT_PATH, metavar="[FILE]...")
@click.option(
    "--skip-foreign",
    is_flag=True,
    help="Skip documents that are not Karpenter objects (workflows, stack configs...): for pre-commit.",
)
@output_option()
@karpenter_version_option()
@handle_errors
def command(files: tuple[str, ...], more: tuple[str, ...], skip_foreign: bool, output: str) -> None:
    """Validate files against Karpenter's rules; exit 1 on any problem."""
    files = (*files, *more)
    if not files:
        raise click.UsageError("give the files to validate: -f FILE (repeatable) or FILE...")
    objs = load_objects(files, only_karpenter=skip_foreign)
    counts = Counter(doc.kind for doc in objs.documents)
    data = {"valid": True, "files": list(files), "objects": dict(sorted(counts.items()))}
    emit(data, output, table=lambda: format_table(["KIND", "COUNT"], sorted(counts.items())))
