"""EC2NodeClass hash (v5 field set): what is hashed, what is ignored, CRD defaults, bad input."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from nodewright.api.amifamily import ami_family
from nodewright.drift import nodeclass_hash
from nodewright.errors import InputError, InputErrors


def nc(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "role": "KarpenterNodeRole",
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "c"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "c"}}],
    }
    base.update(spec)
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": base,
    }


BASE = nodeclass_hash(nc())


def test_metadata_options_crd_default_equals_absent() -> None:
    explicit = {
        "httpEndpoint": "enabled",
        "httpProtocolIPv6": "disabled",
        "httpPutResponseHopLimit": 1,
        "httpTokens": "required",
    }
    assert nodeclass_hash(nc(metadataOptions=explicit)) == BASE
    assert nodeclass_hash(nc(metadataOptions={"httpTokens": "required"})) == BASE
    assert nodeclass_hash(nc(metadataOptions={"httpPutResponseHopLimit": 2})) != BASE


@pytest.mark.parametrize(
    "change",
    [
        {"subnetSelectorTerms": [{"id": "subnet-123"}]},
        {"securityGroupSelectorTerms": [{"id": "sg-123"}]},
        {"amiSelectorTerms": [{"alias": "al2023@v20240807"}]},
        {"amiFamily": "AL2023"},
        {"ipPrefixCount": 2},
        {"capacityReservationSelectorTerms": [{"id": "cr-123"}]},
    ],
)
def test_dynamic_fields_are_not_hashed(change: dict[str, Any]) -> None:
    assert nodeclass_hash(nc(**change)) == BASE


@pytest.mark.parametrize(
    "change",
    [
        {"userData": "#!/bin/bash\necho hi"},
        {"role": "OtherRole"},
        {"tags": {"team": "a"}},
        {"kubelet": {"maxPods": 110}},
        {
            "kubelet": {
                "evictionSoftGracePeriod": {"memory.available": "1m"},
                "evictionSoft": {"memory.available": "5%"},
            }
        },
        {
            "blockDeviceMappings": [
                {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "100Gi", "volumeType": "gp3"}}
            ]
        },
        {"instanceStorePolicy": "RAID0"},
        {"detailedMonitoring": True},
        {"associatePublicIPAddress": False},
        {"context": "ctx"},
        {"connectionTracking": {"tcpEstablishedTimeout": 300}},
        {"cpuOptions": {"nestedVirtualization": "enabled"}},
        {"placementGroupSelector": {"name": "pg-a"}},
        {"networkInterfaces": [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}]},
        {"amiFamily": "Custom"},
        {"amiSelectorTerms": [{"alias": "bottlerocket@latest"}]},
    ],
)
def test_hashed_fields_change_the_hash(change: dict[str, Any]) -> None:
    assert nodeclass_hash(nc(**change)) != BASE


def test_enclave_options_do_not_exist_upstream() -> None:
    """v1.14.1 ``EC2NodeClassSpec`` has no EnclaveOptions: the key is not hashed (the CRD rejects it)."""
    assert nodeclass_hash(nc(enclaveOptions={"enabled": True})) == BASE


def test_network_interface_order_does_not_matter() -> None:
    a = {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}
    b = {"networkCardIndex": 1, "deviceIndex": 1, "interfaceType": "efa-only"}
    assert nodeclass_hash(nc(networkInterfaces=[a, b])) == nodeclass_hash(nc(networkInterfaces=[b, a]))


def test_volume_size_hashes_its_canonical_string() -> None:
    a = nc(blockDeviceMappings=[{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "1024Gi"}}])
    b = nc(blockDeviceMappings=[{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "1Ti"}}])
    assert nodeclass_hash(a) == nodeclass_hash(b)


def test_tag_and_bdm_order_do_not_matter() -> None:
    bdms = [
        {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "20Gi"}},
        {"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "40Gi"}},
    ]
    a = nc(tags={"a": "1", "b": "2"}, blockDeviceMappings=bdms)
    b = copy.deepcopy(a)
    b["spec"]["tags"] = {"b": "2", "a": "1"}
    b["spec"]["blockDeviceMappings"] = list(reversed(bdms))
    assert nodeclass_hash(a) == nodeclass_hash(b)


def test_ami_family_resolution() -> None:
    assert ami_family({"amiSelectorTerms": [{"alias": "al2023@latest"}]}) == "AL2023"
    assert ami_family({"amiFamily": "AL2", "amiSelectorTerms": [{"alias": "al2023@latest"}]}) == "AL2"
    assert ami_family({"amiSelectorTerms": [{"id": "ami-1"}]}) == "Custom"
    assert ami_family({"amiSelectorTerms": [{"alias": "windows2022@latest"}]}) == "Windows2022"


def test_bad_types_name_the_field() -> None:
    with pytest.raises((InputError, InputErrors)) as err:
        nodeclass_hash(nc(kubelet={"maxPods": "many"}, detailedMonitoring="yes"))
    text = str(err.value)
    assert "spec.kubelet.maxPods" in text and "spec.detailedMonitoring" in text


def test_missing_spec() -> None:
    with pytest.raises(InputError, match="spec"):
        nodeclass_hash({"kind": "EC2NodeClass", "metadata": {"name": "x"}})
