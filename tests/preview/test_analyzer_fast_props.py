"""The in-process analyzer's shortcuts give the policies exactly what pulumi_policy's own path gives:
the registrations' wire JSON (``RecordedRegistration.raw``) is ``json_format.MessageToDict``'s, and
the plain props the analyzer hands the pack are ``plain_props`` of pulumi_policy's unknown-checking
proxy over its deserialized props."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.protobuf import json_format, struct_pb2
from pulumi_helpers import run_stack
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy

from nodewright.preview.analyzer import _LazyProps, _NotPlain, _plain, _plain_props_of
from nodewright.preview.mocks import SECRET_SIG, SIG_KEY, UNKNOWN, RecordedRegistration
from nodewright.preview.pack import plain_props

STACKS = ("karpenter", "fleet", "secrets", "lt-options", "dev-userdata")


def _slow(raw: dict[str, Any]) -> Any:
    return plain_props(unknown_checking_proxy(deserialize_properties(raw)))


@pytest.mark.parametrize("stack", STACKS)
def test_wire_json_and_plain_props_match_the_libraries(stack: str) -> None:
    regs = run_stack(stack).registrations
    fast = _plain_props_of(regs)
    assert len(fast) == len(regs)
    for reg in regs:
        wire = json_format.MessageToDict(reg.object)
        assert json.dumps(reg.raw()) == json.dumps(wire)  # keys, order, values
        plain = fast[(reg.type, reg.name, reg.urn)]
        assert json.dumps(plain) == json.dumps(_slow(wire))
        assert plain == _slow(wire)
        assert plain_props(_LazyProps(reg)) == plain  # the props the validators are handed, read


def _reg(value: dict[str, Any]) -> RecordedRegistration:
    obj = struct_pb2.Struct()
    obj.update(value)
    return RecordedRegistration(
        type="t", name="n", urn="urn:n", parent="", custom=True, object=obj, protect=False,
        dependencies=(), provider="",
    )  # fmt: skip


def test_secrets_nested_and_numbers() -> None:
    value = {
        "a": {SIG_KEY: SECRET_SIG, "value": {"b": [1.0, 2.5, {SIG_KEY: SECRET_SIG, "value": "s"}]}},
        "c": None,
        "d": True,
        "e": [],
    }
    reg = _reg(value)
    assert _plain_props_of([reg])[("t", "n", "urn:n")] == _slow(reg.raw()) == {
        "a": {"b": [1, 2.5, "s"]}, "c": None, "d": True, "e": [],
    }  # fmt: skip


@pytest.mark.parametrize(
    "value",
    [
        {"a": UNKNOWN},
        {"a": [{"b": UNKNOWN}]},
        {"a": {SIG_KEY: "c44067f5952c0a294b673a41bacd8c17", "text": "asset"}},
    ],
)
def test_what_only_pulumi_policy_gives_meaning_to_is_left_to_it(value: dict[str, Any]) -> None:
    reg = _reg(value)
    assert _plain_props_of([reg]) == {}
    with pytest.raises(_NotPlain):
        _plain(reg.raw()["a"])
    if UNKNOWN in json.dumps(value):
        with pytest.raises(UnknownValueError):
            _slow(reg.raw())


def test_infinite_numbers_fail_as_json_format_does() -> None:
    reg = _reg({"a": float("inf")})
    with pytest.raises(ValueError):
        json_format.MessageToDict(reg.object)
    with pytest.raises(ValueError):
        reg.raw()
