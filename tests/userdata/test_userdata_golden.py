"""Golden files: tests/data/userdata/<family>/<case>.input.yaml -> <case>.expected, byte for byte.

The ``upstream_*`` cases are Karpenter's own fixtures (aws/karpenter-provider-aws v1.14.1
``pkg/providers/launchtemplate/testdata/*.golden``, each named in its input file); they are also
checked the way upstream compares them (newlines removed). Every MIME output goes through the
shared cloud-init validator and every shell part through ``bash -n``.
"""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import pytest
from userdata_support import (
    GOLDEN,
    SYSTEM_PYTHON,
    VALIDATOR,
    golden_cases,
    load_case,
    options_from_case,
    require_bash,
    require_validator,
)

from nodewright.userdata import render
from nodewright.userdata.gomime import looks_like_mime, read_multipart

CASES = golden_cases()
IDS = [f"{p.parent.name}/{p.name.removesuffix('.input.yaml')}" for p in CASES]


def _expected(input_path: Path) -> Path:
    return input_path.with_name(input_path.name.removesuffix(".input.yaml") + ".expected")


def test_every_golden_has_both_halves() -> None:
    assert CASES, f"no golden inputs under {GOLDEN}"
    missing = [str(_expected(p)) for p in CASES if not _expected(p).exists()]
    inputs = {p.name.removesuffix(".input.yaml") for p in CASES}
    orphans = [str(e) for e in GOLDEN.glob("*/*.expected") if e.name.removesuffix(".expected") not in inputs]
    assert not missing, f"golden inputs without .expected: {missing}"
    assert not orphans, f".expected files without .input.yaml: {orphans}"


def test_every_family_and_scenario_is_covered() -> None:
    families = {p.parent.name for p in CASES}
    assert {"al2", "al2023", "bottlerocket", "custom", "windows"} <= families


@pytest.mark.parametrize("path", CASES, ids=IDS)
def test_golden(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    case = load_case(path)
    expected_path = _expected(path)
    assert expected_path.exists(), f"missing golden half {expected_path}"
    family, options = options_from_case(case)
    with caplog.at_level(logging.WARNING, logger="nodewright"):
        text = render(family, options).text
    assert text == expected_path.read_text(), (
        f"{path.name}: rendered user data differs from {expected_path.name}"
    )
    for needle in case.get("expectWarnings", []):
        assert any(needle in r.getMessage() for r in caplog.records), f"no warning containing {needle!r}"
    ca = options.ca_bundle
    for record in caplog.records:
        assert not ca or ca not in record.getMessage(), "a warning printed the CA bundle in clear"


@pytest.mark.parametrize("path", [p for p in CASES if p.name.startswith("upstream_")], ids=lambda p: p.name)
def test_upstream_comparison_without_newlines(path: Path) -> None:
    family, options = options_from_case(load_case(path))
    text = render(family, options).text
    assert text.replace("\n", "") == _expected(path).read_text().replace("\n", "")


def _mime_outputs() -> list[Path]:
    return [p for p in CASES if looks_like_mime(_expected(p).read_text())]


@pytest.mark.parametrize("path", _mime_outputs(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_mime_outputs_pass_cloud_init(path: Path) -> None:
    require_validator()
    result = subprocess.run(
        [SYSTEM_PYTHON, "-W", "ignore", str(VALIDATOR), str(_expected(path))],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _shell_bodies(path: Path) -> list[str]:
    text = _expected(path).read_text()
    if looks_like_mime(text):
        return [
            p.body for p in read_multipart(text) if p.get("Content-Type").startswith("text/x-shellscript")
        ]
    return [text] if text.startswith("#!/bin/bash") or text.startswith("#!/bin/sh") else []


@pytest.mark.parametrize(
    "path", [p for p in CASES if _shell_bodies(p)], ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_shell_parts_pass_bash_n(path: Path, tmp_path: Path) -> None:
    bash = require_bash()
    for index, body in enumerate(_shell_bodies(path)):
        script = tmp_path / f"part{index}.sh"
        script.write_text(body)
        result = subprocess.run([bash, "-n", str(script)], capture_output=True, text=True, check=False)
        assert result.returncode == 0, f"part {index}: {result.stderr}"
