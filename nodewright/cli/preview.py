"""``nodewright preview``: what ``pulumi preview --policy-pack policies`` would show, offline.

Thin: parse options, call :func:`nodewright.preview.preview`, print JSON / table / the
pull-request markdown, exit 1 on a mandatory policy violation (see docs/cli.md).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from nodewright import reader
from nodewright.cli._common import (
    at_option,
    emit,
    handle_errors,
    karpenter_options,
    output_option,
    resolve_at,
)
from nodewright.crd import KarpenterChoice
from nodewright.errors import InputError


def _read_base(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise InputError(
            "no such base preview file; produce it with `nodewright preview -o json`", file=str(path)
        )
    data = reader.load_json(reader.read_text(path), file=str(path))
    if not isinstance(data, dict) or "resources" not in data:
        raise InputError("not a `nodewright preview -o json` document (no resources)", file=str(path))
    return data


@click.command("preview")
@click.option(
    "--stack", "stack", default=None, help="Stack name: reads stacks/Pulumi.<stack>.yaml [default: dev]."
)
@click.option(
    "--stack-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="A Pulumi.<stack>.yaml file instead of --stack.",
)
@click.option(
    "--project-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The directory holding Pulumi.yaml [default: the nearest at or above the working directory].",
)
@click.option(
    "--base",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="`nodewright preview -o json` of the base branch: the markdown diffs user data against it, and "
    "each NodePool/EC2NodeClass CR is checked as an update of the base's (policy karpenter-crd-update-valid).",
)
@click.option(
    "--policy-pack-config",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Policy pack config JSON, as `pulumi preview --policy-pack-config`.",
)
@click.option(
    "--cluster-state",
    default=None,
    help="Override the stack's nodewright:clusterState: `live` (kubeconfig) or a state file/directory.",
)
@at_option("the drift rollout (its disruption budgets, scheduled ones too)")
@output_option(("table", "json", "markdown"), default="table")
@karpenter_options(stack=True)
@handle_errors
def command(
    stack: str | None,
    stack_file: Path | None,
    project_dir: Path | None,
    base: Path | None,
    policy_pack_config: Path | None,
    cluster_state: str | None,
    at: str | None,
    output: str,
    karpenter: KarpenterChoice,
) -> None:
    """Run the Pulumi program offline (mock runtime) with the policy pack; exit 1 on a mandatory violation."""
    if stack and stack_file:
        raise click.UsageError("give --stack or --stack-file, not both")
    # imported on use, not to hide a layer (lint-imports sees these too): pulumi is slow to import
    # and no other command should pay for it
    from nodewright.policy import load_config_file
    from nodewright.preview import preview
    from nodewright.preview.report import render_markdown, render_table

    cfg = load_config_file(policy_pack_config) if policy_pack_config else None
    base_doc = _read_base(base) if base else None
    result = preview(
        stack=stack if stack_file is None else None,
        stack_file=stack_file,
        project_dir=project_dir,
        policy_config=cfg,
        at=resolve_at(at),
        cluster_state=cluster_state,
        base=base,
        karpenter=karpenter,
    )
    doc = result.document
    if base_doc is not None and output == "json":
        from nodewright.preview.diff import diff_documents

        doc = {**doc, "changes": [c.as_dict() for c in diff_documents(base_doc, doc) if c.op != "same"]}
    emit(
        doc,
        output,
        table=lambda: render_table(doc),
        markdown=lambda: render_markdown(doc, base=base_doc).rstrip("\n"),
    )
    if result.mandatory:
        sys.exit(1)
