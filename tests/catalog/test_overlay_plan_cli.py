"""``nodewright plan`` with NodeOverlays, as a real subprocess on the embedded aws:us-east-1 catalog:
price overlays change the chosen type and the cost (karpenter and cost strategies), capacity
overlays make hugepages and device pods schedulable, a type the price list lacks becomes usable
when an overlay prices it, and everything is behind the NodeOverlay feature gate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import builders
import pytest
import yaml

AWS = dict(builders.AWS_NODECLASS_REF)


@pytest.fixture(autouse=True)
def _session_cache(cache_home: Path) -> Path:
    """The catalog suite's disk cache (XDG_CACHE_HOME set by the fixture), never ~/.cache."""
    return cache_home


ON = ("--feature-gates", "NodeOverlay=true")


def _overlay(name: str, reqs: Sequence[Mapping[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "karpenter.sh/v1alpha1",
        "kind": "NodeOverlay",
        "metadata": {"name": name},
        "spec": {"requirements": [dict(r) for r in reqs], **spec},
    }


def _types(*names: str) -> dict[str, Any]:
    return {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(names)}


def _files(
    tmp: Path, types: Sequence[str], pods: Sequence[dict[str, Any]], *overlays: dict[str, Any]
) -> list[str]:
    np = builders.nodepool(
        "default",
        node_class_ref=AWS,
        requirements=[
            _types(*types),
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
        ],
    )
    docs = [np, builders.ec2nodeclass("default"), *overlays]
    (tmp / "pools.yaml").write_text(yaml.safe_dump_all(docs))
    builders.write_cluster(tmp / "cluster.json", list(pods))
    return ["-f", str(tmp / "pools.yaml"), "--cluster", str(tmp / "cluster.json")]


def _plan(args: Sequence[str], *extra: str) -> tuple[dict[str, Any], str]:
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "nodewright.cli",
            "plan",
            *args,
            "--catalog",
            "aws:us-east-1",
            "-o",
            "json",
            *extra,
        ],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NODEWRIGHT_CATALOG_SOURCE": "embedded"},
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout), run.stderr


def _launches(doc: dict[str, Any]) -> list[tuple[str, float]]:
    return [(c["launch"]["instanceType"], c["launch"]["price"]) for c in doc["nodeClaims"]]


def test_a_price_overlay_changes_the_chosen_type_and_the_cost(tmp_path: Path) -> None:
    pods = [builders.pod("web", cpu="1", memory="1Gi")]
    base = _files(tmp_path, ["c6a.large", "m5.large"], pods)
    doc, _ = _plan(base)
    assert _launches(doc) == [("c6a.large", 0.0765)]
    # a negotiated price for m5.large (absolute) and a surcharge on c6a (relative)
    args = _files(
        tmp_path,
        ["c6a.large", "m5.large"],
        pods,
        _overlay("negotiated-m5", [_types("m5.large")], price="0.05"),
        _overlay("c6a-surcharge", [_types("c6a.large")], priceAdjustment="+10%"),
    )
    doc, err = _plan(args, *ON)
    assert _launches(doc) == [("m5.large", 0.05)]
    assert doc["summary"]["hourlyCost"] == 0.05
    assert "warning" not in err
    doc, _ = _plan(args, *ON, "--strategy", "cost")
    assert _launches(doc) == [("m5.large", 0.05)]
    assert doc["summary"]["hourlyCost"] == 0.05


def test_overlays_are_ignored_with_a_warning_when_the_gate_is_off(tmp_path: Path) -> None:
    pods = [builders.pod("web", cpu="1", memory="1Gi")]
    args = _files(
        tmp_path, ["c6a.large", "m5.large"], pods, _overlay("cheap", [_types("m5.large")], price="0.01")
    )
    doc, err = _plan(args)
    assert _launches(doc) == [("c6a.large", 0.0765)]
    assert "1 NodeOverlay(s) ignored: the NodeOverlay feature gate is off" in err
    doc, _ = _plan(args, "--feature-gates", "NodeOverlay=false")
    assert _launches(doc) == [("c6a.large", 0.0765)]


def test_a_capacity_overlay_makes_hugepages_and_device_pods_schedulable(tmp_path: Path) -> None:
    pods = [
        builders.pod("huge", cpu="500m", memory="256Mi", requests={"hugepages-2Mi": "1Gi"}),
        builders.pod("fuse", cpu="500m", memory="256Mi", requests={"smarter-devices/fuse": "1"}),
    ]
    doc, _ = _plan(_files(tmp_path, ["m5.large"], pods), *ON)
    assert sorted(doc["podErrors"]) == ["default/fuse", "default/huge"]
    overlays = (
        _overlay("hugepages", [_types("m5.large")], capacity={"hugepages-2Mi": "2Gi"}),
        _overlay("fuse", [_types("m5.large")], capacity={"smarter-devices/fuse": "10"}),
    )
    doc, err = _plan(_files(tmp_path, ["m5.large"], pods, *overlays), *ON)
    assert doc["podErrors"] == {}, err
    assert sorted(p for c in doc["nodeClaims"] for p in c["pods"]) == ["default/fuse", "default/huge"]


def test_an_overlay_prices_a_type_the_price_list_lacks(tmp_path: Path) -> None:
    pods = [builders.pod("web", cpu="1", memory="1Gi")]
    doc, _ = _plan(_files(tmp_path, ["t8i.small"], pods), *ON)
    assert list(doc["podErrors"]) == ["default/web"]
    doc, _ = _plan(
        _files(tmp_path, ["t8i.small"], pods, _overlay("t8i", [_types("t8i.small")], price="0.02")), *ON
    )
    assert _launches(doc) == [("t8i.small", 0.02)]
    # a relative adjustment cannot price it: upstream's resolver reads absolute prices only
    doc, _ = _plan(
        _files(
            tmp_path, ["t8i.small"], pods, _overlay("t8i", [_types("t8i.small")], priceAdjustment="+0.02")
        ),
        *ON,
    )
    assert list(doc["podErrors"]) == ["default/web"]


def test_overlays_from_the_cluster_state_apply_and_files_replace_them(tmp_path: Path) -> None:
    pods = [builders.pod("web", cpu="1", memory="1Gi")]
    args = _files(tmp_path, ["c6a.large", "m5.large"], pods)
    in_cluster = _overlay("negotiated", [_types("m5.large")], price="0.05")
    builders.write_cluster(tmp_path / "cluster.json", [*pods, in_cluster])
    doc, _ = _plan(args, *ON)
    assert _launches(doc) == [("m5.large", 0.05)]
    replaced = _overlay("negotiated", [_types("m5.large")], price="0.5")
    args = _files(tmp_path, ["c6a.large", "m5.large"], pods, replaced)
    builders.write_cluster(tmp_path / "cluster.json", [*pods, in_cluster])
    doc, _ = _plan(args, *ON)
    assert _launches(doc) == [("c6a.large", 0.0765)]


def test_a_conflicting_overlay_is_reported_and_not_applied(tmp_path: Path) -> None:
    pods = [builders.pod("web", cpu="1", memory="1Gi")]
    args = _files(
        tmp_path,
        ["c6a.large", "m5.large"],
        pods,
        _overlay("a-cheap", [_types("m5.large")], price="0.01"),
        _overlay("b-dear", [_types("m5.large", "c6a.large")], price="1"),
    )
    doc, err = _plan(args, *ON)
    assert 'NodeOverlay "a-cheap": ValidationSucceeded=False (Conflict: conflict with another overlay)' in err
    assert _launches(doc) == [("c6a.large", 1.0)]


def test_an_unknown_feature_gate_is_one_error_line(tmp_path: Path) -> None:
    args = _files(tmp_path, ["m5.large"], [builders.pod("web", cpu="1")])
    run = subprocess.run(
        [sys.executable, "-m", "nodewright.cli", "plan", *args, "--feature-gates", "NodeOverlays=true"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 2  # a usage error, as every invalid Karpenter setting
    assert run.stderr.startswith("error: ") and "did you mean NodeOverlay?" in run.stderr
    assert "Traceback" not in run.stderr
