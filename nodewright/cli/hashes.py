"""`nodewright hash` (see docs/cli.md): the ``karpenter.sh/nodepool-hash`` of each NodePool.

Thin: read the files, call :func:`nodewright.drift.hash_nodepools`, print.
"""

from __future__ import annotations

import click

from nodewright.cli._common import emit, files_option, handle_errors, output_option
from nodewright.drift import hash_documents
from nodewright.tables import format_markdown_table, format_table


@click.command("hash")
@files_option("NodePool YAML/JSON file (repeatable).")
@click.option(
    "--crd-defaults/--as-given",
    default=False,
    show_default=True,
    help="Apply the API server's CRD defaults first (expireAfter: 720h when absent), as a cluster would.",
)
@output_option(("table", "json", "yaml", "markdown"))
@handle_errors
def command(files: tuple[str, ...], crd_defaults: bool, output: str) -> None:
    """Print the karpenter.sh/nodepool-hash Karpenter would stamp on each NodePool (version v3)."""
    hashes = hash_documents(files, crd_defaults=crd_defaults)
    data = [h.as_dict() for h in hashes]
    rows = [[h.name, h.hash, h.version] for h in hashes]
    emit(
        data,
        output,
        table=lambda: format_table(["NAME", "HASH", "VERSION"], rows),
        markdown=lambda: format_markdown_table(["NodePool", "Hash", "Version"], rows),
    )
