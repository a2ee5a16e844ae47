"""`nodewright validate`: check NodePools, EC2NodeClasses and cluster files the way Karpenter would.

Every problem in every file is reported (one ``error:`` line each) and the exit code is 1 when
there is any; with none it prints what it read. Useful as a fast pre-commit or CI gate. With
``--base`` (the files as they are in the cluster, e.g. the base branch's), each object that has a
base is checked as an update of it (transition rules, ratcheting, immutable fields).
"""

from __future__ import annotations

from collections import Counter

import click

from nodewright.api.loading import checked_kind, load_objects
from nodewright.cli._common import INPUT_PATH, emit, handle_errors, karpenter_options, output_option
from nodewright.crd import Release
from nodewright.settings import KarpenterSettings
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
@click.option(
    "--base",
    "base",
    multiple=True,
    type=INPUT_PATH,
    help="The objects as they are in the cluster (e.g. the base branch's files; repeatable): an object "
    "of -f with the same kind and name is validated as an update of it.",
)
@output_option()
@karpenter_options()
@handle_errors
def command(
    files: tuple[str, ...],
    more: tuple[str, ...],
    skip_foreign: bool,
    base: tuple[str, ...],
    output: str,
    release: Release,
    settings: KarpenterSettings,
) -> None:
    """Validate files against Karpenter's rules; exit 1 on any problem."""
    files = (*files, *more)
    if not files:
        raise click.UsageError("give the files to validate: -f FILE (repeatable) or FILE...")
    objs = load_objects(files, only_karpenter=skip_foreign, base=base or None, release=release)
    counts = Counter(doc.kind for doc in objs.documents if checked_kind(doc.kind))
    skipped = Counter(doc.kind for doc in objs.documents if not checked_kind(doc.kind))
    data: dict[str, object] = {"valid": True, "files": list(files), "objects": dict(sorted(counts.items()))}
    if skipped:
        data["notValidated"] = dict(sorted(skipped.items()))
    if base:
        data["base"] = list(base)
        data["changes"] = {op: objs.changes.get(op, []) for op in ("create", "update", "delete")}
    rows: list[tuple[str, int, str]] = [(k, n, "validated") for k, n in sorted(counts.items())]
    rows += [(k, n, "not validated") for k, n in sorted(skipped.items())]
    if base:
        rows += [(f"({op})", len(names), "") for op, names in sorted(objs.changes.items())]
    emit(data, output, table=lambda: format_table(["KIND", "COUNT", "CHECK"], rows))
