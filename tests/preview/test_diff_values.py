"""The per-resource diff shows each changed field's old → new value: short, never a
secret, at most a few per row in the comment, and the comment stays under GitHub's limit."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from nodewright.preview.comment import FIELDS_SHOWN, GITHUB_COMMENT_LIMIT, render_markdown
from nodewright.preview.diff import VALUE_WIDTH, diff_documents

NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
CA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUMvakNDQWVhZ0F3SUJBZ0lCQURBTkJna3Foa2lHOXcwQkFRc0ZBREFW"


def _doc(inputs: dict[str, Any], *, secret_inputs: list[str] | None = None) -> dict[str, Any]:
    r: dict[str, Any] = {"type": NODEPOOL, "name": "default-nodepool", "custom": True, "inputs": inputs}
    if secret_inputs:
        r["secretInputs"] = secret_inputs
    return {
        "project": "p",
        "stack": "s",
        "resources": [r],
        "policyViolations": [],
        "outputs": {},
        "userData": [],
        "summary": {"resources": 1, "byType": {}, "mandatoryViolations": 0, "advisoryViolations": 0},
    }


def _pool(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "default"},
        "spec": spec,
    }


def test_budgets_limits_taints_show_old_and_new() -> None:
    base = _doc(_pool(limits={"cpu": "1000"}, disruption={"budgets": [{"nodes": "10%"}]}))
    head = _doc(
        _pool(
            limits={"cpu": "2000"},
            disruption={"budgets": [{"nodes": "20%"}]},
            template={"spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]}},
        )
    )
    (c,) = diff_documents(base, head)
    shown = {v.path: (v.before, v.after) for v in c.values}
    assert shown["spec.limits.cpu"] == ("1000", "2000")
    assert shown["spec.disruption.budgets[0].nodes"] == ("10%", "20%")
    assert shown["spec.template.spec.taints[0].key"] == ("(none)", "a")
    md = render_markdown(head, base=base)
    assert "spec.limits.cpu: 1000 → 2000" in md and "spec.disruption.budgets[0].nodes: 10% → 20%" in md


def test_secrets_never_show_in_values() -> None:
    base = _doc({"caBundle": CA, "token": "[secret]", "note": "a"}, secret_inputs=["token"])
    head = _doc({"caBundle": CA + "QQ==", "token": "[secret]", "note": "b", "password": "hunter2hunter2"})
    (c,) = diff_documents(base, head)
    shown = {v.path: (v.before, v.after) for v in c.values}
    assert shown["caBundle"] == ("[secret]", "[secret]")
    assert shown["password"] == ("(none)", "[secret]")
    assert shown["note"] == ("a", "b")
    md = render_markdown(head, base=base)
    assert CA[:20] not in md and "hunter2" not in md


def test_long_values_are_cut_and_extra_fields_counted() -> None:
    base = _doc({"labels": {f"k{i}": "old" for i in range(9)}, "description": "x" * 500})
    head = _doc({"labels": {f"k{i}": "new" for i in range(9)}, "description": "y" * 500})
    (c,) = diff_documents(base, head)
    assert all(len(v.before) <= VALUE_WIDTH and len(v.after) <= VALUE_WIDTH for v in c.values)
    md = render_markdown(head, base=base)
    row = next(line for line in md.splitlines() if line.startswith("| ~ update"))
    assert row.count(" → ") == FIELDS_SHOWN and f"and {10 - FIELDS_SHOWN} more" in row
    assert "x" * (VALUE_WIDTH + 1) not in md


@settings(max_examples=30, deadline=None)
@given(
    st.dictionaries(
        st.text(st.characters(codec="ascii", categories=("L", "N")), min_size=1, max_size=8),
        st.text(max_size=3000),
        max_size=40,
    )
)
@example({"metadata": "0"})  # an input of another shape than the resource's (found by Hypothesis)
@example({"tags": "x", "metadata": "", "inputs": "y"})
def test_any_change_fits_a_comment(values: dict[str, str]) -> None:
    base = _doc({k: "" for k in values})
    head = _doc(copy.deepcopy(values))
    md = render_markdown(head, base=base)
    assert len(md) < GITHUB_COMMENT_LIMIT
    for v in values.values():
        assert len(v) <= VALUE_WIDTH or v not in md
