"""``nodewright cluster snapshot``: the live cluster as one ``List`` file (see docs/cli.md).

Thin: call :func:`nodewright.cluster.live.snapshot` (the same code path as the stack setting
``nodewright:clusterState: live``), print the List as JSON or YAML, progress on stderr.
"""

from __future__ import annotations

import json

import click

from nodewright.cli._common import dump_yaml, handle_errors


@click.group("cluster")
def group() -> None:
    """Read the state of a live cluster."""


@group.command("snapshot")
@click.option("--kubeconfig", default=None, help="Kubeconfig file [default: $KUBECONFIG or ~/.kube/config].")
@click.option("--context", default=None, help="Kube context [default: the current context].")
@click.option(
    "--page-size", default=500, show_default=True, type=click.IntRange(min=1), help="Items per API request."
)
@click.option(
    "-o",
    "--output",
    type=click.Choice(["json", "yaml"]),
    default="json",
    show_default=True,
    help="Output format.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress on stderr.")
@handle_errors
def snapshot_command(
    kubeconfig: str | None, context: str | None, page_size: int, output: str, quiet: bool
) -> None:
    """Write every kind nodewright reads (Pods, Nodes, DaemonSets, NodeClaims, NodePools, EC2NodeClasses,
    PVCs, PVs, StorageClasses, CSINodes; never Secrets) as one List, for --cluster and clusterState."""
    from nodewright.cluster.live import snapshot

    def progress(kind: str, n: int) -> None:
        click.echo(f"listing {kind}: {n}", err=True)

    doc = snapshot(
        kubeconfig=kubeconfig, context=context, page_size=page_size, progress=None if quiet else progress
    )
    counts: dict[str, int] = {}
    for item in doc["items"]:
        counts[item["kind"]] = counts.get(item["kind"], 0) + 1
    if not quiet:
        summary = ", ".join(f"{n} {k}" for k, n in counts.items()) or "nothing"
        click.echo(f"snapshot: {summary}", err=True)
    if not counts.get("Node") and not counts.get("Pod"):
        click.echo("warning: the cluster has no nodes and no pods; is this the right context?", err=True)
    click.echo(json.dumps(doc, indent=2) if output == "json" else dump_yaml(doc).rstrip("\n"))


command = group
