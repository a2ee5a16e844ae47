"""Scheduler scenario helpers: typed wrappers over :mod:`builders`, catalogs, and ``run``.

``run`` goes through :func:`nodewright.scheduling.plan.plan` (the core of ``nodewright plan``);
``materialize`` turns a round's NodeClaims into initialized Nodes with their pods bound, for the
multi-round scenarios.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import builders

from nodewright.algebra.resources import format_resource_list
from nodewright.api.core import DaemonSet, Node, Pod
from nodewright.api.karpenter import NodeClaim, NodePool
from nodewright.catalog import load_catalog_file
from nodewright.catalog.model import InstanceType
from nodewright.cluster.state import ClusterState
from nodewright.scheduling.plan import PlanOptions, plan

DATA = Path(__file__).resolve().parent.parent / "data"
FAKE = DATA / "catalogs" / "fake.yaml"
FAKE5 = DATA / "catalogs" / "fake-5.yaml"
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
CT = "karpenter.sh/capacity-type"
IT = "node.kubernetes.io/instance-type"
ARCH = "kubernetes.io/arch"
OS = "kubernetes.io/os"

_CATALOGS: dict[str, list[InstanceType]] = {}


def catalog(path: Path = FAKE) -> list[InstanceType]:
    key = str(path)
    if key not in _CATALOGS:
        _CATALOGS[key] = list(load_catalog_file(path))
    return _CATALOGS[key]


def test_support_builders() -> None:
    assert {it.name for it in catalog()} >= {
        "default-instance-type",
        "small-instance-type",
        "arm-instance-type",
    }


def nodepool(
    name: str = "default",
    *,
    requirements: Sequence[Mapping[str, Any]] | None = None,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, Any]] = (),
    startup_taints: Sequence[Mapping[str, Any]] = (),
    limits: Mapping[str, str] | None = None,
    weight: int | None = None,
) -> NodePool:
    """:func:`builders.nodepool` with the scheduling suite's default requirement (capacity type In
    spot, on-demand, reserved), as a model."""
    reqs = (
        list(requirements)
        if requirements is not None
        else [{"key": CT, "operator": "In", "values": ["spot", "on-demand", "reserved"]}]
    )
    return NodePool.model_validate(
        builders.nodepool(
            name,
            requirements=reqs,
            labels=labels or {},
            taints=taints,
            startup_taints=startup_taints,
            limits=limits,
            weight=weight,
        )
    )


def pod(name: str, **kw: Any) -> Pod:
    """:func:`builders.pod` (uid ``uid-<name>``) as a model."""
    kw.setdefault("uid", f"uid-{name}")
    kw.setdefault("tolerations", ())
    return Pod.model_validate(builders.pod(name, **kw))


def node(name: str, **kw: Any) -> Node:
    return Node.model_validate(builders.node(name, **kw))


def nodeclaim(
    name: str,
    *,
    nodepool_name: str,
    labels: Mapping[str, str],
    capacity: Mapping[str, str],
    node_name: str | None = None,
    provider_id: str | None = None,
) -> NodeClaim:
    return NodeClaim.model_validate(
        builders.nodeclaim(
            name,
            nodepool_name=nodepool_name,
            labels=labels,
            capacity=capacity,
            node_name=node_name,
            provider_id=provider_id,
        )
    )


def daemonset(name: str, *, cpu: str | None = None, memory: str | None = None, **pod_kw: Any) -> DaemonSet:
    return DaemonSet.model_validate(builders.daemonset(name, cpu=cpu, memory=memory, **pod_kw))


def run(
    nodepools: Sequence[NodePool],
    pods: Sequence[Pod],
    *,
    nodes: Sequence[Node] = (),
    nodeclaims: Sequence[NodeClaim] = (),
    daemonsets: Sequence[DaemonSet] = (),
    types: Sequence[InstanceType] | None = None,
    options: PlanOptions | None = None,
    **extra: Any,
) -> dict[str, Any]:
    its = list(types) if types is not None else catalog()
    state = ClusterState(
        pods=tuple(pods),
        nodes=tuple(nodes),
        nodeclaims=tuple(nodeclaims),
        daemonsets=tuple(daemonsets),
        **{k: tuple(v) for k, v in extra.items()},
    )
    return plan(
        nodepools=nodepools,
        cluster=state,
        catalog_for=lambda _np: its,
        options=options or PlanOptions(max_instance_types=60),
    )


def scheduled(doc: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """pod key -> the NodeClaim (or existing node) dict it landed on."""
    out: dict[str, dict[str, Any]] = {}
    for c in doc["nodeClaims"]:
        for p in c["pods"]:
            out[p] = c
    for n in doc["existingNodes"]:
        for p in n["pods"]:
            out[p] = n
    return out


def label_of(doc: Mapping[str, Any], pod_key: str, key: str) -> str | None:
    c = scheduled(doc).get(pod_key)
    return None if c is None else c.get("labels", {}).get(key)


def materialize(
    doc: Mapping[str, Any],
    pods: Sequence[Pod],
    *,
    types: Sequence[InstanceType] | None = None,
    prefix: str = "n",
) -> tuple[list[Node], list[Pod]]:
    """Launch every NodeClaim of ``doc``: an initialized Node of its launch type, pods bound."""
    its = {it.name: it for it in (types if types is not None else catalog())}
    by_key = {p.key: p for p in pods}
    nodes: list[Node] = []
    bound: list[Pod] = []
    for i, c in enumerate(doc["nodeClaims"]):
        it = its[c["launch"]["instanceType"]]
        name = f"{prefix}-{i}"
        labels = {**c["labels"], "karpenter.sh/initialized": "true", "karpenter.sh/registered": "true"}
        for r in it.requirement_specs:
            if r.operator == "In" and len(r.values) == 1 and r.key not in labels:
                labels[r.key] = r.values[0]
        nodes.append(
            node(
                name,
                labels=labels,
                capacity=format_resource_list(it.capacity),
                allocatable=format_resource_list(it.allocatable()),
            )
        )
        for key in c["pods"]:
            p = by_key[key]
            spec = p.spec.model_copy(update={"node_name": name})
            status = p.status.model_copy(update={"conditions": [], "phase": "Running"})
            bound.append(p.model_copy(update={"spec": spec, "status": status}))
    return nodes, bound
