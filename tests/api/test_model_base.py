"""The shortcuts :mod:`nodewright.api.base` takes around pydantic's generic machinery equal it:
TopLevel's private attributes initialised from fixed defaults, and ``replaced`` as ``model_copy``."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from nodewright.api.base import _PRIVATE_DEFAULTS, TopLevel, replaced
from nodewright.api.core import Node, Pod, PodSpec, PodStatus
from nodewright.api.karpenter import NodeClaim, NodePool


def _state(m: Any) -> tuple[object, ...]:
    return (type(m), m.__dict__, m.__pydantic_fields_set__, m.__pydantic_extra__, m.__pydantic_private__)


def test_private_defaults_are_the_declared_ones() -> None:
    declared = {k: v.default for k, v in TopLevel.__private_attributes__.items()}
    assert declared == _PRIVATE_DEFAULTS


def test_every_top_level_model_starts_with_the_declared_private_defaults() -> None:
    for model, body in (
        (Pod, {"metadata": {"name": "p"}}),
        (Node, {"metadata": {"name": "n"}}),
        (
            NodeClaim,
            {"metadata": {"name": "c"}, "spec": {"nodeClassRef": {"group": "g", "kind": "k", "name": "n"}}},
        ),
    ):
        obj = model.model_validate(body)
        assert obj.__pydantic_private__ == _PRIVATE_DEFAULTS
        assert obj.__pydantic_private__ is not _PRIVATE_DEFAULTS  # each its own
        assert obj.origin_file == "<input>" and obj.origin_path() == "" and obj.written_body is None
        obj.set_origin("f.yaml", "items[3]")
        obj.set_bodies({"a": 1}, {"b": 2})
        assert obj.origin_file == "f.yaml" and obj.origin_path("spec") == "items[3].spec"
        assert obj.written_body == {"a": 1} and obj.stored_body == {"b": 2}
        assert model.model_validate(body).origin_file == "<input>"  # another object's untouched
    assert NodePool.model_construct().__pydantic_private__ == _PRIVATE_DEFAULTS


_POD = {
    "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "a"}},
    "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
    "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False"}]},
}


@given(
    node=st.one_of(st.none(), st.text(max_size=8)),
    phase=st.sampled_from(["Running", "Pending", "Failed"]),
    with_origin=st.booleans(),
)
def test_replaced_is_model_copy(node: str | None, phase: str, with_origin: bool) -> None:
    pod = Pod.model_validate(_POD)
    if with_origin:
        pod.set_origin("c.json", "items[0]")
    for obj, update in (
        (pod.spec, {"node_name": node}),
        (pod.status, {"phase": phase, "conditions": []}),
        (pod.metadata, {"uid": node}),  # a field not set before: now counted as set
        (pod, {"spec": PodSpec.model_validate({"nodeName": node}), "status": PodStatus()}),
    ):
        got, want = replaced(obj, update), obj.model_copy(update=update)
        assert _state(got) == _state(want)
        assert got == want
        assert (
            got.__dict__ is not obj.__dict__
            and got.__pydantic_fields_set__ is not obj.__pydantic_fields_set__
        )
        if obj.__pydantic_private__ is not None:
            assert got.__pydantic_private__ is not obj.__pydantic_private__
    assert pod.spec.node_name == "n1" and pod.status.phase == "Pending"  # the original untouched
