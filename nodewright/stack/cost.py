"""What a change to NodePools costs: the cluster's NodeClaims now, and once Karpenter has converged.

Public API: :func:`stack_cost` (what ``nodewright preview`` puts under ``cost``),
:func:`converged_cost` (the same over objects already loaded), :func:`converged_claims` (the one
place that says which NodeClaims the cluster ends with) and :func:`price_nodeclaims`.

* **before**: the cluster state's NodeClaims, each at the catalog price of its exact offering
  (instance type + capacity type + zone, and the reservation for reserved capacity), read from
  the labels Karpenter stamps on them. A NodeClaim whose type or offering the catalog does not
  list is counted as a node with no price and named under ``unpriced``.
* **after**: the cluster once Karpenter has converged on the branch's NodePools
  (:func:`converged_claims`): the NodeClaims the branch drifts are marked Drifted and Karpenter's
  disruption controller (:mod:`nodewright.disruption`) runs until quiet: emptiness, drift and
  consolidation under the disruption budgets; its candidates leave and its replacements come in
  at their launch offering's price. Its scheduling simulations include the pending pods, as
  upstream's do; when no command simulated, the pending pods' NodeClaims come from one
  provisioning round (:func:`nodewright.scheduling.plan.plan`) under the branch's NodePools.
* without a cluster state: before is 0 nodes; after is the reviewed claims file in fleet mode
  (what the stack launches), and 0 nodes in karpenter mode (no pods to schedule), with a note.

A month is 730 hours, as infracost counts it. Boundary: pure over loaded objects, except
:func:`stack_cost`, which reads the stack's files and catalog.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from nodewright import crd, labels
from nodewright.api.karpenter import NodePool
from nodewright.catalog import Catalog, InstanceType, load_catalog
from nodewright.catalog.prices import HOURS_PER_MONTH
from nodewright.cluster import ClusterState
from nodewright.drift import drift_impact
from nodewright.drift.inputs import as_documents, read_objects
from nodewright.scheduling.claimsfile import load_claims
from nodewright.scheduling.plan import PlanOptions, plan
from nodewright.scheduling.plandoc import PlanDocument
from nodewright.settings import KarpenterSettings
from nodewright.stack.model import Settings

_DELETED_AT: Final = "1970-01-01T00:00:00Z"


@dataclass(frozen=True, kw_only=True)
class PricedClaim:
    """One NodeClaim (existing or planned) and its hourly price (None: the catalog has no price)."""

    name: str
    nodepool: str
    instance_type: str
    capacity_type: str
    zone: str
    hourly: float | None


@dataclass(frozen=True, kw_only=True)
class FleetCost:
    """The hourly and monthly cost of a set of NodeClaims, in total and per NodePool."""

    claims: tuple[PricedClaim, ...] = ()

    @property
    def hourly(self) -> float:
        return sum(c.hourly or 0.0 for c in self.claims)

    def as_dict(self) -> dict[str, Any]:
        pools: dict[str, list[PricedClaim]] = {}
        for c in self.claims:
            pools.setdefault(c.nodepool, []).append(c)
        out: dict[str, Any] = _money(self.hourly)
        out["nodes"] = len(self.claims)
        out["byNodePool"] = {
            name: {**_money(sum(c.hourly or 0.0 for c in cs)), "nodes": len(cs)}
            for name, cs in sorted(pools.items())
        }
        unpriced = sorted(c.name for c in self.claims if c.hourly is None)
        if unpriced:
            out["unpriced"] = unpriced
        return out


@dataclass(frozen=True, kw_only=True)
class CostReport:
    """``cost`` of the preview document: before, after, the change, and how it was computed."""

    before: FleetCost
    after: FleetCost
    catalog: str
    notes: tuple[str, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "catalog": self.catalog,
            "hoursPerMonth": HOURS_PER_MONTH,
            "before": self.before.as_dict(),
            "after": self.after.as_dict(),
            "change": _money(self.after.hourly - self.before.hourly),
        }
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def _money(hourly: float) -> dict[str, float]:
    return {"hourly": round(hourly, 4), "monthly": round(hourly * HOURS_PER_MONTH, 2)}


def offering_price(
    catalog: Catalog | Sequence[InstanceType], claim_labels: Mapping[str, str]
) -> float | None:
    """The price of the offering a node's labels name, or None when the catalog does not list it."""
    name = claim_labels.get(labels.INSTANCE_TYPE, "")
    it = (
        catalog.get(name)
        if isinstance(catalog, Catalog)
        else next((t for t in catalog if t.name == name), None)
    )
    if it is None:
        return None
    zone = claim_labels.get(labels.ZONE, "")
    capacity = claim_labels.get(labels.CAPACITY_TYPE, "")
    reservation = claim_labels.get(labels.CAPACITY_RESERVATION_ID)
    for o in it.offerings:
        if (
            o.zone == zone
            and o.capacity_type == capacity
            and (reservation is None or o.reservation_id == reservation)
        ):
            return o.price
    return None


def price_nodeclaims(nodeclaims: Iterable[Any], catalog: Catalog) -> list[PricedClaim]:
    """The cluster's NodeClaims at their offering's catalog price (None when it is not listed)."""
    out = []
    for nc in nodeclaims:
        lab = dict(nc.metadata.labels or {})
        out.append(
            PricedClaim(
                name=nc.name,
                nodepool=lab.get(labels.NODEPOOL, ""),
                instance_type=lab.get(labels.INSTANCE_TYPE, ""),
                capacity_type=lab.get(labels.CAPACITY_TYPE, ""),
                zone=lab.get(labels.ZONE, ""),
                hourly=offering_price(catalog, lab),
            )
        )
    return sorted(out, key=lambda c: (c.nodepool, c.name))


def _planned(doc: PlanDocument | None) -> list[PricedClaim]:
    out = []
    for c in doc.node_claims if doc is not None else ():
        launch = c.launch
        out.append(
            PricedClaim(
                name=c.name,
                nodepool=c.node_pool,
                instance_type=launch.instance_type if launch is not None else "",
                capacity_type=launch.capacity_type if launch is not None else "",
                zone=launch.zone if launch is not None else "",
                hourly=launch.price if launch is not None else None,
            )
        )
    return out


def _reviewed(claim: Mapping[str, Any], catalog: Catalog) -> PricedClaim:
    launch = claim.get("launch") or {}
    it, zone, capacity = (str(launch.get(k, "")) for k in ("instanceType", "zone", "capacityType"))
    return PricedClaim(
        name=str(claim.get("name", "")),
        nodepool=str(claim.get("nodePool", "")),
        instance_type=it,
        capacity_type=capacity,
        zone=zone,
        hourly=offering_price(
            catalog, {labels.INSTANCE_TYPE: it, labels.ZONE: zone, labels.CAPACITY_TYPE: capacity}
        ),
    )


def _plan_options(settings: KarpenterSettings | None) -> PlanOptions:
    return PlanOptions.of(settings) if settings is not None else PlanOptions()


FORECAST_MAX_NODES: Final = 500
"""Above this many NodeClaims the preview's ``after`` skips the disruption forecast (consolidation)
and keeps drift replacement plus one provisioning round, with a note: ``nodewright disrupt`` is the
full answer there (a forecast simulates a scheduling round per candidate set)."""
FORECAST_MAX_ROUNDS: Final = 50


def converged_claims(
    *,
    state: ClusterState,
    nodepools: Sequence[NodePool],
    nodeclasses: Sequence[Any],
    catalog: str,
    settings: KarpenterSettings | None = None,
    ca_bundle: str | None = None,
    release: crd.Release | None = None,
    at: datetime | None = None,
    drifted: Collection[str] | None = None,
) -> tuple[list[PricedClaim], list[str]]:
    """The NodeClaims the cluster ends with once Karpenter converges on ``nodepools``, and notes.

    The one place that says what the cluster converges to: the NodeClaims the branch drifts are
    marked Drifted, then Karpenter's disruption controller runs until quiet
    (:func:`nodewright.disruption.forecast`: emptiness, drift, consolidation, under the budgets);
    its commands' candidates leave and their replacements come in at their launch price. The
    pending pods' NodeClaims come from one provisioning round over the state. Above
    :data:`FORECAST_MAX_NODES` NodeClaims the disruption forecast is skipped (drift replacement
    plus the provisioning round, said in a note). ``drifted``: the NodeClaims the branch drifts
    when the caller already knows them (the preview's drift section); else they are detected here.
    """
    from nodewright.disruption import forecast
    from nodewright.disruption.rollout import forecast_inputs

    rel = release or crd.default_release()
    karpenter = settings or KarpenterSettings()
    if drifted is None:
        report = drift_impact(
            as_documents(nodepools),
            state,
            nodeclasses=as_documents(nodeclasses),
            ca_bundle=ca_bundle,
            release=rel,
            at=at,
        )
        drifted = {d.node_claim for d in report.drifted}
    else:
        drifted = set(drifted)
    priced = load_catalog(catalog)
    current = price_nodeclaims(state.nodeclaims, priced)
    # the drift rollout's inputs: NodePools of the cluster that the branch does not declare stay
    # as they are, Drifted only where the branch drifts
    pools, marked, catalog_for = forecast_inputs(
        state=state,
        nodepools=nodepools,
        nodeclasses=nodeclasses,
        catalog=catalog,
        settings=karpenter,
        drifted=drifted,
    )
    notes: list[str] = []
    if len(state.nodeclaims) > FORECAST_MAX_NODES:
        deleting = tuple(
            nc.model_copy(
                update={"metadata": nc.metadata.model_copy(update={"deletion_timestamp": _DELETED_AT})}
            )
            if nc.name in drifted
            else nc
            for nc in state.nodeclaims
        )
        doc = plan(
            nodepools=pools,
            cluster=replace(state, nodeclaims=deleting),
            catalog_for=catalog_for,
            options=_plan_options(settings),
        )
        if doc.pod_errors:
            notes.append(f"{len(doc.pod_errors)} pod(s) would not schedule under the branch's NodePools")
        notes.append(
            f"after: {len(drifted)} drifted NodeClaim(s) replaced and {doc.summary.new_node_claims} "
            f"NodeClaim(s) launched for their pods and the pending pods; consolidation is not forecast above "
            f"{FORECAST_MAX_NODES} NodeClaims (run `nodewright disrupt --until-quiet`)"
        )
        kept = [c for c in current if c.name not in drifted]
        return sorted([*kept, *_planned(doc)], key=lambda c: (c.nodepool, c.name)), notes
    result = forecast(
        nodepools=pools,
        cluster=marked,
        catalog_for=catalog_for,
        settings=karpenter,
        at=at or datetime.now(UTC),
        until_quiet=True,
        drifted=sorted(drifted),
        max_rounds=FORECAST_MAX_ROUNDS,
    )
    gone = {str(c["nodeClaim"]) for cmd in result.commands for c in cmd.candidates}
    # replacements are named as the forecast names the NodeClaims it launches (one counter, in
    # command order), so a replacement that a later command consolidates away leaves again
    launched = [r for cmd in result.commands for r in cmd.replacements]
    incoming = [
        _replacement(r, f"{r.get('nodePool', '')}-forecast-{k:04d}") for k, r in enumerate(launched, 1)
    ]
    # Every scheduling simulation of the disruption controller includes the pending pods (upstream's
    # SimulateScheduling), so once a command other than emptiness ran, its replacements already
    # hold them; otherwise they get the provisioner's round over the state.
    simulated = any(cmd.method != "emptiness" for cmd in result.commands)
    pending = (
        None
        if simulated
        else plan(nodepools=pools, cluster=state, catalog_for=catalog_for, options=_plan_options(settings))
    )
    if pending is not None and pending.pod_errors:
        notes.append(f"{len(pending.pod_errors)} pod(s) would not schedule under the branch's NodePools")
    by_method: dict[str, int] = {}
    for cmd in result.commands:
        by_method[cmd.method] = by_method.get(cmd.method, 0) + len(cmd.candidates)
    done = ", ".join(f"{n} by {m}" for m, n in sorted(by_method.items())) or "none"
    notes.append(
        f"after: Karpenter's disruption controller until quiet ({len(result.commands)} command(s) in "
        f"{result.rounds} round(s); nodes disrupted: {done}; {len(drifted)} NodeClaim(s) drifted by the "
        f"branch)"
        + (
            " with the pending pods placed by its simulations"
            if pending is None
            else f" and {pending.summary.new_node_claims} NodeClaim(s) launched for the pending pods"
        )
    )
    if result.stopped != "quiet":
        notes.append(f"after: the disruption forecast stopped at its {FORECAST_MAX_ROUNDS}-round limit")
    kept = [c for c in [*current, *incoming] if c.name not in gone]
    return sorted([*kept, *_planned(pending)], key=lambda c: (c.nodepool, c.name)), notes


def _replacement(rep: Mapping[str, Any], name: str) -> PricedClaim:
    launch = rep.get("launch") or {}
    return PricedClaim(
        name=name,
        nodepool=str(rep.get("nodePool", "")),
        instance_type=str(launch.get("instanceType", "")),
        capacity_type=str(launch.get("capacityType", "")),
        zone=str(launch.get("zone", "")),
        hourly=float(launch["price"]) if "price" in launch else None,
    )


def converged_cost(
    *,
    state: ClusterState | None,
    nodepools: Sequence[NodePool],
    nodeclasses: Sequence[Any],
    catalog: str,
    settings: KarpenterSettings | None = None,
    ca_bundle: str | None = None,
    reviewed: Sequence[Mapping[str, Any]] | None = None,
    release: crd.Release | None = None,
    at: datetime | None = None,
    drifted: Collection[str] | None = None,
) -> CostReport:
    """Cost before (the state's NodeClaims) and after convergence (see the module docstring).

    ``reviewed``: fleet mode's claims-file entries, what the stack launches (after, whatever the state).
    """
    priced = load_catalog(catalog)
    before = price_nodeclaims(state.nodeclaims, priced) if state is not None else []
    notes: list[str] = []
    if reviewed is not None:
        after = sorted((_reviewed(c, priced) for c in reviewed), key=lambda c: (c.nodepool, c.name))
        notes.append("after: the reviewed claims file (fleet mode launches exactly these)")
    elif state is None:
        after = []
        notes.append(
            "no cluster state: before and after count 0 nodes (no NodeClaims, no pending pods); "
            "set nodewright:clusterState to see what the change costs"
        )
    else:
        after, more = converged_claims(
            state=state,
            nodepools=nodepools,
            nodeclasses=nodeclasses,
            catalog=catalog,
            settings=settings,
            ca_bundle=ca_bundle,
            release=release,
            at=at,
            drifted=drifted,
        )
        notes += more
    if state is None and reviewed is not None:
        notes.append("no cluster state: before counts 0 nodes")
    for side, claims in (("before", before), ("after", after)):
        unpriced = [c.name for c in claims if c.hourly is None]
        if unpriced:
            notes.append(
                f"{side}: {len(unpriced)} NodeClaim(s) whose offering the catalog does not list are counted "
                "as nodes at no price (see unpriced)"
            )
    return CostReport(
        before=FleetCost(claims=tuple(before)),
        after=FleetCost(claims=tuple(after)),
        catalog=catalog,
        notes=tuple(notes),
    )


def project_catalog(settings: Settings, base_dir: Path) -> str:
    """The stack's catalog spec; a catalog file is relative to the project, as in the program."""
    catalog = settings.catalog
    if not catalog.startswith("aws:") and not Path(catalog).is_absolute():
        catalog = str(base_dir / catalog)
    return catalog


def stack_cost(
    settings: Settings,
    *,
    base_dir: Path,
    state: ClusterState | None,
    karpenter: KarpenterSettings | None = None,
    at: datetime | None = None,
    drifted: Collection[str] | None = None,
) -> CostReport:
    """:func:`converged_cost` for a stack: its files, its catalog, its cluster state (if any), and
    in fleet mode its reviewed claims file."""
    release = settings.release
    objs = read_objects([base_dir / f for f in settings.files], release=release)
    reviewed = None
    if settings.mode == "fleet":
        claims_file = settings.claims or f"stacks/claims-{settings.stack}.yaml"
        reviewed = load_claims(base_dir / claims_file, strategy=settings.plan_strategy)
    report = converged_cost(
        state=state,
        nodepools=objs.nodepools,
        nodeclasses=objs.nodeclasses,
        catalog=project_catalog(settings, base_dir),
        settings=karpenter or settings.karpenter,
        ca_bundle=settings.cluster.ca_bundle or None,
        reviewed=reviewed,
        release=release,
        at=at,
        drifted=drifted,
    )
    return replace(report, catalog=settings.catalog)
