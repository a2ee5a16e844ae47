"""The update scenarios of the upstream validation suites, as updates: the object is created, changed
and updated (``env.Client.Create`` then ``env.Client.Update``), which nodewright models with
:func:`nodewright.crd.admit_update` (``update_ok``). Each test cites its upstream ``It``:

* kubernetes-sigs/karpenter v1.14.1 ``pkg/apis/v1/nodepool_validation_cel_test.go``
  (Context("NodeClassRef"), Context("Replicas") / Context("Update Scenarios"));
* aws/karpenter-provider-aws v1.14.1 ``pkg/apis/v1/ec2nodeclass_validation_cel_test.go``
  (Context("Role Immutability")).

Upstream v1.14.1 has seven ``env.Client.Update`` calls in these files, plus the two NodeClassRef
"should fail to mutate" cases, which create the mutated object a second time (so they fail on the
name already existing); they are ported as the updates they mean. Then nodewright's own cases for
the other transition rule (NodeClaim ``spec is immutable``, from the shipped CRD), ratcheting and
metadata, each citing the API server code it follows.

aws/karpenter-provider-aws v1.14.1 ``test/suites/integration/validation_test.go`` (the e2e suite)
still expects the role <-> instance profile switches to *fail*; the v1.14.1 CRD has no rule for
that (no ``oldSelf`` in the EC2NodeClass CRD) and the unit suite expects success, which is what
the API server does with the shipped CRD: nodewright follows the CRD.
"""

from __future__ import annotations

import copy
from typing import Any

from crd_helpers import base_nodeclaim, create_ok, pool, runtime_ok, set_path, update, update_ok
from crd_helpers import ec2nodeclass as nc

REF = "spec.template.spec.nodeClassRef"


def _changed(body: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    return set_path(copy.deepcopy(body), path, value)


# -- kubernetes-sigs/karpenter nodepool_validation_cel_test.go -------------------------------------


def test_should_fail_to_mutate_group() -> None:
    """Context("NodeClassRef") It("should fail to mutate group")"""
    old = pool()
    assert create_ok(old)
    new = _changed(old, f"{REF}.group", "karpenter.test.mutated.sh")
    problems = update(old, new)
    assert [(p.path, p.message.split(" (")[0]) for p in problems] == [
        (REF, "nodeClassRef.group is immutable")
    ]


def test_should_fail_to_mutate_kind() -> None:
    """Context("NodeClassRef") It("should fail to mutate kind") (upstream sets the group to
    "TestNodeClass2"; the kind is what the name says, both are immutable)"""
    old = pool()
    assert create_ok(old)
    assert not update_ok(old, _changed(old, f"{REF}.kind", "TestNodeClass2"))
    assert not update_ok(old, _changed(old, f"{REF}.group", "TestNodeClass2"))


def test_nodeclassref_name_may_change() -> None:
    """Context("NodeClassRef"): only group and kind carry a transition rule; the name may change."""
    old = pool()
    assert update_ok(old, _changed(old, f"{REF}.name", "other"))


def test_should_succeed_when_increasing_replicas_in_a_nodepool() -> None:
    """Context("Update Scenarios") It("should succeed when increasing replicas in a NodePool")"""
    old = pool(spec__replicas=3)
    assert create_ok(old)
    new = _changed(old, "spec.replicas", 5)
    assert update_ok(old, new) and runtime_ok(new)


def test_should_fail_when_changing_the_nodepool_from_static_to_dynamic() -> None:
    """Context("Update Scenarios") It("should fail when changing the NodePool from static to dynamic")"""
    old = pool(spec__replicas=3)
    assert create_ok(old)
    new = copy.deepcopy(old)
    del new["spec"]["replicas"]
    problems = update(old, new)
    assert [p.path for p in problems] == ["spec"]
    assert problems[0].message.startswith("Cannot transition NodePool between static")


def test_should_fail_when_changing_the_nodepool_from_dynamic_to_static() -> None:
    """Context("Update Scenarios") It("should fail when changing the NodePool from dynamic to static")"""
    old = pool()
    assert create_ok(old)
    assert not update_ok(old, _changed(old, "spec.replicas", 3))


def test_should_succeed_when_changing_the_static_nodepool_nodes_limit() -> None:
    """Context("Update Scenarios") It("should succeed when changing the static NodePool nodes limit")"""
    old = pool(spec__replicas=3, spec__limits={"nodes": "10"})
    assert create_ok(old)
    assert update_ok(old, _changed(old, "spec.limits", {"nodes": "100"}))


# -- aws/karpenter-provider-aws ec2nodeclass_validation_cel_test.go -------------------------------


def test_should_succeed_when_updating_the_role() -> None:
    """Context("Role Immutability") It("should succeed when updating the role")"""
    old = nc(role="test-role")
    assert create_ok(old)
    assert update_ok(old, nc(role="test-role2"))


def test_should_succeed_to_switch_between_an_unmanaged_and_managed_instance_profile() -> None:
    """Context("Role Immutability") It("should succeed to switch between an unmanaged and managed instance profile")"""
    old = nc(role=None, instanceProfile="test-instance-profile")
    assert create_ok(old)
    assert update_ok(old, nc(role="test-role"))


def test_should_succeed_to_switch_between_a_managed_and_unmanaged_instance_profile() -> None:
    """Context("Role Immutability") It("should succeed to switch between a managed and unmanaged instance profile")"""
    old = nc(role="test-role")
    assert create_ok(old)
    assert update_ok(old, nc(role=None, instanceProfile="test-instance-profile"))


# -- nodewright's own: the NodeClaim transition rule, ratcheting, metadata ------------------------


def test_nodeclaim_spec_is_immutable() -> None:
    """karpenter.sh_nodeclaims.yaml (v1.14.1) spec rule ``self == oldSelf`` ("spec is immutable")."""
    old = base_nodeclaim()
    assert create_ok(old)
    assert update_ok(old, copy.deepcopy(old))
    problems = update(old, _changed(old, "spec.expireAfter", "1h"))
    assert [(p.path, p.message.split(" (")[0]) for p in problems] == [("spec", "spec is immutable")]


def test_nodeclaim_metadata_may_change() -> None:
    """The NodeClaim rule covers spec only: labels may change on update."""
    old = base_nodeclaim()
    assert update_ok(old, _changed(old, "metadata.labels", {"team": "web"}))


def test_an_unchanged_invalid_field_ratchets() -> None:
    """apiextensions-apiserver pkg/apiserver/validation/ratcheting.go: an invalid value left as it
    was in the stored object is not an error on update; changing it to another invalid one is."""
    old = pool(spec__template__spec__expireAfter="720h\n")
    assert not create_ok(old)
    assert update_ok(old, _changed(old, "spec.weight", 10))
    assert not update_ok(old, _changed(old, "spec.template.spec.expireAfter", "1h\n"))


def test_an_unchanged_cel_failure_ratchets_and_a_changed_one_does_not() -> None:
    """pkg/apiserver/schema/cel/validation.go: a failed (non-transition) rule on an unchanged value
    is a warning; the same rule on a changed value is an error."""
    bad = {"key": "karpenter.sh/nodepool", "operator": "In", "values": ["x"]}
    old = pool(spec__template__spec__requirements=[bad])
    assert not create_ok(old)
    assert update_ok(old, _changed(old, "spec.weight", 10))
    worse = [bad, {"key": "karpenter.sh/nodepool", "operator": "In", "values": ["y"]}]
    assert not update_ok(old, _changed(old, "spec.template.spec.requirements", worse))


def test_a_set_duplicate_is_checked_only_when_the_old_object_had_none() -> None:
    """strategy.go ValidateUpdate: x-kubernetes-list-type set/map uniqueness is checked on update
    only when the old object passes it (budget ``reasons`` is a set)."""

    def with_reasons(*reasons: str) -> dict[str, Any]:
        budget = {"nodes": "10%", "reasons": list(reasons)}
        return pool(spec__disruption={"consolidateAfter": "0s", "budgets": [budget]})

    fine, dup = with_reasons("Empty"), with_reasons("Empty", "Empty")
    assert not create_ok(dup)
    assert [p.path for p in update(fine, dup)] == ["spec.disruption.budgets[0].reasons[1]"]
    assert update_ok(dup, _changed(dup, "spec.weight", 3))
    assert update_ok(dup, with_reasons("Drifted", "Drifted"))  # still unchecked: the old one fails it


def test_identity_metadata_is_immutable() -> None:
    """apimachinery pkg/api/validation/objectmeta.go ValidateObjectMetaAccessorUpdate: uid and
    creationTimestamp cannot change; omitted server-set fields keep the live values."""
    old = _changed(pool(), "metadata.uid", "1111")
    old["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z"
    assert update_ok(old, pool())  # a file without them: kubectl apply keeps the live ones
    problems = update(old, _changed(pool(), "metadata.uid", "2222"))
    assert [p.path for p in problems] == ["metadata.uid"]


def test_no_new_finalizer_while_deleting() -> None:
    """objectmeta.go ValidateNoNewFinalizers: an object being deleted takes no new finalizer."""
    old = pool()
    old["metadata"].update({"deletionTimestamp": "2024-01-01T00:00:00Z", "finalizers": ["a.io/x"]})
    assert update_ok(old, _changed(pool(), "metadata.finalizers", ["a.io/x"]))
    assert not update_ok(old, _changed(pool(), "metadata.finalizers", ["a.io/x", "b.io/y"]))


def test_update_keeps_the_stored_status() -> None:
    """strategy.go PrepareForUpdate: with a status subresource the update's status is the old one."""
    from nodewright import crd

    old = _changed(pool(), "status.nodes", 3)
    new = _changed(pool(), "status.nodes", "not even a number")
    admitted = crd.admit_update(new, old, kind="NodePool")
    assert admitted.ok and admitted.body["status"] == {"nodes": 3}


def test_replicas_int32_bound_is_not_ratcheted() -> None:
    """validator.go ValidateScaleSpec runs on create and update alike."""
    old = pool(spec__replicas=3)
    assert not update_ok(old, _changed(old, "spec.replicas", 2**31))
