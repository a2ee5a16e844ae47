"""``nodewright catalog list`` through click's CliRunner (file catalogs and the embedded default)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from nodewright.cli.catalog import command

CATALOGS = Path(__file__).resolve().parent.parent / "data" / "catalogs"


def test_list_file_catalog_json() -> None:
    result = CliRunner().invoke(command, ["list", "--catalog", str(CATALOGS / "fake.yaml"), "-o", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    small = next(d for d in data if d["name"] == "small-instance-type")
    assert small["capacity"] == {"cpu": "2", "memory": "2Gi", "pods": "5"}
    assert small["allocatable"] == {"cpu": "1900m", "memory": "2038Mi", "pods": "5"}
    assert small["maxPods"] == 5
    assert small["price"] == pytest.approx(0.4147483648)
    assert set(small) >= {
        "name",
        "capacity",
        "allocatable",
        "overhead",
        "maxPods",
        "offerings",
        "price",
        "requirements",
    }


def test_list_table() -> None:
    result = CliRunner().invoke(command, ["list", "--catalog", str(CATALOGS / "fake-5.yaml")])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split()[:5] == ["NAME", "CPU", "MEMORY", "MAX", "PODS"]
    assert lines[1].split()[:4] == ["fake-it-0", "1", "2Gi", "10"]


def test_malformed_catalog_is_one_error_line_and_exit_1() -> None:
    path = CATALOGS / "invalid" / "bad-quantity.yaml"
    result = CliRunner().invoke(command, ["list", "--catalog", str(path)])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"error: {path}:instanceTypes[3].capacity.memory: "
        + result.output.split("capacity.memory: ", 1)[1].strip()
    ]
    assert "Traceback" not in result.output


def test_list_embedded_aws_catalog(us_east_1: object) -> None:
    result = CliRunner().invoke(command, ["list", "--catalog", "aws:us-east-1", "-o", "json"])
    assert result.exit_code == 0, result.output
    m5 = next(d for d in json.loads(result.output) if d["name"] == "m5.large")
    assert m5["capacity"]["cpu"] == "2"
    assert m5["capacity"]["pods"] == "29"
    assert m5["allocatable"]["memory"] == "6903Mi"
