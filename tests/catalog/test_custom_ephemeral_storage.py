"""Ephemeral-storage capacity of a Custom AMI family node.

aws/karpenter-provider-aws v1.14.1 ``pkg/providers/instancetype/types.go`` (``ephemeralStorage``): a
root volume wins; otherwise, for the Custom family, whose device layout Karpenter cannot know, the
LAST blockDeviceMapping's size counts (20Gi when it has none). Ported from the provider's
``pkg/providers/instancetype/suite_test.go`` "should use the last block device mapping for custom
AMI families" style cases.
"""

from __future__ import annotations

from nodewright.api.amifamily import CUSTOM
from nodewright.catalog.overhead import MILLI, DeviceSize, NodeClassOptions, ephemeral_storage

GI = 1024**3


def _storage(*devices: DeviceSize) -> int:
    return ephemeral_storage(
        instance_storage_gb=None, options=NodeClassOptions(family=CUSTOM, block_devices=devices)
    )


def test_custom_family_counts_the_last_block_device() -> None:
    devices = (
        DeviceSize(device_name="/dev/xvda", volume_size=50 * GI),
        DeviceSize(device_name="/dev/xvdb", volume_size=200 * GI),
    )
    assert _storage(*devices) == 200 * GI * MILLI


def test_custom_family_last_device_without_size_is_20gi() -> None:
    devices = (
        DeviceSize(device_name="/dev/xvda", volume_size=50 * GI),
        DeviceSize(device_name="/dev/xvdb", volume_size=None),
    )
    assert _storage(*devices) == 20 * GI * MILLI


def test_a_root_volume_wins_over_the_last_device() -> None:
    devices = (
        DeviceSize(device_name="/dev/xvda", volume_size=30 * GI, root_volume=True),
        DeviceSize(device_name="/dev/xvdb", volume_size=200 * GI),
    )
    assert _storage(*devices) == 30 * GI * MILLI
