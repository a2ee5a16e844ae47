"""Label selector semantics used by topology groups."""

from __future__ import annotations

from nodewright.scheduling.topologyselector import (
    Expression,
    RawSelector,
    is_valid_label_key,
    selector_for_listing,
    selector_for_matching,
    selector_key,
)


def test_nil_empty_and_invalid_selectors() -> None:
    assert not selector_for_matching(None).matches({"a": "b"})
    assert selector_for_listing(None).matches({"a": "b"})
    assert selector_for_matching(RawSelector()).matches({})
    invalid = RawSelector.of({"app": "{{ bad }}"})
    assert not selector_for_matching(invalid).matches({"app": "{{ bad }}"})
    assert not selector_for_listing(invalid).matches({})


def test_operators() -> None:
    sel = RawSelector(
        match_expressions=(
            Expression("a", "In", ("1", "2")),
            Expression("b", "NotIn", ("x",)),
            Expression("c", "Exists", ()),
            Expression("d", "DoesNotExist", ()),
        )
    )
    s = selector_for_matching(sel)
    assert s.matches({"a": "1", "c": ""})
    assert s.matches({"a": "2", "b": "y", "c": "z"})
    assert not s.matches({"a": "3", "c": ""})
    assert not s.matches({"a": "1", "b": "x", "c": ""})
    assert not s.matches({"a": "1"})
    assert not s.matches({"a": "1", "c": "", "d": ""})


def test_value_cardinality_is_validated() -> None:
    assert selector_for_matching(RawSelector(match_expressions=(Expression("a", "In", ()),))).nothing
    assert selector_for_matching(RawSelector(match_expressions=(Expression("a", "Exists", ("x",)),))).nothing
    assert selector_for_matching(RawSelector(match_expressions=(Expression("a", "Gt", ("1",)),))).nothing


def test_label_keys() -> None:
    assert is_valid_label_key("app")
    assert is_valid_label_key("topology.kubernetes.io/zone")
    assert not is_valid_label_key("/zone")
    assert not is_valid_label_key("Bad_Domain/zone")
    assert not is_valid_label_key("a" * 64)


def test_selector_key_is_set_like() -> None:
    a = RawSelector(match_expressions=(Expression("a", "In", ("1", "2")), Expression("b", "Exists", ())))
    b = RawSelector(
        match_expressions=(
            Expression("b", "Exists", ()),
            Expression("a", "In", ("2", "1")),
            Expression("b", "Exists", ()),
        )
    )
    assert selector_key(a) == selector_key(b)
    assert selector_key(None) != selector_key(RawSelector())
    assert selector_key(RawSelector.of({"x": "1"})) != selector_key(RawSelector.of({"x": "2"}))


def test_label_syntax_is_the_apimachinery_one() -> None:
    """The key and value rules are k8s.io/apimachinery's (``crd.k8svalidation``): Go's regexps anchor
    at the very end, so a trailing newline is invalid in a key and in a value (selects nothing)."""
    assert not is_valid_label_key("app\n")
    assert selector_for_matching(
        RawSelector(match_expressions=(Expression("app", "In", ("web\n",)),))
    ).nothing
    assert not selector_for_matching(
        RawSelector(match_expressions=(Expression("app", "In", ("web",)),))
    ).nothing
