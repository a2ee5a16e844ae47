"""The fast YAML writer (``nodewright.yamlfast``) writes what PyYAML writes, byte for byte, or
declines; ``dump_yaml`` therefore never changes an output."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from nodewright.reader import _resolves_to_str, dump_yaml
from nodewright.yamlfast import dump_block

DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
ROOT = Path(__file__).resolve().parent.parent


def pyyaml(data: Any, sort_keys: bool = False) -> str:
    text: str = yaml.dump(
        data, Dumper=DUMPER, sort_keys=sort_keys, allow_unicode=True, default_flow_style=False
    )
    return text


WORDS = st.sampled_from(
    [
        "", "a", "m5.large", "on-demand", "us-east-1a", "topology.kubernetes.io/zone", "100m", "2Gi",
        "true", "True", "false", "null", "Null", "yes", "no", "on", "off", "y", "n", "1", "0", "07",
        "0x1F", "1_000", "1.5", "1e3", "1.0e+3", "2024-01-01", "2024-01-01T00:00:00Z", "inf", ".inf",
        "nan", "-1", "+1", "a-b", "A_B", "x/y/z", "9", "123abc", "0o17", "1:30", "12:30:00",
        "with space", "colon: x", "#hash", "- dash", "-", "---", "quote'd", 'dq"x', "é", "a\nb",
        "x" * 129, "k" * 128, "*star", "&amp", "!bang", "%pct", "@at", "`tick", "[a]", "{a}", "a,b",
    ]
)  # fmt: skip
TEXT = st.one_of(
    WORDS,
    st.text(alphabet="ab01._/-: #'\"", max_size=12),
    st.from_regex(r"[a-z0-9][a-z0-9._/-]{0,20}", fullmatch=True),
)
SCALARS = st.one_of(
    TEXT,
    st.integers(min_value=-(2**70), max_value=2**70),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
)
DATA = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(TEXT, inner, max_size=5)),
    max_leaves=40,
)


def _same_or_declined(data: Any, sort_keys: bool) -> bool:
    fast = dump_block(data, sort_keys=sort_keys, resolves_to_str=_resolves_to_str)
    if fast is not None:
        assert fast == pyyaml(data, sort_keys), (data, fast)
    assert dump_yaml(data, sort_keys=sort_keys) == pyyaml(data, sort_keys)
    return fast is not None


@settings(max_examples=400, deadline=None)
@given(DATA, st.booleans())
def test_fast_yaml_is_pyyaml_or_declines(data: Any, sort_keys: bool) -> None:
    _same_or_declined(data, sort_keys)


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.one_of(
            st.from_regex(r"[a-z0-9][a-z0-9./-]{0,12}", fullmatch=True),
            st.integers(),
            st.booleans(),
            st.none(),
        ),
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.dictionaries(st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True), inner, max_size=4),
        ),
        max_leaves=30,
    ).filter(lambda d: isinstance(d, dict | list))
)
def test_simple_data_takes_the_fast_path(data: Any) -> None:
    assert _same_or_declined(data, False)


def test_a_shared_object_is_left_to_pyyaml_for_its_alias() -> None:
    shared = {"a": 1}
    data = {"x": shared, "y": shared}
    assert dump_block(data, sort_keys=False, resolves_to_str=_resolves_to_str) is None
    assert "&id001" in dump_yaml(data)


@pytest.mark.parametrize(
    "data",
    [[], {}, [[]], [{}], {"a": []}, {"a": {}}, [[1, [2, [3]]]], [[{"a": 1, "b": [1]}]], {"a": math.inf}],
)
def test_edge_shapes(data: Any) -> None:
    assert _same_or_declined(data, False)


def test_plan_outputs_are_unchanged() -> None:
    """Every recorded plan output of the repository writes the same YAML either way."""
    outputs = sorted((ROOT / "tests" / "data").rglob("*.json"))
    checked = 0
    for path in outputs:
        try:
            data = json.loads(path.read_text())
        except (ValueError, UnicodeDecodeError):
            continue
        for sort_keys in (False, True):
            assert dump_yaml(data, sort_keys=sort_keys) == pyyaml(data, sort_keys), path
        checked += 1
    assert checked >= 5
