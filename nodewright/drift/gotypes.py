"""The Go types Karpenter hashes, described for :mod:`nodewright.drift.hashstructure`.

Boundary: type descriptors only (field order, Go field names, ``hash`` tags), translated from
``sigs.k8s.io/karpenter/pkg/apis/v1`` (NodeClaimTemplate, hash version v3), ``k8s.io/api/core/v1``
(Taint), ``k8s.io/apimachinery`` (metav1.Time, metav1.Duration, resource.Quantity) and
``aws/karpenter-provider-aws/pkg/apis/v1`` (EC2NodeClassSpec). Field order matters: struct hashing
finishes after every field, so a reordered field changes the hash.
"""

from __future__ import annotations

from typing import Any, Final

from nodewright.drift.hashstructure import (
    GoBool,
    GoField,
    GoInt,
    GoInterface,
    GoMap,
    GoPtr,
    GoSlice,
    GoString,
    GoStruct,
    GoTime,
)

STRING: Final = GoString()
INT32: Final = GoInt(32, True)
INT64: Final = GoInt(64, True)
BYTES: Final = GoSlice(GoInt(8, False))
STRING_MAP: Final = GoMap(STRING, STRING)

# k8s.io/apimachinery/pkg/apis/meta/v1.Time{time.Time} (embedded field named "Time")
METAV1_TIME: Final = GoStruct("Time", (GoField("Time", GoTime()),))
# k8s.io/apimachinery/pkg/apis/meta/v1.Duration{Duration time.Duration}
METAV1_DURATION: Final = GoStruct("Duration", (GoField("Duration", INT64),))

# k8s.io/api/core/v1.Taint
TAINT: Final = GoStruct(
    "Taint",
    (
        GoField("Key", STRING),
        GoField("Value", STRING),
        GoField("Effect", GoString("TaintEffect")),
        GoField("TimeAdded", GoPtr(METAV1_TIME)),
    ),
)

# karpenter v1.NillableDuration{*time.Duration (embedded: "Duration"); Raw []byte `hash:"ignore"`}
NILLABLE_DURATION: Final = GoStruct(
    "NillableDuration",
    (GoField("Duration", GoPtr(INT64)), GoField("Raw", BYTES, tag="ignore")),
)

NODE_CLASS_REFERENCE: Final = GoStruct(
    "NodeClassReference",
    (GoField("Kind", STRING), GoField("Name", STRING), GoField("Group", STRING)),
)

# Only its nil-ness matters (the field is `hash:"ignore"` but still counts for the parent's IsZero).
NODE_SELECTOR_REQUIREMENT_WITH_MIN_VALUES: Final = GoStruct(
    "NodeSelectorRequirementWithMinValues", (GoField("NodeSelectorRequirement", GoInterface()),)
)

OBJECT_META: Final = GoStruct(
    "ObjectMeta", (GoField("Labels", STRING_MAP), GoField("Annotations", STRING_MAP))
)

NODE_CLAIM_TEMPLATE_SPEC: Final = GoStruct(
    "NodeClaimTemplateSpec",
    (
        GoField("Taints", GoSlice(TAINT)),
        GoField("StartupTaints", GoSlice(TAINT)),
        GoField("Requirements", GoSlice(NODE_SELECTOR_REQUIREMENT_WITH_MIN_VALUES), tag="ignore"),
        GoField("NodeClassRef", GoPtr(NODE_CLASS_REFERENCE)),
        GoField("TerminationGracePeriod", GoPtr(METAV1_DURATION)),
        GoField("ExpireAfter", NILLABLE_DURATION),
    ),
)

NODE_CLAIM_TEMPLATE: Final = GoStruct(
    "NodeClaimTemplate",
    (GoField("ObjectMeta", OBJECT_META), GoField("Spec", NODE_CLAIM_TEMPLATE_SPEC)),
)

# -- EC2NodeClass (aws/karpenter-provider-aws pkg/apis/v1) ---------------------------------------

SELECTOR_TERMS: Final = GoSlice(GoInterface())  # every selector-term list is `hash:"ignore"`

KUBELET_CONFIGURATION: Final = GoStruct(
    "KubeletConfiguration",
    (
        GoField("ClusterDNS", GoSlice(STRING)),
        GoField("MaxPods", GoPtr(INT32)),
        GoField("PodsPerCore", GoPtr(INT32)),
        GoField("SystemReserved", STRING_MAP),
        GoField("KubeReserved", STRING_MAP),
        GoField("EvictionHard", STRING_MAP),
        GoField("EvictionSoft", STRING_MAP),
        GoField("EvictionSoftGracePeriod", GoMap(STRING, METAV1_DURATION)),
        GoField("EvictionMaxPodGracePeriod", GoPtr(INT32)),
        GoField("ImageGCHighThresholdPercent", GoPtr(INT32)),
        GoField("ImageGCLowThresholdPercent", GoPtr(INT32)),
        GoField("CPUCFSQuota", GoPtr(GoBool())),
    ),
)

METADATA_OPTIONS: Final = GoStruct(
    "MetadataOptions",
    (
        GoField("HTTPEndpoint", GoPtr(STRING)),
        GoField("HTTPProtocolIPv6", GoPtr(STRING)),
        GoField("HTTPPutResponseHopLimit", GoPtr(INT64)),
        GoField("HTTPTokens", GoPtr(STRING)),
    ),
)

# resource.Quantity hashed through its String() (the field carries `hash:"string"`); the value
# is the canonical string, so only its presence matters for IsZero.


def _quantity_string(value: Any) -> str:
    """``(*resource.Quantity).String()``: the canonical form (``1024Gi`` -> ``1Ti``)."""
    from nodewright.algebra.quantity import parse_quantity

    return str(parse_quantity(value))


BLOCK_DEVICE: Final = GoStruct(
    "BlockDevice",
    (
        GoField("DeleteOnTermination", GoPtr(GoBool())),
        GoField("Encrypted", GoPtr(GoBool())),
        GoField("IOPS", GoPtr(INT64)),
        GoField("KMSKeyID", GoPtr(STRING)),
        GoField("SnapshotID", GoPtr(STRING)),
        GoField("Throughput", GoPtr(INT64)),
        GoField("VolumeInitializationRate", GoPtr(INT32)),
        GoField("VolumeSize", GoPtr(STRING), tag="string", stringer=lambda v: _quantity_string(v)),
        GoField("VolumeType", GoPtr(STRING)),
    ),
)

BLOCK_DEVICE_MAPPING: Final = GoStruct(
    "BlockDeviceMapping",
    (
        GoField("DeviceName", GoPtr(STRING)),
        GoField("EBS", GoPtr(BLOCK_DEVICE)),
        GoField("RootVolume", GoBool()),
    ),
)

# PlacementGroupSelector{Name *string; ID *string} (hashed: no ``hash`` tag upstream)
PLACEMENT_GROUP_SELECTOR: Final = GoStruct(
    "PlacementGroupSelector", (GoField("Name", GoPtr(STRING)), GoField("ID", GoPtr(STRING)))
)

# NetworkInterface{NetworkCardIndex int32; DeviceIndex int32; InterfaceType InterfaceType(string)}
NETWORK_INTERFACE: Final = GoStruct(
    "NetworkInterface",
    (
        GoField("NetworkCardIndex", INT32),
        GoField("DeviceIndex", INT32),
        GoField("InterfaceType", GoString("InterfaceType")),
    ),
)

CONNECTION_TRACKING: Final = GoStruct(
    "ConnectionTracking",
    (
        GoField("TCPEstablishedTimeout", GoPtr(INT32)),
        GoField("UDPStreamTimeout", GoPtr(INT32)),
        GoField("UDPTimeout", GoPtr(INT32)),
    ),
)

CPU_OPTIONS: Final = GoStruct("CPUOptions", (GoField("NestedVirtualization", GoPtr(STRING)),))

# EC2NodeClassSpec in the declaration order of aws/karpenter-provider-aws v1.14.1
# pkg/apis/v1/ec2nodeclass.go (hash tags as there).
EC2_NODE_CLASS_SPEC: Final = GoStruct(
    "EC2NodeClassSpec",
    (
        GoField("SubnetSelectorTerms", SELECTOR_TERMS, tag="ignore"),
        GoField("SecurityGroupSelectorTerms", SELECTOR_TERMS, tag="ignore"),
        GoField("CapacityReservationSelectorTerms", SELECTOR_TERMS, tag="ignore"),
        GoField("PlacementGroupSelector", GoPtr(PLACEMENT_GROUP_SELECTOR)),
        GoField("AssociatePublicIPAddress", GoPtr(GoBool())),
        GoField("IPPrefixCount", GoPtr(INT32), tag="ignore"),
        GoField("AMISelectorTerms", SELECTOR_TERMS, tag="ignore"),
        GoField("AMIFamily", GoPtr(STRING), tag="ignore"),
        GoField("UserData", GoPtr(STRING)),
        GoField("Role", STRING),
        GoField("InstanceProfile", GoPtr(STRING)),
        GoField("Tags", STRING_MAP),
        GoField("Kubelet", GoPtr(KUBELET_CONFIGURATION)),
        GoField("BlockDeviceMappings", GoSlice(GoPtr(BLOCK_DEVICE_MAPPING))),
        GoField("InstanceStorePolicy", GoPtr(GoString("InstanceStorePolicy"))),
        GoField("NetworkInterfaces", GoSlice(GoPtr(NETWORK_INTERFACE))),
        GoField("DetailedMonitoring", GoPtr(GoBool())),
        GoField("MetadataOptions", GoPtr(METADATA_OPTIONS)),
        GoField("ConnectionTracking", GoPtr(CONNECTION_TRACKING)),
        GoField("Context", GoPtr(STRING)),
        GoField("CPUOptions", GoPtr(CPU_OPTIONS)),
    ),
)

# hashstructure.Hash([]any{spec, AMIFamily(), lo.FromPtr(caBundle)}, ...): a slice of interfaces.
EC2_NODE_CLASS_HASHED: Final = GoSlice(GoInterface())
