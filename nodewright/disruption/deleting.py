"""Nodes already on their way out, as a simulation sees them: Karpenter's ``disrupted`` taint on a
candidate's Node, and the pods of deleting Nodes and NodeClaims (placing them on an uninitialized
node is no error)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from nodewright import labels
from nodewright.api.core import Node, Taint
from nodewright.api.karpenter import NodeClaim
from nodewright.cluster.state import ClusterState
from nodewright.scheduling.identity import Derived

_DISRUPTED: Final = Taint(key=labels.DISRUPTED_TAINT_KEY, effect="NoSchedule")


def mark_deleting(node: Node) -> Node:
    """A copy of ``node`` with Karpenter's ``karpenter.sh/disrupted:NoSchedule`` taint."""
    if any(t.key == labels.DISRUPTED_TAINT_KEY for t in node.spec.taints):
        return node
    spec = node.spec.model_copy(update={"taints": [*node.spec.taints, _DISRUPTED]})
    return node.model_copy(update={"spec": spec})


def _node_deleting(n: Node) -> str | None:
    if n.metadata.deletion_timestamp is not None or any(
        t.key == labels.DISRUPTED_TAINT_KEY for t in n.spec.taints
    ):
        return n.metadata.name
    return None


def _claim_deleting(nc: NodeClaim) -> str | None:
    if nc.metadata.deletion_timestamp is not None and nc.status.node_name:
        return nc.status.node_name
    return None


class Deleting:
    """Per Node and NodeClaim object, the node name it makes deleting (see
    :func:`deleting_pod_keys`), kept between calls over changing clusters."""

    def __init__(self) -> None:
        self._nodes = Derived(_node_deleting)
        self._claims = Derived(_claim_deleting)

    def names(self, nodes: Sequence[Node], claims: Sequence[NodeClaim]) -> set[str]:
        return {*self._nodes.facts(nodes).values(), *self._claims.facts(claims).values()}


def deleting_pod_keys(cluster: ClusterState, memo: Deleting | None = None) -> set[str]:
    """Pods of nodes already deleting (deletion timestamp or Karpenter's disrupted taint, or a
    deleting NodeClaim's node): placing them on an uninitialized node is no error. ``memo``: the
    answers per Node and NodeClaim object from earlier calls."""
    if memo is not None:
        names = memo.names(cluster.nodes, cluster.nodeclaims)
    else:
        names = {n for n in map(_node_deleting, cluster.nodes) if n}
        names.update(n for n in map(_claim_deleting, cluster.nodeclaims) if n)
    if not names:
        return set()
    return {p.key for p in cluster.pods if p.spec.node_name and p.spec.node_name in names}
