"""`nodewright health`: NodeRegistrationHealthy, verified NodeClasses and pending pods per NodePool.

Thin: load the cluster state, call :func:`nodewright.health.nodepool_health`, print.
"""

from __future__ import annotations

from datetime import datetime

import click

from nodewright.cli._common import (
    INPUT_PATH,
    cluster_option,
    emit,
    handle_errors,
    karpenter_version_option,
    output_option,
)
from nodewright.drift.detect import parse_time
from nodewright.drift.inputs import read_kind
from nodewright.errors import InputError
from nodewright.health import HealthReport, nodepool_health, render_prometheus
from nodewright.settings import resolve
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
@click.option("--now", default=None, help="Evaluation time (RFC 3339); default: the current time.")
@click.option(
    "--feature-gates",
    "feature_gates",
    default=None,
    help="Karpenter feature gates (e.g. NodeRepair=true: nodes with broken conditions are repaired).",
)
@output_option(("table", "json", "yaml", "markdown", "prometheus"))
@karpenter_version_option()
@handle_errors
def command(
    cluster: str, files: tuple[str, ...], now: str | None, feature_gates: str | None, output: str
) -> None:
    """Show per NodePool the NodeRegistrationHealthy condition, its buffer, verified NodeClasses and pending pods."""
    when: datetime | None = None
    if now is not None:
        when = parse_time(now)
        if when is None:
            raise InputError(
                f"--now {now!r} is not an RFC 3339 timestamp such as 2024-05-01T12:00:00Z", file="<args>"
            )
    nodeclasses = read_kind(files, "EC2NodeClass") if files else []
    gates = resolve(flags={"feature_gates": feature_gates}).feature_gates
    report = nodepool_health(cluster, now=when, nodeclasses=nodeclasses, feature_gates=gates)
    if output == "prometheus":
        click.echo(render_prometheus(report), nl=False)
        return
    emit(
        report.as_dict(),
        output,
        table=lambda: "\n".join(
            [format_table(_HEADERS, _rows(report)), *_repair_lines(report, markdown=False)]
        ),
        markdown=lambda: "\n".join(
            [
                format_markdown_table([h.title() for h in _HEADERS], _rows(report)),
                *_repair_lines(report, markdown=True),
            ]
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
