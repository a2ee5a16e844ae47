"""Fixtures for the Pulumi tests (helpers live in ``pulumi_helpers``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pulumi_helpers import STACKS


@pytest.fixture
def stacks_dir() -> Path:
    return STACKS
