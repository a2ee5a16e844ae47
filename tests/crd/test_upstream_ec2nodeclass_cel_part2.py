"""Port of aws/karpenter-provider-aws v1.14.1 ``pkg/apis/v1/ec2nodeclass_validation_cel_test.go``,
part 2: Context("Kubelet"), ("MetadataOptions"), ("BlockDeviceMappings"), ("NetworkInterfaces"),
("ConnectionTracking"), ("Role Immutability") and ("CPUOptions"). Part 1 (and the conventions) is
``test_upstream_ec2nodeclass_cel.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
from crd_helpers import create_ok
from crd_helpers import ec2nodeclass as nc

# -- Context("Kubelet") ------------------------------------------------------------------------

SIGNALS = {
    "memory.available": "5%",
    "nodefs.available": "10%",
    "nodefs.inodesFree": "15%",
    "imagefs.available": "5%",
    "imagefs.inodesFree": "5%",
    "pid.available": "5%",
}
GRACE = {
    "memory.available": "1m0s",
    "nodefs.available": "1m30s",
    "nodefs.inodesFree": "5m0s",
    "imagefs.available": "1h0m0s",
    "imagefs.inodesFree": "24h0m0s",
    "pid.available": "1m0s",
}


@pytest.mark.parametrize("field", ["kubeReserved", "systemReserved"])
def test_should_fail_on_reserved_with_invalid_keys(field: str) -> None:
    """It("should fail on kubeReserved with invalid keys"), It("should fail on systemReserved with invalid keys")"""
    assert not create_ok(nc(kubelet={field: {"pods": "2"}}))


def test_should_succeed_on_eviction_hard_with_valid_keys() -> None:
    """Context("Eviction Hard") It("should succeed on evictionHard with valid keys")"""
    assert create_ok(nc(kubelet={"evictionHard": SIGNALS}))


@pytest.mark.parametrize(
    "hard",
    [
        {"memory": "5%"},
        {"memory.available": "5%3"},
        {"memory.available": "110%"},
        {"memory.available": "110GB"},
    ],
)
def test_should_fail_on_bad_eviction_hard(hard: dict[str, str]) -> None:
    """It("should fail on evictionHard with invalid keys" / "invalid formatted percentage value" /
    "invalid percentage value (too large)" / "invalid quantity value")"""
    assert not create_ok(nc(kubelet={"evictionHard": hard}))


def test_should_succeed_on_eviction_soft_with_valid_keys() -> None:
    """It("should succeed on evictionSoft with valid keys"), It("should succeed on evictionSoftGracePeriod with valid keys")"""
    assert create_ok(nc(kubelet={"evictionSoft": SIGNALS, "evictionSoftGracePeriod": GRACE}))


@pytest.mark.parametrize(
    "kubelet",
    [
        {"evictionSoft": {"memory": "5%"}, "evictionSoftGracePeriod": {"memory": "1m0s"}},
        {
            "evictionSoft": {"memory.available": "5%3"},
            "evictionSoftGracePeriod": {"memory.available": "1m0s"},
        },
        {
            "evictionSoft": {"memory.available": "110%"},
            "evictionSoftGracePeriod": {"memory.available": "1m0s"},
        },
        {
            "evictionSoft": {"memory.available": "110GB"},
            "evictionSoftGracePeriod": {"memory.available": "1m0s"},
        },
        {"evictionSoft": {"memory.available": "200Mi"}},
        {"evictionSoftGracePeriod": {"memory": "1m0s"}},
        {"evictionSoftGracePeriod": {"memory.available": "1m0s"}},
    ],
    ids=[
        "evictionSoft invalid keys",
        "evictionSoft bad percentage format",
        "evictionSoft percentage too large",
        "evictionSoft bad quantity",
        "evictionSoft without matching grace period",
        "evictionSoftGracePeriod invalid keys",
        "evictionSoftGracePeriod without matching threshold",
    ],
)
def test_should_fail_on_bad_eviction_soft(kubelet: dict[str, Any]) -> None:
    """Context("Eviction Soft") and Context("Eviction Soft Grace Period") failure Its"""
    assert not create_ok(nc(kubelet=kubelet))


def test_should_succeed_on_a_valid_image_gc_high_threshold_percent() -> None:
    """It("should succeed on a valid imageGCHighThresholdPercent")"""
    assert create_ok(nc(kubelet={"imageGCHighThresholdPercent": 10}))


def test_should_fail_when_image_gc_high_is_less_than_low() -> None:
    """It("should fail when imageGCHighThresholdPercent is less than imageGCLowThresholdPercent") (and its twin)"""
    assert not create_ok(nc(kubelet={"imageGCHighThresholdPercent": 50, "imageGCLowThresholdPercent": 60}))


# -- Context("MetadataOptions") ----------------------------------------------------------------


def test_should_succeed_for_valid_metadata_options() -> None:
    """It("should succeed for valid inputs")"""
    opts = {
        "httpEndpoint": "disabled",
        "httpProtocolIPv6": "enabled",
        "httpPutResponseHopLimit": 34,
        "httpTokens": "optional",
    }
    assert create_ok(nc(metadataOptions=opts))


@pytest.mark.parametrize(
    "opts",
    [
        {"httpEndpoint": "test"},
        {"httpProtocolIPv6": "test"},
        {"httpPutResponseHopLimit": -5},
        {"httpTokens": "test"},
    ],
    ids=["HTTPEndpoint", "HTTPProtocolIPv6", "HTTPPutResponseHopLimit", "HTTPTokens"],
)
def test_should_fail_for_invalid_metadata_options(opts: dict[str, Any]) -> None:
    """It("should fail for invalid for HTTPEndpoint/HTTPProtocolIPv6/HTTPPutResponseHopLimit/HTTPTokens")"""
    assert not create_ok(nc(metadataOptions=opts))


# -- Context("BlockDeviceMappings") ------------------------------------------------------------


def bdm(*devices: tuple[str, dict[str, Any], bool]) -> dict[str, Any]:
    mappings = []
    for name, ebs, root in devices:
        m: dict[str, Any] = {"deviceName": name, "ebs": ebs}
        if root:
            m["rootVolume"] = True
        mappings.append(m)
    body = nc(amiFamily=None, blockDeviceMappings=mappings)
    return body


@pytest.mark.parametrize(
    ("name", "body"),
    [
        (
            "one root volume among two",
            bdm(
                ("map-device-1", {"volumeSize": "500G"}, True), ("map-device-2", {"volumeSize": "50T"}, False)
            ),
        ),
        ("VolumeSize in G", bdm(("map-device-1", {"volumeSize": "58G"}, False))),
        ("VolumeSize in T", bdm(("map-device-1", {"volumeSize": "45T"}, False))),
    ],
)
def test_should_succeed_for_valid_block_device_mappings(name: str, body: dict[str, Any]) -> None:
    """It("should succeed if more than one root volume is specified") (one of them is root),
    It("should succeed for valid VolumeSize in G"), It("should succeed for valid VolumeSize in T")"""
    assert create_ok(body), name


@pytest.mark.parametrize(
    ("name", "body"),
    [
        (
            "more than one root volume",
            bdm(("map-device-1", {"volumeSize": "50G"}, True), ("map-device-2", {"volumeSize": "50G"}, True)),
        ),
        ("VolumeSize less than 1Gi/1G", bdm(("map-device-1", {"volumeSize": "1m"}, False))),
        ("VolumeSize greater than 64T", bdm(("map-device-1", {"volumeSize": "100T"}, False))),
        ("VolumeSize that does not parse", bdm(("map-device-1", {"volumeSize": "0"}, False))),
        (
            "VolumeInitializationRate without SnapshotID",
            bdm(("map-device-1", {"volumeSize": "0", "volumeInitializationRate": 100}, False)),
        ),
        (
            "VolumeInitializationRate too low",
            bdm(
                (
                    "map-device-1",
                    {"volumeSize": "0", "snapshotID": "snap-1", "volumeInitializationRate": 99},
                    False,
                )
            ),
        ),
        (
            "VolumeInitializationRate too high",
            bdm(
                (
                    "map-device-1",
                    {"volumeSize": "0", "snapshotID": "snap-1", "volumeInitializationRate": 888},
                    False,
                )
            ),
        ),
    ],
)
def test_should_fail_for_bad_block_device_mappings(name: str, body: dict[str, Any]) -> None:
    """It("should fail if more than one root volume is specified"), It("should fail VolumeSize is
    less then 1Gi/1G"), It("... greater then 64T"), It("should fail for VolumeSize that do not
    parse into quantity values"), It("should fail if VolumeInitializationRate ...")"""
    assert not create_ok(body), name


# -- Context("NetworkInterfaces") --------------------------------------------------------------


def nic(card: int, device: int, kind: str) -> dict[str, Any]:
    return {"networkCardIndex": card, "deviceIndex": device, "interfaceType": kind}


def test_should_succeed_with_valid_multiple_network_interfaces() -> None:
    """It("should succeed with valid multiple network interfaces")"""
    nics = [nic(0, 0, "interface"), nic(0, 1, "efa-only"), nic(1, 0, "efa-only"), nic(1, 1, "interface")]
    assert create_ok(nc(networkInterfaces=nics))


def test_should_succeed_when_network_interfaces_is_empty() -> None:
    """It("should succeed when network interfaces is empty") (omitempty)"""
    assert create_ok(nc(networkInterfaces=None))


@pytest.mark.parametrize(
    ("name", "nics"),
    [
        ("an invalid interface type", [nic(0, 0, "efa")]),
        ("a negative NetworkCardIndex", [nic(0, 0, "interface"), nic(-1, 0, "interface")]),
        ("a negative DeviceIndex", [nic(-1, 0, "interface"), nic(0, -1, "interface")]),
        (
            "duplicate Network Interface and Device Index fields",
            [nic(0, 0, "interface"), nic(0, 1, "efa-only"), nic(1, 0, "interface"), nic(1, 0, "efa-only")],
        ),
        ("no primary network interface", [nic(0, 1, "interface")]),
        ("primary network interface is not ENA", [nic(0, 0, "efa-only")]),
        (
            "multiple EFA devices on one network card",
            [nic(0, 0, "interface"), nic(1, 0, "efa-only"), nic(1, 1, "efa-only")],
        ),
    ],
)
def test_should_fail_with_bad_network_interfaces(name: str, nics: list[dict[str, Any]]) -> None:
    """The "should fail" Its of Context("NetworkInterfaces")"""
    assert not create_ok(nc(networkInterfaces=nics)), name


# -- Context("ConnectionTracking") -------------------------------------------------------------


@pytest.mark.parametrize(
    "ct",
    [
        {"tcpEstablishedTimeout": 60},
        {"udpStreamTimeout": 120},
        {"udpTimeout": 45},
        {"tcpEstablishedTimeout": 432000, "udpStreamTimeout": 180, "udpTimeout": 60},
    ],
)
def test_should_succeed_with_valid_connection_tracking(ct: dict[str, int]) -> None:
    """It("should succeed with valid tcpEstablishedTimeout/udpStreamTimeout/udpTimeout/all ... settings")"""
    assert create_ok(nc(connectionTracking=ct))


@pytest.mark.parametrize(
    "ct",
    [
        {},
        {"tcpEstablishedTimeout": 59},
        {"tcpEstablishedTimeout": 432001},
        {"udpStreamTimeout": 59},
        {"udpStreamTimeout": 181},
        {"udpTimeout": 29},
        {"udpTimeout": 61},
    ],
)
def test_should_fail_with_bad_connection_tracking(ct: dict[str, int]) -> None:
    """It("should fail when connectionTracking is specified with no fields set") and the
    below-minimum / above-maximum Its of Context("ConnectionTracking")"""
    assert not create_ok(nc(connectionTracking=ct))


# -- Context("Role Immutability") (create part) / Context("CPUOptions") ------------------------


@pytest.mark.parametrize(
    "spec",
    [{"role": "test-role"}, {"role": None, "instanceProfile": "test-instance-profile"}],
    ids=["role", "instance profile"],
)
def test_role_and_instance_profile_objects_are_accepted_on_create(spec: dict[str, Any]) -> None:
    """Context("Role Immutability"): each object the update Its start from is valid on create."""
    assert create_ok(nc(**spec))


@pytest.mark.parametrize(
    "opts", [{"nestedVirtualization": "enabled"}, {"nestedVirtualization": "disabled"}, {}]
)
def test_should_succeed_with_cpu_options(opts: dict[str, str]) -> None:
    """It("should succeed with nestedVirtualization enabled/disabled"), It("should succeed with empty CPUOptions")"""
    assert create_ok(nc(cpuOptions=opts))


def test_should_fail_with_invalid_nested_virtualization_value() -> None:
    """It("should fail with invalid nestedVirtualization value")"""
    assert not create_ok(nc(cpuOptions={"nestedVirtualization": "invalid"}))
