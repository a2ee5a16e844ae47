"""`nodewright drift` (see docs/cli.md): NodeClaims Karpenter would mark Drifted.

Thin: read the files and the cluster state, call :func:`nodewright.drift.drift_impact_files`, print.
"""

from __future__ import annotations

import click

from nodewright.cli._common import (
    cluster_option,
    emit,
    files_option,
    handle_errors,
    karpenter_version_option,
    load_cluster_info,
    output_option,
    time_option,
)
from nodewright.drift import DriftReport, PoolImpact, drift_impact_files
from nodewright.drift.detect import DefaultsMode
from nodewright.tables import format_markdown_table, format_table


def _wave_cells(p: PoolImpact) -> tuple[str, str]:
    """(nodes per wave, waves) of a pool's rollout: "all" when unbounded, "blocked" when 0."""
    r = p.rollout
    if r is None:
        return "-", "-"
    per = "all" if r.allowed_per_wave is None else str(r.allowed_per_wave)
    return per, "blocked" if r.blocked else str(r.waves)


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
            ["NODEPOOL", "NODECLAIMS", "REPLACED", "PER WAVE", "WAVES", "HASH BEFORE", "HASH AFTER"],
            [
                [p.name, p.node_claims, p.replaced, *_wave_cells(p), p.hash_before or "-", p.hash_after]
                for p in report.pools
            ],
        ),
    ]
    out += [f"note: {n}" for n in report.notes]
    out += [f"note: {p.name}: {n}" for p in report.pools if p.rollout for n in p.rollout.notes]
    return "\n".join(out)


def _markdown(report: DriftReport) -> str:
    total = len(report.drifted)
    lines = [f"### Drift: {total} node{'s' if total != 1 else ''} would be replaced", ""]
    lines.append(
        format_markdown_table(
            ["NodePool", "NodeClaims", "Replaced", "Per wave", "Waves", "Reasons", "Hash changed"],
            [
                [
                    p.name,
                    p.node_claims,
                    p.replaced,
                    *_wave_cells(p),
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
    lines += [f"\n> note: {p.name}: {n}" for p in report.pools if p.rollout for n in p.rollout.notes]
    return "\n".join(lines)


@click.command("drift")
@files_option("NodePool / EC2NodeClass YAML or JSON file of the branch (repeatable).")
@cluster_option()
@click.option(
    "--catalog",
    default=None,
    help="Instance-type catalog (file or aws:<region>) to check InstanceTypeNotFound; skipped when absent.",
)
@click.option(
    "--now", default=None, help="Evaluation time (RFC 3339) for the 1h InstanceTypeNotFound age gate."
)
@click.option(
    "--at",
    default=None,
    help="Time (RFC 3339) at which scheduled disruption budgets are evaluated for the rollout waves; "
    "without it, budgets with a schedule are left out and named in a note.",
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
@karpenter_version_option()
@handle_errors
def command(
    files: tuple[str, ...],
    cluster: str,
    catalog: str | None,
    now: str | None,
    at: str | None,
    crd_defaults: str,
    info_file: str | None,
    output: str,
) -> None:
    """List NodeClaims Karpenter would mark Drifted once these NodePools are applied, and nodes replaced per NodePool."""
    when = time_option("--now", now)
    mode: DefaultsMode = (
        "always" if crd_defaults == "always" else "never" if crd_defaults == "never" else "auto"
    )
    ca_bundle = load_cluster_info(info_file).ca_bundle if info_file else None
    report = drift_impact_files(
        files, cluster, catalog, now=when, defaults=mode, ca_bundle=ca_bundle, at=time_option("--at", at)
    )
    emit(report.as_dict(), output, table=lambda: _table(report), markdown=lambda: _markdown(report))
