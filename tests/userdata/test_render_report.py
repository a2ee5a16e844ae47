"""`render_report`: the typed result `nodewright render userdata` formats (one core call, frozen objects).

The ``-o json`` the command prints (a real subprocess on the repository's example files) is exactly
:meth:`UserDataReport.as_dict`, and ``-o raw`` exactly the renders' ``text``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nodewright.api import load_objects
from nodewright.crd.releases import default_release
from nodewright.reader import parse_text
from nodewright.userdata import RenderedUserData, UserDataReport, cluster_info_from_mapping, render_report

ROOT = Path(__file__).resolve().parents[2]
NP, NC, INFO = "stacks/nodepools.yaml", "stacks/nodeclasses.yaml", "stacks/cluster-info.yaml"
TYPES = ("m5.large", "c6a.xlarge")


def _objects(pool: str = "default") -> tuple[object, object, object]:
    release = default_release()
    nodepool = next(p for p in load_objects([str(ROOT / NP)], release=release).nodepools if p.name == pool)
    ref = nodepool.spec.template.spec.node_class_ref.name
    nodeclass = next(c for c in load_objects([str(ROOT / NC)], release=release).nodeclasses if c.name == ref)
    (raw,) = parse_text((ROOT / INFO).read_text(), file=INFO)
    return nodeclass, nodepool, cluster_info_from_mapping(raw, file=INFO)


def _cli(*args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "nodewright.cli", "render", "userdata", "-f", NC, "--nodepool", NP]
    cmd += ["--nodepool-name", "default", "--cluster-info", INFO, *args]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return done.stdout


def test_json_output_is_the_reports_as_dict() -> None:
    report = render_report(*_objects(), instance_types=TYPES)  # type: ignore[arg-type]
    assert report.several and [r.instance_type for r in report.renders] == list(TYPES)
    args = [a for t in TYPES for a in ("--instance-type", t)]
    assert json.loads(_cli(*args, "-o", "json")) == report.as_dict()
    assert list(report.as_dict()) == list(TYPES)


def test_one_render_without_instance_type() -> None:
    report = render_report(*_objects())  # type: ignore[arg-type]
    (one,) = report.renders
    assert not report.several and one.instance_type is None
    assert report.as_dict() == one.as_dict() == json.loads(_cli("-o", "json"))
    assert _cli("-o", "raw") == one.redacted  # -o raw without --show-secrets: CA bundle as [secret]


def test_renders_are_frozen_and_redacted() -> None:
    report = render_report(*_objects(), instance_types=("m5.large",))  # type: ignore[arg-type]
    (one,) = report.renders
    assert isinstance(report, UserDataReport) and isinstance(one, RenderedUserData)
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.text = ""  # type: ignore[misc]
    assert one.secrets == ("caBundle",)
    assert one.as_dict()["userData"] == one.redacted != one.text
    assert one.as_dict()["size"]["bytes"] == len(one.text.encode())


def test_duplicate_instance_types_render_once() -> None:
    report = render_report(*_objects(), instance_types=("m5.large", "m5.large"))  # type: ignore[arg-type]
    assert [r.instance_type for r in report.renders] == ["m5.large"]
