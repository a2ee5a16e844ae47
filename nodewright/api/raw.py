"""Raw NodeClaim documents, typed for the readers that keep them raw on purpose.

Drift (:mod:`nodewright.drift.detect`) and health (:mod:`nodewright.health.derive`) read a
cluster's NodeClaims as the mappings the snapshot holds (``load_cluster(..., raw_nodeclaims=True)``)
instead of building 10,000 pydantic models they would dump back to mappings. These TypedDicts name
the fields those readers use (Karpenter v1 ``NodeClaim``: ``metadata``, ``spec.nodeClassRef``,
``status.conditions``); every key is optional (``total=False``) and the readers still check each
value's type, since a raw document may hold anything. Typing only: nothing is validated at run time.
"""

from __future__ import annotations

from typing import Any, TypedDict


class RawOwnerReference(TypedDict, total=False):
    apiVersion: str
    kind: str
    name: str
    uid: str


class RawMetadata(TypedDict, total=False):
    name: str
    namespace: str
    uid: str
    generation: int
    creationTimestamp: str
    labels: dict[str, str]
    annotations: dict[str, str]
    ownerReferences: list[RawOwnerReference]


class RawNodeClassRef(TypedDict, total=False):
    group: str
    kind: str
    name: str


class RawNodeClaimSpec(TypedDict, total=False):
    nodeClassRef: RawNodeClassRef
    requirements: list[dict[str, Any]]
    taints: list[dict[str, Any]]
    startupTaints: list[dict[str, Any]]
    expireAfter: str
    terminationGracePeriod: str


class RawCondition(TypedDict, total=False):
    type: str
    status: str
    reason: str
    message: str
    lastTransitionTime: str
    observedGeneration: int


class RawNodeClaimStatus(TypedDict, total=False):
    nodeName: str
    providerID: str
    imageID: str
    conditions: list[RawCondition]


class RawNodeClaim(TypedDict, total=False):
    """A ``karpenter.sh/v1`` NodeClaim as listed (only the fields nodewright's raw readers use)."""

    apiVersion: str
    kind: str
    metadata: RawMetadata
    spec: RawNodeClaimSpec
    status: RawNodeClaimStatus


__all__ = [
    "RawCondition",
    "RawMetadata",
    "RawNodeClaim",
    "RawNodeClaimSpec",
    "RawNodeClaimStatus",
    "RawNodeClassRef",
    "RawOwnerReference",
]
