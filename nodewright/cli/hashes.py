"""`nodewright hash` (see docs/cli.md): the drift hash of each NodePool and EC2NodeClass.

Thin: read the files, call :func:`nodewright.drift.hash_nodepools`, print.
"""

from __future__ import annotations

import click

from nodewright.cli._common import emit, files_option, handle_errors, load_cluster_info, output_option
from nodewright.drift import hash_documents
from nodewright.drift.nodeclasshash import NodeClassHash
from nodewright.tables import format_markdown_table, format_table


@click.command("hash")
@files_option("NodePool YAML/JSON file (repeatable).")
@click.option(
    "--crd-defaults/--as-given",
    default=False,
    show_default=True,
    help="Apply the API server's CRD defaults first (expireAfter: 720h when absent), as a cluster would.",
)
@click.option(
    "--cluster-info",
    "info_file",
    default=None,
    help="INFO.yaml whose caBundle EC2NodeClass hashes include (as Karpenter v1.12+ does).",
)
@output_option(("table", "json", "yaml", "markdown"))
@handle_errors
def command(files: tuple[str, ...], crd_defaults: bool, info_file: str | None, output: str) -> None:
    """Print the hash Karpenter would stamp on each NodePool (v3) and EC2NodeClass (v5)."""
    ca_bundle = load_cluster_info(info_file).ca_bundle if info_file else None
    hashes = hash_documents(files, crd_defaults=crd_defaults, ca_bundle=ca_bundle)
    data = [h.as_dict() for h in hashes]
    with_kind = any(isinstance(h, NodeClassHash) for h in hashes)
    kind = {True: "EC2NodeClass", False: "NodePool"}
    rows = [
        [h.name, h.hash, h.version, *([kind[isinstance(h, NodeClassHash)]] if with_kind else [])]
        for h in hashes
    ]
    headers = ["NAME", "HASH", "VERSION", *(["KIND"] if with_kind else [])]
    emit(
        data,
        output,
        table=lambda: format_table(headers, rows),
        markdown=lambda: format_markdown_table(
            ["Name", "Hash", "Version", "Kind"] if with_kind else ["NodePool", "Hash", "Version"], rows
        ),
    )
