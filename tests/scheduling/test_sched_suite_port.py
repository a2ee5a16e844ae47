"""kubernetes-sigs/karpenter v1.14.1 ``pkg/controllers/provisioning/scheduling/suite_test.go``,
Describe "Custom Constraints" (Contexts "NodePool with Labels", "Well Known Labels", "Constraints
Validation", "Scheduling Logic"), Describe "Preferential Fallback", and the preferred node-affinity
and pod-level resources cases of ``pkg/controllers/provisioning/suite_test.go``, through ``plan``.

Each case carries its upstream ``It`` text. The NodePool is the suite's (``capacity-type In [spot,
on-demand, reserved]``) unless the case replaces its requirements; a round goes through
:class:`Rounds` (upstream ``ExpectProvisioned``) and labels are read on the launched Node.
Expectations: ``None`` = not scheduled; a dict of labels the Node must carry (``"!v"``: the label is
not ``v``; ``"-"``: absent).
"""

from __future__ import annotations

from typing import Any

import pytest
from test_sched_support import CT, IT, ZONE, Rounds, catalog, nodepool, pod
from test_sched_support import req as r

from nodewright.api.core import Container
from nodewright.catalog.fake import new_instance_type, price_from_resources
from nodewright.catalog.model import Offering
from nodewright.labels import ARCH, HOSTNAME, OS, RESTRICTED_LABEL_DOMAINS, RESTRICTED_LABELS

INT = "integer"
K = "test-key"


ZONES = ("test-zone-1", "test-zone-2", "test-zone-3")

# (It, NodePool kwargs, pod kwargs, expectation)
CASES: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, str] | None]] = [
    # Context "NodePool with Labels"
    ("should schedule unconstrained pods that don't have matching node selectors",
     {"labels": {K: "test-value"}}, {}, {K: "test-value"}),
    ("should not schedule pods that have conflicting node selectors",
     {"labels": {K: "test-value"}}, {"node_selector": {K: "different-value"}}, None),
    ("should not schedule pods that have node selectors with undefined key", {}, {"node_selector": {K: "v"}}, None),
    ("should schedule pods that have matching requirements",
     {"labels": {K: "test-value"}}, {"required": [[r(K, "In", "test-value", "another-value")]]}, {K: "test-value"}),
    ("should not schedule pods that have conflicting requirements",
     {"labels": {K: "test-value"}}, {"required": [[r(K, "In", "another-value")]]}, None),
    # Context "Well Known Labels"
    ("should use NodePool constraints", {"requirements": [r(ZONE, "In", "test-zone-2")]}, {}, {ZONE: "test-zone-2"}),
    ("should use node selectors", {"requirements": [r(ZONE, "In", "test-zone-1", "test-zone-2")]},
     {"node_selector": {ZONE: "test-zone-2"}}, {ZONE: "test-zone-2"}),
    ("should not schedule nodes with a hostname selector", {}, {"node_selector": {HOSTNAME: "red-node"}}, None),
    ("should not schedule the pod if nodeselector unknown", {"requirements": [r(ZONE, "In", "test-zone-1")]},
     {"node_selector": {ZONE: "unknown"}}, None),
    ("should not schedule if node selector outside of NodePool constraints",
     {"requirements": [r(ZONE, "In", "test-zone-1")]}, {"node_selector": {ZONE: "test-zone-2"}}, None),
    ("should schedule compatible requirements with Operator=In", {},
     {"required": [[r(ZONE, "In", "test-zone-3")]]}, {ZONE: "test-zone-3"}),
    ("should schedule compatible requirements with Operator=Gt", {"requirements": [r(INT, "Gt", "8")]}, {},
     {INT: "16"}),
    ("should schedule compatible requirements with Operator=Lt", {"requirements": [r(INT, "Lt", "8")]}, {},
     {INT: "2"}),
    ("should schedule compatible requirements with Operator=Gte", {"requirements": [r(INT, "Gte", "16")]}, {},
     {INT: "16"}),
    ("should schedule compatible requirements with Operator=Lte", {"requirements": [r(INT, "Lte", "2")]}, {},
     {INT: "2"}),
    ("should not schedule incompatible preferences and requirements with Operator=In", {},
     {"required": [[r(ZONE, "In", "unknown")]]}, None),
    ("should schedule compatible requirements with Operator=NotIn", {},
     {"required": [[r(ZONE, "NotIn", "test-zone-1", "test-zone-2", "unknown")]]}, {ZONE: "test-zone-3"}),
    ("should not schedule incompatible preferences and requirements with Operator=NotIn", {},
     {"required": [[r(ZONE, "NotIn", *ZONES, "unknown")]]}, None),
    ("should schedule compatible preferences and requirements with Operator=In", {},
     {"required": [[r(ZONE, "In", *ZONES, "unknown")]], "preferred": [(1, [r(ZONE, "In", "test-zone-2", "unknown")])]},
     {ZONE: "test-zone-2"}),
    ("should schedule incompatible preferences and requirements with Operator=In", {},
     {"required": [[r(ZONE, "In", *ZONES, "unknown")]], "preferred": [(1, [r(ZONE, "In", "unknown")])]}, {}),
    ("should schedule compatible preferences and requirements with Operator=NotIn", {},
     {"required": [[r(ZONE, "In", *ZONES, "unknown")]],
      "preferred": [(1, [r(ZONE, "NotIn", "test-zone-1", "test-zone-3")])]}, {ZONE: "test-zone-2"}),
    ("should schedule incompatible preferences and requirements with Operator=NotIn", {},
     {"required": [[r(ZONE, "In", *ZONES, "unknown")]], "preferred": [(1, [r(ZONE, "NotIn", *ZONES)])]}, {}),
    ("should schedule compatible node selectors, preferences and requirements", {},
     {"node_selector": {ZONE: "test-zone-3"}, "required": [[r(ZONE, "In", *ZONES)]],
      "preferred": [(1, [r(ZONE, "In", *ZONES)])]}, {ZONE: "test-zone-3"}),
    ("should combine multidimensional node selectors, preferences and requirements", {},
     {"node_selector": {ZONE: "test-zone-3", IT: "arm-instance-type"},
      "required": [[r(ZONE, "In", "test-zone-1", "test-zone-3"), r(IT, "In", "default-instance-type", "arm-instance-type")]],
      "preferred": [(1, [r(ZONE, "NotIn", "unknown"), r(IT, "NotIn", "unknown")])]},
     {ZONE: "test-zone-3", IT: "arm-instance-type"}),
    # Context "Constraints Validation"
    *[(f"should not schedule pods that have node selectors with restricted labels ({label})", {},
       {"required": [[r(label, "In", "test")]]}, None) for label in sorted(RESTRICTED_LABELS)],
    *[(f"should not schedule pods that have node selectors with restricted domains ({domain})", {},
       {"required": [[r(f"{domain}/test", "In", "test")]]}, None) for domain in RESTRICTED_LABEL_DOMAINS],
    *[(f"should schedule pods that have node selectors with label in the kubernetes domains ({d})",
       {"requirements": [r("kubernetes.io/test", "In", "test-value"), r("k8s.io/test", "In", "test-value")]}, {},
       {f"{d}/test": "test-value"}) for d in ("kubernetes.io", "k8s.io")],
    *[(f"should schedule pods that have node selectors with label in subdomain from kubernetes domains ({d})",
       {"requirements": [r("subdomain.kubernetes.io/test", "In", "test-value"),
                         r("subdomain.k8s.io/test", "In", "test-value")]}, {},
       {f"subdomain.{d}/test": "test-value"}) for d in ("kubernetes.io", "k8s.io")],
    # Context "Scheduling Logic"
    ("should not schedule pods that have node selectors with In operator and undefined key", {},
     {"required": [[r(K, "In", "test-value")]]}, None),
    ("should schedule pods that have node selectors with NotIn operator and undefined key", {},
     {"required": [[r(K, "NotIn", "test-value")]]}, {K: "!test-value"}),
    ("should not schedule pods that have node selectors with Exists operator and undefined key", {},
     {"required": [[r(K, "Exists")]]}, None),
    ("should schedule pods that with DoesNotExists operator and undefined key", {},
     {"required": [[r(K, "DoesNotExist")]]}, {K: "-"}),
    ("should schedule unconstrained pods that don't have matching node selectors (requirement)",
     {"requirements": [r(K, "In", "test-value")]}, {}, {K: "test-value"}),
    ("should schedule pods that have node selectors with matching value and In operator",
     {"requirements": [r(K, "In", "test-value")]}, {"required": [[r(K, "In", "test-value")]]}, {K: "test-value"}),
    ("should not schedule pods that have node selectors with matching value and NotIn operator",
     {"requirements": [r(K, "In", "test-value")]}, {"required": [[r(K, "NotIn", "test-value")]]}, None),
    ("should schedule the pod with Exists operator and defined key",
     {"requirements": [r(K, "In", "test-value")]}, {"required": [[r(K, "Exists")]]}, {}),
    ("should not schedule the pod with DoesNotExists operator and defined key",
     {"requirements": [r(K, "In", "test-value")]}, {"required": [[r(K, "DoesNotExist")]]}, None),
    ("should not schedule pods that have node selectors with different value and In operator",
     {"requirements": [r(K, "In", "test-value")]}, {"required": [[r(K, "In", "another-value")]]}, None),
    ("should schedule pods that have node selectors with different value and NotIn operator",
     {"requirements": [r(K, "In", "test-value")]}, {"required": [[r(K, "NotIn", "another-value")]]},
     {K: "test-value"}),
    ("Exists operator should not overwrite the existing value", {},
     {"required": [[r(ZONE, "In", "non-existent-zone"), r(ZONE, "Exists")]]}, None),
    # Describe "Preferential Fallback", Context "Required" / "Preferred"
    ("should not relax the final term", {"requirements": [r(ZONE, "In", "test-zone-1")]},
     {"required": [[r(ZONE, "In", "invalid")]]}, None),
    ("should relax multiple terms", {},
     {"required": [[r(ZONE, "In", "invalid")], [r(ZONE, "In", "invalid")], [r(ZONE, "In", "test-zone-1")],
                   [r(ZONE, "In", "test-zone-2")]]}, {ZONE: "test-zone-1"}),
    ("should relax all terms", {},
     {"preferred": [(1, [r(ZONE, "In", "invalid")]), (1, [r(ZONE, "In", "invalid")])]}, {}),
    ("should relax to use lighter weights", {"requirements": [r(ZONE, "In", "test-zone-1", "test-zone-2")]},
     {"preferred": [(100, [r(ZONE, "In", "test-zone-3")]), (50, [r(ZONE, "In", "test-zone-2")]),
                    (1, [r(ZONE, "In", "test-zone-1")])]}, {ZONE: "test-zone-2"}),
    ("should schedule even if preference is conflicting with requirement", {},
     {"required": [[r(ZONE, "In", "test-zone-3")]], "preferred": [(1, [r(ZONE, "NotIn", "test-zone-3")])]},
     {ZONE: "test-zone-3"}),
    ("should schedule even if preference requirements are conflicting", {},
     {"preferred": [(1, [r(ZONE, "In", "invalid"), r(ZONE, "NotIn", "invalid")])]}, {}),
]  # fmt: skip


def _check(labels: dict[str, str], want: dict[str, str]) -> None:
    for key, value in want.items():
        if value == "-":
            assert key not in labels, key
        elif value.startswith("!"):
            assert labels.get(key) != value[1:], key
        else:
            assert labels.get(key) == value, (key, labels.get(key))


@pytest.mark.parametrize(("it", "np_kw", "pod_kw", "want"), CASES, ids=[c[0] for c in CASES])
def test_custom_constraints(
    it: str, np_kw: dict[str, Any], pod_kw: dict[str, Any], want: dict[str, str] | None
) -> None:
    env = Rounds([nodepool(**np_kw)])
    p = pod("p", **pod_kw)
    doc = env.round(p)
    n = env.node_of(p)
    if want is None:
        assert n is None and "default/p" in doc.pod_errors, it
        return
    assert n is not None, doc.pod_errors
    _check(dict(n.metadata.labels), want)


def test_wellknown_label_selectors_schedule() -> None:
    """It "should schedule pods that have node selectors with label in wellknown label list"."""
    env = Rounds([nodepool()])
    selectors = [
        {ZONE: "test-zone-1"},
        {IT: "default-instance-type"},
        {ARCH: "arm64"},
        {OS: "linux"},
        {CT: "spot"},
    ]
    pods = [pod(f"p{i}", node_selector=s) for i, s in enumerate(selectors)]
    env.round(*pods)
    assert env.bound(pods) == pods


@pytest.mark.parametrize(
    ("reqs", "same"),
    [
        # It "should schedule compatible pods to the same node"
        ([[r(K, "In", "test-value")]], [[r(K, "NotIn", "another-value")]]),
        # It "should schedule incompatible pods to the different node"
        ([[r(K, "In", "test-value")]], [[r(K, "In", "another-value")]]),
    ],
    ids=["compatible-same-node", "incompatible-different-node"],
)
def test_compatible_pods_share_a_node(reqs: list[Any], same: list[Any]) -> None:
    env = Rounds([nodepool(requirements=[r(K, "In", "test-value", "another-value")])])
    a, b = pod("a", required=reqs), pod("b", required=same)
    env.round(a, b)
    na, nb = env.node_of(a), env.node_of(b)
    assert na is not None and nb is not None
    compatible = same[0][0]["operator"] == "NotIn"
    assert (na.metadata.name == nb.metadata.name) is compatible
    assert nb.metadata.labels[K] == ("test-value" if compatible else "another-value")


# -- preferred node affinity is not validated (PR #2182) ------------------------------------------
@pytest.mark.parametrize("key", [ZONE, HOSTNAME])
def test_unsatisfiable_node_preference_is_ignored(key: str) -> None:
    """provisioning/suite_test.go DescribeTable "should ignore node preferredDuringScheduling
    IgnoredDuringExecution affinity" (entries zone, hostname): the preference cannot be met, the pod
    is not rejected and shares the node of the other pod."""
    env = Rounds([nodepool()])
    first = pod("first", labels={"app": "foo"}, cpu="2")
    pref = pod("pref", labels={"app": "baz"}, cpu="1", preferred=[(1, [r(key, "In", "value-1")])])
    env.round(first, pref)
    n1, n2 = env.node_of(first), env.node_of(pref)
    assert n1 is not None and n2 is not None and n1.metadata.name == n2.metadata.name


@pytest.mark.parametrize(
    "preference",
    [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
        {"matchExpressions": [r("karpenter.sh/custom", "In", "x")]},
        {"matchExpressions": [r(HOSTNAME, "In", "n1")]},
    ],
    ids=["matchFields", "restricted-domain", "hostname"],
)
def test_preferred_terms_are_not_validated(preference: dict[str, Any]) -> None:
    """Upstream ``validateAffinity`` checks required terms only (PR #2182): a preferred term with
    matchFields, a restricted domain or the hostname is relaxed away, not an error."""
    aff = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": preference}]
        }
    }
    env = Rounds([nodepool()])
    p = pod("p", affinity=aff)
    doc = env.round(p)
    assert doc.pod_errors == {} and env.node_of(p) is not None


def test_required_matchfields_is_still_rejected() -> None:
    """Required terms are still validated: ``node selector term with matchFields is not supported``."""
    aff = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}  # fmt: skip
    env = Rounds([nodepool()])
    doc = env.round(pod("p", affinity=aff))
    assert (
        doc.pod_errors["default/p"]
        == "Failed to schedule pod, node selector term with matchFields is not supported"
    )


# -- pod-level resources ---------------------------------------------------------------------------
def _example(cpu: str, memory: str) -> Any:
    """provisioning/suite_test.go ``AddInstanceResources``: one spot offering in test-zone-1."""
    from nodewright.algebra.resources import parse_resource_list

    price = price_from_resources(parse_resource_list({"cpu": cpu, "memory": memory}))
    return new_instance_type(f"example-{cpu}", resources={"cpu": cpu, "memory": memory}, architecture="arch",
                             operating_systems=("linux",),
                             offerings=(Offering(zone="test-zone-1", capacity_type="spot", price=price),))  # fmt: skip


def test_schedules_on_pod_level_requests() -> None:
    """provisioning/suite_test.go It "should schedule based on the pod level resources requests":
    the pod-level 9.9 cpu / 3.9Gi decide (not the containers' 10 cpu / 4Gi: app 5 + sidecar 4,
    init 6 + sidecar 4), so the 10 cpu / 4Gi type is launched rather than the 11 cpu one."""
    types = [*catalog(), _example("10", "4Gi"), _example("11", "5Gi"), _example("12", "6Gi")]
    p = pod(
        "p",
        requests={"cpu": "5", "memory": "1Gi"},
        limits={"cpu": "5", "memory": "1Gi"},
        pod_resources={
            "requests": {"cpu": "9.9", "memory": "3.9Gi"},
            "limits": {"cpu": "10", "memory": "4Gi"},
        },
    )
    init = [
        Container.model_validate({"name": "init", "resources": {"requests": {"cpu": "6", "memory": "2Gi"}}}),
        Container.model_validate(
            {
                "name": "sidecar",
                "restartPolicy": "Always",
                "resources": {"requests": {"cpu": "4", "memory": "2Gi"}},
            }
        ),
    ]
    p = p.model_copy(update={"spec": p.spec.model_copy(update={"init_containers": init})})
    env = Rounds([nodepool()], types=types)
    env.round(p)
    n = env.node_of(p)
    assert n is not None and n.metadata.labels[IT] == "example-10"


def test_pod_level_requests_replace_smaller_container_requests() -> None:
    """The pod-level request decides even when the containers ask for less (1 cpu would fit the
    4 cpu default type)."""
    types = [*catalog(), _example("10", "4Gi"), _example("11", "5Gi")]
    p = pod("p", cpu="1", pod_resources={"requests": {"cpu": "9.9"}})
    env = Rounds([nodepool()], types=types)
    env.round(p)
    n = env.node_of(p)
    assert n is not None and n.metadata.labels[IT] == "example-10"


def test_preference_policy_ignore_drops_node_preferences() -> None:
    """provisioning/suite_test.go Context "Ignore Preferences", It "should ignore node affinity
    preferences": the preferring pod joins the emptier zone-1 node, not the zone-2 one it prefers."""
    from nodewright.scheduling.plan import PlanOptions

    env = Rounds(
        [nodepool(requirements=[])], options=PlanOptions(max_instance_types=60, preference_policy="Ignore")
    )
    zone1 = pod("zone1", labels={"app": "foo"}, node_selector={ZONE: "test-zone-1"}, cpu="2")
    zone2 = [
        pod(f"zone2-{i}", labels={"app": "bar"}, node_selector={ZONE: "test-zone-2"}, cpu="3")
        for i in range(2)
    ]
    prefers = pod("prefers", labels={"app": "baz"}, cpu="1", preferred=[(1, [r(ZONE, "In", "test-zone-2")])])
    env.round(zone1, *zone2, prefers)
    n1, n2, got = env.node_of(zone1), env.node_of(zone2[0]), env.node_of(prefers)
    assert n1 is not None and n2 is not None and got is not None
    assert got.metadata.name == n1.metadata.name != n2.metadata.name
