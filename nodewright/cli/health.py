"""`nodewright health`: NodeRegistrationHealthy, verified NodeClasses and pending pods per NodePool.

Thin: load the cluster state, call :func:`nodewright.health.nodepool_health`, print.
"""

from __future__ import annotations

import click

from nodewright.cli._common import (
    INPUT_PATH,
    at_option,
    cluster_option,
    emit,
    format_at,
    handle_errors,
    karpenter_options,
    output_option,
    resolve_at,
    settings_with_snapshot,
)
from nodewright.crd import Release
from nodewright.drift.inputs import read_kind
from nodewright.health import HealthReport, nodepool_health, render_prometheus
from nodewright.health.derive import read_cluster
from nodewright.settings import KarpenterSettings
from nodewright.tables import format_markdown_table, format_table


def _rows(report: HealthReport) -> list[list[object]]:
    return [
        [
            p.name,
            p.condition.status,
            p.condition.reason,
            "".join("+" if b else "-" for b in p.buffer) or "(empty)",
            p.nodeclass,
            "yes" if p.verified else "no",
            p.degraded.status,
            len(p.pending_pods),
            p.condition.message,
        ]
        for p in report.pools
    ]


_HEADERS = [
    "NODEPOOL",
    "HEALTHY",
    "REASON",
    "BUFFER",
    "NODECLASS",
    "VERIFIED",
    "DEGRADED",
    "PENDING",
    "MESSAGE",
]


@click.command("health")
@cluster_option()
@click.option(
    "-f",
    "--filename",
    "files",
    multiple=True,
    type=INPUT_PATH,
    help="EC2NodeClass files whose generation/uid the cluster state does not list (repeatable).",
)
@at_option("the registration timeouts and the condition's reset")
@output_option(("table", "json", "yaml", "markdown", "prometheus"))
@karpenter_options()
@handle_errors
def command(
    cluster: str,
    files: tuple[str, ...],
    at: str | None,
    output: str,
    release: Release,
    settings: KarpenterSettings,
) -> None:
    """Show per NodePool the NodeRegistrationHealthy condition, its buffer, verified NodeClasses and pending pods."""
    when = resolve_at(at)
    nodeclasses = read_kind(files, "EC2NodeClass", release=release) if files else []
    state = read_cluster(cluster, release)
    settings = settings_with_snapshot(settings, release, state, where=cluster)
    report = nodepool_health(
        state, now=when, nodeclasses=nodeclasses, release=release, feature_gates=settings.feature_gates
    )
    if output == "prometheus":
        click.echo(render_prometheus(report), nl=False)
        return
    emit(
        report.as_dict(),
        output,
        table=lambda: (
            "\n".join([format_table(_HEADERS, _rows(report)), *_repair_lines(report, markdown=False)])
            + f"\nat: {format_at(report.now)}"
        ),
        markdown=lambda: (
            "\n".join(
                [
                    format_markdown_table([h.title() for h in _HEADERS], _rows(report)),
                    *_repair_lines(report, markdown=True),
                ]
            )
            + f"\n\nEvaluated at {format_at(report.now)}."
        ),
    )


_REPAIR_HEADERS = ["NODE", "NODECLAIM", "NODEPOOL", "CONDITION", "SINCE", "ELIGIBLE AT", "STATE", "REASON"]


def _repair_lines(report: HealthReport, *, markdown: bool) -> list[str]:
    if not report.repairs:
        return []
    rows = [
        [
            r.node,
            r.node_claim,
            r.node_pool or "-",
            r.condition,
            *(d.get(k) or "-" for k in ("since", "eligibleAt")),
            r.state,
            r.reason,
        ]
        for r, d in ((r, r.as_dict()) for r in report.repairs)
    ]
    if markdown:
        return ["", format_markdown_table([h.title() for h in _REPAIR_HEADERS], rows)]
    return ["", format_table(_REPAIR_HEADERS, rows)]
