"""Requirements algebra: Karpenter's semantics and error strings (reference 1.9, scenarios 2.1)."""

from __future__ import annotations

from typing import Any

import pytest

from nodewright import labels as wk
from nodewright.algebra.requirements import (
    ALLOW_UNDEFINED_WELL_KNOWN,
    MAX_INT,
    Requirement,
    RequirementError,
    Requirements,
)
from nodewright.api.core import Pod
from nodewright.api.karpenter import NodeSelectorRequirementWithMinValues
from nodewright.scheduling.podrequirements import pod_requirements

R = Requirement.new
WK = ALLOW_UNDEFINED_WELL_KNOWN


def reqs(*rs: Requirement) -> Requirements:
    return Requirements(rs)


# -- construction and printing ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("operator", "values", "text"),
    [
        ("In", ["b", "a"], "k In [a b]"),
        ("NotIn", ["a"], "k NotIn [a]"),
        ("Exists", [], "k Exists"),
        ("DoesNotExist", [], "k DoesNotExist"),
        ("In", [], "k DoesNotExist"),
        ("Gt", ["8"], "k Exists >=9"),
        ("Lt", ["8"], "k Exists <=7"),
        ("Gte", ["16"], "k Exists >=16"),
        ("Lte", ["2"], "k Exists <=2"),
        ("Gt", [str(MAX_INT)], "k DoesNotExist"),
        ("In", list("abcdefg"), "k In [a b c d e and 2 others]"),
    ],
)
def test_algebra_requirement_string(operator: str, values: list[str], text: str) -> None:
    assert str(R("k", operator, values)) == text


def test_algebra_requirement_min_values_string() -> None:
    assert str(R("k", "In", ["a"], min_values=2)) == "k In [a] minValues 2"
    assert repr(R("k", "Exists")) == "Requirement('k Exists')"


def test_algebra_operator_readback() -> None:
    assert R("k", "Gt", ["1"]).operator == "Exists"
    assert R("k", "NotIn", ["3"]).intersection(R("k", "Lt", ["5"])).operator == "NotIn"
    assert R("k", "NotIn", ["x"]).intersection(R("k", "Lt", ["5"])).operator == "Exists"  # x is out of bounds
    assert R("k", "In", ["1", "7"]).intersection(R("k", "Lt", ["5"])).operator == "In"


def test_algebra_normalises_beta_keys() -> None:
    for beta, stable in wk.NORMALIZED_LABELS.items():
        assert R(beta, "Exists").key == stable
    r = reqs(R("failure-domain.beta.kubernetes.io/zone", "In", ["z1"]))
    assert r.has(wk.ZONE)


def test_algebra_requirement_value_semantics() -> None:
    r = R("k", "In", ["a"])
    assert hash(r) == hash(R("k", "In", ["a"]))
    assert r == R("k", "In", ["a"]) and r != R("k", "NotIn", ["a"])
    assert r != "k In [a]"
    assert {r, R("k", "In", ["a"])} == {r}


# -- malformed input: one test per case -------------------------------------------------------
def test_algebra_reject_unknown_operator() -> None:
    with pytest.raises(RequirementError) as info:
        R("k", "Equals", ["a"])
    assert str(info.value) == (
        "requirement 'k': unknown operator 'Equals'; expected one of In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte"
    )


def test_algebra_reject_non_integer_bound() -> None:
    with pytest.raises(RequirementError, match=r"operator Gt needs exactly one integer value, got \['abc'\]"):
        R("k", "Gt", ["abc"])


def test_algebra_reject_two_bounds() -> None:
    with pytest.raises(RequirementError, match="operator Lt needs exactly one integer value"):
        R("k", "Lt", ["1", "2"])


def test_algebra_reject_missing_bound() -> None:
    with pytest.raises(RequirementError, match="operator Gte needs exactly one integer value"):
        R("k", "Gte", [])


def test_algebra_reject_bound_out_of_int64() -> None:
    with pytest.raises(RequirementError, match="operator Lte"):
        R("k", "Lte", [str(2**63)])


def test_algebra_reject_float_bound() -> None:
    with pytest.raises(RequirementError, match="operator Gt"):
        R("k", "Gt", ["1.5"])


# -- membership -------------------------------------------------------------------------------
def test_algebra_has() -> None:
    assert R("k", "In", ["a"]).has("a") and not R("k", "In", ["a"]).has("b")
    assert R("k", "NotIn", ["a"]).has("b") and not R("k", "NotIn", ["a"]).has("a")
    assert R("k", "Exists").has("anything")
    assert not R("k", "DoesNotExist").has("anything")
    gt = R("k", "Gt", ["8"])
    assert gt.has("9") and gt.has("+9") and not gt.has("8") and not gt.has("x") and not gt.has(" 9")


def test_algebra_len() -> None:
    assert len(R("k", "In", ["a", "b"])) == 2
    assert len(R("k", "NotIn", ["a"])) == MAX_INT - 1
    assert len(R("k", "DoesNotExist")) == 0


def test_algebra_any() -> None:
    assert R("k", "In", ["b", "a"]).any() == "a"
    assert R("k", "DoesNotExist").any() == ""
    assert R("k", "Exists").any() == "0"
    assert R("k", "Gt", ["8"]).any() == "9"
    assert R("k", "NotIn", ["9", "10"]).intersection(R("k", "Gt", ["8"])).any() == "11"


# -- intersection -----------------------------------------------------------------------------
def test_algebra_intersection_bounds_collapse() -> None:
    r = R("k", "Gte", ["5"]).intersection(R("k", "Lte", ["3"]))
    assert str(r) == "k DoesNotExist"
    both = R("k", "Gte", ["3"]).intersection(R("k", "Lte", ["5"]))
    assert str(both) == "k Exists >=3 <=5"
    assert both.has("4") and not both.has("6")


def test_algebra_intersection_filters_values_and_drops_bounds() -> None:
    r = R("k", "In", ["1", "5", "9", "x"]).intersection(R("k", "Gt", ["4"]))
    assert str(r) == "k In [5 9]"
    assert r.gte is None


def test_algebra_intersection_min_values_max() -> None:
    r = R("k", "In", ["a", "b"], min_values=1).intersection(R("k", "Exists", min_values=2))
    assert r.min_values == 2


def test_algebra_intersection_returns_self_when_unchanged() -> None:
    a = R("k", "In", ["a"])
    assert a.intersection(R("k", "Exists")) is a


# -- Requirements -----------------------------------------------------------------------------
def test_algebra_get_missing_is_exists() -> None:
    assert str(Requirements().get("k")) == "k Exists"


def test_algebra_add_intersects() -> None:
    r = reqs(R(wk.ZONE, "In", ["z1", "z2"]))
    r.add(R(wk.ZONE, "NotIn", ["z1"]))
    assert str(r.get(wk.ZONE)) == f"{wk.ZONE} In [z2]"
    assert len(r) == 1 and list(r) == [wk.ZONE] and wk.ZONE in r


def test_algebra_copy_on_write() -> None:
    a = reqs(R("k", "In", ["a", "b"]))
    b = a.copy()
    b.add(R("k", "In", ["a"]))
    b.add(R("j", "Exists"))
    assert str(a) == "k In [a b]"
    assert str(b) == "j Exists, k In [a]"
    a.add(R("k", "In", ["b"]))
    assert str(b.get("k")) == "k In [a]"
    u = a.union(b)
    assert str(u) == "j Exists, k DoesNotExist"
    assert str(a) == "k In [b]"
    assert a.intersection(reqs(R("k", "Exists"))) == a


def test_algebra_from_labels_and_labels() -> None:
    r = Requirements.from_labels({"team": "a", wk.ZONE: "z1", wk.HOSTNAME: "h"})
    r.add(R("multi", "In", ["x", "y"]), R("custom", "Exists"), R("node.kubernetes.io/role", "In", ["w"]))
    assert r.labels() == {"node.kubernetes.io/role": "w", "team": "a"}
    assert r.labels(include_restricted=True) == {
        wk.HOSTNAME: "h",
        "node.kubernetes.io/role": "w",
        "team": "a",
        wk.ZONE: "z1",
    }
    assert r.any_labels() == {"custom": "0", "multi": "x", "node.kubernetes.io/role": "w", "team": "a"}


def test_algebra_string_hides_hostname() -> None:
    r = Requirements.from_labels({wk.HOSTNAME: "h", "a": "b"})
    assert str(r) == "a In [b]"
    assert repr(r) == "Requirements('a In [b]')"


def test_algebra_from_node_selector_requirements_min_values() -> None:
    nsrs = [
        NodeSelectorRequirementWithMinValues(
            key=wk.INSTANCE_FAMILY, operator="In", values=["m5", "c5"], min_values=2
        ),
        NodeSelectorRequirementWithMinValues(key=wk.INSTANCE_CPU, operator="Gt", values=["2"]),
        NodeSelectorRequirementWithMinValues(key=wk.INSTANCE_CPU, operator="Lt", values=["17"]),
    ]
    r = Requirements.from_node_selector_requirements(nsrs)
    assert r.has_min_values()
    assert r.get(wk.INSTANCE_FAMILY).min_values == 2
    assert r.node_selector_requirements() == [
        {"key": wk.INSTANCE_CPU, "operator": "Gte", "values": ["3"]},
        {"key": wk.INSTANCE_CPU, "operator": "Lte", "values": ["16"]},
        {"key": wk.INSTANCE_FAMILY, "operator": "In", "values": ["c5", "m5"], "minValues": 2},
    ]
    assert R("k", "Exists").node_selector_requirements() == [{"key": "k", "operator": "Exists"}]
    assert R("k", "Lt", ["3"]).node_selector_requirements() == [
        {"key": "k", "operator": "Lte", "values": ["2"]}
    ]


# -- compatible / intersects: Karpenter's texts and scenarios (pkg/scheduling/requirements_test.go)
NODEPOOL = reqs(R("test-key", "In", ["test-value"]), R(wk.ZONE, "In", ["test-zone-1", "test-zone-2"]))


def test_algebra_scenario_1_label_mismatch() -> None:
    pod = Requirements.from_labels({"test-key": "different-value"})
    assert NODEPOOL.compatible(pod, allow_undefined=WK) == (
        "key test-key, test-key In [different-value] not in test-key In [test-value]"
    )


def test_algebra_scenario_2_undefined_custom_label() -> None:
    pod = Requirements.from_labels({"other-key": "v"})
    assert NODEPOOL.compatible(pod, allow_undefined=WK) == 'label "other-key" does not have known values'


@pytest.mark.parametrize(
    ("operator", "ok"), [("NotIn", True), ("DoesNotExist", True), ("Exists", False), ("In", False)]
)
def test_algebra_scenario_3_undefined_key_operators(operator: str, ok: bool) -> None:
    pod = reqs(R("custom", operator, ["test-value"] if operator in ("In", "NotIn") else []))
    assert (NODEPOOL.compatible(pod, allow_undefined=WK) is None) == ok


def test_algebra_scenario_5_zone_mismatch_text() -> None:
    pool = reqs(R(wk.ZONE, "In", ["test-zone-1"]))
    pod = Requirements.from_labels({wk.ZONE: "test-zone-2"})
    assert pool.compatible(pod, allow_undefined=WK) == (
        "key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [test-zone-2] not in "
        "topology.kubernetes.io/zone In [test-zone-1]"
    )


def test_algebra_scenario_6_not_in_all_zones() -> None:
    pool = reqs(R(wk.ZONE, "In", ["test-zone-1", "test-zone-2", "test-zone-3"]))
    assert (
        pool.compatible(
            reqs(R(wk.ZONE, "NotIn", ["test-zone-1", "test-zone-2", "unknown"])), allow_undefined=WK
        )
        is None
    )
    err = pool.compatible(
        reqs(R(wk.ZONE, "NotIn", ["test-zone-1", "test-zone-2", "test-zone-3"])), allow_undefined=WK
    )
    assert err == (
        "key topology.kubernetes.io/zone, topology.kubernetes.io/zone NotIn [test-zone-1 test-zone-2 test-zone-3] "
        "not in topology.kubernetes.io/zone In [test-zone-1 test-zone-2 test-zone-3]"
    )


@pytest.mark.parametrize(
    ("operator", "bound", "fits"),
    [("Gt", "8", ["16"]), ("Lt", "8", ["2", "4"]), ("Gte", "16", ["16"]), ("Lte", "2", ["2"])],
)
def test_algebra_scenario_7_integer_bounds(operator: str, bound: str, fits: list[str]) -> None:
    pool = reqs(R("integer", operator, [bound]))
    for cpu in ["2", "4", "8", "16"]:
        assert (pool.intersects(Requirements.from_labels({"integer": cpu})) is None) == (cpu in fits)


def test_algebra_scenario_9_in_and_exists_same_term() -> None:
    pod = reqs(R(wk.ZONE, "In", ["non-existent-zone"]), R(wk.ZONE, "Exists"))
    assert NODEPOOL.compatible(pod, allow_undefined=WK) is not None


def test_algebra_scenario_10_in_and_not_in_share_node() -> None:
    pool = reqs(R("test-key", "In", ["test-value", "another-value"]))
    claim = pool.copy()
    claim.add_all(reqs(R("test-key", "In", ["test-value"])))
    assert claim.compatible(reqs(R("test-key", "NotIn", ["another-value"]))) is None
    assert claim.compatible(reqs(R("test-key", "In", ["another-value"]))) is not None


def test_algebra_both_negative_operators_always_intersect() -> None:
    a = reqs(R("k", "DoesNotExist"))
    assert a.intersects(reqs(R("k", "NotIn", ["x"]))) is None
    assert a.intersects(reqs(R("k", "DoesNotExist"))) is None
    assert a.intersects(reqs(R("k", "In", ["x"]))) == "key k, k In [x] not in k DoesNotExist"


def test_algebra_intersects_reports_every_key_sorted() -> None:
    a = reqs(R("b", "In", ["1"]), R("a", "In", ["1"]))
    b = reqs(R("b", "In", ["2"]), R("a", "In", ["2"]))
    assert a.intersects(b) == "key a, a In [2] not in a In [1]; key b, b In [2] not in b In [1]"


def test_algebra_compatible_without_allow_undefined_rejects_well_known() -> None:
    node = Requirements.from_labels({"team": "a"})
    pod = Requirements.from_labels({wk.ZONE: "z"})
    assert node.compatible(pod) == 'label "topology.kubernetes.io/zone" does not have known values'
    assert node.compatible(pod, allow_undefined=WK) is None
    assert not node.is_compatible(pod)


def test_algebra_typo_hint_suffix() -> None:
    pod = Requirements.from_labels({"zone": "z"})
    err = NODEPOOL.compatible(pod, allow_undefined=WK)
    assert err == 'label "zone" does not have known values (typo of "topology.kubernetes.io/zone"?)'


def test_algebra_typo_hint_edit_distance() -> None:
    pod = Requirements.from_labels({"topology.kubernetes.io/zoen": "z"})
    err = NODEPOOL.compatible(pod, allow_undefined=WK)
    assert err == (
        'label "topology.kubernetes.io/zoen" does not have known values (typo of "topology.kubernetes.io/zone"?)'
    )


def test_algebra_typo_hint_existing_key() -> None:
    pool = reqs(R("example.com/team-name", "In", ["a"]))
    err = pool.compatible(Requirements.from_labels({"example.com/team-nam": "a"}))
    assert err == 'label "example.com/team-nam" does not have known values (typo of "example.com/team-name"?)'


# -- pods ---------------------------------------------------------------------------------------
def _pod(spec: dict[str, Any]) -> Pod:
    return Pod.model_validate({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec})


def test_algebra_pod_requirements() -> None:
    term = {"matchExpressions": [{"key": wk.ZONE, "operator": "In", "values": ["z1", "z2", "z3"]}]}
    pod = _pod(
        {
            "containers": [{"name": "c"}],
            "nodeSelector": {wk.ARCH: "amd64"},
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [term, {"matchExpressions": []}]
                    },
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 1,
                            "preference": {
                                "matchExpressions": [{"key": wk.ZONE, "operator": "In", "values": ["z1"]}]
                            },
                        },
                        {
                            "weight": 5,
                            "preference": {
                                "matchExpressions": [{"key": wk.ZONE, "operator": "In", "values": ["z2"]}]
                            },
                        },
                    ],
                }
            },
        }
    )
    assert str(pod_requirements(pod)) == "kubernetes.io/arch In [amd64], topology.kubernetes.io/zone In [z2]"
    assert str(pod_requirements(pod, include_preferred=False)) == (
        "kubernetes.io/arch In [amd64], topology.kubernetes.io/zone In [z1 z2 z3]"
    )
    assert str(pod_requirements(_pod({"containers": [{"name": "c"}]}))) == ""


def test_algebra_from_labels_beta_and_stable_keys_intersect() -> None:
    r = Requirements.from_labels({"failure-domain.beta.kubernetes.io/zone": "z1", wk.ZONE: "z2"})
    assert str(r) == "topology.kubernetes.io/zone DoesNotExist"
    same = Requirements.from_labels({"failure-domain.beta.kubernetes.io/zone": "z1", wk.ZONE: "z1"})
    assert str(same) == "topology.kubernetes.io/zone In [z1]"
