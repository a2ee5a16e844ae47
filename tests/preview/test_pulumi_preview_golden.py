"""``nodewright preview`` JSON and markdown against goldens (tests/data/pulumi/golden/<stack>.{json,md}).

Regenerate after an intended change: ``NODEWRIGHT_UPDATE_GOLDEN=1 pytest tests/preview/test_pulumi_preview_golden.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from pulumi_helpers import STACKS

from nodewright.preview.report import render_markdown

GOLDEN = Path(__file__).resolve().parent.parent / "data" / "pulumi" / "golden"
UPDATE = os.environ.get("NODEWRIGHT_UPDATE_GOLDEN") == "1"
CASES = sorted({p.stem for p in GOLDEN.glob("*.json")} | {p.stem for p in GOLDEN.glob("*.md")})


def _doc(stack: str) -> dict[str, object]:
    """The document `nodewright preview --stack-file ... -o json` prints (findings with the user's files)."""
    from nodewright.preview import preview

    return preview(stack_file=STACKS / f"Pulumi.{stack}.yaml").document


def _ca(stack: str) -> str:
    import yaml

    cfg = yaml.safe_load((STACKS / f"Pulumi.{stack}.yaml").read_text())["config"]
    return str(cfg["nodewright:cluster"]["caBundle"])


def test_golden_cases_exist() -> None:
    assert {"karpenter", "fleet", "bad-imds"} <= set(CASES)


@pytest.mark.parametrize("case", CASES)
def test_preview_golden(case: str) -> None:
    doc = _doc(case)
    got_json = json.dumps(doc, indent=2, sort_keys=False) + "\n"
    got_md = render_markdown(doc)
    jpath, mpath = GOLDEN / f"{case}.json", GOLDEN / f"{case}.md"
    if UPDATE:
        jpath.write_text(got_json)
        mpath.write_text(got_md)
    assert jpath.exists() and mpath.exists(), f"golden half missing for {case}: {jpath} / {mpath}"
    assert got_json == jpath.read_text()
    assert got_md == mpath.read_text()


def test_secrets_never_in_clear() -> None:
    doc = _doc("karpenter")
    text = json.dumps(doc)
    assert _ca("karpenter") not in text
    resources: list[dict[str, Any]] = doc["resources"]  # type: ignore[assignment]
    lt = next(r for r in resources if r["type"] == "aws:ec2/launchTemplate:LaunchTemplate")
    assert lt["inputs"]["userData"] == "[secret]"
    assert lt["secretInputs"] == ["userData"]


def test_markdown_diff_against_base_and_trimming() -> None:
    doc = _doc("karpenter")
    base = json.loads(json.dumps(doc))
    base["userData"][0]["content"] = base["userData"][0]["content"].replace("team=web", "team=api")
    md = render_markdown(doc, base=base)
    assert "(diff against base)" in md and "-" in md and "+1 −1" in md
    unchanged = render_markdown(doc, base=doc)
    assert "unchanged" in unchanged
    small = render_markdown(doc, limit=1200)
    assert len(small) < 1200
    assert small.startswith("### nodewright preview")
    assert "trimmed to fit a GitHub comment" in small
