"""``nodewright plan`` through click: golden cases, formats, determinism, bad inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from nodewright.cli import main

DATA = Path(__file__).resolve().parent.parent / "data"
CASES = DATA / "scheduling"
FAKE = DATA / "catalogs" / "fake.yaml"
PARTS = ("nodepools.yaml", "cluster.json", "expected.json")


def _cases() -> list[Path]:
    return sorted(p for p in CASES.iterdir() if p.is_dir())


def _plan(case: Path, *extra: str) -> tuple[int, str, str]:
    runner = CliRunner()
    result = runner.invoke(
        main,
        [
            "plan",
            "-f",
            str(case / "nodepools.yaml"),
            "--cluster",
            str(case / "cluster.json"),
            "--catalog",
            str(FAKE),
            *extra,
        ],
    )
    return result.exit_code, result.stdout, result.stderr


def test_every_case_has_all_parts() -> None:
    cases = _cases()
    assert cases, "no golden cases under tests/data/scheduling"
    for case in cases:
        missing = [p for p in PARTS if not (case / p).exists()]
        assert not missing, f"{case.name}: missing {missing}"


@pytest.mark.parametrize("case", _cases(), ids=lambda p: p.name)
def test_golden_json(case: Path) -> None:
    code, out, err = _plan(case, "-o", "json")
    assert code == 0, err
    assert json.loads(out) == json.loads((case / "expected.json").read_text())


def test_output_is_byte_for_byte_deterministic() -> None:
    case = CASES / "basic"
    first = _plan(case, "-o", "json")[1]
    assert all(_plan(case, "-o", "json")[1] == first for _ in range(2))
    assert first.endswith("}\n")


def test_basic_decisions() -> None:
    doc = json.loads(_plan(CASES / "basic", "-o", "json")[1])
    pools = {c["nodePool"]: c for c in doc["nodeClaims"]}
    assert pools["arm"]["pods"] == ["batch/arm-job"]
    assert pools["arm"]["launch"]["instanceType"] == "arm-instance-type"
    assert pools["default"]["pods"] == ["shop/web-1", "shop/web-2"]
    assert doc["existingNodes"] == [{"name": "existing-1", "pods": ["default/small"]}]
    assert list(doc["podErrors"]) == ["default/huge"]
    assert doc["podErrors"]["default/huge"].startswith("Failed to schedule pod, did not tolerate taint")
    s = doc["summary"]
    assert (s["pendingPods"], s["scheduled"], s["newNodeClaims"]) == (5, 4, 2)
    assert s["hourlyCost"] == round(sum(c["launch"]["price"] for c in doc["nodeClaims"]), 4)
    for c in doc["nodeClaims"]:
        assert c["name"].startswith(c["nodePool"] + "-") and len(c["name"]) == len(c["nodePool"]) + 6


def test_table_and_markdown() -> None:
    code, out, _ = _plan(CASES / "basic", "-o", "table")
    assert code == 0
    assert "INSTANCE TYPE" in out and "default/huge" in out and "hourly cost" in out
    code, out, _ = _plan(CASES / "basic", "-o", "markdown")
    assert code == 0
    assert out.startswith("### nodewright plan") and "| Unschedulable pod | Reason |" in out


def test_write_claims_file(tmp_path: Path) -> None:
    target = tmp_path / "claims.yaml"
    code, out, err = _plan(CASES / "basic", "-o", "json", "--write", str(target))
    assert code == 0, err
    claims = yaml.safe_load(target.read_text())
    assert claims["kind"] == "NodeClaimPlan"
    assert [c["name"] for c in claims["nodeClaims"]] == [c["name"] for c in json.loads(out)["nodeClaims"]]
    assert all(c["launch"]["instanceType"] for c in claims["nodeClaims"])


def test_bad_selectors_get_karpenter_texts() -> None:
    errors = json.loads(_plan(CASES / "bad-selector", "-o", "json")[1])["podErrors"]
    assert errors["default/bad-op"] == (
        "Failed to schedule pod, key zone has an unsupported operator Within not in "
        "[DoesNotExist Exists Gt Gte In Lt Lte NotIn]"
    )
    assert errors["default/gt-word"].endswith("with operator Gt must have a single positive integer value")
    assert errors["default/hostname"].startswith(
        "Failed to schedule pod, using label kubernetes.io/hostname is not allowed"
    )
    assert errors["default/not-karpenter"] == (
        "ignoring pod, configured to not run on a Karpenter provisioned node via the karpenter.sh/nodepool "
        "DoesNotExist requirement"
    )
    assert "default/fine" not in errors


def _write(tmp: Path, name: str, docs: object) -> Path:
    p = tmp / name
    p.write_text(json.dumps(docs) if name.endswith(".json") else yaml.safe_dump_all(docs))  # type: ignore[arg-type]
    return p


def test_nodepool_filtering_every_type(tmp_path: Path) -> None:
    np = yaml.safe_load((CASES / "bad-selector" / "nodepools.yaml").read_text())
    np["spec"]["template"]["spec"]["requirements"] = [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["non-existent"]}
    ]
    f = _write(tmp_path, "np.yaml", [np])
    result = CliRunner().invoke(
        main,
        [
            "plan",
            "-f",
            str(f),
            "--cluster",
            str(CASES / "basic" / "cluster.json"),
            "--catalog",
            str(FAKE),
            "-o",
            "json",
        ],
    )
    assert result.exit_code == 0, result.stderr
    errors = json.loads(result.stdout)["podErrors"]
    assert (
        errors["shop/web-1"]
        == "Failed to schedule pod, nodepool requirements filtered out all available instance types"
    )


def test_catalog_without_offerings(tmp_path: Path) -> None:
    catalog = yaml.safe_load(FAKE.read_text())
    for it in catalog["instanceTypes"]:
        it["offerings"] = [{**o, "available": False} for o in it["offerings"]]
    cat = _write(tmp_path, "cat.yaml", [catalog])
    result = CliRunner().invoke(
        main,
        [
            "plan",
            "-f",
            str(CASES / "basic" / "nodepools.yaml"),
            "--cluster",
            str(CASES / "basic" / "cluster.json"),
            "--catalog",
            str(cat),
            "-o",
            "json",
        ],
    )
    if result.exit_code == 0:
        doc = json.loads(result.stdout)
        assert doc["nodeClaims"] == []
        assert (
            "nodepool requirements filtered out all available instance types"
            in doc["podErrors"]["shop/web-1"]
        )
    else:  # the catalog loader may refuse it outright: a clear error line, never a traceback
        assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr


def test_cluster_pod_missing_fields(tmp_path: Path) -> None:
    cluster = {"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Pod", "spec": 7}]}
    f = _write(tmp_path, "cluster.json", cluster)
    result = CliRunner().invoke(
        main,
        ["plan", "-f", str(CASES / "basic" / "nodepools.yaml"), "--cluster", str(f), "--catalog", str(FAKE)],
    )
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ") and str(f) in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_nodepool_file_is_a_clear_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["plan", "-f", str(tmp_path / "nope.yaml"), "--cluster", str(CASES / "basic" / "cluster.json")],
    )
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ")
