"""Which changes replace a resource rather than update it in place (provider semantics):
a Kubernetes object's namespace or name, an EC2 instance's availability zone or subnet; tags and
labels are updates."""

from __future__ import annotations

from typing import Any

from nodewright.preview.diff import diff_documents


def _doc(typ: str, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
    return {"resources": [{"type": typ, "name": name, "custom": True, "inputs": inputs}]}


def _op(typ: str, before: dict[str, Any], after: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
    (change,) = diff_documents(_doc(typ, "r", before), _doc(typ, "r", after))
    return change.op, change.replace_because


NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
INSTANCE = "aws:ec2/instance:Instance"


def test_a_namespace_change_replaces_a_kubernetes_object() -> None:
    before = {"metadata": {"name": "osc", "namespace": "kube-system"}, "data": {"a": "1"}}
    after = {"metadata": {"name": "osc", "namespace": "gardener"}, "data": {"a": "1"}}
    assert _op("kubernetes:core/v1:Secret", before, after) == ("replace", ("metadata.namespace",))


def test_a_name_change_replaces_a_kubernetes_object() -> None:
    op, because = _op(NODEPOOL, {"metadata": {"name": "a"}}, {"metadata": {"name": "b"}})
    assert (op, because) == ("replace", ("metadata.name",))


def test_a_label_change_updates_a_kubernetes_object() -> None:
    before = {"metadata": {"name": "a", "labels": {"x": "1"}}}
    after = {"metadata": {"name": "a", "labels": {"x": "2"}}}
    assert _op(NODEPOOL, before, after) == ("update", ())


def test_an_availability_zone_change_replaces_an_instance() -> None:
    before = {"availabilityZone": "us-east-1a", "tags": {"a": "1"}}
    after = {"availabilityZone": "us-east-1b", "tags": {"a": "1"}}
    assert _op(INSTANCE, before, after) == ("replace", ("availabilityZone",))


def test_a_tag_change_updates_an_instance() -> None:
    before = {"availabilityZone": "us-east-1a", "tags": {"a": "1"}}
    after = {"availabilityZone": "us-east-1a", "tags": {"a": "2"}}
    assert _op(INSTANCE, before, after) == ("update", ())
