"""Helpers for the topology tests: pod/node builders and a tiny solve loop.

The mini solver mirrors the parts of Karpenter's Solve that touch topology (existing nodes first,
then in-flight NodeClaims with fewest pods first, then a new NodeClaim per pool; hostname
placeholders; Register/Record on Add; preference relaxation; queue stop on no progress) with no
resources or instance types beyond a per-node pod capacity. It lets the topology scenarios run
before (and independently of) the full scheduler.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nodewright.api.core import Node, Pod, Taint
from nodewright.labels import CAPACITY_TYPE, HOSTNAME, NODEPOOL, ZONE
from nodewright.scheduling.requirements import (
    ALLOW_UNDEFINED_WELL_KNOWN,
    Requirement,
    Requirements,
    pod_requirements,
)
from nodewright.scheduling.taints import is_tolerated as tolerates_all
from nodewright.scheduling.topology import DomainSource, Topology, TopologyError

ZONES = ("test-zone-1", "test-zone-2", "test-zone-3")


def test_support_module_loads() -> None:
    assert ZONES


# -- builders ----------------------------------------------------------------------------------
def pod(
    name: str,
    *,
    namespace: str = "default",
    labels: Mapping[str, str] | None = None,
    node_selector: Mapping[str, str] | None = None,
    tsc: Sequence[Mapping[str, Any]] = (),
    affinity: Mapping[str, Any] | None = None,
    tolerations: Sequence[Mapping[str, Any]] = (),
    node_name: str | None = None,
    phase: str | None = None,
    deleting: bool = False,
) -> Pod:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": dict(labels or {})}
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    spec: dict[str, Any] = {
        "nodeSelector": dict(node_selector or {}),
        "topologySpreadConstraints": list(tsc),
        "tolerations": list(tolerations),
    }
    if affinity is not None:
        spec["affinity"] = affinity
    if node_name is not None:
        spec["nodeName"] = node_name
    status: dict[str, Any] = {}
    if phase is not None:
        status["phase"] = phase
    return Pod.model_validate({"metadata": meta, "spec": spec, "status": status})


def spread(
    key: str,
    *,
    max_skew: int = 1,
    labels: Mapping[str, str] | None = None,
    selector: Mapping[str, Any] | None = None,
    nil_selector: bool = False,
    when: str = "DoNotSchedule",
    **extra: Any,
) -> dict[str, Any]:
    out: dict[str, Any] = {"topologyKey": key, "maxSkew": max_skew, "whenUnsatisfiable": when, **extra}
    if not nil_selector:
        out["labelSelector"] = dict(selector) if selector is not None else {"matchLabels": dict(labels or {})}
    return out


def term(key: str, labels: Mapping[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"topologyKey": key, **extra}
    if labels is not None:
        out["labelSelector"] = {"matchLabels": dict(labels)}
    return out


def node(name: str, labels: Mapping[str, str], *, taints: Sequence[Mapping[str, Any]] = ()) -> Node:
    return Node.model_validate(
        {"metadata": {"name": name, "labels": dict(labels)}, "spec": {"taints": list(taints)}}
    )


def reqs(**values: Sequence[str]) -> Requirements:
    """``reqs(zone=[...])`` style builder; keys are mapped through ``KEYS``."""
    return Requirements(Requirement.new(KEYS.get(k, k), "In", v) for k, v in values.items())


KEYS = {"zone": ZONE, "ct": CAPACITY_TYPE, "host": HOSTNAME}


@dataclass
class Pool:
    """A NodePool for the mini solver: requirements, taints, node cap, pods per node."""

    name: str = "default"
    requirements: Requirements = field(
        default_factory=lambda: Requirements([Requirement.new(CAPACITY_TYPE, "Exists")])
    )
    taints: tuple[Taint, ...] = ()
    max_nodes: int | None = None
    pods_per_node: int = 1000
    instance_types: Sequence[Requirements] = ()

    def source(self) -> DomainSource:
        its = self.instance_types or [
            Requirements(
                [
                    Requirement.new(ZONE, "In", ZONES),
                    Requirement.new(CAPACITY_TYPE, "In", ("spot", "on-demand")),
                ]
            )
        ]
        return DomainSource(
            nodepool_requirements=self.requirements, taints=self.taints, instance_type_requirements=its
        )

    def template(self) -> Requirements:
        out = self.requirements.copy()
        out.add(Requirement.new(NODEPOOL, "In", (self.name,)))
        return out


@dataclass
class SimNode:
    name: str
    pool: Pool | None
    requirements: Requirements
    taints: tuple[Taint, ...] = ()
    pods: list[str] = field(default_factory=list)
    capacity: int = 1000

    def zone(self) -> str:
        """The launch zone: the only value, else the smallest allowed (cheapest-tie rule)."""
        r = self.requirements.get(ZONE)
        if r.operator == "In":
            return min(r.values)
        return next(z for z in ZONES if r.has(z))

    def hostname(self) -> str:
        return next(iter(self.requirements.get(HOSTNAME).values))


@dataclass
class Result:
    existing: list[SimNode]
    claims: list[SimNode]
    errors: dict[str, str]

    def zone_counts(self, *, include_existing: bool = True) -> list[int]:
        counts: dict[str, int] = {}
        for n in (self.existing if include_existing else []) + self.claims:
            if n.pods:
                counts[n.zone()] = counts.get(n.zone(), 0) + len(n.pods)
        return sorted(counts.values())

    def pods_per_claim(self) -> list[int]:
        return sorted(len(n.pods) for n in self.claims)


class MiniSolver:
    """Just enough Solve loop to drive :class:`Topology` like Karpenter does."""

    def __init__(
        self,
        pools: Sequence[Pool],
        *,
        nodes: Iterable[Node] = (),
        cluster_pods: Iterable[Pod] = (),
        policy: str = "Respect",
        node_capacity: int = 1000,
    ) -> None:
        self.pools = list(pools)
        self.nodes = list(nodes)
        self.cluster_pods = list(cluster_pods)
        self.policy = policy
        self.node_capacity = node_capacity
        self.placeholder = 0

    def solve(self, pods: Sequence[Pod]) -> Result:
        topo = Topology(
            domain_sources=[p.source() for p in self.pools],
            nodes=self.nodes,
            cluster_pods=self.cluster_pods,
            batch_pods=pods,
            preference_policy=self.policy,
        )
        self.topology = topo
        existing: list[SimNode] = []
        for n in self.nodes:
            sim = SimNode(
                n.metadata.name,
                None,
                Requirements.from_labels(n.metadata.labels),
                tuple(n.spec.taints),
                capacity=self.node_capacity,
            )
            sim.pods = [p.key for p in self.cluster_pods if p.spec.node_name == n.metadata.name]
            topo.register(HOSTNAME, n.metadata.labels.get(HOSTNAME, n.metadata.name))
            existing.append(sim)
        claims: list[SimNode] = []
        created: dict[str, int] = {}
        errors: dict[str, str] = {}
        queue = list(pods)
        last_len: dict[str, int] = {}
        while queue:
            current = queue.pop(0)
            if last_len.get(current.key) == len(queue) + 1:
                break
            err = self._try(topo, current, existing, claims, created)
            if err is None:
                errors.pop(current.key, None)
                continue
            errors[current.key] = err
            topo.update(current)
            queue.append(current)
            last_len[current.key] = len(queue)
        return Result(existing, claims, errors)

    def _try(
        self,
        topo: Topology,
        original: Pod,
        existing: list[SimNode],
        claims: list[SimNode],
        created: dict[str, int],
    ) -> str | None:
        current = original
        while True:
            err = self._add(topo, current, existing, claims, created)
            if err is None:
                return None
            relaxed = relax(current)
            if relaxed is None:
                return err
            current = relaxed
            topo.update(current)

    def _add(
        self, topo: Topology, p: Pod, existing: list[SimNode], claims: list[SimNode], created: dict[str, int]
    ) -> str | None:
        pod_reqs = pod_requirements(p)
        strict = pod_requirements(p, include_preferred=False)
        for n in existing:
            if len(n.pods) >= n.capacity or not tolerates_all(n.taints, p.spec.tolerations):
                continue
            if n.requirements.compatible(pod_reqs) is not None:
                continue
            try:
                topo.add_requirements(
                    p, taints=n.taints, strict_requirements=strict, nodeclaim_requirements=n.requirements
                )
            except TopologyError:
                continue
            n.pods.append(p.key)
            topo.record(p, taints=n.taints, requirements=n.requirements)
            return None
        for n in sorted(claims, key=lambda c: len(c.pods)):
            if self._fits(topo, p, n, pod_reqs, strict) is True:
                return None
        errs: list[str] = []
        for pool in self.pools:
            if pool.max_nodes is not None and created.get(pool.name, 0) >= pool.max_nodes:
                errs.append("node limits have been exhausted for nodepool")
                continue
            self.placeholder += 1
            host = f"hostname-placeholder-{self.placeholder:04d}"
            topo.register(HOSTNAME, host)
            r = pool.template()
            r.add(Requirement.new(HOSTNAME, "In", (host,)))
            claim = SimNode(host, pool, r, pool.taints, capacity=pool.pods_per_node)
            err = self._fits(topo, p, claim, pod_reqs, strict)
            if err is True:
                claims.append(claim)
                created[pool.name] = created.get(pool.name, 0) + 1
                return None
            errs.append(str(err))
        return "; ".join(errs) or "no nodepool"

    def _fits(
        self, topo: Topology, p: Pod, n: SimNode, pod_reqs: Requirements, strict: Requirements
    ) -> bool | str:
        if len(n.pods) >= n.capacity:
            return "full"
        if not tolerates_all(n.taints, p.spec.tolerations):
            return "taints"
        err = n.requirements.compatible(pod_reqs, allow_undefined=ALLOW_UNDEFINED_WELL_KNOWN)
        if err is not None:
            return f"incompatible requirements, {err}"
        r = n.requirements.copy()
        r.add(*pod_reqs.values())
        try:
            r = topo.add_requirements(
                p, taints=n.taints, strict_requirements=strict, nodeclaim_requirements=r
            )
        except TopologyError as e:
            return str(e)
        for key in (ZONE, CAPACITY_TYPE):
            if r.get(key).is_empty() or not any(r.get(key).has(z) for z in _UNIVERSE[key]):
                return f"no instance type for {key}"
        n.requirements = r
        n.pods.append(p.key)
        topo.register(HOSTNAME, n.name)
        topo.record(p, taints=n.taints, requirements=r, allow_undefined=ALLOW_UNDEFINED_WELL_KNOWN)
        return True


_UNIVERSE = {ZONE: ZONES, CAPACITY_TYPE: ("spot", "on-demand")}


def relax(p: Pod) -> Pod | None:
    """Karpenter's relaxation order, one step (no required-term or toleration steps here)."""
    affinity = p.spec.affinity
    if affinity is not None:
        for attr in ("pod_affinity", "pod_anti_affinity"):
            rules = getattr(affinity, attr)
            if rules is not None and rules.preferred_during_scheduling_ignored_during_execution:
                terms = sorted(
                    rules.preferred_during_scheduling_ignored_during_execution, key=lambda t: -t.weight
                )
                new_rules = rules.model_copy(
                    update={"preferred_during_scheduling_ignored_during_execution": terms[1:]}
                )
                return p.model_copy(
                    update={
                        "spec": p.spec.model_copy(
                            update={"affinity": affinity.model_copy(update={attr: new_rules})}
                        )
                    }
                )
        na = affinity.node_affinity
        if na is not None and na.preferred_during_scheduling_ignored_during_execution:
            terms = sorted(na.preferred_during_scheduling_ignored_during_execution, key=lambda t: -t.weight)
            new_na = na.model_copy(update={"preferred_during_scheduling_ignored_during_execution": terms[1:]})
            return p.model_copy(
                update={
                    "spec": p.spec.model_copy(
                        update={"affinity": affinity.model_copy(update={"node_affinity": new_na})}
                    )
                }
            )
    tscs = list(p.spec.topology_spread_constraints)
    for i, c in enumerate(tscs):
        if c.when_unsatisfiable == "ScheduleAnyway":
            tscs[i] = tscs[-1]
            tscs.pop()
            return p.model_copy(
                update={"spec": p.spec.model_copy(update={"topology_spread_constraints": tscs})}
            )
    return None
