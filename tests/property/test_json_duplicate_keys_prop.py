"""The JSON reader's fast duplicate-key proof (decode without a hook, compare ``:`` counts) answers
exactly as decoding with the duplicate-refusing hook does: the same data, or the same error."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from nodewright import decoding, reader
from nodewright.errors import InputError

# keys and strings rich in colons, escaped colons and look-alikes
_TEXT = st.sampled_from(["a", "b", "a:b", ":", "", "x\\u003ay", "\\u003A", "\\\\u003a", "k: v", "é:", "1"])
_SCALAR = st.one_of(
    st.integers(-(10**30), 10**30),
    st.sampled_from(["1.5", "true", "false", "null", "-0", "1e3"]),
    _TEXT.map(lambda t: f'"{t}"'),
)


def _obj(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    pairs = st.lists(st.tuples(_TEXT, children), max_size=4)
    return pairs.map(lambda ps: "{" + ", ".join(f'"{k}": {v}' for k, v in ps) + "}")


def _arr(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(children, max_size=4).map(lambda vs: "[" + ",".join(vs) + "]")


_JSON = st.recursive(
    _SCALAR.map(lambda v: v if isinstance(v, str) else str(v)),
    lambda children: st.one_of(_obj(children), _arr(children)),
    max_leaves=20,
)


def _reference(text: str) -> tuple[str, Any]:
    """Decoding with the hook only (what the reader did before the fast path)."""
    try:
        return "ok", decoding._json_decode(text, decoding._pairs)
    except decoding._DuplicateKey as exc:
        return "duplicate", exc.key
    except Exception as exc:
        return "error", type(exc).__name__


@settings(max_examples=400, deadline=None)
@given(_JSON)
def test_fast_path_equals_the_hooked_decoder(text: str) -> None:
    kind, expected = _reference(text)
    try:
        got = reader.load_json(text, file="f.json")
    except InputError as exc:
        assert kind != "ok", (text, exc.message)
        if kind == "duplicate":
            assert "duplicate key" in exc.message and repr(expected)[:20] in exc.message
        return
    assert kind == "ok", text
    assert json.dumps(got) == json.dumps(expected)
