"""An independent checker of a ``plan -o json`` document (used on cost plans).

Independent of the planner: it reads only the inputs (NodePools, cluster state, catalog) and the
document, and re-derives every constraint with its own small code (label and node selectors,
tolerations, host ports, topology) on top of the quantity arithmetic of ``nodewright.algebra``.

Topology is judged as Karpenter judges it while placing pods one at a time: a spread, affinity or
anti-affinity check sees the pods placed before it, and a pod on a NodeClaim whose zone was not
yet pinned (no pod with a zone constraint had landed there) is not counted in zone domains. The
plan passes when SOME order satisfies each pod's own check; the checker searches greedily in
Karpenter's queue order, retrying pods that fail until no progress.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nodewright.algebra.resources import add, parse_resource_list, requests_for_pod
from nodewright.api.core import LabelSelector, Pod, PodAffinityTerm
from nodewright.api.karpenter import NodePool
from nodewright.catalog.model import InstanceType
from nodewright.cluster.state import ClusterState
from nodewright.scheduling.plandoc import PlanDocument

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"


def selector_matches(sel: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    if sel is None:
        return False
    for k, v in sel.match_labels.items():
        if labels.get(k) != v:
            return False
    for e in sel.match_expressions:
        has = e.key in labels
        if e.operator == "In" and (not has or labels[e.key] not in e.values):
            return False
        if e.operator == "NotIn" and has and labels[e.key] in e.values:
            return False
        if e.operator == "Exists" and not has:
            return False
        if e.operator == "DoesNotExist" and has:
            return False
    return True


def _expr_ok(op: str, values: Sequence[str], value: str | None) -> bool:
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return value is None or value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt"):
        if value is None:
            return False
        try:
            a, b = int(value), int(values[0])
        except ValueError:
            return False
        return a > b if op == "Gt" else a < b
    return False


def node_selection_ok(pod: Pod, labels: Mapping[str, str]) -> str | None:
    for k, v in pod.spec.node_selector.items():
        if labels.get(k) != v:
            return f"nodeSelector {k}={v} vs {labels.get(k)!r}"
    aff = pod.spec.affinity
    if aff is None or aff.node_affinity is None:
        return None
    req = aff.node_affinity.required_during_scheduling_ignored_during_execution
    if req is None or not req.node_selector_terms:
        return None
    for term in req.node_selector_terms:
        if all(_expr_ok(e.operator, e.values, labels.get(e.key)) for e in term.match_expressions):
            return None
    return "no required node affinity term matches"


def taints_ok(pod: Pod, taints: Sequence[Any]) -> str | None:
    for t in taints:
        if t.effect not in ("NoSchedule", "NoExecute"):
            continue
        ok = False
        for tol in pod.spec.tolerations:
            if tol.effect and tol.effect != t.effect:
                continue
            if tol.operator == "Exists":
                ok = not tol.key or tol.key == t.key
            else:
                ok = tol.key == t.key and (tol.value or "") == (t.value or "")
            if ok:
                break
        if not ok:
            return f"does not tolerate {t.key}:{t.effect}"
    return None


@dataclass
class _Node:
    name: str
    labels: dict[str, str]
    zone_pinned: bool
    zones: tuple[str, ...]
    pods: list[Pod] = field(default_factory=list)  # counted placements: (pod, zone counted)
    zone_counted: list[bool] = field(default_factory=list)


def _zone_constrained(pod: Pod) -> bool:
    if ZONE in pod.spec.node_selector:
        return True
    aff = pod.spec.affinity
    if aff is not None and aff.node_affinity is not None:
        req = aff.node_affinity.required_during_scheduling_ignored_during_execution
        if req is not None and any(
            e.key == ZONE for t in req.node_selector_terms for e in t.match_expressions
        ):
            return True
    if any(t.topology_key == ZONE for t in pod.spec.topology_spread_constraints):
        return True
    return any(term.topology_key == ZONE for term in _terms(pod, anti=False) + _terms(pod, anti=True))


def _terms(pod: Pod, *, anti: bool) -> list[PodAffinityTerm]:
    aff = pod.spec.affinity
    if aff is None:
        return []
    src = aff.pod_anti_affinity if anti else aff.pod_affinity
    return list(src.required_during_scheduling_ignored_during_execution) if src is not None else []


def _ns(pod: Pod) -> str:
    return pod.metadata.namespace or "default"


class _Topology:
    def __init__(self, nodes: list[_Node], zones: Sequence[str]) -> None:
        self.nodes = nodes
        self.zones = tuple(sorted(zones))

    def _count(self, key: str, domain: str, ns: set[str], sel: LabelSelector | None) -> int:
        n = 0
        for node in self.nodes:
            for p, zc in zip(node.pods, node.zone_counted, strict=True):
                if key == ZONE and (not zc or node.labels.get(ZONE) != domain):
                    continue
                if key == HOSTNAME and node.name != domain:
                    continue
                if key not in (ZONE, HOSTNAME) and node.labels.get(key) != domain:
                    continue
                if _ns(p) in ns and selector_matches(sel, p.metadata.labels):
                    n += 1
        return n

    def _domain(self, node: _Node, key: str) -> str | None:
        return node.name if key == HOSTNAME else node.labels.get(key)

    def check(self, pod: Pod, node: _Node) -> str | None:
        ns = {_ns(pod)}
        for tsc in pod.spec.topology_spread_constraints:
            if tsc.when_unsatisfiable != "DoNotSchedule":
                continue
            key = tsc.topology_key
            d = self._domain(node, key)
            if d is None:
                return f"spread: node has no {key}"
            own = self._count(key, d, ns, tsc.label_selector)
            own += 1 if selector_matches(tsc.label_selector, pod.metadata.labels) else 0
            if key == HOSTNAME:
                low = 0  # a new NodeClaim is always an empty hostname
            else:
                domains = (
                    self.zones
                    if key == ZONE
                    else sorted({n.labels[key] for n in self.nodes if key in n.labels})
                )
                low = min((self._count(key, z, ns, tsc.label_selector) for z in domains), default=0)
            if own - low > tsc.max_skew:
                return f"spread on {key}: {d} would have skew {own - low} > {tsc.max_skew}"
        for term in _terms(pod, anti=False):
            key, tns = term.topology_key, set(term.namespaces) or ns
            d = self._domain(node, key)
            anywhere = any(self._count(key, z, tns, term.label_selector) for z in self._all_domains(key))
            if not anywhere and selector_matches(term.label_selector, pod.metadata.labels):
                continue
            if d is None or not self._count(key, d, tns, term.label_selector):
                return f"pod affinity on {key}: no matching pod in {d}"
        for term in _terms(pod, anti=True):
            key, tns = term.topology_key, set(term.namespaces) or ns
            d = self._domain(node, key)
            if d is not None and self._count(key, d, tns, term.label_selector):
                return f"pod anti-affinity on {key}: a matching pod in {d}"
        # inverse: a placed pod whose anti-affinity selects this pod shares its domain
        for other in self.nodes:
            for q in other.pods:
                for term in _terms(q, anti=True):
                    tns = set(term.namespaces) or {_ns(q)}
                    if _ns(pod) not in tns or not selector_matches(term.label_selector, pod.metadata.labels):
                        continue
                    key = term.topology_key
                    dq, dp = self._domain(other, key), self._domain(node, key)
                    if dq is not None and dq == dp:
                        return f"inverse anti-affinity of {q.key} on {key}"
        return None

    def _all_domains(self, key: str) -> list[str]:
        if key == ZONE:
            return list(self.zones)
        return sorted({d for n in self.nodes if (d := self._domain(n, key)) is not None})

    def place(self, pod: Pod, node: _Node) -> None:
        if not node.zone_pinned and _zone_constrained(pod):
            node.zone_pinned = True
        node.pods.append(pod)
        node.zone_counted.append(node.zone_pinned)


def check_plan(
    doc: PlanDocument,
    *,
    nodepools: Sequence[NodePool],
    cluster: ClusterState,
    types: Mapping[str, Sequence[InstanceType]],
    must_schedule: set[str] | None = None,
) -> list[str]:
    """Every violated constraint of ``doc`` (empty: the plan is valid)."""
    problems: list[str] = []
    pods = {p.key: p for p in cluster.pods}
    pools = {np.name: np for np in nodepools}
    placed = [k for c in doc.node_claims for k in c.pods] + [k for n in doc.existing_nodes for k in n.pods]
    if len(placed) != len(set(placed)):
        problems.append("a pod is placed twice")
    if must_schedule is not None and not must_schedule <= set(placed):
        problems.append(f"not scheduled: {sorted(must_schedule - set(placed))[:5]}")
    usage: dict[str, dict[str, int]] = {}
    nodes: list[_Node] = []
    zones: set[str] = set()
    for c in doc.node_claims:
        where = f"claim {c.name}"
        np = pools.get(c.node_pool)
        if np is None:
            problems.append(f"{where}: unknown pool")
            continue
        launch = c.launch
        it = next((t for t in types[np.name] if t.name == launch.instance_type), None)
        if it is None:
            problems.append(f"{where}: type {launch.instance_type} not in the pool's catalog")
            continue
        offer = [
            o
            for o in it.offerings
            if o.available and o.zone == launch.zone and o.capacity_type == launch.capacity_type
        ]
        if not offer:
            problems.append(f"{where}: no available offering {launch.zone}/{launch.capacity_type}")
        zones.update(o.zone for o in it.offerings if o.available)
        labels = dict(c.labels)
        for r in it.requirements.values():
            if not r.complement and len(r.values) == 1:
                labels.setdefault(r.key, next(iter(r.values)))
        spec = np.spec.template.spec
        for k, v in np.spec.template.metadata.labels.items():
            if labels.get(k) != v:
                problems.append(f"{where}: template label {k}={v} missing")
        for req in spec.requirements:
            if not _expr_ok(req.operator, req.values, labels.get(req.key)):
                problems.append(
                    f"{where}: pool requirement {req.key} {req.operator} {req.values} vs {labels.get(req.key)!r}"
                )
        total: dict[str, int] = {}
        ports: set[tuple[str, int]] = set()
        for key in c.pods:
            pod = pods[key]
            total = add(total, requests_for_pod(pod))
            for msg in (node_selection_ok(pod, labels), taints_ok(pod, spec.taints)):
                if msg:
                    problems.append(f"{where}: {key}: {msg}")
            for cont in [*pod.spec.containers, *pod.spec.init_containers]:
                for p in cont.ports:
                    if p.host_port:
                        k = (p.protocol or "TCP", p.host_port)
                        if k in ports:
                            problems.append(f"{where}: host port {k} used twice")
                        ports.add(k)
        for ds in cluster.daemonsets:
            dpod = Pod(metadata=ds.spec.template.metadata, spec=ds.spec.template.spec)
            if taints_ok(dpod, spec.taints) is None and node_selection_ok(dpod, labels) is None:
                total = add(total, requests_for_pod(dpod))
        alloc = it.allocatable()
        for k, v in total.items():
            if v > alloc.get(k, 0):
                problems.append(f"{where}: {k} {v} > allocatable {alloc.get(k, 0)}")
        u = usage.setdefault(np.name, {})
        for k, v in it.capacity.items():
            u[k] = u.get(k, 0) + v
        u["nodes"] = u.get("nodes", 0) + 1000
        pool_zones = {o.zone for o in it.offerings if o.available}
        nodes.append(
            _Node(name=c.name, labels=labels, zone_pinned=len(pool_zones) == 1, zones=tuple(pool_zones))
        )
    problems += _check_existing(doc, cluster, pods)
    for name, u in usage.items():
        limits = parse_resource_list(pools[name].spec.limits) if pools[name].spec.limits else {}
        for k, lim in limits.items():
            if u.get(k, 0) > lim:
                problems.append(f"pool {name}: {k} {u.get(k, 0)} > limit {lim}")
    problems += _check_topology(doc, cluster, nodes, zones, pods)
    return problems


def _check_existing(doc: PlanDocument, cluster: ClusterState, pods: Mapping[str, Pod]) -> list[str]:
    """Pods placed on existing nodes: the node's allocatable holds them with the pods already bound
    there; its labels and taints admit them."""
    problems: list[str] = []
    nodes = {n.metadata.name: n for n in cluster.nodes}
    for entry in doc.existing_nodes:
        node = nodes.get(entry.name)
        if node is None:
            problems.append(f"existing node {entry.name}: not in the cluster state")
            continue
        bound = [
            p
            for p in cluster.pods
            if p.spec.node_name == node.metadata.name
            and (p.status.phase or "") not in ("Succeeded", "Failed")
        ]
        total = add({}, *(requests_for_pod(p) for p in [*bound, *(pods[k] for k in entry.pods)]))
        alloc = parse_resource_list(node.status.allocatable)
        for k, v in total.items():
            if v > alloc.get(k, 0):
                problems.append(
                    f"existing node {node.metadata.name}: {k} {v} > allocatable {alloc.get(k, 0)}"
                )
        for key in entry.pods:
            for msg in (
                node_selection_ok(pods[key], node.metadata.labels),
                taints_ok(pods[key], node.spec.taints),
            ):
                if msg:
                    problems.append(f"existing node {node.metadata.name}: {key}: {msg}")
    return problems


def _check_topology(
    doc: PlanDocument,
    cluster: ClusterState,
    nodes: list[_Node],
    zones: set[str],
    pods: Mapping[str, Pod],
) -> list[str]:
    by_name = {n.name: n for n in nodes}
    existing: dict[str, _Node] = {}
    for node in cluster.nodes:
        labels = dict(node.metadata.labels)
        existing[node.metadata.name] = _Node(node.metadata.name, labels, True, ())
        if ZONE in labels:
            zones.add(labels[ZONE])
    for p in cluster.pods:
        n = existing.get(p.spec.node_name or "")
        if n is not None:
            n.pods.append(p)
            n.zone_counted.append(True)
    topo = _Topology([*existing.values(), *nodes], sorted(zones))
    todo: list[tuple[Pod, _Node]] = []
    for c in doc.node_claims:
        if c.name in by_name:
            todo += [(pods[k], by_name[c.name]) for k in c.pods]
    for n in doc.existing_nodes:
        todo += [(pods[k], existing[n.name]) for k in n.pods if n.name in existing]

    def order(item: tuple[Pod, _Node]) -> tuple[int, int, str]:
        r = requests_for_pod(item[0])
        return (-r.get("cpu", 0), -r.get("memory", 0), item[0].key)

    todo.sort(key=order)
    last: dict[str, str] = {}
    while todo:
        left = []
        for pod, node in todo:
            msg = topo.check(pod, node)
            if msg is None:
                topo.place(pod, node)
            else:
                last[pod.key] = msg
                left.append((pod, node))
        if len(left) == len(todo):
            return [f"topology: {p.key} on {n.name}: {last[p.key]}" for p, n in left[:5]]
        todo = left
    return []
