"""Oversized instance types a NodePool lets a NodeClaim grow into (under the karpenter strategy).

Karpenter launches the cheapest type that fits a NodeClaim, but it keeps adding pods to an
in-flight NodeClaim while any of its options still fits. In a NodePool without a size cap the
claim grows until only the largest types hold it (on ``aws:us-east-1``: ``u7i-12tb.224xlarge``,
$125.58/h), whose price per vCPU or per GiB is far above the pool's typical offering.

:func:`oversized` finds such types: among the pool's compatible, available types, those whose $/vCPU
or $/GiB exceeds ``ratio`` x the pool's best (10th percentile) and that are larger (vCPU) than
every type within that ratio on both. It suggests a concrete cap, ``karpenter.k8s.aws/instance-cpu Lt N``, with N-1 the
largest efficient size. :func:`capped` returns the NodePool with that requirement added, so the
CLI can measure the saving by planning again; the CrossGuard policy reports the price ratio.
Boundary: catalog and NodePool models only; no planning here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from nodewright.algebra.requirements import ALLOW_UNDEFINED_WELL_KNOWN, Requirements
from nodewright.api.karpenter import NodePool
from nodewright.catalog.memo import by_catalog_keys
from nodewright.catalog.model import InstanceType
from nodewright.cluster.state import ClusterState
from nodewright.labels import INSTANCE_CPU
from nodewright.scheduling.nodeclaim import template_requirements
from nodewright.scheduling.plan import CatalogFor, PlanOptions, plan
from nodewright.scheduling.plandoc import PlanDocument, PlannedNodeClaim

DEFAULT_RATIO: Final = 2.0
BEST_PERCENTILE: Final = 0.1
_GIB: Final = 1024**3 * 1000  # memory quantities are milli-bytes


@dataclass(frozen=True, kw_only=True)
class Priced:
    name: str
    price: float
    vcpu: float
    gib: float

    @property
    def per_vcpu(self) -> float:
        return self.price / self.vcpu if self.vcpu else float("inf")

    @property
    def per_gib(self) -> float:
        return self.price / self.gib if self.gib else float("inf")


@dataclass(frozen=True, kw_only=True)
class Oversized:
    """The advice for one NodePool: the oversized types (dearest per unit first) and the cap."""

    nodepool: str
    types: tuple[Priced, ...]
    best_per_vcpu: float
    best_per_gib: float
    cap: int  # suggested: instance-cpu Lt cap

    @property
    def requirement(self) -> str:
        return f"{INSTANCE_CPU} Lt {self.cap}"

    def worst_ratio(self, t: Priced) -> float:
        return max(t.per_vcpu / self.best_per_vcpu, t.per_gib / self.best_per_gib)

    def describe(self, t: Priced) -> str:
        return (
            f"{t.name} (${t.price:.2f}/h: ${t.per_vcpu:.4f}/vCPU-h, ${t.per_gib:.5f}/GiB-h; "
            f"{self.worst_ratio(t):.1f}x the pool's best)"
        )


def pool_types(nodepool: NodePool, types: Sequence[InstanceType]) -> list[Priced]:
    """The pool's compatible types with an available compatible offering, at their cheapest one
    (alike pools of one catalog are priced once: :func:`nodewright.catalog.memo.by_catalog_keys`)."""
    reqs = template_requirements(nodepool)
    return list(by_catalog_keys("oversize.pool_types", types, reqs, lambda: _pool_types(reqs, types)))


def _pool_types(reqs: Requirements, types: Sequence[InstanceType]) -> list[Priced]:
    out: list[Priced] = []
    for it in types:
        if not it.requirements.has_intersection(reqs):
            continue
        prices = [
            o.price
            for o in it.offerings
            if o.available and reqs.is_compatible(o.requirements, allow_undefined=ALLOW_UNDEFINED_WELL_KNOWN)
        ]
        if not prices:
            continue
        out.append(
            Priced(
                name=it.name,
                price=min(prices),
                vcpu=it.capacity.get("cpu", 0) / 1000,
                gib=it.capacity.get("memory", 0) / _GIB,
            )
        )
    return out


def _vcpu_label(types: Sequence[InstanceType]) -> bool:
    return any(it.requirements.has(INSTANCE_CPU) for it in types)


def _best(values: Iterable[float]) -> float:
    """The pool's best price per unit: the 10th percentile (burstable nano types, priced for a
    fraction of a core, would make the minimum meaningless)."""
    xs = sorted(values)
    return xs[int(BEST_PERCENTILE * (len(xs) - 1))]


def oversized(
    nodepool: NodePool, types: Sequence[InstanceType], *, ratio: float = DEFAULT_RATIO
) -> Oversized | None:
    """See the module docstring; None when the pool has no such type (or no vCPU label to cap)."""
    if not _vcpu_label(types):
        return None
    priced = [p for p in pool_types(nodepool, types) if p.vcpu > 0 and p.gib > 0]
    if len(priced) < 3:
        return None
    med_cpu = _best(p.per_vcpu for p in priced)
    med_gib = _best(p.per_gib for p in priced)

    def dear(p: Priced) -> bool:
        return p.per_vcpu > ratio * med_cpu or p.per_gib > ratio * med_gib

    efficient = [p.vcpu for p in priced if not dear(p)]
    if not efficient:
        return None
    largest = max(efficient)
    big = [p for p in priced if dear(p) and p.vcpu > largest]
    if not big:
        return None
    big.sort(key=lambda p: (-max(p.per_vcpu / med_cpu, p.per_gib / med_gib), p.name))
    return Oversized(
        nodepool=nodepool.name,
        types=tuple(big),
        best_per_vcpu=med_cpu,
        best_per_gib=med_gib,
        cap=int(largest) + 1,
    )


def capped(nodepool: NodePool, cap: int) -> NodePool:
    """``nodepool`` with ``instance-cpu Lt cap`` added to its template requirements."""
    body = nodepool.to_k8s()
    spec = body.setdefault("spec", {}).setdefault("template", {}).setdefault("spec", {})
    spec.setdefault("requirements", []).append({"key": INSTANCE_CPU, "operator": "Lt", "values": [str(cap)]})
    return NodePool.model_validate(body)


def launched(doc_claims: Sequence[PlannedNodeClaim], advice: Oversized) -> list[str]:
    """The oversized types ``plan``'s NodeClaims of the advice's pool actually launch."""
    names = {t.name for t in advice.types}
    out: set[str] = set()
    for c in doc_claims:
        if c.node_pool == advice.nodepool and c.launch is not None and c.launch.instance_type in names:
            out.add(c.launch.instance_type)
    return sorted(out)


_COMMON_CAP: Final = 65  # 64 vCPU: the measured reference cap


def advise(
    *,
    nodepools: Sequence[NodePool],
    cluster: ClusterState,
    catalog_for: CatalogFor,
    options: PlanOptions,
    doc: PlanDocument,
    ratio: float = DEFAULT_RATIO,
) -> list[str]:
    """``plan`` warnings: per NodePool whose NodeClaims launch an oversized type, the suggested
    cap and the saving measured by planning this cluster again with it (the cheaper of the
    largest efficient size and 64 vCPU); nothing when no cap saves money."""
    out: list[str] = []
    cost = doc.summary.hourly_cost
    for np in nodepools:
        advice = oversized(np, catalog_for(np), ratio=ratio)
        if advice is None:
            continue
        hit = launched(doc.node_claims, advice)
        if not hit:
            continue
        best: tuple[float, int] | None = None
        for cap in sorted({advice.cap, *([_COMMON_CAP] if advice.cap > _COMMON_CAP else [])}):
            pools = [capped(p, cap) if p.name == np.name else p for p in nodepools]
            again = plan(nodepools=pools, cluster=cluster, catalog_for=catalog_for, options=options)
            if again.summary.scheduled < doc.summary.scheduled:
                continue
            got = again.summary.hourly_cost
            if best is None or got < best[0] - 1e-9:
                best = (got, cap)
        if best is None or best[0] >= cost - 1e-9:
            continue
        worst = next(t for t in advice.types if t.name in hit)
        out.append(
            f"NodePool {np.name}: NodeClaims grow into {advice.describe(worst)}; add the requirement "
            f"`{INSTANCE_CPU} Lt {best[1]}` to spec.template.spec.requirements: measured on this cluster, "
            f"{cost:.2f}/h -> {best[0]:.2f}/h (saves {cost - best[0]:.2f}/h, {100 * (cost - best[0]) / cost:.0f}%)"
        )
    return out
