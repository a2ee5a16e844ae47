"""`PreviewDocument`: the typed `nodewright preview` document and its one `as_dict()` (the `-o json`)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from nodewright.errors import InputError
from nodewright.preview.document import PreviewDocument, read_base

NP = "kubernetes:karpenter.sh/v1:NodePool"


def _doc(**extra: object) -> PreviewDocument:
    resource = {"type": NP, "name": "web", "parent": "", "custom": True, "inputs": {"spec": {"weight": 1}}}
    fields: dict[str, object] = {
        "project": "p",
        "stack": "dev",
        "resources": [resource],
        "policy_violations": [],
        "outputs": {},
        "user_data": [],
        "summary": {"resources": 1},
        "findings": [],
        **extra,
    }
    return PreviewDocument(**fields)  # type: ignore[arg-type]


def test_as_dict_keeps_the_documents_key_order_and_leaves_out_unset_sections() -> None:
    base = ["project", "stack", "resources", "policyViolations", "outputs", "userData", "summary", "findings"]
    assert list(_doc().as_dict()) == base
    full = _doc(notes=["n"], drift={"d": 1}, cost={"c": 1}, karpenter={"version": "1.14.1"}, changes=[])
    assert list(full.as_dict()) == [*base, "notes", "drift", "cost", "karpenter", "changes"]


def test_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        _doc().stack = "prod"  # type: ignore[misc]


def test_with_changes_diffs_against_the_base() -> None:
    head = _doc()
    assert head.with_changes(head.as_dict()).changes == []  # unchanged resources are not listed
    (change,) = head.with_changes({"resources": []}).as_dict()["changes"]
    assert (change["name"], change["op"]) == ("web", "create")
    assert head.changes is None  # with_changes returns a new document


def test_read_base(tmp_path: Path) -> None:
    good = tmp_path / "base.json"
    good.write_text(json.dumps(_doc().as_dict()))
    assert read_base(good) == _doc().as_dict()
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(InputError, match="no resources"):
        read_base(bad)
    with pytest.raises(InputError, match="no such base preview file"):
        read_base(tmp_path / "missing.json")
