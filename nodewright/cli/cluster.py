"""``nodewright cluster snapshot``: the live cluster as one ``List`` file (see docs/cli.md).

Thin: call :func:`nodewright.cluster.live.snapshot` (the same code path as the stack setting
``nodewright:clusterState: live``), print the List as JSON or YAML, progress on stderr.
"""

from __future__ import annotations

import json
import re
from typing import Any

import click

from nodewright.cli._common import handle_errors
from nodewright.reader import dump_yaml

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


class Duration(click.ParamType[float]):
    """Seconds, or a number with a unit as kubectl takes it (``500ms``, ``30s``, ``5m``, ``1h``); > 0."""

    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, int | float):
            seconds = float(value)
        else:
            match = _DURATION.match(str(value))
            if match is None:
                self.fail(f"{value!r} is not a duration such as 30s, 5m or 1.5", param, ctx)
            seconds = float(match.group(1)) * _UNIT[match.group(2)]
        if seconds <= 0:
            self.fail(f"{value!r}: a duration must be above 0", param, ctx)
        return seconds


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
@click.option(
    "--request-timeout",
    type=Duration(),
    default="30s",
    show_default=True,
    help="Connect timeout, and the longest silence within one response (a silent server is given up on).",
)
@click.option(
    "--timeout",
    type=Duration(),
    default="5m",
    show_default=True,
    help="Deadline of the whole read: every kind, page and retry.",
)
@click.option(
    "--retries",
    default=4,
    show_default=True,
    type=click.IntRange(min=0, max=20),
    help="Retries of a request on 429, 5xx or a connection reset (exponential backoff, Retry-After honoured).",
)
@click.option(
    "--karpenter-namespace",
    default=None,
    help="Namespace of the Karpenter controller Deployment [default: kube-system, then karpenter].",
)
@click.option(
    "--karpenter-deployment",
    default=None,
    help="Name of the Karpenter controller Deployment [default: karpenter].",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress on stderr.")
@handle_errors
def snapshot_command(
    kubeconfig: str | None,
    context: str | None,
    page_size: int,
    output: str,
    request_timeout: float,
    timeout: float,
    retries: int,
    karpenter_namespace: str | None,
    karpenter_deployment: str | None,
    quiet: bool,
) -> None:
    """Write every kind nodewright reads (Pods, Nodes, workloads, PDBs, Karpenter's kinds, storage; never
    Secrets) and the Karpenter controller's settings as one List, for --cluster and clusterState."""
    from nodewright.cluster.live import snapshot
    from nodewright.cluster.transport import Limits

    def progress(kind: str, n: int) -> None:
        click.echo(f"listing {kind}: {n}", err=True)

    doc = snapshot(
        kubeconfig=kubeconfig,
        context=context,
        page_size=page_size,
        progress=None if quiet else progress,
        limits=Limits(request_timeout=request_timeout, timeout=timeout, retries=retries),
        karpenter_namespace=karpenter_namespace,
        karpenter_deployment=karpenter_deployment,
    )
    counts: dict[str, int] = {}
    for item in doc["items"][:-1]:  # the last item is the ClusterSnapshot record
        counts[item["kind"]] = counts.get(item["kind"], 0) + 1
    if not quiet:
        summary = ", ".join(f"{n} {k}" for k, n in counts.items()) or "nothing"
        click.echo(f"snapshot: {summary}", err=True)
    if not counts.get("Node") and not counts.get("Pod"):
        click.echo("warning: the cluster has no nodes and no pods; is this the right context?", err=True)
    click.echo(json.dumps(doc, indent=2) if output == "json" else dump_yaml(doc).rstrip("\n"))


command = group
