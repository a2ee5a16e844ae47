"""What a change to NodePools costs: the cluster's NodeClaims now, and once Karpenter has converged.

Public API: :func:`stack_cost` (what ``nodewright preview`` puts under ``cost``),
:func:`converged_cost` (the same over objects already loaded), :func:`converged_claims` (the one
place that says which NodeClaims the cluster ends with) and :func:`price_nodeclaims`.

* **before**: the cluster state's NodeClaims, each at the catalog price of its exact offering
  (instance type + capacity type + zone, and the reservation for reserved capacity), read from
  the labels Karpenter stamps on them. A NodeClaim whose type or offering the catalog does not
  list is counted as a node with no price and named under ``unpriced``.
* **after**: the cluster once Karpenter has converged on the branch's NodePools. Today
  :func:`converged_claims` models drift replacement and provisioning: NodeClaims that do not
  drift keep their price; drifted ones are deleted and their pods, with the pending pods, go
  through one provisioning round (:func:`nodewright.scheduling.plan.plan`) under the branch's
  NodePools; the NodeClaims that round launches are priced at their launch offering.
  Consolidation is not modelled yet (docs/pulumi.md): it is added by swapping the body of
  :func:`converged_claims` for the disruption simulation, which takes the same inputs.
* without a cluster state: before is 0 nodes; after is the reviewed claims file in fleet mode
  (what the stack launches), and 0 nodes in karpenter mode (no pods to schedule), with a note.

A month is 730 hours, as infracost counts it. Boundary: pure over loaded objects, except
:func:`stack_cost`, which reads the stack's files and catalog.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
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
from nodewright.settings import KarpenterSettings
from nodewright.stack.model import Settings
from nodewright.userdata import nodeclass_catalog

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


def _planned(doc: Mapping[str, Any]) -> list[PricedClaim]:
    out = []
    for c in doc["nodeClaims"]:
        launch = c.get("launch") or {}
        out.append(
            PricedClaim(
                name=str(c["name"]),
                nodepool=str(c["nodePool"]),
                instance_type=str(launch.get("instanceType", "")),
                capacity_type=str(launch.get("capacityType", "")),
                zone=str(launch.get("zone", "")),
                hourly=float(launch["price"]) if "price" in launch else None,
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


def converged_claims(
    *,
    state: ClusterState,
    nodepools: Sequence[NodePool],
    nodeclasses: Sequence[Any],
    catalog: str,
    settings: KarpenterSettings | None = None,
    ca_bundle: str | None = None,
    release: crd.Release | None = None,
) -> tuple[list[PricedClaim], list[str]]:
    """The NodeClaims the cluster ends with once Karpenter converges on ``nodepools``, and notes.

    The single call site of the convergence model: drift replacement plus one provisioning round
    for the drifted nodes' pods and the pending pods. Consolidation is not modelled here yet; the
    disruption simulation replaces this body (same inputs, same result type).
    """
    report = drift_impact(
        as_documents(nodepools),
        state,
        nodeclasses=as_documents(nodeclasses),
        ca_bundle=ca_bundle,
        release=release or crd.default_release(),
    )
    drifted = {d.node_claim for d in report.drifted}
    priced = load_catalog(catalog)
    kept = [c for c in price_nodeclaims(state.nodeclaims, priced) if c.name not in drifted]
    deleting = tuple(
        nc.model_copy(update={"metadata": nc.metadata.model_copy(update={"deletion_timestamp": _DELETED_AT})})
        if nc.name in drifted
        else nc
        for nc in state.nodeclaims
    )
    by_class = {nc.name: nc for nc in nodeclasses}
    cache: dict[str, Catalog] = {}

    def catalog_for(np: NodePool) -> Catalog:
        ref = np.spec.template.spec.node_class_ref
        key = ref.name if ref.kind == "EC2NodeClass" else ""
        if key not in cache:
            cache[key] = nodeclass_catalog(catalog, by_class.get(ref.name) if key else None, settings)
        return cache[key]

    # NodePools of the cluster that the branch does not declare stay as they are (as in drift)
    branch = {np.name for np in nodepools}
    pools = [*nodepools, *(np for np in state.nodepools if np.name not in branch)]
    doc = plan(
        nodepools=pools,
        cluster=replace(state, nodeclaims=deleting),
        catalog_for=catalog_for,
        options=_plan_options(settings),
    )
    notes = []
    if doc["podErrors"]:
        notes.append(f"{len(doc['podErrors'])} pod(s) would not schedule under the branch's NodePools")
    notes.append(
        f"after: {len(drifted)} drifted NodeClaim(s) replaced and {doc['summary']['newNodeClaims']} NodeClaim(s) "
        "launched for their pods and the pending pods; consolidation is not modelled yet"
    )
    return sorted([*kept, *_planned(doc)], key=lambda c: (c.nodepool, c.name)), notes


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


def stack_cost(
    settings: Settings,
    *,
    base_dir: Path,
    state: ClusterState | None,
    karpenter: KarpenterSettings | None = None,
) -> CostReport:
    """:func:`converged_cost` for a stack: its files, its catalog, its cluster state (if any), and
    in fleet mode its reviewed claims file."""
    release = settings.release
    objs = read_objects([base_dir / f for f in settings.files], release=release)
    reviewed = None
    if settings.mode == "fleet":
        claims_file = settings.claims or f"stacks/claims-{settings.stack}.yaml"
        reviewed = load_claims(base_dir / claims_file, strategy=settings.plan_strategy)
    catalog = settings.catalog
    if not catalog.startswith("aws:") and not Path(catalog).is_absolute():
        catalog = str(base_dir / catalog)  # a catalog file is relative to the project, as in the program
    report = converged_cost(
        state=state,
        nodepools=objs.nodepools,
        nodeclasses=objs.nodeclasses,
        catalog=catalog,
        settings=karpenter or settings.karpenter,
        ca_bundle=settings.cluster.ca_bundle or None,
        reviewed=reviewed,
        release=release,
    )
    return replace(report, catalog=settings.catalog)
