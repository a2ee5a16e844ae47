"""`nodewright validate`: check NodePools, EC2NodeClasses and cluster files the way Karpenter would.

Every problem in every file is reported (one ``error:`` line each) and the exit code is 1 when
there is any; with none it prints what it read. Useful as a fast pre-commit or CI gate.
"""

from __future__ import annotations

from collections import Counter

import click

from nodewright.api.loading import checked_kind, load_objects
from nodewright.cli._common import emit, files_option, handle_errors, karpenter_version_option, output_option
from nodewright.tables import format_table


@click.command("validate")
@files_option("YAML or JSON file (repeatable).")
@output_option()
@karpenter_version_option()
@handle_errors
def command(files: tuple[str, ...], output: str) -> None:
    """Validate files against Karpenter's rules; exit 1 on any problem."""
    objs = load_objects(files)
    counts = Counter(doc.kind for doc in objs.documents if checked_kind(doc.kind))
    skipped = Counter(doc.kind for doc in objs.documents if not checked_kind(doc.kind))
    data: dict[str, object] = {"valid": True, "files": list(files), "objects": dict(sorted(counts.items()))}
    if skipped:
        data["notValidated"] = dict(sorted(skipped.items()))
    rows = [[k, n, "validated"] for k, n in sorted(counts.items())]
    rows += [[k, n, "not validated"] for k, n in sorted(skipped.items())]
    emit(data, output, table=lambda: format_table(["KIND", "COUNT", "CHECK"], rows))
