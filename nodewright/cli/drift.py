"""`nodewright drift` (see docs/cli.md): NodeClaims Karpenter would mark Drifted.

Thin: read the files and the cluster state, call :func:`nodewright.drift.drift_impact_files`, print.
"""

from __future__ import annotations

from datetime import datetime

import click

from nodewright.cli._common import emit, files_option, handle_errors, load_cluster_info, output_option
from nodewright.drift import DriftReport, drift_impact_files
from nodewright.drift.detect import DefaultsMode, parse_time
from nodewright.errors import InputError
from nodewright.tables import format_markdown_table, format_table


def _table(report: DriftReport) -> str:
    out = [
        format_table(
            ["NODECLAIM", "NODEPOOL", "REASON"],
            [[d.node_claim, d.node_pool, d.reason] for d in report.drifted],
        )
        if report.drifted
        else "No NodeClaim would drift.",
        "",
        format_table(
            ["NODEPOOL", "NODECLAIMS", "REPLACED", "HASH BEFORE", "HASH AFTER"],
            [[p.name, p.node_claims, p.replaced, p.hash_before or "-", p.hash_after] for p in report.pools],
        ),
    ]
    out += [f"note: {n}" for n in report.notes]
    return "\n".join(out)


def _markdown(report: DriftReport) -> str:
    total = len(report.drifted)
    lines = [f"### Drift: {total} node{'s' if total != 1 else ''} would be replaced", ""]
    lines.append(
        format_markdown_table(
            ["NodePool", "NodeClaims", "Replaced", "Reasons", "Hash changed"],
            [
                [
                    p.name,
                    p.node_claims,
                    p.replaced,
                    ", ".join(f"{k}: {v}" for k, v in sorted(p.reasons.items())) or "-",
                    "yes" if p.hash_changed else "no",
                ]
                for p in report.pools
            ],
        )
    )
    if report.drifted:
        lines += [
            "",
            format_markdown_table(
                ["NodeClaim", "NodePool", "Reason"],
                [[d.node_claim, d.node_pool, d.reason] for d in report.drifted],
            ),
        ]
    lines += [f"\n> note: {n}" for n in report.notes]
    return "\n".join(lines)


@click.command("drift")
@files_option("NodePool / EC2NodeClass YAML or JSON file of the branch (repeatable).")
@click.option(
    "--cluster", required=True, type=click.Path(dir_okay=False), help="Cluster state (kubectl List JSON)."
)
@click.option(
    "--catalog",
    default=None,
    help="Instance-type catalog (file or aws:<region>) to check InstanceTypeNotFound; skipped when absent.",
)
@click.option(
    "--now", default=None, help="Evaluation time (RFC 3339) for the 1h InstanceTypeNotFound age gate."
)
@click.option(
    "--crd-defaults",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Hash branch NodePools without expireAfter with the CRD default 720h: auto = when the live copy shows it.",
)
@click.option(
    "--cluster-info",
    "info_file",
    default=None,
    help="INFO.yaml (as for render userdata): its caBundle makes EC2NodeClass hashes exact and predicts CA rotations.",
)
@output_option(("table", "json", "yaml", "markdown"))
@handle_errors
def command(
    files: tuple[str, ...],
    cluster: str,
    catalog: str | None,
    now: str | None,
    crd_defaults: str,
    info_file: str | None,
    output: str,
) -> None:
    """List NodeClaims Karpenter would mark Drifted once these NodePools are applied, and nodes replaced per NodePool."""
    when: datetime | None = None
    if now is not None:
        when = parse_time(now)
        if when is None:
            raise InputError(
                f"--now {now!r} is not an RFC 3339 timestamp such as 2024-05-01T12:00:00Z", file="<args>"
            )
    mode: DefaultsMode = (
        "always" if crd_defaults == "always" else "never" if crd_defaults == "never" else "auto"
    )
    ca_bundle = load_cluster_info(info_file).ca_bundle if info_file else None
    report = drift_impact_files(files, cluster, catalog, now=when, defaults=mode, ca_bundle=ca_bundle)
    emit(report.as_dict(), output, table=lambda: _table(report), markdown=lambda: _markdown(report))
