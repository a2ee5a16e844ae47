"""Golden vectors: every NodePool vector of tests/data/drift, and primitive vectors computed with
``github.com/mitchellh/hashstructure/v2`` v2.0.2 (the library Karpenter's ``NodePool.Hash()`` uses)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from nodewright.drift import nodepool_hash, template_hash
from nodewright.drift.gotypes import NODE_CLASS_REFERENCE, STRING, STRING_MAP
from nodewright.drift.hashstructure import (
    GO_INT,
    GoBool,
    GoField,
    GoFloat,
    GoInt,
    GoPtr,
    GoSlice,
    GoString,
    GoStruct,
    GoTime,
    GoTimeValue,
    HashOptions,
    fnv1_64,
    hash_value,
)

VECTORS = Path(__file__).resolve().parents[1] / "data" / "drift" / "nodepool-hash-vectors.yaml"


def _vectors() -> list[dict[str, Any]]:
    data = yaml.safe_load(VECTORS.read_text())
    assert len(data) >= 8, "the vector file lost entries"
    return list(data)


@pytest.mark.parametrize("vector", _vectors(), ids=lambda v: v["name"])
def test_nodepool_vector(vector: dict[str, Any]) -> None:
    assert template_hash(vector["template"]) == vector["hash"]
    nodepool = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": vector["name"]}}
    nodepool["spec"] = {"template": vector["template"], "weight": 10, "limits": {"cpu": "100"}}
    assert nodepool_hash(nodepool) == vector["hash"]


AWS = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ({}, "17307646073972311821"),
        ({"spec": {"nodeClassRef": AWS}}, "17369979337536258260"),
        ({"spec": {"nodeClassRef": AWS, "expireAfter": "720h"}}, "6821555240594823858"),
        ({"spec": {"nodeClassRef": AWS, "expireAfter": "Never"}}, "17369979337536258260"),
        (
            {"metadata": {"labels": {"team": "a"}}, "spec": {"nodeClassRef": AWS, "expireAfter": "720h"}},
            "1617844334411263980",
        ),
        (
            {
                "spec": {
                    "nodeClassRef": AWS,
                    "expireAfter": "720h",
                    "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
                }
            },
            "13579916569126205748",
        ),
        (
            {
                "spec": {
                    "nodeClassRef": AWS,
                    "expireAfter": "720h",
                    "startupTaints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
                }
            },
            "10086292261070021787",
        ),
    ],
)
def test_reference_table(template: dict[str, Any], expected: str) -> None:
    assert template_hash(template) == expected


def test_empty_template_is_fnv_of_type_name() -> None:
    assert template_hash({}) == str(fnv1_64(b"NodeClaimTemplate"))


def test_expire_after_equivalent_spellings() -> None:
    a = template_hash({"spec": {"nodeClassRef": AWS, "expireAfter": "720h"}})
    assert template_hash({"spec": {"nodeClassRef": AWS, "expireAfter": "30d"[:0] + "43200m"}}) == a
    assert template_hash({"spec": {"nodeClassRef": AWS, "expireAfter": "720h0m0s"}}) == a


def test_empty_labels_map_differs_from_absent() -> None:
    absent = template_hash({"spec": {"nodeClassRef": AWS}})
    empty = template_hash({"metadata": {"labels": {}}, "spec": {"nodeClassRef": AWS}})
    assert absent != empty


def test_crd_defaults_apply_720h() -> None:
    assert template_hash({"spec": {"nodeClassRef": AWS}}, crd_defaults=True) == "6821555240594823858"
    never = {"spec": {"nodeClassRef": AWS, "expireAfter": "Never"}}
    assert template_hash(never, crd_defaults=True) == "17369979337536258260"


SETTAG = GoStruct("setTag", (GoField("S", GoSlice(STRING), tag="set"),))


@pytest.mark.parametrize(
    ("value", "typ", "opts", "expected"),
    [
        ("", GoString(), None, 14695981039346656037),
        ("a", GoString(), None, 12638153115695167422),
        (0, GO_INT, None, 12161962213042174405),
        (1, GO_INT, None, 16390143479181108970),
        (1, GoInt(32), None, 4934814342159144266),
        (True, GoBool(), None, 12638153115695167454),
        (False, GoBool(), None, 12638153115695167455),
        (1.5, GoFloat(), None, 12161883048204943186),
        (["a", "b"], GoSlice(STRING), None, 2712570657419664240),
        (["b", "a"], GoSlice(STRING), None, 8012847830711252742),
        (["a", "b"], GoSlice(STRING), HashOptions(slices_as_sets=True), 3),
        ([], GoSlice(STRING), None, 0),
        ({}, STRING_MAP, None, 12161962213042174405),
        ({"a": "b"}, STRING_MAP, None, 3629586248519120669),
        ({"a": "b", "c": "d"}, STRING_MAP, None, 13905280474122715165),
        (None, GoPtr(NODE_CLASS_REFERENCE), None, 12161962213042174405),
        (None, GoPtr(NODE_CLASS_REFERENCE), HashOptions(zero_nil=True), 7152983402769661717),
        ({"Kind": "K", "Name": "N", "Group": "G"}, NODE_CLASS_REFERENCE, None, 8146596528399096923),
        ({"S": ["a", "b"]}, SETTAG, None, 6833451131472704911),
    ],
)
def test_primitive_vector(value: Any, typ: Any, opts: HashOptions | None, expected: int) -> None:
    assert hash_value(value, typ, opts) == expected


def test_map_order_independent() -> None:
    assert hash_value({"c": "d", "a": "b"}, STRING_MAP) == 13905280474122715165


def test_time_marshal_binary_layout() -> None:
    # 1970-01-01T00:00:00Z in UTC: version 1, seconds since year 1 = 62135596800, offset -1
    b = GoTimeValue(unix_seconds=0).marshal_binary()
    assert b == bytes([1]) + (62135596800).to_bytes(8, "big") + bytes(4) + b"\xff\xff"
    assert len(GoTimeValue(unix_seconds=0, offset_seconds=3601).marshal_binary()) == 16
    assert hash_value(GoTimeValue(unix_seconds=0), GoTime()) == fnv1_64(b)


def test_taint_time_added_is_hashed() -> None:
    base = {"spec": {"nodeClassRef": AWS, "taints": [{"key": "k", "effect": "NoSchedule"}]}}
    timed = {
        "spec": {
            "nodeClassRef": AWS,
            "taints": [{"key": "k", "effect": "NoSchedule", "timeAdded": "2024-01-01T00:00:00Z"}],
        }
    }
    assert template_hash(base) != template_hash(timed)
