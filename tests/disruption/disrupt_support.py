"""Helpers of the disruption tests: managed nodes (Node + NodeClaim, initialized and Ready, as
karpenter's ``ExpectMakeNodesInitialized`` leaves them), bound pods, NodePools, and ``run`` over
:func:`nodewright.disruption.forecast`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import builders

from nodewright.api.core import Node, Pod, PodDisruptionBudget
from nodewright.api.karpenter import NodeClaim, NodePool
from nodewright.catalog.fake import new_instance_type
from nodewright.catalog.model import InstanceType, Offering
from nodewright.cluster.state import ClusterState
from nodewright.disruption import DisruptionForecast, forecast
from nodewright.settings import KarpenterSettings, resolve

AT = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
LONG_AGO = "2026-11-01T00:00:00Z"
IT = "node.kubernetes.io/instance-type"
ZONE = "topology.kubernetes.io/zone"
CT = "karpenter.sh/capacity-type"
RS_OWNER = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs-uid"}
DS_OWNER = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "uid": "ds-uid"}


def itype(
    name: str,
    price: float,
    *,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: str = "110",
    spot_price: float | None = None,
    zones: Sequence[str] = ("test-zone-1",),
) -> InstanceType:
    """An instance type with on-demand offerings at ``price`` (and spot at ``spot_price``)."""
    offers = [Offering(zone=z, capacity_type="on-demand", price=price) for z in zones]
    if spot_price is not None:
        offers += [Offering(zone=z, capacity_type="spot", price=spot_price) for z in zones]
    return new_instance_type(
        name, resources={"cpu": cpu, "memory": memory, "pods": pods}, offerings=tuple(offers)
    )


def nodepool(
    name: str = "default",
    *,
    policy: str = "WhenEmptyOrUnderutilized",
    after: str = "0s",
    budgets: Sequence[Mapping[str, Any]] | None = None,
    capacity_types: Sequence[str] = ("on-demand", "spot"),
    replicas: int | None = None,
    requirements: Sequence[Mapping[str, Any]] = (),
) -> NodePool:
    body = builders.nodepool(
        name, requirements=[{"key": CT, "operator": "In", "values": list(capacity_types)}, *requirements]
    )
    disruption: dict[str, Any] = {"consolidationPolicy": policy, "consolidateAfter": after}
    if budgets is not None:
        disruption["budgets"] = [dict(b) for b in budgets]
    body["spec"]["disruption"] = disruption
    if replicas is not None:
        body["spec"]["replicas"] = replicas
    return NodePool.model_validate(body)


def managed(
    name: str,
    it: InstanceType,
    *,
    pool: str = "default",
    zone: str = "test-zone-1",
    ct: str = "on-demand",
    node_annotations: Mapping[str, str] | None = None,
    drifted_at: str | None = None,
    initialized: bool = True,
    ready: bool = True,
    deleting: bool = False,
    termination_grace_period: str | None = None,
    last_pod_event: str | None = None,
    initialized_at: str = LONG_AGO,
) -> list[dict[str, Any]]:
    """A Node and its NodeClaim of ``pool`` on ``it`` (zone, capacity type) as the cluster holds them."""
    cap = {k: _fmt(k, v) for k, v in it.capacity.items()}
    lab = {"karpenter.sh/nodepool": pool, IT: it.name, ZONE: zone, CT: ct, "karpenter.sh/registered": "true"}
    if initialized:
        lab["karpenter.sh/initialized"] = "true"
    node = builders.node(name, labels=lab, capacity=cap, deleting=deleting)
    if node_annotations:
        node["metadata"]["annotations"] = dict(node_annotations)
    if ready:
        node["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    conds: list[dict[str, Any]] = [{"type": "Launched", "status": "True", "lastTransitionTime": LONG_AGO}]
    if initialized:
        conds.append({"type": "Initialized", "status": "True", "lastTransitionTime": initialized_at})
    if drifted_at is not None:
        conds.append({"type": "Drifted", "status": "True", "lastTransitionTime": drifted_at})
    claim = builders.nodeclaim(
        f"{name}-claim",
        nodepool_name=pool,
        labels=lab,
        capacity=cap,
        conditions=conds,
        node_name=name,
        provider_id=f"fake://{name}",
    )
    if termination_grace_period is not None:
        claim["spec"]["terminationGracePeriod"] = termination_grace_period
    if last_pod_event is not None:
        claim["status"]["lastPodEventTime"] = last_pod_event
    return [node, claim]


def _fmt(key: str, milli: int) -> str:
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def pod(
    name: str,
    node: str | None = None,
    *,
    cpu: str = "1",
    owner: Mapping[str, str] | None = RS_OWNER,
    annotations: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    start_time: str | None = LONG_AGO,
    **kw: Any,
) -> dict[str, Any]:
    body = builders.pod(name, cpu=cpu, node_name=node, owner=owner, labels=labels, **kw)
    if annotations:
        body["metadata"]["annotations"] = dict(annotations)
    if node is not None and start_time is not None:
        body["status"]["startTime"] = start_time
    return body


def cluster(items: Sequence[Mapping[str, Any]]) -> ClusterState:
    by_kind: dict[str, list[Any]] = {"Pod": [], "Node": [], "NodeClaim": [], "PodDisruptionBudget": []}
    models = {"Pod": Pod, "Node": Node, "NodeClaim": NodeClaim, "PodDisruptionBudget": PodDisruptionBudget}
    for item in items:
        by_kind[item["kind"]].append(models[item["kind"]].model_validate(item))
    return ClusterState(
        pods=tuple(by_kind["Pod"]),
        nodes=tuple(by_kind["Node"]),
        nodeclaims=tuple(by_kind["NodeClaim"]),
        pdbs=tuple(by_kind["PodDisruptionBudget"]),
    )


def run(
    pools: Sequence[NodePool],
    items: Sequence[Mapping[str, Any]],
    types: Sequence[InstanceType],
    *,
    at: datetime = AT,
    until_quiet: bool = False,
    gates: str | None = None,
    settings: KarpenterSettings | None = None,
    drifted: Sequence[str] = (),
) -> DisruptionForecast:
    s = settings or resolve(flags={"feature_gates": gates} if gates else {})
    return forecast(
        nodepools=pools,
        cluster=cluster(items),
        catalog_for=lambda _np: list(types),
        settings=s,
        at=at,
        until_quiet=until_quiet,
        drifted=drifted,
    )


def disrupted(result: DisruptionForecast) -> list[list[str]]:
    """Per command, the disrupted node names."""
    return [[c["node"] for c in cmd.candidates] for cmd in result.commands]


def methods(result: DisruptionForecast) -> list[str]:
    return [cmd.method for cmd in result.commands]
