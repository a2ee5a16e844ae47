"""Properties of NodePool.Hash(): what changes the hash and what never does."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from nodewright.drift import nodepool_hash, template_hash
from nodewright.goduration import format_duration, parse_duration

_name = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12)
_effect = st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"])
_taint = st.fixed_dictionaries({"key": _name, "value": _name, "effect": _effect})
_taints = st.lists(_taint, min_size=0, max_size=5, unique_by=lambda t: (t["key"], t["value"], t["effect"]))
_labels = st.dictionaries(_name, _name, max_size=4)
_duration = st.builds(
    lambda n, u: f"{n}{u}", st.integers(min_value=1, max_value=10_000), st.sampled_from("smh")
)
_requirement = st.fixed_dictionaries(
    {
        "key": _name,
        "operator": st.sampled_from(["In", "NotIn"]),
        "values": st.lists(_name, min_size=1, max_size=3),
    }
)


@st.composite
def nodepools(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": draw(_name)},
        "requirements": draw(st.lists(_requirement, max_size=3)),
    }
    if draw(st.booleans()):
        spec["taints"] = draw(_taints)
    if draw(st.booleans()):
        spec["startupTaints"] = draw(_taints)
    if draw(st.booleans()):
        spec["expireAfter"] = draw(_duration)
    if draw(st.booleans()):
        spec["terminationGracePeriod"] = draw(_duration)
    template: dict[str, Any] = {"spec": spec}
    if draw(st.booleans()):
        template["metadata"] = {"labels": draw(_labels), "annotations": draw(_labels)}
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "p"},
        "spec": {"template": template},
    }


def _spec(np: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = np["spec"]["template"]["spec"]
    return spec


@settings(max_examples=60, deadline=None)
@given(nodepools(), st.randoms(use_true_random=False))
def test_taint_order_never_changes_the_hash(np: dict[str, Any], rnd: Any) -> None:
    before = nodepool_hash(np)
    shuffled = copy.deepcopy(np)
    for key in ("taints", "startupTaints"):
        if key in _spec(shuffled):
            rnd.shuffle(_spec(shuffled)[key])
    assert nodepool_hash(shuffled) == before


@settings(max_examples=60, deadline=None)
@given(
    nodepools(),
    st.lists(_requirement, max_size=4),
    st.integers(min_value=1, max_value=100),
    st.dictionaries(
        st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]), st.sampled_from(["1", "10", "100Gi"])
    ),
    st.sampled_from(["WhenEmpty", "WhenEmptyOrUnderutilized"]),
    _duration,
)
def test_behavioural_fields_and_requirements_never_change_it(
    np: dict[str, Any], reqs: list[Any], weight: int, limits: dict[str, str], policy: str, after: str
) -> None:
    before = nodepool_hash(np)
    changed = copy.deepcopy(np)
    _spec(changed)["requirements"] = reqs
    changed["spec"]["weight"] = weight
    changed["spec"]["limits"] = limits
    changed["spec"]["disruption"] = {
        "consolidationPolicy": policy,
        "consolidateAfter": after,
        "budgets": [{"nodes": "5%"}],
    }
    assert nodepool_hash(changed) == before


_MUTATIONS = [
    "label",
    "annotation",
    "taint",
    "startupTaint",
    "nodeClassRef",
    "expireAfter",
    "terminationGracePeriod",
    "taintValue",
]


@settings(max_examples=120, deadline=None)
@given(nodepools(), st.sampled_from(_MUTATIONS), _name)
def test_any_hashed_field_change_changes_it(np: dict[str, Any], mutation: str, word: str) -> None:
    before = nodepool_hash(np)
    changed = copy.deepcopy(np)
    t = changed["spec"]["template"]
    spec = t["spec"]
    meta = t.setdefault("metadata", {})
    if mutation == "label":
        labels = meta.get("labels") or {}
        labels["zz-new-" + word] = word
        meta["labels"] = labels
    elif mutation == "annotation":
        ann = meta.get("annotations") or {}
        ann["zz-new-" + word] = word
        meta["annotations"] = ann
    elif mutation == "taint":
        spec["taints"] = [*spec.get("taints", []), {"key": "zz-new-" + word, "effect": "NoSchedule"}]
    elif mutation == "startupTaint":
        spec["startupTaints"] = [
            *spec.get("startupTaints", []),
            {"key": "zz-new-" + word, "effect": "NoExecute"},
        ]
    elif mutation == "nodeClassRef":
        spec["nodeClassRef"]["name"] = spec["nodeClassRef"]["name"] + "-x"
    elif mutation == "expireAfter":
        old = spec.get("expireAfter")
        spec["expireAfter"] = format_duration(parse_duration(old) + 1_000_000_000) if old else "1h"
    elif mutation == "terminationGracePeriod":
        old = spec.get("terminationGracePeriod")
        spec["terminationGracePeriod"] = "1s" if not old else f"{parse_duration(old) // 1_000_000_000 + 1}s"
    elif mutation == "taintValue":
        if not spec.get("taints"):
            spec["taints"] = [{"key": "k", "value": "v", "effect": "NoSchedule"}]
        else:
            spec["taints"][0] = {**spec["taints"][0], "value": spec["taints"][0]["value"] + "-x"}
    assert nodepool_hash(changed) != before


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=-(1 << 62), max_value=1 << 62))
def test_duration_string_round_trips(ns: int) -> None:
    assert parse_duration(format_duration(ns)) == ns


@settings(max_examples=50, deadline=None)
@given(_duration)
def test_equal_durations_hash_equal(d: str) -> None:
    ns = parse_duration(d)
    a = template_hash({"spec": {"expireAfter": d}})
    b = template_hash({"spec": {"expireAfter": f"{ns // 1_000_000_000}s"}})
    assert a == b


_TAGS = st.dictionaries(st.text(min_size=1, max_size=8), st.text(max_size=8), max_size=5)


@given(_TAGS, st.permutations(["/dev/xvda", "/dev/xvdb", "/dev/xvdc"]), st.text(min_size=1, max_size=12))
def test_nodeclass_hash_ignores_map_and_slice_order_and_selectors(
    tags: dict[str, str], devices: list[str], subnet: str
) -> None:
    """``EC2NodeClass.Hash`` (SlicesAsSets, maps unordered, selector terms ``hash:"ignore"``)."""
    from nodewright.drift import nodeclass_hash

    def nc(tag_items: list[tuple[str, str]], devs: list[str], subnet_id: str) -> dict[str, object]:
        return {
            "spec": {
                "role": "r",
                "tags": dict(tag_items),
                "blockDeviceMappings": [{"deviceName": d, "ebs": {"volumeSize": "20Gi"}} for d in devs],
                "subnetSelectorTerms": [{"id": subnet_id}],
            }
        }

    items = list(tags.items())
    base = nodeclass_hash(nc(items, ["/dev/xvda", "/dev/xvdb", "/dev/xvdc"], "subnet-1"), ca_bundle="ca")
    assert nodeclass_hash(nc(items[::-1], devices, subnet), ca_bundle="ca") == base
    assert nodeclass_hash(nc(items, devices, subnet), ca_bundle="other-ca") != base
