"""The create-spec memo of :mod:`nodewright.crd.admission` changes no answer (ours, no upstream test):
an identical valid spec admitted again gives an equal, independent body; a spec with problems is
reported with each object's own file and path every time."""

from __future__ import annotations

import copy
import json
from typing import Any

from crd_helpers import base_nodeclaim
from hypothesis import given, settings
from hypothesis import strategies as st

from nodewright.crd import values
from nodewright.crd.admission import admit
from nodewright.crd.values import plain


def test_same_valid_spec_twice_gives_equal_independent_bodies() -> None:
    first = admit(base_nodeclaim(), kind="NodeClaim", file="a.yaml")
    again = admit(base_nodeclaim(), kind="NodeClaim", file="b.yaml")
    assert first.ok and again.ok
    assert first.body == again.body
    again.body["spec"]["requirements"].append({"key": "x", "operator": "Exists"})
    third = admit(base_nodeclaim(), kind="NodeClaim", file="c.yaml")
    assert third.body == first.body


def test_bad_spec_reported_each_time_with_its_own_location() -> None:
    bad = base_nodeclaim()
    bad["spec"]["requirements"][0]["operator"] = "Nope"
    one = admit(copy.deepcopy(bad), kind="NodeClaim", file="one.yaml", path="[3]")
    two = admit(copy.deepcopy(bad), kind="NodeClaim", file="two.yaml", path="[7]")
    assert one.problems and two.problems
    assert {p.file for p in one.problems} == {"one.yaml"}
    assert {p.file for p in two.problems} == {"two.yaml"}
    assert [p.message for p in one.problems] == [p.message for p in two.problems]
    assert all(p.path.startswith("[7]") for p in two.problems)


_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(st.text(max_size=6) | st.integers() | st.booleans(), _json, max_size=5))
@settings(max_examples=300, deadline=None)
def test_plain_fast_path_copies_as_the_stdlib_did(value: dict[Any, Any]) -> None:
    """``plain`` with orjson gives what it gave without (NaN, huge ints, int keys included)."""
    got = plain(value)
    saved = values._orjson
    values._orjson = None
    try:
        want = plain(value)
    finally:
        values._orjson = saved
    assert json.dumps(got) == json.dumps(want)
