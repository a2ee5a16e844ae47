"""The upstream custom-family examples (aws/karpenter-provider-aws v1.14.1 examples/v1) preview
without a mandatory violation: since Karpenter v1.3 (kubernetes-sigs/karpenter#1991) the
karpenter.sh/unregistered taint is not required in Custom user data."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from nodewright.cli import main

STACKS = Path(__file__).resolve().parents[1] / "data" / "pulumi" / "stacks"


@pytest.mark.parametrize("example", ["custom-family", "custom-family-with-alias"])
def test_custom_family_examples_pass_the_preview_gate(example: str) -> None:
    result = CliRunner().invoke(
        main, ["preview", "--stack-file", str(STACKS / f"Pulumi.upstream-{example}.yaml")]
    )
    assert result.exit_code == 0, result.output
    assert "[mandatory]" not in result.stdout
