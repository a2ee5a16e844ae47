"""`nodewright hash` (see docs/cli.md): the drift hash of each NodePool and EC2NodeClass.

Thin: read and validate the files, call :func:`nodewright.drift.hash_documents` (defaulted object
by default, ``--as-written`` for the text as is), print.
"""

from __future__ import annotations

import click

from nodewright.cli._common import (
    emit,
    files_option,
    handle_errors,
    karpenter_options,
    load_cluster_info,
    output_option,
)
from nodewright.crd import Release
from nodewright.drift import hash_documents
from nodewright.drift.nodeclasshash import NodeClassHash
from nodewright.settings import KarpenterSettings
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
@click.option(
    "--cluster-info",
    "info_file",
    default=None,
    help="INFO.yaml whose caBundle EC2NodeClass hashes include (as Karpenter v1.12+ does).",
)
@output_option(("table", "json", "yaml", "markdown"))
@karpenter_options()
@handle_errors
def command(
    files: tuple[str, ...],
    crd_defaults: bool,
    as_written: bool,
    info_file: str | None,
    output: str,
    release: Release,
    settings: KarpenterSettings,
) -> None:
    """Print the hash Karpenter would stamp on each NodePool and EC2NodeClass (the release's versions).

    The files are validated against the CRDs; the hash is of the object as the cluster stores it
    (CRD defaults applied), as Karpenter computes it. --as-written hashes the text as is.
    EC2NodeClass hashes include the caBundle of --cluster-info.
    """
    if crd_defaults and as_written:
        raise click.UsageError("--crd-defaults and --as-written contradict each other; give one")
    ca_bundle = load_cluster_info(info_file).ca_bundle if info_file else None
    hashes = hash_documents(files, as_written=as_written, ca_bundle=ca_bundle, release=release)
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
