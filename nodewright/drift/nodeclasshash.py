"""``EC2NodeClass.Hash`` (v5: ``Hash(caBundle)``; v4: ``Hash()``): the ``karpenter.k8s.aws/ec2nodeclass-hash``.

Boundary: a thin adapter from a raw EC2NodeClass (mapping, Document or pydantic model) to the Go
value of ``[]any{spec, AMIFamily(), lo.FromPtr(caBundle)}`` hashed with Karpenter's options
(aws/karpenter-provider-aws v1.14.1 ``pkg/apis/v1/ec2nodeclass.go``). Every field of
``EC2NodeClassSpec`` is modelled with its Go type, in declaration order, with its ``hash`` tag
(:mod:`nodewright.drift.gotypes`); the value is bit-exact against the 31 static vectors of
``ec2nodeclass_hash_test.go``. The CRD default of ``metadataOptions`` is applied first (the API
server always does). The CA bundle is the cluster's (base64, as Karpenter's ``GetCABundle``); a
rotation changes every EC2NodeClass hash. Hash version v4 (provider v1.11.x, ``Hash()``) is the
same value without the CA bundle element (``[]any{spec, AMIFamily()}``); the release passed in
(:class:`~nodewright.crd.Release`) says which one its controller computes. The fields v1.14 added
(connectionTracking, cpuOptions) are pruned by v1.11's CRD and absent fields are not hashed, so one
spec model serves both; v4 is bit-exact against v1.11.3's vectors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nodewright.algebra.quantity import is_quantity
from nodewright.api.amifamily import DEFAULT_METADATA_OPTIONS, ami_family
from nodewright.crd import Release, default_release
from nodewright.drift.gotypes import EC2_NODE_CLASS_HASHED, EC2_NODE_CLASS_SPEC, STRING
from nodewright.drift.hashstructure import KARPENTER_OPTIONS, hash_value
from nodewright.drift.nodepoolhash import Origin, as_mapping
from nodewright.errors import Collector, InputError
from nodewright.goduration import DurationError, parse_duration


@dataclass(frozen=True, kw_only=True)
class NodeClassHash:
    """What Karpenter stamps on an EC2NodeClass: ``karpenter.k8s.aws/ec2nodeclass-hash`` and its version."""

    name: str
    hash: str
    version: str
    kind: str = "EC2NodeClass"

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "hash": self.hash, "version": self.version, "kind": self.kind}


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
            if size is not None and not is_quantity(size):
                c.add(f"{at}.ebs.volumeSize", f"invalid quantity {size!r}; use e.g. 100Gi or 200G")
                size = None
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


def _struct(
    spec: Mapping[str, Any],
    key: str,
    c: Collector,
    where: str,
    fields: tuple[tuple[str, str, type, str], ...],
) -> dict[str, Any] | None:
    """A pointer-to-struct field of scalar pointers (``connectionTracking``, ``cpuOptions``...)."""
    raw = spec.get(key)
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        c.add(f"{where}.{key}", f"must be a mapping with {', '.join(f[1] for f in fields)}")
        return None
    r = _Reader(c, f"{where}.{key}")
    return {go: r.typed(raw, json_key, kind, what) for go, json_key, kind, what in fields}


def _network_interfaces(raw: Any, c: Collector, where: str) -> list[Any] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        c.add(where, "must be a list of {networkCardIndex, deviceIndex, interfaceType}")
        return None
    out: list[Any] = []
    for i, ni in enumerate(raw):
        if not isinstance(ni, Mapping):
            c.add(f"{where}[{i}]", "must be a mapping with networkCardIndex, deviceIndex, interfaceType")
            continue
        r = _Reader(c, f"{where}[{i}]")
        out.append(
            {
                "NetworkCardIndex": r.typed(ni, "networkCardIndex", int, "an integer") or 0,
                "DeviceIndex": r.typed(ni, "deviceIndex", int, "an integer") or 0,
                "InterfaceType": r.typed(ni, "interfaceType", str, "interface or efa-only") or "",
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
    value["PlacementGroupSelector"] = _struct(
        spec,
        "placementGroupSelector",
        c,
        where,
        (("Name", "name", str, "a string"), ("ID", "id", str, "a string")),
    )
    value["NetworkInterfaces"] = _network_interfaces(
        spec.get("networkInterfaces"), c, f"{where}.networkInterfaces"
    )
    value["ConnectionTracking"] = _struct(
        spec,
        "connectionTracking",
        c,
        where,
        (
            ("TCPEstablishedTimeout", "tcpEstablishedTimeout", int, "an integer"),
            ("UDPStreamTimeout", "udpStreamTimeout", int, "an integer"),
            ("UDPTimeout", "udpTimeout", int, "an integer"),
        ),
    )
    value["CPUOptions"] = _struct(
        spec, "cpuOptions", c, where, (("NestedVirtualization", "nestedVirtualization", str, "a string"),)
    )
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


def nodeclass_hash(nodeclass: Any, *, ca_bundle: str | None = None, release: Release | None = None) -> str:
    """``EC2NodeClass.Hash`` of ``release`` (None: the default release) as the decimal annotation.

    ``ca_bundle``: the cluster CA bundle Karpenter runs with (base64 PEM, ``caBundle`` of the
    cluster info); ``None`` hashes ``lo.FromPtr(nil) == ""``, as a Karpenter without one does. A
    release whose hash takes no CA bundle (v4) ignores it.
    """
    rel = release or default_release()
    body, origin = as_mapping(nodeclass)
    spec = body.get("spec")
    if not isinstance(spec, Mapping):
        raise InputError(
            "an EC2NodeClass needs spec (role or instanceProfile, amiSelectorTerms, subnet and security group selectors)",
            file=origin.file,
            path=origin.at("spec"),
        )
    value = [
        (EC2_NODE_CLASS_SPEC, nodeclass_spec_value(spec, origin=origin)),
        (STRING, ami_family(spec)),
    ]
    if rel.ec2nodeclass_hash_ca_bundle:
        value.append((STRING, ca_bundle or ""))
    return str(hash_value(value, EC2_NODE_CLASS_HASHED, KARPENTER_OPTIONS))


def hash_nodeclass(nodeclass: Any, *, release: Release, ca_bundle: str | None = None) -> NodeClassHash:
    """:func:`nodeclass_hash` with the object's name and ``release``'s hash version."""
    body, _ = as_mapping(nodeclass)
    meta = body.get("metadata")
    name = str(meta.get("name", "")) if isinstance(meta, Mapping) else ""
    return NodeClassHash(
        name=name,
        hash=nodeclass_hash(nodeclass, ca_bundle=ca_bundle, release=release),
        version=release.ec2nodeclass_hash_version,
    )
