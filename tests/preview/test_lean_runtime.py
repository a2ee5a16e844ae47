"""The preview's lean runtime replaces five private attributes of pulumi's runtime. They are
feature-detected: this test fails when a pulumi release drops or renames one, so the change is seen
in CI; a user on such a pulumi gets one warning and a correct, slower preview."""

from __future__ import annotations

import logging

import pytest

from nodewright.preview import runner


def test_the_installed_pulumi_has_every_patched_private_attribute() -> None:
    assert runner.missing_private_api() == []


def test_patches_are_restored_after_the_run() -> None:
    before = [getattr(mod, attr) for mod, attr, _ in runner.PRIVATE_PATCHES]
    with runner._lean_runtime():
        assert [getattr(mod, attr) for mod, attr, _ in runner.PRIVATE_PATCHES] != before
    assert [getattr(mod, attr) for mod, attr, _ in runner.PRIVATE_PATCHES] == before


def test_a_missing_private_attribute_skips_its_patch_with_one_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from pulumi.runtime import resource

    monkeypatch.delattr(resource, "_get_stack_trace")
    logger = logging.getLogger("nodewright")
    monkeypatch.setattr(logger, "propagate", True)
    with caplog.at_level(logging.WARNING, logger="nodewright"), runner._lean_runtime():
        assert not hasattr(resource, "_get_stack_trace")
    assert any("_get_stack_trace" in r.getMessage() for r in caplog.records)
