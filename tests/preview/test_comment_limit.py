"""The PR comment fits GitHub's comment limit: 65,536 characters (GitHub rejects a longer issue
comment body), trimming what does not fit with a note."""

from __future__ import annotations

import copy
from pathlib import Path

from nodewright.preview import preview
from nodewright.preview.comment import GITHUB_COMMENT_LIMIT, render_markdown

ROOT = Path(__file__).resolve().parents[2]
DEV = ROOT / "tests" / "data" / "pulumi" / "stacks" / "Pulumi.dev-userdata.yaml"
"""The dev stack with its launch templates on (preview only), so the comment has user data."""


def test_github_comment_limit_is_65536_characters() -> None:
    assert GITHUB_COMMENT_LIMIT == 65_536


def test_a_comment_over_the_limit_is_trimmed_with_a_note() -> None:
    doc = copy.deepcopy(preview(stack_file=DEV).document)
    assert doc["userData"]
    for i, u in enumerate(doc["userData"]):  # every template's user data differs, and is large
        u["content"] = f"#!/bin/bash\n# template {i}\n" + f"echo {i:05d} {'x' * 60}\n" * 400
    text = render_markdown(doc)
    assert len(text) <= 65_536
    assert "trimmed to fit a GitHub comment" in text
