"""Static NodePools in ``plan``: the NodeClaims the static provisioner launches and the ones its
deprovisioner deletes, in one round (feature gate StaticCapacity).

A static NodeClaim carries no pods and no instance-type list of its own: the cloud provider launches
the cheapest offering compatible with the pool's requirements (``NodeClaimTemplate.ToNodeClaim``
leaves static claims to ``cloudprovider.Create``). Here it is rendered like a dynamic NodeClaim of
the plan (compatible types cheapest first, the launch, labels), with ``static: true`` and no pods.
Pending pods of the same round do not land on them: Karpenter schedules onto a static NodeClaim
only once it is launched (it becomes cluster state with its providerID).

Boundary: counting is :mod:`nodewright.scheduling.staticcapacity`'s; this module renders.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from nodewright import labels
from nodewright.api.core import Pod
from nodewright.api.karpenter import NodePool
from nodewright.catalog.model import InstanceType
from nodewright.cluster.state import ClusterState
from nodewright.scheduling.instancetypes import ResourceSpace, TypeIndex
from nodewright.scheduling.nodeclaim import InflightClaim, Template, hostname_for, template_requirements
from nodewright.scheduling.plan import CatalogFor, PlanOptions
from nodewright.scheduling.plandoc import (
    PlanDocument,
    PlannedNodeClaim,
    PoolCost,
    SkippedNodePool,
    StaticScaleDown,
)
from nodewright.scheduling.planrender import (
    claim_name,
    claim_view,
    monthly,
    planned_claim,
    round_price,
    truncate,
)
from nodewright.scheduling.staticcapacity import (
    node_limit,
    pool_counts,
    scale_down_candidates,
    static_launches,
)


@dataclass(kw_only=True)
class StaticRound:
    """What the static controllers do to each static pool in this round."""

    launches: dict[str, int] = field(default_factory=dict)  # pool -> NodeClaims launched
    scale_down: dict[str, list[str]] = field(default_factory=dict)  # pool -> NodeClaims deleted
    notes: list[str] = field(default_factory=list)


def static_pools(nodepools: Sequence[NodePool]) -> list[NodePool]:
    """Managed static pools the static controllers reconcile (Ready and not deleting to provision)."""
    return sorted(
        (np for np in nodepools if np.is_static() and np.unmanaged_reason() is None and not np.is_deleting()),
        key=lambda np: np.name,
    )


def static_round(nodepools: Sequence[NodePool], cluster: ClusterState) -> StaticRound:
    """One reconcile of the static provisioning and deprovisioning controllers for every static pool."""
    out = StaticRound()
    nodes_by_name = {n.metadata.name: n.to_k8s() for n in cluster.nodes}
    pods_by_node: dict[str, list[Pod]] = {}
    for p in cluster.pods:
        if p.spec.node_name:
            pods_by_node.setdefault(p.spec.node_name, []).append(p)
    for np in static_pools(nodepools):
        claims = [c.to_k8s() for c in cluster.nodeclaims if c.metadata.labels.get(labels.NODEPOOL) == np.name]
        counts = pool_counts(claims, nodes_by_name)
        replicas = np.spec.replicas or 0
        limit = node_limit(np.spec.to_k8s())
        if np.is_ready():
            n, why = static_launches(replicas=replicas, node_limit=limit, counts=counts)
            if n:
                out.launches[np.name] = n
            elif why:
                out.notes.append(
                    f"NodePool {np.name}: {why}; {replicas - counts.running} replica(s) not launched"
                )
        excess = counts.running - replicas
        if excess > 0:
            out.scale_down[np.name] = scale_down_candidates(
                claims, count=excess, nodes_by_name=nodes_by_name, pods_by_node=pods_by_node
            )
    return out


ClaimRenderer = Callable[[InflightClaim], PlannedNodeClaim | str]


def static_claims(
    rnd: StaticRound,
    nodepools: Sequence[NodePool],
    types_for: Callable[[NodePool], Sequence[InstanceType]],
    render_claim: ClaimRenderer,
) -> tuple[list[PlannedNodeClaim], list[str]]:
    """The plan items of the launched static NodeClaims (``render_claim`` renders one as ``plan``
    renders a dynamic one, or returns why it cannot launch), and notes."""
    items: list[PlannedNodeClaim] = []
    notes: list[str] = []
    by_name = {np.name: np for np in nodepools}
    hostnames = 0
    for name, count in sorted(rnd.launches.items()):
        np = by_name[name]
        its = list(types_for(np))
        space = ResourceSpace(sorted({k for it in its for k in (*it.capacity, *it.allocatable())}))
        reqs = template_requirements(np)
        full = TypeIndex(its, space)
        entry = full.compat(reqs)
        kept = [its[i] for i in range(len(its)) if (entry.compat & entry.offering) >> i & 1]
        if not kept:
            notes.append(
                f"NodePool {name}: no instance type of the catalog is compatible; {count} static NodeClaim(s) fail to launch"
            )
            continue
        tmpl = Template(index=0, nodepool=np, requirements=reqs, types=TypeIndex(kept, space), groups=[])
        for _ in range(count):
            hostnames += 1
            claim = InflightClaim(
                tmpl, index=hostnames, hostname=hostname_for(hostnames), options=tmpl.types.all
            )
            got = render_claim(claim)
            if isinstance(got, str):
                notes.append(f"NodePool {name}: {got}")
                continue
            items.append(got)
    return items, notes


def add_round_extras(
    doc: PlanDocument,
    *,
    nodepools: Sequence[NodePool],
    cluster: ClusterState,
    catalog_for: CatalogFor,
    options: PlanOptions,
) -> PlanDocument:
    """The plan document plus what is not the provisioner's Solve: NodePools this Karpenter leaves
    alone (``skipped_node_pools``) and, with StaticCapacity, the static controllers' round."""
    skipped = [
        SkippedNodePool(name=np.name, why=why)
        for np in nodepools
        if (why := np.unmanaged_reason()) is not None
    ]
    if skipped:
        doc = replace(doc, skipped_node_pools=tuple(sorted(skipped, key=lambda s: s.name)))
    if not options.feature_gates.static_capacity:
        if any(np.is_static() for np in nodepools):
            doc = replace(
                doc,
                notes=(
                    *doc.notes,
                    "static NodePools (spec.replicas) are not planned: feature gate StaticCapacity is off "
                    "(--feature-gates StaticCapacity=true)",
                ),
            )
        return doc
    rnd = static_round(nodepools, cluster)
    taken = {c.name for c in doc.node_claims}

    def render_claim(claim: InflightClaim) -> PlannedNodeClaim | str:
        ordered, err = truncate(claim, options.max_instance_types, options.min_values_policy, frozenset())
        if err is not None:
            return err
        view = claim_view(claim, ordered, frozenset())
        return planned_claim(
            view, claim_name(claim.template.name, f"static-{claim.index}", taken), static=True
        )

    items, notes = static_claims(rnd, nodepools, catalog_for, render_claim)
    summary = doc.summary
    added = sum(i.launch.price for i in items if i.launch is not None)
    hourly = round_price(summary.hourly_cost + added)
    by_pool = dict(summary.by_node_pool)
    for item in items:
        entry = by_pool.get(item.node_pool) or PoolCost(new_node_claims=0, hourly_cost=0.0, monthly_cost=0.0)
        pool_hourly = round_price(entry.hourly_cost + (item.launch.price if item.launch is not None else 0.0))
        by_pool[item.node_pool] = PoolCost(
            new_node_claims=entry.new_node_claims + 1,
            hourly_cost=pool_hourly,
            monthly_cost=monthly(pool_hourly),
        )
    return replace(
        doc,
        node_claims=(*doc.node_claims, *items),
        summary=replace(
            summary,
            new_node_claims=summary.new_node_claims + len(items),
            static_node_claims=len(items),
            hourly_cost=hourly,
            monthly_cost=monthly(hourly),
            by_node_pool=dict(sorted(by_pool.items())),
        ),
        static_scale_down=tuple(
            StaticScaleDown(node_pool=pool, node_claims=tuple(names))
            for pool, names in sorted(rnd.scale_down.items())
        ),
        notes=(*doc.notes, *rnd.notes, *notes),
    )
