"""The Karpenter releases nodewright models: one row per release, one folder of CRDs per release.

Boundary: which CRD files and which hash versions belong to a release, and which release is
selected (``--karpenter-version`` on the CLI, ``nodewright:karpenterVersion`` in a stack). Adding
a release = copy its CRDs into ``nodewright/data/crds/v<version>/`` (with a PROVENANCE entry)
and add a row to :data:`RELEASES` (README "Karpenter releases").
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Final

from nodewright import labels
from nodewright.errors import InputError


@dataclass(frozen=True, kw_only=True)
class Release:
    """One supported Karpenter release: its CRD folder and the hash versions its controller stamps."""

    version: str
    crd_folder: str
    nodepool_hash_version: str
    ec2nodeclass_hash_version: str
    karpenter_commit: str
    provider_commit: str

    def crd_file(self, kind: str) -> str:
        return CRD_FILES[kind]


# kind -> CRD file name inside a release folder.
CRD_FILES: Final[dict[str, str]] = {
    "NodePool": "karpenter.sh_nodepools.yaml",
    "NodeClaim": "karpenter.sh_nodeclaims.yaml",
    "EC2NodeClass": "karpenter.k8s.aws_ec2nodeclasses.yaml",
    "OperatingSystemConfig": "extensions.gardener.cloud_operatingsystemconfigs.yaml",
    "CapacityBuffer": "autoscaling.x-k8s.io_capacitybuffers.yaml",
}

RELEASES: Final[dict[str, Release]] = {
    "1.14.1": Release(
        version="1.14.1",
        crd_folder="v1.14.1",
        nodepool_hash_version=labels.NODEPOOL_HASH_VERSION_VALUE,
        ec2nodeclass_hash_version=labels.EC2NODECLASS_HASH_VERSION_VALUE,
        karpenter_commit="6e7eab7a0f485d7225eb98995fad9b66c79b322b",
        provider_commit="bde00654cd316fddb3dccfba3f5ac07039865429",
    ),
}
DEFAULT_VERSION: Final = "1.14.1"

_selected: ContextVar[str] = ContextVar("nodewright_karpenter_version", default=DEFAULT_VERSION)


def supported_versions() -> list[str]:
    return sorted(RELEASES, key=lambda v: tuple(int(p) for p in v.split(".")))


def release(version: str | None = None, *, source: str = "--karpenter-version") -> Release:
    """The release ``version`` (``1.14.1`` or ``v1.14.1``; None = the selected one).

    An unknown version is an :class:`InputError` naming ``source`` and listing the supported ones.
    """
    if version is None:
        version = _selected.get()
    key = version.strip().removeprefix("v")
    found = RELEASES.get(key)
    if found is None:
        raise InputError(
            f"unsupported Karpenter version {version!r}; supported: {', '.join(supported_versions())} "
            "(adding one: README, Karpenter releases)",
            file=source,
        )
    return found


def selected() -> Release:
    """The release every loader uses unless told otherwise."""
    return release(None)


@contextlib.contextmanager
def selecting(version: str | None, *, source: str = "--karpenter-version") -> Iterator[Release]:
    """Select ``version`` (validated) for the ``with`` block; None keeps the current selection."""
    rel = release(version, source=source) if version is not None else selected()
    token = _selected.set(rel.version)
    try:
        yield rel
    finally:
        _selected.reset(token)


def select(version: str | None, *, source: str = "--karpenter-version") -> Release:
    """Select ``version`` for the rest of this context (a CLI process, a Pulumi program)."""
    rel = release(version, source=source) if version is not None else selected()
    _selected.set(rel.version)
    return rel
