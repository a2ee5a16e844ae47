"""The typed plan document and its one wire form (``PlanDocument.as_dict``, docs/cli.md ``nodewright
plan``): key order and optional parts as ``plan -o json`` prints them."""

from __future__ import annotations

import json
from dataclasses import replace

from nodewright.scheduling.plandoc import (
    ExistingNodePods,
    PlanDocument,
    PlannedLaunch,
    PlannedNodeClaim,
    PlanSummary,
    PoolCost,
    SkippedNodePool,
    StaticScaleDown,
)


def _claim(**kw: object) -> PlannedNodeClaim:
    base: dict[str, object] = {
        "name": "default-abcde",
        "node_pool": "default",
        "node_class": "default",
        "instance_types": ("m5.large", "m6i.large"),
        "launch": PlannedLaunch(
            instance_type="m5.large", zone="us-east-1a", capacity_type="spot", price=0.04
        ),
        "labels": {"karpenter.sh/nodepool": "default"},
        "requests": {"cpu": "1"},
        "pods": ("default/a",),
    }
    return PlannedNodeClaim(**{**base, **kw})  # type: ignore[arg-type]


def _doc(**kw: object) -> PlanDocument:
    base: dict[str, object] = {
        "node_claims": (_claim(),),
        "existing_nodes": (ExistingNodePods(name="n-1", pods=("default/b",)),),
        "pod_errors": {"default/c": "Failed to schedule pod, no"},
        "summary": PlanSummary(
            pending_pods=3,
            scheduled=2,
            new_node_claims=1,
            hourly_cost=0.04,
            monthly_cost=29.2,
            by_node_pool={"default": PoolCost(new_node_claims=1, hourly_cost=0.04, monthly_cost=29.2)},
        ),
    }
    return PlanDocument(**{**base, **kw})  # type: ignore[arg-type]


def test_the_minimal_document() -> None:
    d = _doc().as_dict()
    assert list(d) == ["nodeClaims", "existingNodes", "podErrors", "summary"]
    assert d["nodeClaims"][0] == {
        "name": "default-abcde",
        "nodePool": "default",
        "nodeClass": "default",
        "instanceTypes": ["m5.large", "m6i.large"],
        "launch": {"instanceType": "m5.large", "zone": "us-east-1a", "capacityType": "spot", "price": 0.04},
        "labels": {"karpenter.sh/nodepool": "default"},
        "requests": {"cpu": "1"},
        "pods": ["default/a"],
    }
    assert d["existingNodes"] == [{"name": "n-1", "pods": ["default/b"]}]
    assert list(d["summary"]) == [
        "pendingPods",
        "scheduled",
        "newNodeClaims",
        "hourlyCost",
        "monthlyCost",
        "byNodePool",
    ]
    json.dumps(d)  # plain JSON values only


def test_optional_claim_keys_follow_the_pods() -> None:
    c = _claim(
        taints=({"key": "k", "effect": "NoSchedule"},), min_values_relaxed=True, static=True, launch=None
    )
    d = c.as_dict()
    assert list(d)[-3:] == ["taints", "minValuesRelaxed", "static"] and d["launch"] is None


def test_the_round_notes_place_the_notes_key_before_what_is_not_the_solve() -> None:
    extras = {
        "skipped_node_pools": (SkippedNodePool(name="x", why="unmanaged"),),
        "static_scale_down": (StaticScaleDown(node_pool="fixed", node_claims=("fixed-a",)),),
        "notes": ("static note",),
        "karpenter": {"version": "1.14.1"},
    }
    late = _doc(**extras).as_dict()
    assert list(late)[4:] == ["skippedNodePools", "staticScaleDown", "notes", "karpenter"]
    doc = _doc(
        generated_pods={"default/w-0": "Deployment default/w"}, round_notes=("workload note",), **extras
    )
    early = doc.as_dict()
    assert list(early)[4:] == ["generatedPods", "notes", "skippedNodePools", "staticScaleDown", "karpenter"]
    assert early["notes"] == ["workload note", "static note"] == list(doc.all_notes)


def test_summary_extras_in_order() -> None:
    s = replace(
        _doc().summary,
        workload_pods=2,
        buffer_pods=0,
        static_node_claims=1,
        strategy="cost",
        karpenter_hourly_cost=0.05,
    )
    assert list(s.as_dict())[6:] == [
        "workloadPods",
        "bufferPods",
        "staticNodeClaims",
        "strategy",
        "karpenterHourlyCost",
    ]


def test_placements_map_pods_to_where_they_land() -> None:
    got = _doc().placements()
    assert got["default/a"].name == "default-abcde" and got["default/b"].name == "n-1"
