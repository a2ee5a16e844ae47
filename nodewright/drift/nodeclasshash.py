"""``EC2NodeClass.Hash()`` (hash version v5): the ``karpenter.k8s.aws/ec2nodeclass-hash`` value.

Boundary: a thin adapter from a raw EC2NodeClass (mapping, Document or pydantic model) to the Go
value of ``[]interface{}{spec, AMIFamily()}`` hashed with Karpenter's options. Hashed fields are
those the AWS provider does not tag ``hash:"ignore"`` (aws/karpenter-provider-aws
``pkg/apis/v1/ec2nodeclass.go``): userData, tags, role, instanceProfile, kubelet, blockDeviceMappings,
instanceStorePolicy, detailedMonitoring, associatePublicIPAddress, metadataOptions, context, and
the resolved AMI family. The CRD default of ``metadataOptions`` is applied first (the API server
always does). Newer fields nodewright does not model field by field (networkInterfaces, cpuOptions,
placementGroupSelector...) are hashed as canonical JSON: a change is detected, but the value is
not bit-exact, so drift compares NodeClass hashes relative to the live object when it can.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from nodewright import labels
from nodewright.api.amifamily import DEFAULT_METADATA_OPTIONS, ami_family
from nodewright.drift.gotypes import EC2_NODE_CLASS_HASHED, EC2_NODE_CLASS_SPEC, STRING
from nodewright.drift.hashstructure import KARPENTER_OPTIONS, hash_value
from nodewright.drift.nodepoolhash import Origin, as_mapping
from nodewright.errors import Collector, InputError
from nodewright.goduration import DurationError, parse_duration

EC2NODECLASS_HASH_VERSION: Final = labels.EC2NODECLASS_HASH_VERSION_VALUE

_OPAQUE_FIELDS: Final = (
    ("NetworkInterfaces", "networkInterfaces"),
    ("ConnectionTracking", "connectionTracking"),
    ("CPUOptions", "cpuOptions"),
    ("PlacementGroupSelector", "placementGroupSelector"),
)


class _Reader:
    def __init__(self, c: Collector, where: str) -> None:
        self.c = c
        self.where = where

    def typed(self, m: Mapping[str, Any], key: str, kind: type | tuple[type, ...], what: str) -> Any:
        v = m.get(key)
        if v is None:
            return None
        if isinstance(v, bool) and kind is int:
            self.c.add(f"{self.where}.{key}", f"must be {what}, got {v!r}")
            return None
        if not isinstance(v, kind):
            self.c.add(f"{self.where}.{key}", f"must be {what}, got {v!r}")
            return None
        return v

    def str_map(self, m: Mapping[str, Any], key: str) -> dict[str, str] | None:
        v = m.get(key)
        if v is None:
            return None
        if not isinstance(v, Mapping) or not all(isinstance(x, str) for x in v.values()):
            self.c.add(f"{self.where}.{key}", "must be a mapping of strings; quote the values")
            return None
        return {str(k): str(x) for k, x in v.items()}


def _kubelet(raw: Any, c: Collector, where: str) -> dict[str, Any] | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        c.add(where, "must be a mapping")
        return None
    r = _Reader(c, where)
    out: dict[str, Any] = {
        "ClusterDNS": r.typed(raw, "clusterDNS", list, "a list of IP addresses"),
        "MaxPods": r.typed(raw, "maxPods", int, "an integer"),
        "PodsPerCore": r.typed(raw, "podsPerCore", int, "an integer"),
        "SystemReserved": r.str_map(raw, "systemReserved"),
        "KubeReserved": r.str_map(raw, "kubeReserved"),
        "EvictionHard": r.str_map(raw, "evictionHard"),
        "EvictionSoft": r.str_map(raw, "evictionSoft"),
        "EvictionMaxPodGracePeriod": r.typed(raw, "evictionMaxPodGracePeriod", int, "an integer"),
        "ImageGCHighThresholdPercent": r.typed(raw, "imageGCHighThresholdPercent", int, "an integer"),
        "ImageGCLowThresholdPercent": r.typed(raw, "imageGCLowThresholdPercent", int, "an integer"),
        "CPUCFSQuota": r.typed(raw, "cpuCFSQuota", bool, "true or false"),
    }
    grace = r.str_map(raw, "evictionSoftGracePeriod")
    if grace is not None:
        parsed: dict[str, Any] = {}
        for k, v in grace.items():
            try:
                parsed[k] = {"Duration": parse_duration(v)}
            except DurationError as exc:
                c.add(
                    f"{where}.evictionSoftGracePeriod.{k}", f"invalid duration {v!r} ({exc}); use e.g. 1m30s"
                )
        out["EvictionSoftGracePeriod"] = parsed
    return out


def _block_devices(raw: Any, c: Collector, where: str) -> list[Any] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        c.add(where, "must be a list")
        return None
    out: list[Any] = []
    for i, bdm in enumerate(raw):
        at = f"{where}[{i}]"
        if bdm is None:
            out.append(None)
            continue
        if not isinstance(bdm, Mapping):
            c.add(at, "must be a mapping")
            continue
        r = _Reader(c, at)
        ebs_raw = bdm.get("ebs")
        ebs: dict[str, Any] | None = None
        if isinstance(ebs_raw, Mapping):
            e = _Reader(c, f"{at}.ebs")
            size = ebs_raw.get("volumeSize")
            ebs = {
                "DeleteOnTermination": e.typed(ebs_raw, "deleteOnTermination", bool, "true or false"),
                "Encrypted": e.typed(ebs_raw, "encrypted", bool, "true or false"),
                "IOPS": e.typed(ebs_raw, "iops", int, "an integer"),
                "KMSKeyID": e.typed(ebs_raw, "kmsKeyID", str, "a string"),
                "SnapshotID": e.typed(ebs_raw, "snapshotID", str, "a string"),
                "Throughput": e.typed(ebs_raw, "throughput", int, "an integer"),
                "VolumeInitializationRate": e.typed(ebs_raw, "volumeInitializationRate", int, "an integer"),
                "VolumeSize": None if size is None else str(size),
                "VolumeType": e.typed(ebs_raw, "volumeType", str, "a string"),
            }
        elif ebs_raw is not None:
            c.add(f"{at}.ebs", "must be a mapping")
        out.append(
            {
                "DeviceName": r.typed(bdm, "deviceName", str, "a string"),
                "EBS": ebs,
                "RootVolume": bool(r.typed(bdm, "rootVolume", bool, "true or false") or False),
            }
        )
    return out


def nodeclass_spec_value(spec: Mapping[str, Any], *, origin: Origin | None = None) -> dict[str, Any]:
    """The Go ``EC2NodeClassSpec`` value (hashed fields only; ignored ones only for IsZero)."""
    origin = origin or Origin()
    c = Collector(origin.file)
    where = origin.at("spec")
    r = _Reader(c, where)
    meta = spec.get("metadataOptions")
    meta_value: dict[str, Any] = dict(DEFAULT_METADATA_OPTIONS)
    if isinstance(meta, Mapping):
        meta_value.update({k: v for k, v in meta.items() if v is not None})
    elif meta is not None:
        c.add(f"{where}.metadataOptions", "must be a mapping")
    value: dict[str, Any] = {
        "SubnetSelectorTerms": spec.get("subnetSelectorTerms"),
        "SecurityGroupSelectorTerms": spec.get("securityGroupSelectorTerms"),
        "CapacityReservationSelectorTerms": spec.get("capacityReservationSelectorTerms"),
        "AssociatePublicIPAddress": r.typed(spec, "associatePublicIPAddress", bool, "true or false"),
        "IPPrefixCount": spec.get("ipPrefixCount"),
        "AMISelectorTerms": spec.get("amiSelectorTerms"),
        "AMIFamily": spec.get("amiFamily"),
        "UserData": r.typed(spec, "userData", str, "a string"),
        "Role": r.typed(spec, "role", str, "a string") or "",
        "InstanceProfile": r.typed(spec, "instanceProfile", str, "a string"),
        "Tags": r.str_map(spec, "tags"),
        "Kubelet": _kubelet(spec.get("kubelet"), c, f"{where}.kubelet"),
        "BlockDeviceMappings": _block_devices(
            spec.get("blockDeviceMappings"), c, f"{where}.blockDeviceMappings"
        ),
        "InstanceStorePolicy": r.typed(spec, "instanceStorePolicy", str, "RAID0"),
        "DetailedMonitoring": r.typed(spec, "detailedMonitoring", bool, "true or false"),
        "MetadataOptions": {
            "HTTPEndpoint": meta_value.get("httpEndpoint"),
            "HTTPProtocolIPv6": meta_value.get("httpProtocolIPv6"),
            "HTTPPutResponseHopLimit": meta_value.get("httpPutResponseHopLimit"),
            "HTTPTokens": meta_value.get("httpTokens"),
        },
        "Context": r.typed(spec, "context", str, "a string"),
    }
    enclave = spec.get("enclaveOptions")
    if isinstance(enclave, Mapping):
        value["EnclaveOptions"] = {
            "Enabled": _Reader(c, f"{where}.enclaveOptions").typed(enclave, "enabled", bool, "true or false")
        }
    elif enclave is not None:
        c.add(f"{where}.enclaveOptions", "must be a mapping with enabled")
    for go_name, key in _OPAQUE_FIELDS:
        if spec.get(key) is not None:
            value[go_name] = json.dumps(spec[key], sort_keys=True, separators=(",", ":"))
    # selector terms are ignored for hashing; only their nil-ness matters (IsZero of the spec)
    for go_name in (
        "SubnetSelectorTerms",
        "SecurityGroupSelectorTerms",
        "CapacityReservationSelectorTerms",
        "AMISelectorTerms",
    ):
        if value[go_name] is not None:
            value[go_name] = [None] * len(value[go_name]) if isinstance(value[go_name], list) else []
    c.raise_if_any()
    return value


def nodeclass_hash(nodeclass: Any) -> str:
    """``EC2NodeClass.Hash()`` (v5 field set) as the decimal annotation string."""
    body, origin = as_mapping(nodeclass)
    spec = body.get("spec")
    if not isinstance(spec, Mapping):
        raise InputError(
            "an EC2NodeClass needs spec (role or instanceProfile, amiSelectorTerms, subnet and security group selectors)",
            file=origin.file,
            path=origin.at("spec"),
        )
    value = [(EC2_NODE_CLASS_SPEC, nodeclass_spec_value(spec, origin=origin)), (STRING, ami_family(spec))]
    return str(hash_value(value, EC2_NODE_CLASS_HASHED, KARPENTER_OPTIONS))
