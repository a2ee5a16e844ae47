"""Node repair: which nodes Karpenter replaces because a node condition says they are broken
(feature gate NodeRepair).

Translated from kubernetes-sigs/karpenter v1.14.1 ``pkg/controllers/node/health/controller.go``:
a node with a NodeClaim (``NodeClaimForNode``) matches a repair policy when its condition of the
policy's type has the policy's status; of several, the one reaching its toleration first counts.
It is repaired (its NodeClaim deleted, forcefully, ignoring budgets and do-not-disrupt) once
``lastTransitionTime + toleration`` has passed, unless more than 20% (rounded up) of its NodePool's
nodes (of the cluster's, for a NodeClaim without a NodePool) match a policy: then it waits.
The policies are the AWS provider's (aws/karpenter-provider-aws v1.14.1
``pkg/cloudprovider/cloudprovider.go`` ``RepairPolicies``). The controller runs only with the
NodeRepair gate; without it the report still lists the nodes, marked as not repaired.

Boundary: pure, over raw Node and NodeClaim mappings and an explicit clock (``now``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from nodewright import labels
from nodewright.goduration import parse_rfc3339


@dataclass(frozen=True)
class RepairPolicy:
    condition_type: str
    condition_status: str
    toleration: timedelta


AWS_REPAIR_POLICIES: Final = (
    RepairPolicy("Ready", "False", timedelta(minutes=30)),
    RepairPolicy("Ready", "Unknown", timedelta(minutes=30)),
    RepairPolicy("AcceleratedHardwareReady", "False", timedelta(minutes=10)),
    RepairPolicy("StorageReady", "False", timedelta(minutes=30)),
    RepairPolicy("NetworkingReady", "False", timedelta(minutes=30)),
    RepairPolicy("KernelReady", "False", timedelta(minutes=30)),
    RepairPolicy("ContainerRuntimeReady", "False", timedelta(minutes=30)),
)
ALLOWED_UNHEALTHY_PERCENT: Final = 20

REPAIR: Final = "Repair"  # the NodeClaim is deleted now
TOLERATING: Final = "Tolerating"  # unhealthy, toleration not over yet
BLOCKED: Final = "Blocked"  # more than 20% of the pool (cluster) unhealthy
DELETING: Final = "Deleting"  # the NodeClaim is already being deleted
GATE_OFF: Final = "NotRepaired"  # the NodeRepair gate is off


@dataclass(frozen=True, kw_only=True)
class NodeRepair:
    node: str
    node_claim: str
    node_pool: str | None
    condition: str  # "Ready=False"
    since: datetime | None
    eligible_at: datetime | None
    state: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "nodeClaim": self.node_claim,
            "nodePool": self.node_pool,
            "condition": self.condition,
            "since": _iso(self.since),
            "eligibleAt": _iso(self.eligible_at),
            "state": self.state,
            "reason": self.reason,
        }


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _map(v: Any) -> Mapping[str, Any]:
    # a plain dict (as decoded) first: the Mapping ABC check is slow over 10,000s of nodes
    return v if type(v) is dict or isinstance(v, Mapping) else {}


def _conditions(node: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    conds = _map(node.get("status")).get("conditions") or []
    return {str(c.get("type")): c for c in conds if type(c) is dict or isinstance(c, Mapping)}


def unhealthy_condition(
    node: Mapping[str, Any], policies: Sequence[RepairPolicy]
) -> tuple[Mapping[str, Any], RepairPolicy] | None:
    """``findUnhealthyConditions``: the matching condition that reaches its toleration first."""
    conds = _conditions(node)
    best: tuple[Mapping[str, Any], RepairPolicy] | None = None
    best_at: datetime | None = None
    for policy in policies:
        cond = conds.get(policy.condition_type)
        if cond is None or str(cond.get("status")) != policy.condition_status:
            continue
        since = parse_rfc3339(cond.get("lastTransitionTime"))
        at = None if since is None else since + policy.toleration
        if best is None or (at is not None and (best_at is None or at < best_at)):
            best, best_at = (cond, policy), at
    return best


def _managed(claim: Mapping[str, Any]) -> bool:
    """``nodeclaim.IsManaged``: the NodeClaim's nodeClassRef is one of the provider's (no ref: kept)."""
    from nodewright.api.karpenter import unmanaged_reason_of

    return unmanaged_reason_of(claim) is None


def allowed_unhealthy(total: int) -> int:
    """``intstr.GetScaledValueFromIntOrPercent("20%", total, roundUp=true)``."""
    return math.ceil(ALLOWED_UNHEALTHY_PERCENT * total / 100)


def node_repairs(
    nodes: Iterable[Mapping[str, Any]],
    nodeclaims: Iterable[Mapping[str, Any]],
    *,
    now: datetime,
    enabled: bool,
    policies: Sequence[RepairPolicy] = AWS_REPAIR_POLICIES,
) -> list[NodeRepair]:
    """Every node with an unhealthy condition, and what the node health controller does with it at ``now``."""
    node_list = [n for n in nodes if type(n) is dict or isinstance(n, Mapping)]
    by_provider: dict[str, Mapping[str, Any]] = {}
    by_node_name: dict[str, Mapping[str, Any]] = {}
    for c in nodeclaims:
        status = _map(c.get("status"))
        if status.get("providerID"):
            by_provider[str(status["providerID"])] = c
        if status.get("nodeName"):
            by_node_name[str(status["nodeName"])] = c
    found_by_node = [unhealthy_condition(n, policies) for n in node_list]
    unhealthy = [found is not None for found in found_by_node]
    per_pool_total: dict[str, int] = {}
    per_pool_bad: dict[str, int] = {}
    for n, bad in zip(node_list, unhealthy, strict=True):
        pool = _map(_map(n.get("metadata")).get("labels")).get(labels.NODEPOOL)
        if pool:
            per_pool_total[pool] = per_pool_total.get(pool, 0) + 1
            per_pool_bad[pool] = per_pool_bad.get(pool, 0) + int(bad)
    cluster_ok = sum(unhealthy) <= allowed_unhealthy(len(node_list))
    out: list[NodeRepair] = []
    for n, found in zip(node_list, found_by_node, strict=True):
        if found is None:
            continue
        meta = _map(n.get("metadata"))
        name = str(meta.get("name", ""))
        claim = by_provider.get(str(_map(n.get("spec")).get("providerID", ""))) or by_node_name.get(name)
        if claim is None or not _managed(claim):
            continue  # not Karpenter's node: the controller ignores it
        cond, policy = found
        claim_meta = _map(claim.get("metadata"))
        pool = _map(claim_meta.get("labels")).get(labels.NODEPOOL)
        since = parse_rfc3339(cond.get("lastTransitionTime"))
        eligible = None if since is None else since + policy.toleration
        what = f"{policy.condition_type}={policy.condition_status}"
        if claim_meta.get("deletionTimestamp"):
            state, reason = DELETING, "the NodeClaim is already being deleted"
        elif eligible is not None and now < eligible:
            state, reason = TOLERATING, f"{what} tolerated for {_minutes(policy.toleration)}"
        elif pool and per_pool_bad.get(pool, 0) > allowed_unhealthy(per_pool_total.get(pool, 0)):
            state = BLOCKED
            reason = (
                f"{per_pool_bad[pool]} of {per_pool_total[pool]} nodes of NodePool {pool} are unhealthy: "
                f"more than {ALLOWED_UNHEALTHY_PERCENT}% nodes are unhealthy in the nodepool"
            )
        elif not pool and not cluster_ok:
            state, reason = (
                BLOCKED,
                f"more then {ALLOWED_UNHEALTHY_PERCENT}% nodes are unhealthy in the cluster",
            )
        else:
            state, reason = (
                REPAIR,
                f"{what} for longer than {_minutes(policy.toleration)}: the NodeClaim is deleted",
            )
        if not enabled and state in (REPAIR, TOLERATING, BLOCKED):
            reason = f"{reason} (feature gate NodeRepair is off: Karpenter does not repair nodes)"
            state = GATE_OFF
        out.append(
            NodeRepair(
                node=name,
                node_claim=str(claim_meta.get("name", "")),
                node_pool=str(pool) if pool else None,
                condition=what,
                since=since,
                eligible_at=eligible,
                state=state,
                reason=reason,
            )
        )
    return sorted(out, key=lambda r: (r.node_pool or "", r.node))


def _minutes(d: timedelta) -> str:
    return f"{int(d.total_seconds() // 60)}m"
