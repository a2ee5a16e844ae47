"""Well-known label, annotation and taint keys: the one place they are spelled.

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
NODEPOOL_HASH_VERSION_VALUE: Final = "v3"

# -- Karpenter AWS provider --------------------------------------------------------------------
AWS_GROUP: Final = "karpenter.k8s.aws"
EC2NODECLASS: Final = "karpenter.k8s.aws/ec2nodeclass"
EC2NODECLASS_HASH: Final = "karpenter.k8s.aws/ec2nodeclass-hash"
EC2NODECLASS_HASH_VERSION: Final = "karpenter.k8s.aws/ec2nodeclass-hash-version"
EC2NODECLASS_HASH_VERSION_VALUE: Final = "v5"
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
INSTANCE_ACCELERATOR_NAME: Final = "karpenter.k8s.aws/instance-accelerator-name"
INSTANCE_ACCELERATOR_MANUFACTURER: Final = "karpenter.k8s.aws/instance-accelerator-manufacturer"
INSTANCE_ACCELERATOR_COUNT: Final = "karpenter.k8s.aws/instance-accelerator-count"
ZONE_ID: Final = "topology.k8s.aws/zone-id"

# Labels the scheduler may meet on a pod without any NodePool defining them.
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
        INSTANCE_ACCELERATOR_NAME,
        INSTANCE_ACCELERATOR_MANUFACTURER,
        INSTANCE_ACCELERATOR_COUNT,
        ZONE_ID,
    }
)

# Karpenter's CRD rules for label keys (NodePool labels and requirements, NodeClaim requirements).
K8S_WELL_KNOWN_LABELS: Final[frozenset[str]] = frozenset(
    {
        "beta.kubernetes.io/instance-type",
        "failure-domain.beta.kubernetes.io/region",
        "beta.kubernetes.io/os",
        "beta.kubernetes.io/arch",
        "failure-domain.beta.kubernetes.io/zone",
        ZONE,
        REGION,
        INSTANCE_TYPE,
        ARCH,
        OS,
        WINDOWS_BUILD,
    }
)
RESTRICTED_LABELS: Final[frozenset[str]] = frozenset({HOSTNAME})
KARPENTER_LABELS_ALLOWED: Final[frozenset[str]] = frozenset({CAPACITY_TYPE, NODEPOOL})
AWS_LABELS_ALLOWED: Final[frozenset[str]] = frozenset(
    k for k in WELL_KNOWN_LABELS if k.startswith(AWS_GROUP + "/")
) | frozenset(
    {EC2NODECLASS, "karpenter.k8s.aws/instance-tenancy", "karpenter.k8s.aws/capacity-reservation-type"}
)
# A label whose domain is, or ends in, one of these is dropped from kubelet --node-labels.
KUBELET_FORBIDDEN_LABEL_DOMAINS: Final[tuple[str, ...]] = (
    "node-restriction.kubernetes.io",
    "kubernetes.io",
    "k8s.io",
)

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


# Karpenter core's RestrictedLabelDomains (plus the AWS provider's group) and LabelDomainExceptions.
RESTRICTED_LABEL_DOMAINS: Final[tuple[str, ...]] = ("k8s.io", AWS_GROUP, GROUP, "kubernetes.io")
LABEL_DOMAIN_EXCEPTIONS: Final[tuple[str, ...]] = (
    "kops.k8s.io",
    "node.kubernetes.io",
    "node-restriction.kubernetes.io",
)


def _in_restricted_domain(key: str) -> bool:
    domain = label_domain(key)
    if any(domain.endswith(d) for d in LABEL_DOMAIN_EXCEPTIONS):
        return False
    return any(domain.endswith(d) for d in RESTRICTED_LABEL_DOMAINS) or key in RESTRICTED_LABELS


def is_restricted_node_label(key: str) -> bool:
    """Karpenter ``IsRestrictedNodeLabel``: labels the cloud provider (not a requirement or a
    NodePool label) sets on a node: well-known labels and keys in restricted domains."""
    return key in WELL_KNOWN_LABELS or _in_restricted_domain(key)


def is_restricted_pod_label(key: str) -> bool:
    """Karpenter ``IsRestrictedLabel`` for pod selectors: not well-known and in a restricted domain."""
    return key not in WELL_KNOWN_LABELS and _in_restricted_domain(key)


def normalize(key: str) -> str:
    """The current spelling of a possibly deprecated label key."""
    return NORMALIZED_LABELS.get(key, key)


def label_domain(key: str) -> str:
    """The domain (prefix before ``/``) of a label key, or ``""`` when it has none."""
    return key.split("/", 1)[0] if "/" in key else ""


def restricted_label_reason(key: str, *, nodepool_label_forbidden: bool = True) -> str | None:
    """Why Karpenter's CRD rejects ``key`` as a NodePool label or requirement key, else None.

    Mirrors the CEL rules Karpenter (and its AWS provider) put on NodePool labels and
    requirement keys; the message is the CRD's own (``label domain "karpenter.sh" is restricted``).
    ``karpenter.sh/nodepool`` is refused in NodePools (Karpenter sets it) but allowed elsewhere.
    """
    domain = label_domain(key)
    if key == HOSTNAME:
        return f'label "{HOSTNAME}" is restricted'
    if nodepool_label_forbidden and key == NODEPOOL:
        return f'label "{NODEPOOL}" is restricted'
    if (
        key not in K8S_WELL_KNOWN_LABELS
        and domain.endswith("kubernetes.io")
        and not domain.endswith("node.kubernetes.io")
        and not domain.endswith("node-restriction.kubernetes.io")
    ):
        return 'label domain "kubernetes.io" is restricted'
    if domain.endswith("k8s.io") and not domain.endswith("kops.k8s.io"):
        return 'label domain "k8s.io" is restricted'
    if key not in KARPENTER_LABELS_ALLOWED and domain.endswith(GROUP):
        return f'label domain "{GROUP}" is restricted'
    if key not in AWS_LABELS_ALLOWED and domain.endswith(AWS_GROUP):
        return f'label domain "{AWS_GROUP}" is restricted'
    return None


def is_restricted_label(key: str) -> bool:
    """True when Karpenter's CRD rejects ``key`` in NodePool labels or requirements."""
    return restricted_label_reason(key) is not None
