"""A Solve's result as the plan document (:class:`~.plandoc.PlanDocument`).

Per new NodeClaim: its instance types cheapest first, truncated to ``max_instance_types`` (a
truncation that breaks minValues fails its pods, as Karpenter's ``Truncate``), the launch (the
cheapest offering, accounted against reservation capacity), the labels the node will carry, the
requests and pods, and a deterministic name; existing nodes that receive pods; per-pod errors;
the cost summary. Deterministic byte for byte.

Boundary: rendering only; the Solve is :mod:`.scheduler`'s, the round's inputs :mod:`.plan`'s.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from nodewright import labels
from nodewright.algebra.requirements import Requirements
from nodewright.algebra.resources import format_resource_list
from nodewright.catalog.model import Offering
from nodewright.catalog.prices import HOURS_PER_MONTH
from nodewright.scheduling.instancetypes import TypeIndex, satisfies_min_values
from nodewright.scheduling.nodeclaim import InflightClaim
from nodewright.scheduling.plandoc import (
    ExistingNodePods,
    PlanDocument,
    PlannedLaunch,
    PlannedNodeClaim,
    PlanSummary,
    PoolCost,
)
from nodewright.scheduling.reservations import LaunchLedger
from nodewright.scheduling.scheduler import BEST_EFFORT, SolveResult

if TYPE_CHECKING:
    from nodewright.scheduling.plan import PlanOptions

FAILED: Final = "Failed to schedule pod, "
_NAME_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
_OUTPUT_LABEL_SKIP: Final = frozenset({labels.NODE_REGISTERED, labels.NODE_INITIALIZED, labels.HOSTNAME})


def claim_name(pool: str, seed: str, taken: set[str]) -> str:
    """A NodeClaim name ``<pool>-<5 characters>`` derived from ``seed``, unique within ``taken``."""
    n = 0
    while True:
        digest = hashlib.sha256(f"{pool}\x00{seed}\x00{n}".encode()).digest()
        suffix = "".join(_NAME_ALPHABET[b % len(_NAME_ALPHABET)] for b in digest[:5])
        name = f"{pool}-{suffix}"
        if name not in taken:
            taken.add(name)
            return name
        n += 1


def round_price(p: float) -> float:
    return round(p, 4)


def monthly(hourly: float) -> float:
    return round(hourly * HOURS_PER_MONTH, 2)


@dataclass(kw_only=True)
class ClaimView:
    """A NodeClaim as launched: its kept instance types, the launch offering and type."""

    claim: InflightClaim
    names: list[str]
    launch: Offering | None
    launch_type: str
    reqs: Requirements


def truncate(
    claim: InflightClaim, max_types: int, policy: str, exclude: frozenset[str]
) -> tuple[list[int], str | None]:
    """The claim's instance types cheapest first, at most ``max_types``, and the minValues error
    of the truncation (None when it keeps them satisfied or the policy is BestEffort)."""
    idx = claim.template.types
    ordered = idx.order_by_price(claim.options, claim.requirements, exclude)[:max_types]
    if claim.requirements.has_min_values() and policy != BEST_EFFORT:
        _, _, err = satisfies_min_values(claim.requirements, [idx.types[i] for i in ordered])
        if err is not None:
            return ordered, err
    return ordered, None


_NAMES: weakref.WeakKeyDictionary[TypeIndex, tuple[str, ...]] = weakref.WeakKeyDictionary()


def _names(idx: TypeIndex, ordered: list[int]) -> list[str]:
    """The names of ``idx``'s types at ``ordered`` (the index's names are listed once)."""
    names = _NAMES.get(idx)
    if names is None:
        names = _NAMES[idx] = tuple(t.name for t in idx.types)
    return [names[i] for i in ordered]


def claim_view(claim: InflightClaim, ordered: list[int], exclude: frozenset[str]) -> ClaimView:
    idx = claim.template.types
    reqs = claim.requirements
    launch: Offering | None = None
    launch_type = ""
    if ordered:
        # ordered is cheapest-offering first, so the first type holds the launch (ties: list order)
        got = idx.launch(ordered[0], reqs, idx.launches(reqs, exclude), exclude)
        launch, launch_type = got.offering, idx.types[ordered[0]].name
    return ClaimView(
        claim=claim,
        names=_names(idx, ordered),
        launch=launch,
        launch_type=launch_type,
        reqs=reqs,
    )


def _labels(view: ClaimView) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in view.reqs.labels(include_restricted=True).items():
        if key not in _OUTPUT_LABEL_SKIP:
            out[key] = value
    if view.launch is not None:
        # a requirement the launch type narrows to one value is a label the node will carry
        it = next(t for t in view.claim.template.types.types if t.name == view.launch_type)
        for r in view.reqs.values():
            if r.key in out or r.key in _OUTPUT_LABEL_SKIP or not it.requirements.has(r.key):
                continue
            narrowed = r.intersection(it.requirements.get(r.key))
            if not narrowed.complement and len(narrowed.values) == 1:
                out[r.key] = next(iter(narrowed.values))
        out[labels.INSTANCE_TYPE] = view.launch_type
        out[labels.ZONE] = view.launch.zone
        out[labels.CAPACITY_TYPE] = view.launch.capacity_type
        if view.launch.reservation_id:
            out[labels.CAPACITY_RESERVATION_ID] = view.launch.reservation_id
    return dict(sorted(out.items()))


def planned_claim(view: ClaimView, name: str, *, static: bool = False) -> PlannedNodeClaim:
    """One NodeClaim of the plan document."""
    claim = view.claim
    launch: PlannedLaunch | None = None
    if view.launch is not None:
        launch = PlannedLaunch(
            instance_type=view.launch_type,
            zone=view.launch.zone,
            capacity_type=view.launch.capacity_type,
            price=round_price(view.launch.price),
        )
    return PlannedNodeClaim(
        name=name,
        node_pool=claim.template.name,
        node_class=claim.template.nodepool.spec.template.spec.node_class_ref.name,
        instance_types=tuple(view.names),
        launch=launch,
        labels=_labels(view),
        requests=format_resource_list(claim.requests),
        pods=tuple(p.key for p in claim.pods),
        taints=tuple(t.to_k8s() for t in claim.template.taints),
        min_values_relaxed=claim.min_values_relaxed,
        static=static,
    )


def launch_views(result: SolveResult, options: PlanOptions) -> dict[int, ClaimView | str]:
    """Per claim index: its truncated, priced view, or the minValues error of the truncation.

    Launches are accounted against reservation capacity (:class:`LaunchLedger`): claims holding
    reservations first, then the others in creation order, which cannot take a reserved offering
    whose reservation is used up (with fallback enabled they launch on-demand or spot instead).
    """
    ledger = LaunchLedger(it for t in result.templates for it in t.types.types)
    out: dict[int, ClaimView | str] = {}
    for claim in sorted(result.new_claims, key=lambda c: not c.reserved):
        exclude = frozenset() if claim.reserved else ledger.exhausted()
        ordered, trunc_err = truncate(claim, options.max_instance_types, options.min_values_policy, exclude)
        if trunc_err is not None:
            out[claim.index] = trunc_err
            continue
        view = out[claim.index] = claim_view(claim, ordered, exclude)
        ledger.launch(view.launch)
    return out


def empty_summary(pending: int) -> PlanSummary:
    return PlanSummary(
        pending_pods=pending,
        scheduled=0,
        new_node_claims=0,
        hourly_cost=0.0,
        monthly_cost=0.0,
        by_node_pool={},
    )


def render_document(
    result: SolveResult, *, errors: Mapping[str, str], pending: int, options: PlanOptions
) -> PlanDocument:
    """The plan document of one Solve (``errors``: the pods that failed before it)."""
    pod_errors = dict(errors)
    for key, err in result.errors.items():
        pod_errors[key] = FAILED + err
    claims_out: list[PlannedNodeClaim] = []
    taken: set[str] = set()
    cost = 0.0
    by_pool: dict[str, list[float]] = {}  # pool -> [NodeClaims, hourly cost]
    scheduled = 0
    views = launch_views(result, options)
    for claim in result.new_claims:
        got = views[claim.index]
        if isinstance(got, str):
            for pod in claim.pods:
                pod_errors[pod.key] = (
                    FAILED + "pod didn’t schedule because NodePool couldn’t meet minValues requirements, "
                    f"{got} (NodePool={claim.template.name})"
                )
            continue
        view = got
        if view.launch is not None:
            cost += view.launch.price
        tally = by_pool.setdefault(claim.template.name, [0, 0.0])
        tally[0] += 1
        tally[1] += view.launch.price if view.launch is not None else 0.0
        claims_out.append(planned_claim(view, claim_name(claim.template.name, claim.pods[0].key, taken)))
        scheduled += len(claim.pods)
    existing_out = []
    for node in result.existing:
        if node.pods:
            existing_out.append(ExistingNodePods(name=node.name, pods=tuple(p.key for p in node.pods)))
            scheduled += len(node.pods)
    return PlanDocument(
        node_claims=tuple(claims_out),
        existing_nodes=tuple(existing_out),
        pod_errors=dict(sorted(pod_errors.items())),
        summary=PlanSummary(
            pending_pods=pending,
            scheduled=scheduled,
            new_node_claims=len(claims_out),
            hourly_cost=round_price(cost),
            monthly_cost=monthly(cost),
            by_node_pool={
                pool: PoolCost(new_node_claims=int(n), hourly_cost=round_price(c), monthly_cost=monthly(c))
                for pool, (n, c) in sorted(by_pool.items())
            },
        ),
    )
