"""Well-known label, annotation and taint keys, and nodewright's own tags: the one place they are spelled.

Mirrors Karpenter's ``pkg/apis/v1/labels.go`` and ``taints.go`` and the AWS provider's labels.
Nothing else in nodewright writes these keys as literals.
"""

from __future__ import annotations

from typing import Final

# -- Kubernetes well-known labels --------------------------------------------------------------
HOSTNAME: Final = "kubernetes.io/hostname"
ZONE: Final = "topology.kubernetes.io/zone"
REGION: Final = "topology.kubernetes.io/region"
INSTANCE_TYPE: Final = "node.kubernetes.io/instance-type"
ARCH: Final = "kubernetes.io/arch"
OS: Final = "kubernetes.io/os"
WINDOWS_BUILD: Final = "node.kubernetes.io/windows-build"

# Label keys the AWS provider registers as aliases of well-known ones at start-up
# (aws/karpenter-provider-aws v1.14.1 pkg/operator/operator.go adds the EBS CSI driver's zone key to
# core's NormalizedLabels), so StorageClass allowedTopologies and PV node affinity written with it
# constrain the zone.
EBS_CSI_ZONE: Final = "topology.ebs.csi.aws.com/zone"
PROVIDER_LABEL_ALIASES: Final[dict[str, str]] = {EBS_CSI_ZONE: ZONE}

# Deprecated beta keys and provider aliases, and what they normalise to (Karpenter's
# NormalizedLabels, kubernetes-sigs/karpenter pkg/apis/v1/labels.go, plus the provider's aliases).
NORMALIZED_LABELS: Final[dict[str, str]] = {
    "failure-domain.beta.kubernetes.io/zone": ZONE,
    "failure-domain.beta.kubernetes.io/region": REGION,
    "beta.kubernetes.io/arch": ARCH,
    "beta.kubernetes.io/os": OS,
    "beta.kubernetes.io/instance-type": INSTANCE_TYPE,
    **PROVIDER_LABEL_ALIASES,
}

# -- Karpenter ---------------------------------------------------------------------------------
GROUP: Final = "karpenter.sh"
NODEPOOL: Final = "karpenter.sh/nodepool"
CAPACITY_TYPE: Final = "karpenter.sh/capacity-type"
NODE_REGISTERED: Final = "karpenter.sh/registered"
NODE_INITIALIZED: Final = "karpenter.sh/initialized"
DO_NOT_SYNC_TAINTS: Final = "karpenter.sh/do-not-sync-taints"
NODECLAIM_MIN_VALUES_RELAXED: Final = "karpenter.sh/nodeclaim-min-values-relaxed"
DO_NOT_DISRUPT: Final = "karpenter.sh/do-not-disrupt"

CAPACITY_TYPE_SPOT: Final = "spot"
CAPACITY_TYPE_ON_DEMAND: Final = "on-demand"
CAPACITY_TYPE_RESERVED: Final = "reserved"

NODEPOOL_HASH: Final = "karpenter.sh/nodepool-hash"
NODEPOOL_HASH_VERSION: Final = "karpenter.sh/nodepool-hash-version"

# -- Karpenter AWS provider --------------------------------------------------------------------
AWS_GROUP: Final = "karpenter.k8s.aws"
EC2NODECLASS: Final = "karpenter.k8s.aws/ec2nodeclass"
EC2NODECLASS_HASH: Final = "karpenter.k8s.aws/ec2nodeclass-hash"
EC2NODECLASS_HASH_VERSION: Final = "karpenter.k8s.aws/ec2nodeclass-hash-version"
INSTANCE_CATEGORY: Final = "karpenter.k8s.aws/instance-category"
INSTANCE_FAMILY: Final = "karpenter.k8s.aws/instance-family"
INSTANCE_GENERATION: Final = "karpenter.k8s.aws/instance-generation"
INSTANCE_SIZE: Final = "karpenter.k8s.aws/instance-size"
INSTANCE_CPU: Final = "karpenter.k8s.aws/instance-cpu"
INSTANCE_CPU_MANUFACTURER: Final = "karpenter.k8s.aws/instance-cpu-manufacturer"
INSTANCE_CPU_SUSTAINED_CLOCK_SPEED_MHZ: Final = "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz"
INSTANCE_MEMORY: Final = "karpenter.k8s.aws/instance-memory"
INSTANCE_EBS_BANDWIDTH: Final = "karpenter.k8s.aws/instance-ebs-bandwidth"
INSTANCE_NETWORK_BANDWIDTH: Final = "karpenter.k8s.aws/instance-network-bandwidth"
INSTANCE_GPU_NAME: Final = "karpenter.k8s.aws/instance-gpu-name"
INSTANCE_GPU_MANUFACTURER: Final = "karpenter.k8s.aws/instance-gpu-manufacturer"
INSTANCE_GPU_COUNT: Final = "karpenter.k8s.aws/instance-gpu-count"
INSTANCE_GPU_MEMORY: Final = "karpenter.k8s.aws/instance-gpu-memory"
INSTANCE_LOCAL_NVME: Final = "karpenter.k8s.aws/instance-local-nvme"
INSTANCE_HYPERVISOR: Final = "karpenter.k8s.aws/instance-hypervisor"
INSTANCE_ENCRYPTION_IN_TRANSIT_SUPPORTED: Final = "karpenter.k8s.aws/instance-encryption-in-transit-supported"
INSTANCE_CAPABILITY_FLEX: Final = "karpenter.k8s.aws/instance-capability-flex"
CAPACITY_RESERVATION_ID: Final = "karpenter.k8s.aws/capacity-reservation-id"
CAPACITY_RESERVATION_TYPE: Final = "karpenter.k8s.aws/capacity-reservation-type"
CAPACITY_RESERVATION_INTERRUPTIBLE: Final = "karpenter.k8s.aws/capacity-reservation-interruptible"
INSTANCE_TENANCY: Final = "karpenter.k8s.aws/instance-tenancy"
PLACEMENT_GROUP_ID: Final = "karpenter.k8s.aws/placement-group-id"
PLACEMENT_GROUP_PARTITION: Final = "karpenter.k8s.aws/placement-group-partition"
INSTANCE_ACCELERATOR_NAME: Final = "karpenter.k8s.aws/instance-accelerator-name"
INSTANCE_ACCELERATOR_MANUFACTURER: Final = "karpenter.k8s.aws/instance-accelerator-manufacturer"
INSTANCE_ACCELERATOR_COUNT: Final = "karpenter.k8s.aws/instance-accelerator-count"
ZONE_ID: Final = "topology.k8s.aws/zone-id"

# Karpenter's WellKnownLabels at v1.14.1 (kubernetes-sigs/karpenter pkg/apis/v1/labels.go plus the
# AWS provider's additions in aws/karpenter-provider-aws pkg/apis/v1/labels.go init()): labels the
# scheduler may meet on a pod without any NodePool defining them.
WELL_KNOWN_LABELS: Final[frozenset[str]] = frozenset(
    {
        NODEPOOL,
        ZONE,
        REGION,
        INSTANCE_TYPE,
        ARCH,
        OS,
        CAPACITY_TYPE,
        WINDOWS_BUILD,
        INSTANCE_CATEGORY,
        INSTANCE_FAMILY,
        INSTANCE_GENERATION,
        INSTANCE_SIZE,
        INSTANCE_CPU,
        INSTANCE_CPU_MANUFACTURER,
        INSTANCE_CPU_SUSTAINED_CLOCK_SPEED_MHZ,
        INSTANCE_MEMORY,
        INSTANCE_EBS_BANDWIDTH,
        INSTANCE_NETWORK_BANDWIDTH,
        INSTANCE_GPU_NAME,
        INSTANCE_GPU_MANUFACTURER,
        INSTANCE_GPU_COUNT,
        INSTANCE_GPU_MEMORY,
        INSTANCE_LOCAL_NVME,
        INSTANCE_HYPERVISOR,
        INSTANCE_ENCRYPTION_IN_TRANSIT_SUPPORTED,
        INSTANCE_CAPABILITY_FLEX,
        CAPACITY_RESERVATION_ID,
        CAPACITY_RESERVATION_TYPE,
        CAPACITY_RESERVATION_INTERRUPTIBLE,
        INSTANCE_TENANCY,
        PLACEMENT_GROUP_ID,
        PLACEMENT_GROUP_PARTITION,
        INSTANCE_ACCELERATOR_NAME,
        INSTANCE_ACCELERATOR_MANUFACTURER,
        INSTANCE_ACCELERATOR_COUNT,
        ZONE_ID,
    }
)

RESTRICTED_LABELS: Final[frozenset[str]] = frozenset({HOSTNAME})
# A label whose domain is, or ends in, one of these is dropped from kubelet --node-labels.
KUBELET_FORBIDDEN_LABEL_DOMAINS: Final[tuple[str, ...]] = (
    "node-restriction.kubernetes.io",
    "kubernetes.io",
    "k8s.io",
)

# -- nodewright's own tags ----------------------------------------------------------------------
# Tags nodewright puts on launch templates and instances (private to nodewright, not Kubernetes labels).
AMI_FAMILY_TAG: Final = "nodewright.dev/ami-family"
NODECLAIM_TAG: Final = "nodewright.dev/nodeclaim"

# -- taints ------------------------------------------------------------------------------------
UNREGISTERED_TAINT_KEY: Final = "karpenter.sh/unregistered"
DISRUPTED_TAINT_KEY: Final = "karpenter.sh/disrupted"
TAINT_EFFECTS: Final[frozenset[str]] = frozenset({"NoSchedule", "PreferNoSchedule", "NoExecute"})
# Taints the node lifecycle manages; ignored while a node initialises.
KNOWN_EPHEMERAL_TAINTS: Final[tuple[tuple[str, str | None, str], ...]] = (
    ("node.kubernetes.io/not-ready", None, "NoSchedule"),
    ("node.kubernetes.io/not-ready", None, "NoExecute"),
    ("node.kubernetes.io/unreachable", None, "NoSchedule"),
    ("node.cloudprovider.kubernetes.io/uninitialized", "true", "NoSchedule"),
    (UNREGISTERED_TAINT_KEY, None, "NoExecute"),
)
EPHEMERAL_TAINT_KEY_PREFIX: Final = "readiness.k8s.io/"

# -- requirement operators ---------------------------------------------------------------------
OPERATORS: Final[tuple[str, ...]] = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte")


# Karpenter's RestrictedLabelDomains at v1.14.1: karpenter.sh (core) and karpenter.k8s.aws (the AWS
# provider's init()). kubernetes.io and k8s.io left the list in v1.9 (kubernetes-sigs/karpenter#2586,
# "relax cel restrictions"): node-role.kubernetes.io/worker is a valid NodePool label since.
RESTRICTED_LABEL_DOMAINS: Final[tuple[str, ...]] = (GROUP, AWS_GROUP)


def _in_restricted_domain(key: str) -> bool:
    domain = label_domain(key)
    return any(domain == d or domain.endswith("." + d) for d in RESTRICTED_LABEL_DOMAINS)


def restricted_label_error(key: str) -> str | None:
    """Karpenter's ``IsRestrictedLabel`` (v1.14.1, upstream text): why ``key`` may not be a NodePool
    label or requirement key, else None (well-known labels are always allowed)."""
    if key in WELL_KNOWN_LABELS:
        return None
    if _in_restricted_domain(key) or key in RESTRICTED_LABELS:
        return (
            f"using label {key} is not allowed as it might interfere with the internal provisioning logic; "
            f"specify a well known label: [{' '.join(sorted(WELL_KNOWN_LABELS))}], or a custom label that "
            f"does not use a restricted domain: [{' '.join(sorted(RESTRICTED_LABEL_DOMAINS))}]"
        )
    return None


def is_restricted_label(key: str) -> bool:
    """True when Karpenter (v1.14.1 ``IsRestrictedLabel``) refuses ``key`` in NodePool labels or
    requirements: in a restricted domain and not well known, or kubernetes.io/hostname."""
    return restricted_label_error(key) is not None


def is_restricted_node_label(key: str) -> bool:
    """Labels Karpenter does not copy from single-value requirements onto a NodeClaim: well-known
    labels (the cloud provider sets them) and restricted ones (v1.14.1
    ``resolveCustomLabelsFromRequirements``, kubernetes-sigs/karpenter#2586)."""
    return key in WELL_KNOWN_LABELS or key in RESTRICTED_LABELS or _in_restricted_domain(key)


def is_restricted_pod_label(key: str) -> bool:
    """Karpenter ``IsRestrictedLabel`` for pod selectors: not well-known and restricted."""
    return is_restricted_label(key)


def normalize(key: str) -> str:
    """The current spelling of a possibly deprecated label key."""
    return NORMALIZED_LABELS.get(key, key)


def label_domain(key: str) -> str:
    """The domain (prefix before ``/``) of a label key, or ``""`` when it has none."""
    return key.split("/", 1)[0] if "/" in key else ""
