"""`nodewright disrupt` (see docs/cli.md): forecast Karpenter's disruption controller.

Thin: read NodePools/EC2NodeClasses, the cluster state and the catalog as ``plan`` does, resolve
the Karpenter settings (flag > environment > default), optionally mark what ``--drift-from``'s
NodePools/EC2NodeClasses would drift, call :func:`nodewright.disruption.forecast`, print.
"""

from __future__ import annotations

from typing import Any

import click

from nodewright.api.loading import load_nodepools
from nodewright.catalog.loader import DEFAULT_SPEC
from nodewright.cli._common import (
    INPUT_PATH,
    at_option,
    cluster_option,
    emit,
    files_option,
    handle_errors,
    karpenter_options,
    output_option,
    resolve_at,
    settings_with_snapshot,
)
from nodewright.cluster import load_cluster
from nodewright.crd import Release
from nodewright.disruption import DisruptionForecast, forecast
from nodewright.disruption.loop import MAX_ROUNDS
from nodewright.drift import drift_impact_files
from nodewright.settings import KarpenterSettings
from nodewright.tables import format_markdown_table, format_table
from nodewright.userdata import pool_catalogs

_HEADERS = ["ROUND", "METHOD", "DECISION", "DISRUPTED", "REPLACEMENTS", "PODS", "SAVINGS/H"]


def _rows(result: DisruptionForecast) -> list[list[Any]]:
    rows = []
    for c in result.commands:
        reps = [f"{pool}:{itype}" for pool, itype in c.replacement_types]
        rows.append(
            [
                c.round,
                c.method,
                c.decision,
                ", ".join(f"{node} ({itype})" for node, itype in c.candidate_nodes),
                ", ".join(reps) or "-",
                c.pods_moved,
                # the document's rounding (6 places) first, as -o json shows the costs
                f"{round(c.hourly_cost_before, 6) - round(c.hourly_cost_after, 6):.4f}",
            ]
        )
    return rows


def _summary_line(result: DisruptionForecast) -> str:
    mode = "until quiet" if result.until_quiet else "nothing completes"
    disrupted = sum(len(c.candidates) for c in result.commands)
    replacements = sum(len(c.replacements) for c in result.commands)
    before, after = round(result.hourly_cost_before, 6), round(result.hourly_cost_after, 6)
    savings = round(result.hourly_cost_before - result.hourly_cost_after, 6)
    return (
        f"at {result.at} ({mode}): {disrupted} node(s) disrupted, {replacements} replacement(s), "
        f"hourly cost {before:.4f} -> {after:.4f} "
        f"(saves {savings:.4f}); {result.rounds} round(s), stopped: {result.stopped}"
    )


def _blocked_rows(result: DisruptionForecast) -> list[list[Any]]:
    return [[b.node, b.node_claim, b.reason] for b in result.blocked]


def _blocked_pool_rows(result: DisruptionForecast) -> list[list[Any]]:
    return [[b.node_pool, b.reason, b.allowed, b.disrupting] for b in result.blocked_pools]


def _unconsolidatable_rows(result: DisruptionForecast) -> list[list[Any]]:
    return [[u.node_claim, u.message] for u in result.unconsolidatable]


def _render_table(result: DisruptionForecast) -> str:
    out = [format_table(_HEADERS, _rows(result)) if result.commands else "No disruption."]
    if result.blocked:
        out += ["", format_table(["BLOCKED NODE", "NODECLAIM", "REASON"], _blocked_rows(result))]
    if result.blocked_pools:
        out += [
            "",
            format_table(["NODEPOOL", "REASON", "ALLOWED", "DISRUPTING"], _blocked_pool_rows(result)),
        ]
    if result.unconsolidatable:
        out += ["", format_table(["UNCONSOLIDATABLE", "WHY"], _unconsolidatable_rows(result))]
    out += ["", _summary_line(result)]
    return "\n".join(out)


def _render_markdown(result: DisruptionForecast) -> str:
    out = ["### nodewright disrupt", "", _summary_line(result)]
    if result.commands:
        out += ["", format_markdown_table(_HEADERS, _rows(result))]
    if result.blocked:
        out += ["", format_markdown_table(["Blocked node", "NodeClaim", "Reason"], _blocked_rows(result))]
    if result.blocked_pools:
        out += [
            "",
            format_markdown_table(
                ["NodePool", "Reason", "Allowed", "Disrupting"], _blocked_pool_rows(result)
            ),
        ]
    if result.unconsolidatable:
        out += [
            "",
            format_markdown_table(["Unconsolidatable", "Why"], _unconsolidatable_rows(result)),
        ]
    return "\n".join(out)


@click.command("disrupt")
@files_option("NodePool / EC2NodeClass YAML or JSON file in effect (repeatable).")
@cluster_option("cluster_path")
@click.option(
    "--catalog",
    "catalog_spec",
    default=DEFAULT_SPEC,
    show_default=True,
    help="InstanceTypeCatalog file or aws:<region>.",
)
@at_option("the controller's clock: consolidateAfter, do-not-disrupt durations and every budget")
@click.option(
    "--until-quiet",
    is_flag=True,
    default=False,
    help="Complete each command before the next (replacements come up, candidates leave) until steady state.",
)
@click.option(
    "--drift-from",
    "drift_from",
    multiple=True,
    type=INPUT_PATH,
    help="NodePool / EC2NodeClass files of a branch: mark what they drift, then forecast with them (repeatable).",
)
@click.option(
    "--max-rounds",
    type=click.IntRange(min=1),
    default=MAX_ROUNDS,
    show_default=True,
    help="Stop after this many disruption reconciles.",
)
@output_option(("table", "json", "yaml", "markdown"))
@karpenter_options()
@handle_errors
def command(
    files: tuple[str, ...],
    cluster_path: str,
    catalog_spec: str,
    at: str | None,
    until_quiet: bool,
    drift_from: tuple[str, ...],
    max_rounds: int,
    output: str,
    release: Release,
    settings: KarpenterSettings,
) -> None:
    """Forecast Karpenter's disruption controller: which nodes it removes or replaces, in order."""
    when = resolve_at(at)
    objs = load_nodepools(files, release=release)
    cluster = load_cluster(cluster_path, release=release)
    settings = settings_with_snapshot(settings, release, cluster, where=cluster_path)
    pools = {np.name: np for np in objs.nodepools}
    classes = {nc.name: nc for nc in objs.nodeclasses}
    drifted: list[str] = []
    if drift_from:
        branch = load_nodepools(drift_from, release=release)
        pools.update({np.name: np for np in branch.nodepools})
        classes.update({nc.name: nc for nc in branch.nodeclasses})
        report = drift_impact_files(drift_from, cluster, catalog_spec, at=when, release=release)
        drifted = [d.node_claim for d in report.drifted]
    catalog_for = pool_catalogs(catalog_spec, classes, settings)

    result: DisruptionForecast = forecast(
        nodepools=list(pools.values()),
        cluster=cluster,
        catalog_for=catalog_for,
        settings=settings,
        at=when,
        until_quiet=until_quiet,
        drifted=drifted,
        max_rounds=max_rounds,
    )
    emit(
        result.as_dict(),
        output,
        table=lambda: _render_table(result),
        markdown=lambda: _render_markdown(result),
    )
