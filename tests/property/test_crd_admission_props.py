"""Properties of the one validation path (nodewright.crd): a defaulted object re-validates and
defaulting is idempotent; validate, hash and the preview's checks agree on every generated object."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nodewright import crd
from nodewright.api.loading import load_objects
from nodewright.drift.inputs import defaulted_nodepool_hash, hash_documents
from nodewright.errors import NodewrightError
from nodewright.policy.crd_rules import check_crd_valid
from nodewright.policy.resources import NODEPOOL_CR, ResourceView

KEYS = ["team", "node-role.kubernetes.io/worker", "karpenter.sh/x", "example.com/a", "kubernetes.io/hostname"]
OPS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "in"]
DURATIONS = ["720h", "Never", "1hr", "30m", "1h30m", "-1s", None]

requirement = st.fixed_dictionaries(
    {
        "key": st.sampled_from([*KEYS, "topology.kubernetes.io/zone", "karpenter.sh/capacity-type"]),
        "operator": st.sampled_from(OPS),
    },
    optional={
        "values": st.lists(
            st.sampled_from(["a", "1", "-1", "spot", "x y", "99999999999999999999"]), max_size=3
        ),
        "minValues": st.integers(-1, 60),
    },
)
taint = st.fixed_dictionaries(
    {
        "key": st.sampled_from(["a", "example.com/b", "bad key"]),
        "effect": st.sampled_from(["NoSchedule", "NoExecute", "Nope"]),
    },
    optional={"value": st.sampled_from(["v", "example.com/v", "???", None])},
)
disruption = st.fixed_dictionaries(
    {},
    optional={
        "consolidateAfter": st.sampled_from(["0s", "5m", "Never", "1d"]),
        "consolidationPolicy": st.sampled_from(
            ["WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced", "balanced"]
        ),
        "budgets": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "nodes": st.sampled_from(["10%", "5", "1000%"]),
                    "schedule": st.sampled_from(["@daily", "*"]),
                    "duration": st.sampled_from(["1h", "30s"]),
                    "reasons": st.lists(st.sampled_from(["Empty", "Drifted", "Bogus"]), max_size=2),
                },
            ),
            max_size=2,
        ),
    },
)


@st.composite
def nodepools(draw: st.DrawFn) -> dict[str, Any]:
    tspec: dict[str, Any] = {
        "nodeClassRef": {
            "group": draw(st.sampled_from(["karpenter.k8s.aws", "karpenter.k8s.aws/v1", ""])),
            "kind": "EC2NodeClass",
            "name": "default",
        },
        "requirements": draw(st.lists(requirement, max_size=3)),
    }
    exp = draw(st.sampled_from(DURATIONS))
    if exp is not None or draw(st.booleans()):
        tspec["expireAfter"] = exp
    if draw(st.booleans()):
        tspec["taints"] = draw(st.lists(taint, max_size=2))
    spec: dict[str, Any] = {"template": {"spec": tspec}}
    if draw(st.booleans()):
        spec["template"]["metadata"] = {
            "labels": draw(
                st.dictionaries(st.sampled_from(KEYS), st.sampled_from(["", "x", "/bad"]), max_size=2)
            )
        }
    if draw(st.booleans()):
        spec["weight"] = draw(st.one_of(st.integers(-1, 101), st.just("10"), st.none()))
    if draw(st.booleans()):
        spec["disruption"] = draw(disruption)
    if draw(st.booleans()):
        spec["replicas"] = draw(st.integers(-1, 3))
    if draw(st.booleans()):
        spec["limits"] = draw(
            st.dictionaries(
                st.sampled_from(["cpu", "nodes"]), st.sampled_from(["10", "1.5.3", "4Gi"]), max_size=2
            )
        )
    name = draw(st.sampled_from(["pool", "Pool", "p" * 64, "my_pool"]))
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name}, "spec": spec}


@settings(max_examples=150, deadline=None)
@given(nodepools())
def test_a_defaulted_object_revalidates_and_defaulting_is_idempotent(body: dict[str, Any]) -> None:
    first = crd.admit_object(body, kind="NodePool")
    if not first.ok:
        return
    again = crd.admit_object(first.body, kind="NodePool")
    assert again.ok, again.problems
    assert again.body == first.body


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=nodepools())
def test_validate_hash_and_preview_agree(tmp_path_factory: Any, body: dict[str, Any]) -> None:
    path: Path = tmp_path_factory.mktemp("np") / "np.yaml"
    path.write_text(yaml.safe_dump(body))

    def outcome(fn: Any) -> tuple[bool, Any]:
        try:
            return True, fn()
        except NodewrightError:
            return False, None

    valid, _ = outcome(lambda: load_objects([path]))
    hashed, hashes = outcome(lambda: hash_documents([path], release=crd.default_release()))
    policy = check_crd_valid(
        ResourceView(type=NODEPOOL_CR, name="p", props=body), {}, release=crd.default_release()
    )
    assert valid == hashed == (not policy), (valid, hashed, policy)
    if valid:
        # the hash the Pulumi program stamps (nodewright.stack.build -> defaulted_nodepool_hash) is the printed one
        assert hashes[0].hash == defaulted_nodepool_hash(body, release=crd.default_release())


@st.composite
def nodeclasses(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "amiSelectorTerms": [
            draw(
                st.sampled_from([{"alias": "al2023@latest"}, {"alias": "AL2@latest"}, {"id": "ami-123"}, {}])
            )
        ],
        "subnetSelectorTerms": [
            draw(st.sampled_from([{"tags": {"a": "b"}}, {"id": "subnet-1"}, {"id": "sub-1"}]))
        ],
        "securityGroupSelectorTerms": [{"tags": {"a": "b"}}],
    }
    role = draw(st.sampled_from(["r", "", None]))
    if role is not None:
        spec["role"] = role
    fam = draw(st.sampled_from([None, "AL2023", "AL2", "Custom", "Ubuntu"]))
    if fam is not None:
        spec["amiFamily"] = fam
    if draw(st.booleans()):
        spec["metadataOptions"] = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "httpTokens": st.sampled_from(["required", "optional", "x"]),
                    "httpPutResponseHopLimit": st.integers(-1, 70),
                },
            )
        )
    if draw(st.booleans()):
        spec["kubelet"] = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "maxPods": st.integers(-1, 300),
                    "systemReserved": st.dictionaries(
                        st.sampled_from(["cpu", "pods"]), st.sampled_from(["100m", "-1"]), max_size=2
                    ),
                    "imageGCHighThresholdPercent": st.integers(0, 100),
                    "imageGCLowThresholdPercent": st.integers(0, 100),
                },
            )
        )
    if draw(st.booleans()):
        spec["blockDeviceMappings"] = [
            {
                "deviceName": "/dev/xvda",
                "rootVolume": draw(st.booleans()),
                "ebs": {"volumeSize": draw(st.sampled_from(["20Gi", "0", "-1"]))},
            }
        ]
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "c"},
        "spec": spec,
    }


@settings(max_examples=150, deadline=None)
@given(nodeclasses())
def test_a_defaulted_nodeclass_revalidates(body: dict[str, Any]) -> None:
    first = crd.admit_object(body, kind="EC2NodeClass")
    if not first.ok:
        return
    again = crd.admit_object(first.body, kind="EC2NodeClass")
    assert again.ok, again.problems
    assert again.body == first.body


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "spec",
                    "template",
                    "requirements",
                    "key",
                    "values",
                    "weight",
                    "labels",
                    "x",
                    "amiSelectorTerms",
                    "kubelet",
                ]
            ),
            children,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from(["NodePool", "EC2NodeClass", "NodeClaim", "OperatingSystemConfig"]),
    spec=json_values,
    meta=json_values,
)
def test_admission_never_raises_on_any_shape(kind: str, spec: Any, meta: Any) -> None:
    """Whatever the shape, admission returns problems (file + path), never an exception."""
    result = crd.admit_object({"kind": kind, "metadata": meta, "spec": spec}, kind=kind, file="f.yaml")
    assert all(p.file == "f.yaml" for p in result.problems)


@settings(max_examples=150, deadline=None)
@given(nodepools())
def test_an_unchanged_object_is_a_valid_update_of_itself(body: dict[str, Any]) -> None:
    """Ratcheting (apiextensions-apiserver pkg/apiserver/validation/ratcheting.go): re-applying the
    stored object reports nothing from its schema or CEL rules; what remains (the scale bound,
    ObjectMeta, list uniqueness the old object already failed... none of which ratchet) is a
    subset of what a create reports. And two different objects' update problems are always a
    subset of the create problems plus transition rules and immutable metadata."""
    created = {(p.path, p.message) for p in crd.admit(body, kind="NodePool").problems}
    same = crd.admit_update(body, body, kind="NodePool")
    assert {(p.path, p.message) for p in same.problems} <= created
    if not created:
        assert same.ok


@settings(max_examples=150, deadline=None)
@given(old=nodepools(), new=nodepools())
def test_update_problems_are_create_problems_or_update_only_ones(
    old: dict[str, Any], new: dict[str, Any]
) -> None:
    created = {(p.path, p.message) for p in crd.admit(new, kind="NodePool").problems}
    for p in crd.admit_update(new, old, kind="NodePool").problems:
        assert (p.path, p.message) in created or "transition rule" in p.message or "immutable" in p.message, p
