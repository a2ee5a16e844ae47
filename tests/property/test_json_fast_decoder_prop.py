"""The big-text JSON path (jiter's parser, kept only when proven) answers exactly as the
standard decoder does: the same data, of the same types, in the same order, or the same error.

Texts are generated to sit on every edge the proof guards: repeated keys, colons and ``l`` in
strings and escaped, numbers that overflow to infinity or run past 64 bits or MAX_INT_DIGITS,
NaN spellings, lone surrogates, nesting around MAX_DEPTH, and bytes the two parsers might read
differently (whitespace, BOM, trailing data, control characters)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nodewright import decoding, reader
from nodewright.errors import InputError

_TEXT = st.sampled_from(
    [
        "a",
        "l",
        "null",
        "a:b",
        ":",
        "",
        "x\\u003ay",
        "\\u006c",
        "\\u006C",
        "\\ud800",
        "\\ud83d\\ude00",
        "é:l",
        "\\\\",
        "\\/",
        "\\u0000",
        "\x7f",
        "\u2028",
        "1e400",
    ]
)
_NUMBER = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.sampled_from(
        [
            "1.5",
            "-0",
            "-0.0",
            "1e3",
            "1E+2",
            "1e400",
            "-1e400",
            "1e-400",
            "2.5e308",
            "1.7976931348623157e308",
            "0.1",
            "123456789012345678901234567890",
            "9" * 41,
            "1" + "0" * 310 + ".0",
            "1.",
            ".5",
            "01",
            "+1",
            "NaN",
            "Infinity",
            "-Infinity",
            "1e",
            "-",
        ]
    ),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)
_SCALAR = st.one_of(
    _NUMBER, st.sampled_from(["true", "false", "null", "nul", "tru"]), _TEXT.map(lambda t: f'"{t}"')
)


def _obj(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    pairs = st.lists(st.tuples(_TEXT, children), max_size=4)
    return pairs.map(lambda ps: "{" + ", ".join(f'"{k}": {v}' for k, v in ps) + "}")


def _arr(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(children, max_size=4).map(lambda vs: "[" + ",".join(vs) + "]")


_JSON = st.recursive(_SCALAR, lambda children: st.one_of(_obj(children), _arr(children)), max_leaves=20)
_AROUND = st.sampled_from(["", " ", "\n", "\t", "\r\n", "\x0c", "\ufeff", " x", ",", "\x00"])


def _nested(depth: int, inner: str = "1", *, objects: bool = False) -> str:
    return ('{"k":' * depth + inner + "}" * depth) if objects else ("[" * depth + inner + "]" * depth)


def _answer(text: str, fast_from: int) -> tuple[str, str]:
    """What the decoder gives: the data's repr (types and order included), or the error."""
    try:
        return "ok", repr(decoding._json_loads(text, fast_from=fast_from))
    except decoding._DuplicateKey as exc:
        return "duplicate", exc.key
    except decoding._Refused as exc:
        return "refused", exc.message
    except Exception as exc:
        return "error", f"{type(exc).__name__}: {exc}"


def _same(text: str) -> None:
    standard = _answer(text, fast_from=len(text) + 1)
    assert _answer(text, fast_from=0) == standard, text
    from_bytes = decoding._fast_loads(text.encode("utf-8", "surrogatepass"))  # a file's bytes
    if from_bytes is not decoding._UNPROVEN:
        assert standard == ("ok", repr(from_bytes)), text


@settings(max_examples=600, deadline=None)
@given(_AROUND, _JSON, _AROUND)
@example("", '{"a": 1, "a": 2}', "")
@example("", '[1e400, "l"]', "")
@example("", '["\\u006c", null]', "")
@example("", '{"x\\u003ay": 1, "x:y": 2}', "")
@example("", "[18446744073709551616]", "")
@example("", "[" + "9" * 41 + "]", "")
@example("\ufeff", "[1]", "")
def test_fast_path_answers_as_the_standard_decoder(before: str, body: str, after: str) -> None:
    _same(before + body + after)


@pytest.mark.parametrize("objects", [False, True])
@pytest.mark.parametrize("depth", [1, 199, 200, 201, 202, 230, 260, 1000])
def test_nesting_around_the_limit_answers_as_the_standard_decoder(depth: int, objects: bool) -> None:
    _same(_nested(depth, objects=objects))


def test_the_fast_path_decodes_a_cluster_state_and_shares_repeated_strings() -> None:
    """It is taken (not merely safe): a big plain text comes back from jiter, strings shared."""
    item = (
        '{"kind": "Pod", "metadata": {"name": "p", "labels": {"app": "svc"}}, "status": {"phase": "Running"}}'
    )
    text = '{"kind": "List", "items": [' + ", ".join([item] * 20_000) + "]}"
    assert len(text) >= decoding.FAST_FROM
    data = decoding._fast_loads(text)
    assert data is not decoding._UNPROVEN
    phases = [i["status"]["phase"] for i in data["items"]]
    assert phases[0] is phases[-1]  # one shared string: the memory the fast path saves


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ('{"a": 1, "a": 2}', "a repeated key"),
        ("[1e400]", "a float that overflows"),
        ('["\\u006c"]', "an escaped l"),
        ('{"x\\u003a": 1}', "an escaped colon"),
        ('{"a": 1, "a": "\\u003a"}', "a repeated key whose lost colon an escaped one makes up for"),
        ('{"a": 1, "a": [], "b": "\\u003a"}', "the same, further on"),
        ("[18446744073709551616]", "an integer beyond 64 bits"),
        (_nested(201), "nesting deeper than MAX_DEPTH"),
        ("[NaN]", "NaN"),
    ],
)
def test_what_the_proof_cannot_show_goes_to_the_standard_decoder(body: str, why: str) -> None:
    assert decoding._fast_loads(body) is decoding._UNPROVEN, why
    assert decoding._fast_loads(body.encode()) is decoding._UNPROVEN, f"{why}, from bytes"


@pytest.mark.parametrize(("depth", "fast"), [(200, True), (201, False), (240, False)])
def test_the_depth_bound_holds_whatever_the_parser_allows(
    depth: int, fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """jiter's own nesting limit sits near MAX_DEPTH today; the bound does not lean on it."""
    import json

    import jiter

    monkeypatch.setattr(jiter, "from_json", lambda text, **_: json.loads(text))
    for body in (_nested(depth), _nested(depth, objects=True)):
        assert (decoding._fast_loads(body) is not decoding._UNPROVEN) is fast, (depth, body[:3])


def test_a_big_file_with_a_repeated_key_is_refused_with_its_line() -> None:
    """Through the reader, a cluster-sized text (the fast path's size) still names the key."""
    item = '{"kind": "Pod", "metadata": {"name": "p"}}'
    text = (
        '{"kind": "List",\n"items": [' + ", ".join([item] * 30_000) + ',\n{"kind": "Pod", "kind": "Node"}]}'
    )
    assert len(text) >= decoding.FAST_FROM
    with pytest.raises(InputError) as err:
        reader.load_json(text, file="cluster.json")
    assert "duplicate key 'kind'" in err.value.message and "line 3" in err.value.message


@pytest.mark.parametrize("before", ["", "  \n", "\ufeff", "\ufeff  "])
@pytest.mark.parametrize("body", ['{"items": [%s]}', "[%s]", '{"a": 1, "a": [%s]}', '"x%s"', "[%s"])
def test_a_big_file_parses_from_its_bytes_as_from_its_text(before: str, body: str) -> None:
    """``parse_bytes`` (the fast path on the file's bytes) gives what ``parse_text`` of the decoded
    text gives, or the same error: leading space, a byte-order mark, a JSON string (read as
    YAML), a repeated key and a truncated text included."""
    text = before + body % ", ".join(['{"k": "v:l", "n": null}'] * 60_000)
    data = text.encode()
    assert len(data) >= decoding.FAST_FROM

    def parsed(parse: Any, arg: Any) -> tuple[str, str]:
        try:
            return "ok", repr(parse(arg, file="c.json"))
        except InputError as exc:
            return "error", exc.message

    assert parsed(reader.parse_bytes, data) == parsed(reader.parse_text, reader.decode(data, file="c.json"))


def test_without_jiter_the_standard_decoder_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """jiter is a dependency, but an environment without it still reads every file."""
    import sys

    monkeypatch.setitem(sys.modules, "jiter", None)  # import jiter -> ImportError
    text = '{"items": [' + ", ".join(['{"k": "v"}'] * 120_000) + "]}"
    assert decoding._fast_loads(text.encode()) is decoding._UNPROVEN
    assert len(reader.parse_bytes(text.encode(), file="c.json")[0]["items"]) == 120_000
