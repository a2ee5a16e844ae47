"""`nodewright plan` (see docs/cli.md): simulate one Karpenter provisioning round.

Thin: read NodePools, cluster state and catalog, call :func:`nodewright.scheduling.plan.plan`,
print it (json/yaml/table/markdown) and optionally write the claims file
(:mod:`nodewright.scheduling.claimsfile`) Pulumi's Capacity component materialises (``--write``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import click

from nodewright.api.loading import load_nodepools
from nodewright.catalog.loader import DEFAULT_SPEC
from nodewright.catalog.overlay import merge_overlays, overlay_catalogs
from nodewright.catalog.prices import HOURS_PER_MONTH
from nodewright.cli._common import (
    PROGRESS,
    cluster_option,
    emit,
    files_option,
    handle_errors,
    karpenter_options,
    output_option,
    settings_with_snapshot,
)
from nodewright.cluster import load_cluster
from nodewright.costplan.oversize import advise
from nodewright.costplan.strategy import DEFAULT_TIME_BUDGET, CostOptions, plan_cost
from nodewright.crd import Release
from nodewright.scheduling.claimsfile import STRATEGIES, claims_document, write_claims
from nodewright.scheduling.plan import MAX_INSTANCE_TYPES, PlanOptions, plan
from nodewright.scheduling.plandoc import PlanDocument, PlanSummary
from nodewright.scheduling.workloads import branch_inputs, parse_scale
from nodewright.settings import KarpenterSettings
from nodewright.tables import format_markdown_table, format_table
from nodewright.userdata import pool_catalogs


def _claim_rows(doc: PlanDocument) -> list[list[Any]]:
    rows = []
    for c in doc.node_claims:
        launch = c.launch
        rows.append(
            [
                c.name,
                c.node_pool + (" (static)" if c.static else ""),
                launch.instance_type if launch is not None else "-",
                launch.zone if launch is not None else "-",
                launch.capacity_type if launch is not None else "-",
                f"{launch.price:.4f}" if launch is not None else "-",
                len(c.instance_types),
                len(c.pods),
            ]
        )
    return rows


BIG_PLAN_PODS = 2000
"""A cluster state with this many pods gets a progress line (on a terminal) while it is planned."""

_CLAIM_HEADERS = ["NODECLAIM", "NODEPOOL", "INSTANCE TYPE", "ZONE", "CAPACITY", "PRICE/H", "OPTIONS", "PODS"]


def _versus(s: PlanSummary) -> str:
    if s.karpenter_hourly_cost is None:
        return ""
    return f" (strategy {s.strategy}; karpenter strategy: {s.karpenter_hourly_cost:.4f})"


_POOL_HEADERS = ["NODEPOOL", "NEW NODECLAIMS", "HOURLY", "MONTHLY"]


def _pool_rows(s: PlanSummary) -> list[list[Any]]:
    return [
        [name, p.new_node_claims, f"{p.hourly_cost:.4f}", f"{p.monthly_cost:,.2f}"]
        for name, p in s.by_node_pool.items()
    ]


def _monthly(s: PlanSummary) -> str:
    return f"monthly cost: {s.monthly_cost:,.2f} ({HOURS_PER_MONTH} h)"


def _existing_rows(doc: PlanDocument) -> list[list[Any]]:
    return [[n.name, len(n.pods)] for n in doc.existing_nodes]


def _render_table(doc: PlanDocument) -> str:
    s = doc.summary
    out = [format_table(_CLAIM_HEADERS, _claim_rows(doc)) if doc.node_claims else "No new NodeClaims."]
    if doc.existing_nodes:
        out += ["", format_table(["EXISTING NODE", "PODS"], _existing_rows(doc))]
    if doc.pod_errors:
        out += ["", format_table(["UNSCHEDULABLE POD", "REASON"], list(doc.pod_errors.items()))]
    out += _extra_lines(doc)
    out += [
        "",
        f"pending pods: {s.pending_pods}, scheduled: {s.scheduled}, new NodeClaims: {s.new_node_claims}, "
        f"hourly cost: {s.hourly_cost:.4f}" + _versus(s),
    ]
    if s.by_node_pool:
        out += [_monthly(s), "", format_table(_POOL_HEADERS, _pool_rows(s))]
    return "\n".join(out)


def _extra_lines(doc: PlanDocument) -> list[str]:
    """Static scale-down, NodePools left out and notes, one line each."""
    out: list[str] = []
    summary = doc.summary
    if summary.workload_pods or summary.buffer_pods:
        out.append(
            f"pods added to the round: {summary.workload_pods or 0} from workloads (their controllers "
            f"would create them), {summary.buffer_pods or 0} CapacityBuffer virtual pods"
        )
    for d in doc.static_scale_down:
        out.append(f"static NodePool {d.node_pool} deletes: {', '.join(d.node_claims)}")
    for sk in doc.skipped_node_pools:
        out.append(f"NodePool {sk.name} left out: {sk.why}")
    out += [f"note: {n}" for n in doc.all_notes]
    return ["", *out] if out else []


def _render_markdown(doc: PlanDocument) -> str:
    s = doc.summary
    out = ["### nodewright plan", ""]
    out.append(
        f"**{s.new_node_claims}** new NodeClaim(s), **{s.scheduled}/{s.pending_pods}** pending pods "
        f"scheduled, hourly cost **{s.hourly_cost:.4f}**" + _versus(s)
    )
    if s.by_node_pool:
        out += ["", _monthly(s), "", format_markdown_table(_POOL_HEADERS, _pool_rows(s))]
    if doc.node_claims:
        out += ["", format_markdown_table(_CLAIM_HEADERS, _claim_rows(doc))]
    if doc.existing_nodes:
        out += ["", format_markdown_table(["Existing node", "Pods"], _existing_rows(doc))]
    if doc.pod_errors:
        out += ["", format_markdown_table(["Unschedulable pod", "Reason"], list(doc.pod_errors.items()))]
    out += [f"> {line}" if line else "" for line in _extra_lines(doc)]
    return "\n".join(out)


@click.command("plan")
@files_option("NodePool / EC2NodeClass YAML or JSON file (repeatable).")
@cluster_option("cluster_path")
@click.option(
    "--catalog",
    "catalog_spec",
    default=DEFAULT_SPEC,
    show_default=True,
    help="InstanceTypeCatalog file or aws:<region>.",
)
@click.option(
    "--write",
    "write_path",
    type=click.Path(dir_okay=False),
    help="Also write the NodeClaim plan file Pulumi consumes.",
)
@click.option(
    "--max-instance-types",
    default=MAX_INSTANCE_TYPES,
    show_default=True,
    type=click.IntRange(min=1),
    help="Truncate each NodeClaim's instance types (Karpenter MaxInstanceTypes).",
)
@click.option(
    "--reserved-fallback/--no-reserved-fallback",
    default=False,
    show_default=True,
    help="Let pods that only fit exhausted reserved capacity fall back to on-demand/spot in this "
    "round (Karpenter's provisioner never does: such pods wait for the next round).",
)
@click.option(
    "--strategy",
    type=click.Choice(STRATEGIES),
    default="karpenter",
    show_default=True,
    help="karpenter: Karpenter's own decisions (the forecast); cost: the cheapest NodeClaims for the same pods.",
)
@click.option(
    "--time-budget",
    type=click.FloatRange(min=0.1),
    default=DEFAULT_TIME_BUDGET,
    show_default=True,
    help="Seconds the cost strategy may spend optimising (it stays deterministic).",
)
@click.option(
    "--scale",
    "scales",
    multiple=True,
    metavar="[NS/]KIND/NAME=N",
    help="What-if `kubectl scale`: set a Deployment/ReplicaSet/StatefulSet's replicas (a Job's parallelism) "
    "of the cluster state or the files before planning (repeatable), e.g. deployment/inflate=5.",
)
@output_option(("table", "json", "yaml", "markdown"))
@karpenter_options()
@handle_errors
def command(
    files: tuple[str, ...],
    cluster_path: str,
    catalog_spec: str,
    write_path: str | None,
    max_instance_types: int,
    reserved_fallback: bool,
    strategy: str,
    time_budget: float,
    scales: tuple[str, ...],
    output: str,
    release: Release,
    settings: KarpenterSettings,
) -> None:
    """Simulate one Karpenter provisioning round: which NodeClaims the NodePools would launch."""
    objs = load_nodepools(files, release=release)
    cluster = load_cluster(cluster_path, release=release)
    settings = settings_with_snapshot(settings, release, cluster, where=cluster_path)
    # the first EC2NodeClass of a name counts, as Objects.nodeclass() answers
    first = {nc.name: nc for nc in reversed(objs.nodeclasses)}
    provider_catalog = pool_catalogs(catalog_spec, first, settings)

    what_if = [parse_scale(s) for s in scales]
    overlaid = overlay_catalogs(
        merge_overlays(objs.nodeoverlays, cluster.nodeoverlays),
        objs.nodepools,
        provider_catalog,
        gates=settings.feature_gates,
    )
    for line in overlaid.warnings():
        click.echo(f"warning: {line}", err=True)
    catalog_for = overlaid.types_for(provider_catalog)

    options = PlanOptions.of(
        settings, max_instance_types=max_instance_types, reserved_fallback=reserved_fallback
    )
    if len(cluster.pods) >= BIG_PLAN_PODS:
        PROGRESS.info(
            "planning %d pods over %d NodePools (%s strategy)",
            len(cluster.pods),
            len(objs.nodepools),
            strategy,
        )
    if strategy == "cost":
        doc = plan_cost(
            nodepools=objs.nodepools,
            cluster=cluster,
            catalog_for=catalog_for,
            options=options,
            cost=CostOptions(time_budget=time_budget),
            workloads=branch_inputs(objs),
            scales=what_if,
        )
    else:
        doc = plan(
            nodepools=objs.nodepools,
            cluster=cluster,
            catalog_for=catalog_for,
            options=options,
            workloads=branch_inputs(objs),
            scales=what_if,
        )
        for line in advise(
            nodepools=objs.nodepools, cluster=cluster, catalog_for=catalog_for, options=options, doc=doc
        ):
            click.echo(f"warning: {line}", err=True)
    doc = replace(doc, karpenter={"version": release.version, **settings.as_dict()})
    if write_path:
        from nodewright.drift.nodepoolhash import nodepool_hash  # only here: ~0.05 s of imports

        # the hash an in-cluster Karpenter stamps (CRD defaults applied), as the stack plan does
        hashes = {np.name: nodepool_hash(np, crd_defaults=True) for np in objs.nodepools}
        write_claims(write_path, claims_document(doc, catalog=catalog_spec, hashes=hashes, strategy=strategy))
    emit(doc.as_dict(), output, table=lambda: _render_table(doc), markdown=lambda: _render_markdown(doc))
