"""Candidate filtering, budget mapping and eviction cost, ported from kubernetes-sigs/karpenter
v1.14.1 ``pkg/controllers/disruption/suite_test.go`` (Describe "Candidate Filtering",
"BuildDisruptionBudgetMapping", "Pod Eviction Cost"); each test names its ``It``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import builders
import pytest
from disrupt_support import AT, DS_OWNER, cluster, itype, managed, nodepool, pod

from nodewright.api.core import Pod
from nodewright.disruption.candidates import EVENTUAL, GRACEFUL, budget_mapping, get_candidates
from nodewright.disruption.pods import PdbLimits
from nodewright.scheduling.existingnode import build_state_nodes
from nodewright.scheduling.podutil import eviction_cost

IT = itype("big", 1.0, cpu="8", memory="16Gi")
NODE_OWNER = {"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "n1-uid"}
DND = {"karpenter.sh/do-not-disrupt": "true"}


def _candidates(
    items: Sequence[Mapping[str, Any]], cls: str = GRACEFUL, *, types: bool = True
) -> tuple[list[str], list[str]]:
    c = cluster(items)
    state = build_state_nodes(c.nodes, c.nodeclaims, c.pods)
    pool = nodepool()
    cands, blocked = get_candidates(
        state,
        pools={"default": pool},
        types={"default": {IT.name: IT}} if types else {},
        pdbs=PdbLimits(c.pdbs),
        now=AT,
        disruption_class=cls,
    )
    return [x.name for x in cands], [b.reason for b in blocked]


def test_do_not_disrupt_pods_without_tgp() -> None:
    """It("should not consider candidates that have do-not-disrupt pods scheduled and no
    terminationGracePeriod")."""
    names, why = _candidates([*managed("n1", IT), pod("p", "n1", annotations=DND)])
    assert names == [] and why == ['Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/p)']


def test_do_not_disrupt_mirror_and_daemonset_pods() -> None:
    """It("should not consider candidates that have do-not-disrupt mirror pods scheduled") and
    It("... daemonset pods scheduled")."""
    for owner in (NODE_OWNER, DS_OWNER):
        assert _candidates([*managed("n1", IT), pod("p", "n1", owner=owner, annotations=DND)])[0] == []


@pytest.mark.parametrize(
    ("cls", "tgp", "ok"),
    [(EVENTUAL, "1h", True), (GRACEFUL, "1h", False), (EVENTUAL, None, False), (GRACEFUL, None, False)],
)
def test_termination_grace_period_exception(cls: str, tgp: str | None, ok: bool) -> None:
    """It("should consider candidates that have do-not-disrupt pods scheduled with a
    terminationGracePeriod set for eventual disruption"), It("should not consider ... for graceful
    disruption"), It("should not consider ... without a terminationGracePeriod set for eventual
    disruption"), It("should not consider candidates that have do-not-disrupt pods without a
    terminationGracePeriod set for graceful disruption"); the same four for PDB-blocked pods (It("should
    not consider candidates that have fully blocking PDBs without a terminationGracePeriod set for
    graceful disruption"))."""
    dnd = [*managed("n1", IT, termination_grace_period=tgp), pod("p", "n1", annotations=DND)]
    blocked_pdb = [
        *managed("n1", IT, termination_grace_period=tgp),
        pod("p", "n1", labels={"app": "a"}),
        builders.pdb("a", match_labels={"app": "a"}),
    ]
    for items in (dnd, blocked_pdb):
        assert (_candidates(items, cls)[0] == ["n1"]) is ok


def test_terminating_and_terminal_do_not_disrupt_pods() -> None:
    """It("should consider candidates that have do-not-disrupt terminating pods") and
    It("... terminal pods")."""
    assert _candidates([*managed("n1", IT), pod("p", "n1", annotations=DND, deleting=True)])[0] == ["n1"]
    terminal = pod("p", "n1", annotations=DND)
    terminal["status"]["phase"] = "Succeeded"
    assert _candidates([*managed("n1", IT), terminal])[0] == ["n1"]


def test_do_not_disrupt_on_nodes() -> None:
    """It("should not consider candidates that have do-not-disrupt on nodes")."""
    names, why = _candidates([*managed("n1", IT, node_annotations=DND)])
    assert names == [] and why == [
        'Disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation'
    ]


def test_multiple_pdbs_on_the_same_pod() -> None:
    """It("should not consider candidates that have multiple PDBs on the same pod")."""
    items = [
        *managed("n1", IT),
        pod("p", "n1", labels={"app": "a"}),
        builders.pdb("a1", match_labels={"app": "a"}, disruptions_allowed=5),
        builders.pdb("a2", match_labels={"app": "a"}, disruptions_allowed=5),
    ]
    names, why = _candidates(items)
    assert names == [] and why == [
        "Eviction does not support multiple PDBs (PodDisruptionBudget(s)=[default/a1 default/a2])"
    ]


def test_fully_blocking_pdbs() -> None:
    """It("should not consider candidates that have fully blocking PDBs"), It("... on daemonset
    pods"), It("should consider candidates that have fully blocking PDBs on mirror pods"), It("... on
    terminal pods"), It("... on terminating pods")."""
    block = builders.pdb("a", match_labels={"app": "a"}, max_unavailable=0)
    assert _candidates([*managed("n1", IT), pod("p", "n1", labels={"app": "a"}), block])[0] == []
    assert (
        _candidates([*managed("n1", IT), pod("p", "n1", labels={"app": "a"}, owner=DS_OWNER), block])[0] == []
    )
    assert _candidates([*managed("n1", IT), pod("p", "n1", labels={"app": "a"}, owner=NODE_OWNER), block])[
        0
    ] == ["n1"]
    assert _candidates([*managed("n1", IT), pod("p", "n1", labels={"app": "a"}, deleting=True), block])[
        0
    ] == ["n1"]
    terminal = pod("p", "n1", labels={"app": "a"})
    terminal["status"]["phase"] = "Failed"
    assert _candidates([*managed("n1", IT), terminal, block])[0] == ["n1"]


def test_pdb_always_allow_unready_pod() -> None:
    """pdb.go isEvictable: unhealthyPodEvictionPolicy AlwaysAllow lets an unready pod go."""
    p = pod("p", "n1", labels={"app": "a"})
    p["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    items = [
        *managed("n1", IT),
        p,
        builders.pdb("a", match_labels={"app": "a"}, unhealthy_pod_eviction_policy="AlwaysAllow"),
    ]
    assert _candidates(items)[0] == ["n1"]


def test_node_and_nodeclaim_representations() -> None:
    """It("should not consider candidates that has just a Node representation"), It("... just a
    NodeClaim representation"), It("should not consider candidates that are deleting"), It("... that
    aren't yet initialized"), It("... not owned by a NodePool"), It("... have a non-existent NodePool")."""
    node, claim = managed("n1", IT)
    assert _candidates([node]) == ([], [])  # unmanaged: no event (no NodeClaim)
    assert _candidates([claim]) == ([], ["Nodeclaim does not have an associated node"])
    assert _candidates(managed("n1", IT, deleting=True))[1] == ["Node is deleting or marked for deletion"]
    assert _candidates(managed("n1", IT, initialized=False))[1] == ["Node isn't initialized"]
    assert _candidates(managed("n1", IT, pool="other"))[1] == ["NodePool not found (NodePool=other)"]
    unlabelled = managed("n1", IT)
    for obj in unlabelled:
        del obj["metadata"]["labels"]["karpenter.sh/nodepool"]
    assert _candidates(unlabelled)[1] == ["Node doesn't have required label (label=karpenter.sh/nodepool)"]


def test_missing_labels_and_unknown_type_are_still_candidates() -> None:
    """It("should consider candidates that do not have the karpenter.sh/capacity-type label"), the
    zone and instance-type variants, and It("should consider candidates that have an instance type
    that cannot be resolved") (consolidation filters them later with its own texts)."""
    items = managed("n1", IT)
    for obj in items:
        del obj["metadata"]["labels"]["karpenter.sh/capacity-type"]
    assert _candidates(items)[0] == ["n1"]
    other = managed("n1", itype("unknown", 1.0))
    assert _candidates(other)[0] == ["n1"]


# -- BuildDisruptionBudgetMapping ------------------------------------------------------------------
def _mapping(
    items: Sequence[Mapping[str, Any]], budgets: Sequence[Mapping[str, Any]]
) -> tuple[int, int, int]:
    c = cluster(items)
    got = budget_mapping(
        build_state_nodes(c.nodes, c.nodeclaims, c.pods), [nodepool(budgets=budgets)], "Drifted", AT
    )
    b = got["default"]
    return b.nodes, b.disrupting, b.remaining


TEN = [x for i in range(10) for x in managed(f"n{i}", IT)]


def test_budget_mapping_unmanaged_and_uninitialized() -> None:
    """It("should not consider nodes that are not managed as part of disruption count") and
    It("should not consider nodes that are not initialized as part of disruption count")."""
    unmanaged = builders.node("u", labels={}, capacity={"cpu": "4"})
    assert _mapping([*TEN, unmanaged], [{"nodes": "100%"}]) == (10, 0, 10)
    assert _mapping([*TEN, *managed("x", IT, initialized=False)], [{"nodes": "100%"}]) == (10, 0, 10)


def test_budget_mapping_terminating_condition() -> None:
    """It("should not consider nodes that have the terminating status condition as part of
    disruption count")."""
    items = managed("x", IT)
    items[1]["status"]["conditions"].append({"type": "InstanceTerminating", "status": "True"})
    assert _mapping([*TEN, *items], [{"nodes": "100%"}]) == (10, 0, 10)


def test_budget_mapping_never_negative_and_counts_deleting_and_not_ready() -> None:
    """It("should not return a negative disruption value"), It("should consider nodes with a deletion
    timestamp set and MarkedForDeletion to the disruption count"), It("should consider not ready
    nodes to the disruption count")."""
    deleting = [x for i in range(3) for x in managed(f"d{i}", IT, deleting=True)]
    assert _mapping([*TEN, *deleting], [{"nodes": "1"}]) == (13, 3, 0)
    assert _mapping([*TEN, *deleting], [{"nodes": "100%"}]) == (13, 3, 10)
    not_ready = [x for i in range(2) for x in managed(f"r{i}", IT, ready=False)]
    assert _mapping([*TEN, *not_ready], [{"nodes": "100%"}]) == (12, 2, 10)


def test_budget_percent_rounds_up_and_schedules() -> None:
    """nodepool.go GetAllowedDisruptions: a percentage rounds up; a scheduled budget counts only
    while active at --at (2026-11-20T12:00Z is a Friday)."""
    assert _mapping(TEN, [{"nodes": "15%"}])[2] == 2
    active = {"nodes": "0", "schedule": "0 9 * * *", "duration": "8h"}
    inactive = {"nodes": "0", "schedule": "0 0 * * 0", "duration": "1h"}
    assert _mapping(TEN, [{"nodes": "100%"}, active])[2] == 0
    assert _mapping(TEN, [{"nodes": "100%"}, inactive])[2] == 10


# -- EvictionCost ----------------------------------------------------------------------------------
def _cost(annotations: Mapping[str, str] | None = None, priority: int | None = None) -> float:
    body = builders.pod("p")
    if annotations:
        body["metadata"]["annotations"] = dict(annotations)
    if priority is not None:
        body["spec"]["priority"] = priority
    return eviction_cost(Pod.model_validate(body))


def test_eviction_cost() -> None:
    """Describe("Pod Eviction Cost"): standard 1.0; deletion cost and priority raise or lower it,
    monotonically; clamped to [-10, 10]."""
    dc = "controller.kubernetes.io/pod-deletion-cost"
    assert _cost() == 1.0
    assert _cost({dc: "100"}) > 1.0 > _cost({dc: "-100"})
    assert _cost({dc: "101"}) > _cost({dc: "100"}) > _cost({dc: "99"})
    assert _cost(priority=1) > 1.0 > _cost(priority=-1)
    assert _cost(priority=2_000_000_000) == 10.0 and _cost(priority=-2_000_000_000) == -10.0
