"""``plan --strategy cost``: the cheapest NodeClaims found for the pods Karpenter would schedule.

One round, two solves over the same prepared inputs (:func:`~nodewright.scheduling.plan.prepare_round`):

1. the karpenter strategy's Solve: the faithful forecast, which fixes the feasible pods, the
   NodePool each new pod goes to (weights respected) and the pods existing nodes take;
2. the pods it sent to new NodeClaims that no topology group owns or selects and that use no
   host ports or volume topology are grouped into classes (same NodePool, requirements,
   tolerations) and each class is packed by :mod:`.packing` onto the instance types the class may
   use (allocatable less that type's daemon overhead; NodePool limits as constraints);
3. :class:`~.guided.GuidedScheduler` replays the round: the other pods as Karpenter placed
   them, in its order, then the bins; every placement checked by the scheduler's own code, and
   any pod refused there takes the normal path (queue, relaxation, new NodeClaims).

A class whose bins cost no less than its share of Karpenter's NodeClaims (each pod's share of its
claim's price, by its share of the claim's requests) keeps Karpenter's NodeClaims. The cost plan
is the guided result when it schedules every pod the karpenter result schedules and costs less;
otherwise the karpenter result is returned unchanged. Either way the summary gains
``strategy`` and ``karpenter_hourly_cost``. ``time_budget`` bounds the optimisation (past it,
column generation stops or is skipped and the greedy's bins stand); the result is deterministic
for a given input as long as the budget is not reached (typical inputs need a few seconds).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from nodewright.api.karpenter import NodePool
from nodewright.cluster.state import ClusterState
from nodewright.costplan.colgen import colgen_pack
from nodewright.costplan.guided import GuidedScheduler, PlannedClaim, RecordingScheduler
from nodewright.costplan.packing import Bin, BinType, PoolLimits, Shape, lower_bound, pack
from nodewright.scheduling.instancetypes import iter_bits
from nodewright.scheduling.nodeclaim import Template
from nodewright.scheduling.plan import CatalogFor, PlanOptions, Round, prepare_round
from nodewright.scheduling.plandoc import PlanDocument
from nodewright.scheduling.poddata import PodData
from nodewright.scheduling.scheduler import NODES, SolveResult
from nodewright.scheduling.workloads import Input, Scale

DEFAULT_TIME_BUDGET: Final = 20.0
DEFAULT_PLAN_OPTIONS: Final = PlanOptions()
_CG_WORTH: Final = 1.01  # run column generation when the greedy is over 1% above the aggregate bound


@dataclass(frozen=True, kw_only=True)
class CostOptions:
    time_budget: float = DEFAULT_TIME_BUDGET


def _class_key(tmpl: Template, pod: PodData) -> tuple[int, str, str]:
    tol = repr(sorted(t.model_dump_json() for t in pod.current.spec.tolerations))
    return (tmpl.index, str(pod.requirements), tol)


@dataclass(slots=True)
class _Class:
    template: Template
    pods: list[PodData]


def _bin_types(
    cls: _Class, dims: Sequence[int], limit_dims: Sequence[int]
) -> tuple[list[BinType], dict[int, float]]:
    tmpl = cls.template
    idx = tmpl.types
    reqs = tmpl.requirements.copy()
    reqs.add_all(cls.pods[0].requirements)
    entry = idx.compat(reqs)
    table = idx.launches(reqs)
    overhead: dict[int, tuple[int, ...]] = {}
    for g in tmpl.groups:
        for i in iter_bits(g.mask):
            overhead[i] = g.overhead_vec
    out: list[BinType] = []
    prices: dict[int, float] = {}
    for i in iter_bits(entry.compat & entry.offering):
        price = idx.launch(i, reqs, table).price
        alloc = idx.alloc[i]
        ov = overhead.get(i)
        cap = tuple(alloc[d] - (ov[d] if ov is not None else 0) for d in dims)
        if min(cap, default=0) < 0 or price == float("inf"):
            continue
        prices[i] = price
        out.append(
            BinType(index=i, cap=cap, price=price, capacity=tuple(idx.capacity[i][d] for d in limit_dims))
        )
    return out, prices


def _price(bins: Sequence[Bin[PodData]]) -> float:
    return sum(b.type.price for b in bins)


def _mask_for(bt: BinType, types: Sequence[BinType], limited: bool) -> int:
    """The bin's NodeClaim may take any compatible type no dearer than its own (launch picks the
    cheapest that fits) and, under limits, none with more capacity than its own."""
    mask = 0
    for t in types:
        if t.price > bt.price + 1e-12:
            continue
        if limited and any(a > b for a, b in zip(t.capacity, bt.capacity, strict=True)):
            continue
        mask |= 1 << t.index
    return mask


def attributed_costs(result: SolveResult, doc: PlanDocument) -> dict[int, float]:
    """Per pod (``id`` of its PodData): its share of the launch price of Karpenter's NodeClaim,
    the mean of its shares of the claim's requested resources."""
    price = {c.pods[0]: c.launch.price for c in doc.node_claims if c.launch is not None}
    out: dict[int, float] = {}
    for claim in result.new_claims:
        p = price.get(claim.pods[0].key) if claim.pods else None
        if p is None:
            continue
        dims = [d for d, v in enumerate(claim.requests_vec) if v > 0]
        for pod in claim.pods:
            share = sum(pod.vec[d] / claim.requests_vec[d] for d in dims) / max(1, len(dims))
            out[id(pod)] = share * p
    return out


def plan_classes(
    rnd: Round, result: SolveResult, sched: GuidedScheduler, deadline: float, attributed: dict[int, float]
) -> list[PlannedClaim]:
    """Bins for the eligible pods of ``result``'s new NodeClaims (step 2 of the module docstring)."""
    by_name = {t.name: t for t in sched.templates}
    classes: dict[tuple[int, str, str], _Class] = {}
    for claim in result.new_claims:
        tmpl = by_name.get(claim.template.name)
        if tmpl is None:
            continue
        for pod in claim.pods:
            if pod.ports or pod.volume_requirements or sched.topology.has_groups_for(pod.pod):
                continue
            key = _class_key(tmpl, pod)
            got = classes.get(key)
            if got is None:
                got = classes[key] = _Class(template=tmpl, pods=[])
            got.pods.append(pod)
    limits_by_pool: dict[str, PoolLimits] = {}
    planned: list[PlannedClaim] = []
    space = rnd.space
    for key in sorted(classes):
        cls = classes[key]
        pool = cls.template.name
        remaining = sched.remaining.get(pool)
        limit_dims = sorted(space.index[k] for k in (remaining or {}) if k in space.index)
        if pool not in limits_by_pool:
            lim = PoolLimits()
            if remaining is not None:
                lim.remaining = {j: remaining[space.names[d]] for j, d in enumerate(limit_dims)}
                lim.nodes = remaining.get(NODES)
            limits_by_pool[pool] = lim
        dims = sorted({d for p in cls.pods for d, v in enumerate(p.vec) if v > 0})
        types, _ = _bin_types(cls, dims, limit_dims)
        if not types:
            continue
        vecs = {id(p): tuple(p.vec[d] for d in dims) for p in cls.pods}
        by_vec: dict[tuple[int, ...], Shape[PodData]] = {}
        for p in sorted(cls.pods, key=lambda p: p.sort_key):
            by_vec.setdefault(vecs[id(p)], Shape(vec=vecs[id(p)], items=[])).items.append(p)
        shapes = list(by_vec.values())
        before = limits_by_pool[pool]
        after = before.copy()
        bins = pack(shapes, types, limits=after, deadline=deadline)
        # column generation where it can pay: the greedy is measurably above the aggregate bound
        # (on catalogs of one cpu:memory ratio the greedy meets it and the LP would only cost time)
        if time.monotonic() < deadline and (
            bins is None or _price(bins) > _CG_WORTH * lower_bound(shapes, types)
        ):
            cg = colgen_pack(shapes, types, deadline=deadline)
            cg_after = before.copy()
            if (
                cg is not None
                and (bins is None or _price(cg) < _price(bins) - 1e-9)
                and cg_after.charge_all([b.type for b in cg])
            ):
                bins, after = cg, cg_after
        # per class fallback: the class keeps Karpenter's NodeClaims unless its bins are cheaper
        # than its share of them
        if bins is None or _price(bins) >= sum(attributed.get(id(p), 0.0) for p in cls.pods) - 1e-9:
            continue
        limits_by_pool[pool] = after
        limited = remaining is not None
        for b in bins:
            planned.append(
                PlannedClaim(template=cls.template, mask=_mask_for(b.type, types, limited), pods=b.items)
            )
    return planned


def plan_cost(
    *,
    nodepools: Sequence[NodePool],
    cluster: ClusterState,
    catalog_for: CatalogFor,
    options: PlanOptions = DEFAULT_PLAN_OPTIONS,
    cost: CostOptions = CostOptions(),
    workloads: Sequence[Input] = (),
    scales: Sequence[Scale] = (),
) -> PlanDocument:
    """The plan document of the cost strategy (see the module docstring); ``workloads``
    and ``scales`` as for :func:`~nodewright.scheduling.plan.plan`."""
    rnd = prepare_round(
        nodepools=nodepools,
        cluster=cluster,
        catalog_for=catalog_for,
        options=options,
        workloads=workloads,
        scales=scales,
    )
    recorder = rnd.scheduler(RecordingScheduler)
    assert isinstance(recorder, RecordingScheduler)
    k_result = recorder.solve(rnd.datas)
    k_doc = rnd.render(k_result)
    k_cost = k_doc.summary.hourly_cost
    where = {id(p): claim for claim in k_result.new_claims for p in claim.pods}
    placed = {id(p) for p, _ in recorder.log}
    unplaced = [d for d in rnd.datas if id(d) not in placed]
    for d in rnd.datas:
        d.reset()
    guided = rnd.scheduler(GuidedScheduler)
    assert isinstance(guided, GuidedScheduler)
    # the budget covers the optimisation only (the two Solves are what the karpenter strategy costs)
    planned = plan_classes(
        rnd, k_result, guided, time.monotonic() + cost.time_budget, attributed_costs(k_result, k_doc)
    )
    doc = k_doc
    if planned:
        g_doc = rnd.render(guided.solve_guided(recorder.log, where, planned, unplaced))
        k_failed = set(k_doc.pod_errors)
        if set(g_doc.pod_errors) <= k_failed and g_doc.summary.hourly_cost < k_cost:
            doc = g_doc
    return replace(doc, summary=replace(doc.summary, strategy="cost", karpenter_hourly_cost=k_cost))
