"""`nodewright validate`: check NodePools, EC2NodeClasses and cluster files the way Karpenter would.

Every problem in every file is reported (one ``error:`` line each) and the exit code is 1 when
there is any; with none it prints what it read. Useful as a fast pre-commit or CI gate.
"""

from __future__ import annotations

from collections import Counter

import click

from nodewright.api.loading import load_objects
from nodewright.cli._common import emit, files_option, handle_errors, karpenter_options, output_option
from nodewright.crd import Release
from nodewright.settings import KarpenterSettings
from nodewright.tables import format_table


@click.command("validate")
@files_option("YAML or JSON file (repeatable).")
@output_option()
@karpenter_options()
@handle_errors
def command(files: tuple[str, ...], output: str, release: Release, settings: KarpenterSettings) -> None:
    """Validate files against Karpenter's rules; exit 1 on any problem."""
    objs = load_objects(files, release=release)
    counts = Counter(doc.kind for doc in objs.documents)
    data = {"valid": True, "files": list(files), "objects": dict(sorted(counts.items()))}
    emit(data, output, table=lambda: format_table(["KIND", "COUNT"], sorted(counts.items())))
