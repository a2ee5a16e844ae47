"""Create-path cases where nodewright once disagreed with the API server: each case states what Kubernetes v1.35's apiextensions-apiserver and apimachinery do and the
code it follows. The update path is tests/crd/test_upstream_updates.py."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from crd_helpers import create, create_ok, pool

from nodewright import crd
from nodewright.errors import InputError
from nodewright.reader import parse_text


def paths(body: dict[str, Any]) -> list[str]:
    return [p.path for p in create(body)]


# -- Go RE2: `$` matches only at the very end -----------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("spec.disruption.budgets", [{"nodes": "5\n"}]),
        ("spec.disruption.budgets", [{"nodes": "10%\n"}]),
        ("spec.template.spec.expireAfter", "720h\n"),
        ("spec.template.metadata.labels", {"team": "x\n"}),
    ],
)
def test_a_trailing_newline_fails_the_crd_pattern(field: str, value: Any) -> None:
    """CRD patterns are Go regexps (RE2): ``^...$`` does not match ``"5\\n"`` (Python's ``$`` would)."""

    def body(v: Any) -> dict[str, Any]:
        out = pool(**{field.replace(".", "__"): v})
        if field == "spec.disruption.budgets":
            out["spec"]["disruption"]["consolidateAfter"] = "0s"
        return out

    assert paths(body(value)) and all(p.startswith(field) for p in paths(body(value)))
    assert create_ok(body(_strip(value)))


def _strip(value: Any) -> Any:
    if isinstance(value, str):
        return value.rstrip("\n")
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items()}
    return [_strip(v) for v in value]


def test_a_trailing_newline_in_a_metadata_label_is_refused() -> None:
    """apimachinery ValidateLabels: the label-value regexp is anchored with Go's ``$``."""
    body = pool()
    body["metadata"]["labels"] = {"team": "x\n"}
    assert paths(body) == ["metadata.labels[team]"]


def test_cel_find_follows_go() -> None:
    """k8s.io/apiserver pkg/cel/library/regex.go ``find`` is Go's FindString (RE2)."""
    from nodewright.crd import regex

    assert regex.find("abc\n", "c$") == ""
    assert regex.find("abc", "c$") == "c"
    assert regex.find_all("baaa", "a*") == ["", "aaa"]  # Go drops the empty match after "aaa"


# -- the scale subresource ------------------------------------------------------------------------


def test_replicas_above_int32_are_refused() -> None:
    """apiextensions-apiserver pkg/registry/customresource/validator.go ValidateScaleSpec."""
    assert create_ok(pool(spec__replicas=2**31 - 1))
    problems = create(pool(spec__replicas=2**31))
    assert [p.path for p in problems] == ["spec.replicas"]
    assert "2147483647" in problems[0].message


# -- status on create -----------------------------------------------------------------------------


def test_status_of_the_wrong_type_is_dropped_not_refused() -> None:
    """strategy.go PrepareForCreate deletes status (a status subresource) before validation."""
    body = pool()
    body["status"] = {"nodes": "three", "conditions": "nope"}
    assert create_ok(body)


def test_an_unknown_status_field_is_refused() -> None:
    """customresource_handler.go: pruning (with strict field validation) runs at decoding, before
    PrepareForCreate, over the whole object: an unknown status field is a strict-decoding error."""
    body = pool()
    body["status"] = {"nodez": 3}
    problems = create(body)
    assert [p.path for p in problems] == ["status.nodez"]
    assert 'unknown field "nodez"' in problems[0].message


# -- ObjectMeta -------------------------------------------------------------------------------------


def with_meta(**meta: Any) -> dict[str, Any]:
    body = pool()
    body["metadata"].update(meta)
    return body


@pytest.mark.parametrize(
    ("meta", "path"),
    [
        ({"finalizers": ["not a name"]}, "metadata.finalizers[0]"),
        ({"finalizers": ["orphan", "foregroundDeletion"]}, "metadata.finalizers"),
        (
            {"ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p"}]},
            "metadata.ownerReferences[0].uid",
        ),
        (
            {"ownerReferences": [{"apiVersion": "apps/", "kind": "X", "name": "p", "uid": "u"}]},
            "metadata.ownerReferences[0].apiVersion",
        ),
        (
            {"ownerReferences": [{"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u"}]},
            "metadata.ownerReferences[0]",
        ),
        (
            {
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "A", "name": "a", "uid": "1", "controller": True},
                    {"apiVersion": "v1", "kind": "B", "name": "b", "uid": "2", "controller": True},
                ]
            },
            "metadata.ownerReferences[1]",
        ),
        (
            {"ownerReferences": [{"apiVersion": "v1", "kind": "A", "name": "a", "uid": "1", "ctrl": True}]},
            "metadata.ownerReferences[0].ctrl",
        ),
        ({"annotations": {"bad key!": "v"}}, "metadata.annotations[bad key!]"),
        ({"annotations": {"a": "x" * (256 * 1024)}}, "metadata.annotations"),
        ({"generation": -1}, "metadata.generation"),
        ({"name": "", "generateName": "Bad_"}, "metadata.generateName"),
    ],
)
def test_object_meta_is_validated_as_the_api_server_does(meta: dict[str, Any], path: str) -> None:
    """apimachinery pkg/api/validation/objectmeta.go ValidateObjectMetaAccessor (create)."""
    assert path in paths(with_meta(**meta))


def test_generate_name_alone_names_the_object() -> None:
    """objectmeta.go: name or generateName is required; a generateName may end with "-"."""
    body = pool()
    body["metadata"] = {"generateName": "pool-"}
    assert create_ok(body)


def test_a_null_label_value_is_stored_as_empty() -> None:
    """coerce.go decodes metadata into metav1.ObjectMeta with Go's JSON: null into a map[string]string
    value is the zero value "" (accepted; a label may be empty)."""
    body = with_meta(labels={"team": None})
    admitted = crd.admit(body, kind="NodePool")
    assert admitted.ok and admitted.body["metadata"]["labels"] == {"team": ""}


def test_a_null_map_value_in_the_spec_is_pruned() -> None:
    """defaulting/prunenulls.go PruneNonNullableNullsWithoutDefaults covers additionalProperties."""
    body = pool(spec__template__metadata__labels={"team": None, "tier": "web"})
    admitted = crd.admit(body, kind="NodePool")
    assert admitted.ok and admitted.body["spec"]["template"]["metadata"]["labels"] == {"tier": "web"}


def test_a_null_list_item_is_still_refused() -> None:
    """PruneNonNullableNullsWithoutDefaults leaves list items alone: a null item fails its type."""
    body = copy.deepcopy(pool())
    body["spec"]["template"]["spec"]["requirements"] = [None]
    assert not create_ok(body)


# -- duplicate keys -------------------------------------------------------------------------------


def test_duplicate_json_keys_are_a_located_error() -> None:
    """Strict decoding refuses duplicate fields; nodewright refuses them in JSON as in YAML."""
    text = '{"kind": "NodePool",\n "metadata": {"name": "a", "name": "b"}}'
    with pytest.raises(InputError) as err:
        parse_text(text, file="np.json")
    assert "duplicate key 'name'" in err.value.message and "line 2 column 14" in err.value.message


def test_cel_matches_is_re2() -> None:
    """CEL's ``matches`` (cel-expr-python: Google's CEL C++ with RE2) takes Go's side too."""
    from nodewright.crd.celrules import environment

    program = environment().compile("self.matches('^[0-9]+$')")
    assert program.eval(data={"self": "5"}).value() is True
    assert program.eval(data={"self": "5\n"}).value() is False
