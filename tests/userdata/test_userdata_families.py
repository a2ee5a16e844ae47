"""Per-family launch facts: default block devices, metadata options, alias SSM parameters."""

from __future__ import annotations

import pytest

from nodewright.api.amifamily import (
    DEFAULT_METADATA_OPTIONS,
    default_block_device_mappings,
    ssm_parameter_for_alias,
)
from nodewright.errors import InputError


def test_default_block_devices() -> None:
    assert [m["deviceName"] for m in default_block_device_mappings("Bottlerocket")] == [
        "/dev/xvda",
        "/dev/xvdb",
    ]
    assert default_block_device_mappings("AL2023")[0]["ebs"] == {
        "encrypted": True,
        "volumeSize": "20Gi",
        "volumeType": "gp3",
    }
    assert default_block_device_mappings("Windows2022")[0]["deviceName"] == "/dev/sda1"
    assert default_block_device_mappings("Custom") == []
    assert DEFAULT_METADATA_OPTIONS["httpTokens"] == "required"


@pytest.mark.parametrize(
    ("alias", "arch", "expected"),
    [
        (
            "al2023@latest",
            "amd64",
            "/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id",
        ),
        (
            "al2@latest",
            "arm64",
            "/aws/service/eks/optimized-ami/1.31/amazon-linux-2-arm64/recommended/image_id",
        ),
        ("bottlerocket@v1.20.3", "arm64", "/aws/service/bottlerocket/aws-k8s-1.31/arm64/1.20.3/image_id"),
        (
            "windows2022@latest",
            "amd64",
            "/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.31/image_id",
        ),
    ],
)
def test_alias_ssm_parameters(alias: str, arch: str, expected: str) -> None:
    assert ssm_parameter_for_alias(alias, k8s_version="1.31", arch=arch) == expected


def test_windows_alias_needs_latest() -> None:
    with pytest.raises(InputError, match="only accept @latest"):
        ssm_parameter_for_alias("windows2019@v1", k8s_version="1.31")
