"""`nodewright hash` (see docs/cli.md): the ``karpenter.sh/nodepool-hash`` of each NodePool.

Thin: read and validate the files, call :func:`nodewright.drift.hash_documents` (defaulted object
by default, ``--as-written`` for the text as is), print.
"""

from __future__ import annotations

import click

from nodewright.cli._common import emit, files_option, handle_errors, karpenter_version_option, output_option
from nodewright.drift import hash_documents
from nodewright.tables import format_markdown_table, format_table


@click.command("hash")
@files_option("NodePool YAML/JSON file (repeatable).")
@click.option(
    "--crd-defaults",
    "crd_defaults",
    is_flag=True,
    default=False,
    help="Accepted for compatibility: hashing the defaulted object is now the default.",
)
@click.option(
    "--as-written",
    "--as-given",
    "as_written",
    is_flag=True,
    default=False,
    help="Hash the NodePool exactly as written, without the CRD defaults the API server applies "
    "(not what Karpenter stamps).",
)
@output_option(("table", "json", "yaml", "markdown"))
@karpenter_version_option()
@handle_errors
def command(files: tuple[str, ...], crd_defaults: bool, as_written: bool, output: str) -> None:
    """Print the karpenter.sh/nodepool-hash Karpenter would stamp on each NodePool (version v3).

    The files are validated against the CRDs; the hash is of the object as the cluster stores it
    (CRD defaults applied), as Karpenter computes it. --as-written hashes the text as is.
    """
    if crd_defaults and as_written:
        raise click.UsageError("--crd-defaults and --as-written contradict each other; give one")
    hashes = hash_documents(files, as_written=as_written)
    data = [h.as_dict() for h in hashes]
    rows = [[h.name, h.hash, h.version] for h in hashes]
    emit(
        data,
        output,
        table=lambda: format_table(["NAME", "HASH", "VERSION"], rows),
        markdown=lambda: format_markdown_table(["NodePool", "Hash", "Version"], rows),
    )
