"""NodeClassDrift inputs: the ``ec2nodeclass-hash`` each EC2NodeClass carries once a branch is applied.

Boundary: from the branch's and the live EC2NodeClasses (and the cluster CA bundle, part of the
hash since aws/karpenter-provider-aws v1.12) to one :class:`ClassHash` per class plus notes;
:mod:`nodewright.drift.detect` applies Karpenter's re-stamp and drift rules to the NodeClaims.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from nodewright import labels
from nodewright.crd import Release
from nodewright.drift.nodeclasshash import nodeclass_hash
from nodewright.drift.nodepoolhash import as_mapping


def _meta(body: Mapping[str, Any]) -> Mapping[str, Any]:
    m = body.get("metadata")
    return m if isinstance(m, Mapping) else {}


def _annotations(body: Mapping[str, Any]) -> dict[str, str]:
    v = _meta(body).get("annotations")
    return {str(k): str(x) for k, x in v.items()} if isinstance(v, Mapping) else {}


@dataclass(frozen=True, kw_only=True)
class ClassHash:
    """The ec2nodeclass-hash a class carries after apply, and the live hash version."""

    hash: str
    live_version: str | None


def nodeclass_hashes(
    branch: Iterable[Any], live: Iterable[Any], ca_bundle: str | None = None, *, release: Release
) -> tuple[dict[str, ClassHash], list[str]]:
    """The ec2nodeclass-hash each EC2NodeClass carries once the branch is applied.

    With the cluster CA bundle (``ca_bundle``) the hash is exact (``EC2NodeClass.Hash(caBundle)``,
    v5), so a CA rotation (the live annotation was stamped with another CA) is predicted for
    branch and live-only classes alike. Without it, a branch class that hashes like its live copy
    keeps the live annotation (the CA cannot be compared) and a changed one gets a new hash.
    """
    notes: list[str] = []
    live_by_name: dict[str, tuple[Mapping[str, Any], Any]] = {}
    for obj in live:
        body, _ = as_mapping(obj)
        live_by_name[str(_meta(body).get("name", ""))] = (body, obj)
    out: dict[str, ClassHash] = {}
    branch_objs: dict[str, Any] = {}
    for obj in branch:
        body, _ = as_mapping(obj)
        branch_objs[str(_meta(body).get("name", ""))] = obj
    rotated: list[str] = []
    for name in sorted(set(branch_objs) | set(live_by_name)):
        entry = live_by_name.get(name)
        mine_obj = branch_objs.get(name)
        if entry is None:
            notes.append(
                f"EC2NodeClass {name}: the cluster state does not list it, so NodeClassDrift is not evaluated "
                "(add `ec2nodeclasses.karpenter.k8s.aws` to the kubectl get)"
            )
            continue
        ann = _annotations(entry[0])
        live_hash = ann.get(labels.EC2NODECLASS_HASH)
        if live_hash is None:
            continue
        version = ann.get(labels.EC2NODECLASS_HASH_VERSION)
        exact = ca_bundle is not None or not release.ec2nodeclass_hash_ca_bundle
        if exact:
            live_now = nodeclass_hash(entry[1], ca_bundle=ca_bundle, release=release)
            if live_now != live_hash and version == release.ec2nodeclass_hash_version:
                rotated.append(name)
            after = (
                nodeclass_hash(mine_obj, ca_bundle=ca_bundle, release=release)
                if mine_obj is not None
                else live_now
            )
        elif mine_obj is None:
            after = live_hash
        else:
            unchanged = nodeclass_hash(entry[1], release=release) == nodeclass_hash(mine_obj, release=release)
            after = live_hash if unchanged else nodeclass_hash(mine_obj, release=release)
        out[name] = ClassHash(hash=after, live_version=version)
    if rotated:
        notes.append(
            f"EC2NodeClass {', '.join(rotated)}: the live ec2nodeclass-hash is not the hash of the live spec "
            "with the given CA bundle: the cluster CA changed (rotation) or the live object was stamped "
            "by another Karpenter release; Karpenter re-stamps it and its NodeClaims drift"
        )
    elif ca_bundle is None and live_by_name and release.ec2nodeclass_hash_ca_bundle:
        notes.append(
            "no cluster CA bundle given (--cluster-info): EC2NodeClass hashes are compared relative to the "
            "live objects and a CA rotation is not predicted"
        )
    return out, notes
