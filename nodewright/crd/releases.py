"""The Karpenter releases nodewright models: one row per release, one folder of CRDs per release.

Boundary: which CRD files and which hash versions belong to a release, and how the release is
chosen: ``--karpenter-version`` on the CLI, else ``nodewright:karpenterVersion`` of the stack, else
:data:`DEFAULT_VERSION`; a flag and a stack that disagree is a :class:`~nodewright.errors.UsageError`.
The chosen :class:`Release` is a value every loader, hash, drift, health, policy and stack-plan call
takes as a parameter; nothing here remembers a "current" release. Adding a release = copy its CRDs
into ``nodewright/data/crds/v<version>/`` (with a PROVENANCE entry) and add a row to
:data:`RELEASES` (docs/drift.md, Karpenter releases).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from nodewright.errors import InputError, UsageError
from nodewright.settings import GATE_NAMES, KarpenterSettings, resolve


@dataclass(frozen=True, kw_only=True)
class Release:
    """One supported Karpenter release: its CRD folder and the hash versions its controller stamps."""

    version: str
    crd_folder: str
    nodepool_hash_version: str
    ec2nodeclass_hash_version: str
    # EC2NodeClass.Hash takes the cluster CA bundle (hash v5, provider v1.12+); v4 hashes the spec
    # and the resolved AMI family only.
    ec2nodeclass_hash_ca_bundle: bool
    karpenter_commit: str
    provider_commit: str
    # The feature gates the release's controller has (FeatureGates in core options.go at its tag).
    feature_gates: tuple[str, ...] = tuple(GATE_NAMES)

    # CRD kinds of :data:`CRD_FILES` this release does not ship (the kind did not exist yet)
    absent_kinds: frozenset[str] = frozenset()

    def crd_file(self, kind: str) -> str:
        return CRD_FILES[kind]

    def ships(self, kind: str) -> bool:
        """Whether the release's CRD folder has ``kind`` (a CRD kind of :data:`CRD_FILES`)."""
        return kind in CRD_FILES and kind not in self.absent_kinds


# kind -> CRD file name inside a release folder.
CRD_FILES: Final[dict[str, str]] = {
    "NodePool": "karpenter.sh_nodepools.yaml",
    "NodeClaim": "karpenter.sh_nodeclaims.yaml",
    "EC2NodeClass": "karpenter.k8s.aws_ec2nodeclasses.yaml",
    "NodeOverlay": "karpenter.sh_nodeoverlays.yaml",
    "OperatingSystemConfig": "extensions.gardener.cloud_operatingsystemconfigs.yaml",
    "CapacityBuffer": "autoscaling.x-k8s.io_capacitybuffers.yaml",
}

# NodePoolHashVersion: kubernetes-sigs/karpenter pkg/apis/v1/nodepool.go; EC2NodeClassHashVersion:
# aws/karpenter-provider-aws pkg/apis/v1/ec2nodeclass.go, at each tag.
RELEASES: Final[dict[str, Release]] = {
    "1.11.3": Release(
        version="1.11.3",
        crd_folder="v1.11.3",
        nodepool_hash_version="v3",
        ec2nodeclass_hash_version="v4",
        ec2nodeclass_hash_ca_bundle=False,
        karpenter_commit="268e2b6ccbeeab41a3f7a2eb7639584294b46a91",
        provider_commit="0c4e1cfeb0757c2dca913e607d825dde8f7a06d3",
        feature_gates=(
            "NodeRepair",
            "ReservedCapacity",
            "SpotToSpotConsolidation",
            "NodeOverlay",
            "StaticCapacity",
        ),
        # v1.11.3 has neither the CapacityBuffer API nor its gate (pkg/apis/crds at the tag)
        absent_kinds=frozenset({"CapacityBuffer"}),
    ),
    "1.14.1": Release(
        version="1.14.1",
        crd_folder="v1.14.1",
        nodepool_hash_version="v3",
        ec2nodeclass_hash_version="v5",
        ec2nodeclass_hash_ca_bundle=True,
        karpenter_commit="6e7eab7a0f485d7225eb98995fad9b66c79b322b",
        provider_commit="bde00654cd316fddb3dccfba3f5ac07039865429",
    ),
}
DEFAULT_VERSION: Final = "1.14.1"
STACK_SOURCE: Final = "config.nodewright:karpenterVersion"


def supported_versions() -> list[str]:
    return sorted(RELEASES, key=lambda v: tuple(int(p) for p in v.split(".")))


def release(version: str | None = None, *, source: str = "--karpenter-version") -> Release:
    """The release ``version`` (``1.14.1`` or ``v1.14.1``; None = :data:`DEFAULT_VERSION`).

    An unknown version is an :class:`InputError` naming ``source`` and listing the supported ones.
    """
    if version is None:
        version = DEFAULT_VERSION
    key = version.strip().removeprefix("v")
    found = RELEASES.get(key)
    if found is None:
        raise InputError(
            f"unsupported Karpenter version {version!r}; supported: {', '.join(supported_versions())} "
            "(adding one: docs/drift.md, Karpenter releases)",
            file=source,
        )
    return found


def default_release() -> Release:
    """The release of :data:`DEFAULT_VERSION` (what a caller that chose nothing gets)."""
    return release(DEFAULT_VERSION)


def choose_release(
    flag: str | None,
    stack: str | None = None,
    *,
    flag_source: str = "--karpenter-version",
    stack_source: str = STACK_SOURCE,
) -> Release:
    """The release in force: the flag, else the stack's, else the default. Both given and naming
    different releases is a :class:`UsageError` naming both (neither silently wins)."""
    from_flag = release(flag, source=flag_source) if flag else None
    from_stack = release(stack, source=stack_source) if stack else None
    if from_flag is not None and from_stack is not None and from_flag.version != from_stack.version:
        raise UsageError(
            f"{flag_source} {from_flag.version} disagrees with {stack_source} {from_stack.version}; "
            "drop the flag or change the stack",
            file="<args>",
        )
    return from_flag or from_stack or default_release()


@dataclass(frozen=True, kw_only=True)
class KarpenterChoice:
    """What the command line and the environment say about Karpenter, before a stack is read.

    ``flags`` is keyed by :class:`~nodewright.settings.KarpenterSettings` attribute (None = not
    given); ``env`` by Karpenter's variable names. :meth:`release` and :meth:`settings` add a stack
    (and a cluster snapshot) below them.
    """

    version: str | None = None
    flags: Mapping[str, object] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)

    def release(self, stack: str | None = None, *, stack_source: str = STACK_SOURCE) -> Release:
        return choose_release(self.version, stack, stack_source=stack_source)

    def settings(
        self,
        stack: Mapping[str, object] | None = None,
        snapshot: Mapping[str, object] | None = None,
        *,
        release: Release | None = None,
    ) -> KarpenterSettings:
        """The settings in force (flag > environment > ``stack`` > ``snapshot`` > default), checked
        against ``release``'s feature gates when given (:func:`check_gates`)."""
        settings = resolve(flags=self.flags, env=self.env, stack=stack, snapshot=snapshot)
        if release is not None:
            check_gates(settings, release)
        return settings


def check_gates(settings: KarpenterSettings, release: Release) -> None:
    """A gate enabled for a release whose controller does not have it is an error (Karpenter would
    ignore it: the forecast would assume a feature the cluster does not run). A usage error when the
    gates came from the command line or its environment."""
    missing = [g for g in settings.feature_gates.enabled() if g not in release.feature_gates]
    if not missing:
        return
    origin = settings.sources.get("feature_gates", "default")
    error = UsageError if origin in ("flag", "env") else InputError
    where = {"flag": "<args>", "env": "<environment>", "stack": "config.nodewright:karpenter"}.get(
        origin, origin
    )
    raise error(
        f"feature gate {', '.join(missing)} does not exist in Karpenter {release.version} "
        f"(its gates: {', '.join(release.feature_gates)}); drop it or choose a newer release",
        file=where,
    )
