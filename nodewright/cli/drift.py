"""`nodewright drift` (see docs/cli.md): NodeClaims Karpenter would mark Drifted.

Thin: read the files and the cluster state, call
:func:`nodewright.disruption.rollout.drift_rollout_files` (drift, with the rollouts simulated), print.
"""

from __future__ import annotations

import sys

import click

from nodewright.cli._common import (
    at_option,
    cluster_option,
    emit,
    files_option,
    format_at,
    handle_errors,
    karpenter_options,
    load_cluster_info,
    output_option,
    resolve_at,
)
from nodewright.crd import Release
from nodewright.disruption.rollout import drift_rollout_files
from nodewright.drift import DriftReport, PoolImpact
from nodewright.drift.detect import DefaultsMode
from nodewright.settings import KarpenterSettings
from nodewright.tables import format_markdown_table, format_table

EXIT_WOULD_ROLL = 3
"""``drift --exit-code``: nodes would roll. Not 1 (an error here, unlike ``kubectl diff``) nor 2
(a usage error here, unlike ``terraform plan -detailed-exitcode``), so a script can tell them apart."""


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
    out += [f"window: {p.name}: {w.describe()}" for p in report.pools if p.rollout for w in p.rollout.windows]
    if report.at is not None:
        out.append(f"at: {format_at(report.at)}")
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
    windows = [f"{p.name}: {w.describe()}" for p in report.pools if p.rollout for w in p.rollout.windows]
    lines += [f"\n> window: {w}" for w in windows]
    if report.at is not None:
        lines.append(f"\nEvaluated at {format_at(report.at)}.")
    return "\n".join(lines)


@click.command("drift")
@files_option("NodePool / EC2NodeClass YAML or JSON file of the branch (repeatable).")
@cluster_option()
@click.option(
    "--catalog",
    default=None,
    help="Instance-type catalog (file or aws:<region>) to check InstanceTypeNotFound (skipped when absent) and "
    "to simulate the rollout's replacements (default aws:us-east-1).",
)
@at_option("the 1h InstanceTypeNotFound age gate and every disruption budget (scheduled ones too)")
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
@click.option(
    "--exit-code",
    is_flag=True,
    default=False,
    help=f"Exit {EXIT_WOULD_ROLL} when at least one node would roll (0 when none would; 1 stays an error, "
    "2 a usage error).",
)
@output_option(("table", "json", "yaml", "markdown"))
@karpenter_options()
@handle_errors
def command(
    files: tuple[str, ...],
    cluster: str,
    catalog: str | None,
    at: str | None,
    crd_defaults: str,
    info_file: str | None,
    exit_code: bool,
    output: str,
    release: Release,
    settings: KarpenterSettings,
) -> None:
    """List NodeClaims Karpenter would mark Drifted once these NodePools are applied, and nodes replaced per NodePool."""
    when = resolve_at(at)
    mode: DefaultsMode = (
        "always" if crd_defaults == "always" else "never" if crd_defaults == "never" else "auto"
    )
    ca_bundle = load_cluster_info(info_file).ca_bundle if info_file else None
    report = drift_rollout_files(
        files,
        cluster,
        catalog,
        settings=settings,
        defaults=mode,
        ca_bundle=ca_bundle,
        at=when,
        release=release,
        karpenter={"version": release.version, **settings.as_dict()},
    )
    emit(report.as_dict(), output, table=lambda: _table(report), markdown=lambda: _markdown(report))
    if exit_code and report.drifted:
        sys.exit(EXIT_WOULD_ROLL)
