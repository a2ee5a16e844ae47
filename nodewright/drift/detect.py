"""Drift detection: which NodeClaims Karpenter marks ``Drifted`` once NodePools/NodeClasses change.

Boundary: pure evaluation over a cluster state (its NodeClaims, live NodePools and, when listed,
live EC2NodeClasses), the NodePools/EC2NodeClasses of a branch, and optionally an instance-type
catalog. It simulates, in order, what Karpenter's controllers do after the branch is applied:

1. the NodePool hash controller (``nodepool.hash``): the NodePool gets ``nodepool-hash`` =
   ``NodePool.Hash()`` and the release's version (``Release.nodepool_hash_version``); when the live
   NodePool's version differs, every NodeClaim of the pool whose version differs is re-stamped to
   it and, unless it already has a ``Drifted`` condition, gets the new hash (a version bump alone
   drifts nothing; drifted stays drifted: kubernetes-sigs/karpenter
   ``pkg/controllers/nodepool/hash/controller.go``). The AWS provider does the same for
   ``ec2nodeclass-hash`` (``Release.ec2nodeclass_hash_version``; aws/karpenter-provider-aws
   ``pkg/controllers/nodeclass/hash/controller.go``): a Karpenter upgrade that bumps a hash version
   re-stamps and rolls no node, and the report says so (``restamped``, a note).
2. the drift sub-reconciler, only for NodeClaims with ``Launched=True``, first reason wins:
   ``NodePoolDrifted`` (four annotations present, versions equal, hashes differ),
   ``RequirementsDrifted`` (the NodeClaim's labels are not compatible with the NodePool's
   requirements), ``InstanceTypeNotFound`` (with a catalog, NodeClaims older than 1h: the instance
   type is gone or has no compatible offering; reserved NodeClaims also match on-demand),
   ``NodeClassDrift`` (EC2NodeClass hash, same rule as NodePoolDrifted).

Behavioural fields (disruption, limits, weight, replicas) are not in the hash: they never drift.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from nodewright import labels
from nodewright.algebra.requirements import Requirements
from nodewright.crd import Release
from nodewright.drift.claims import (
    CONDITION_DRIFTED,
    CONDITION_LAUNCHED,
    DefaultsMode,
    _Claim,
    _claim,
    _instance_type_drift,
    _meta,
    _Pool,
    _pools,
    _requirements,
    _restamp,
    _static_drift,
    parse_time,
)
from nodewright.drift.inputs import as_documents, read_objects
from nodewright.drift.nodeclassdrift import ClassHash, nodeclass_hashes
from nodewright.drift.nodepoolhash import raw_body
from nodewright.drift.report import DriftedNodeClaim, DriftReport, PoolImpact
from nodewright.drift.rollout import budget_base, rollout, static_rollout
from nodewright.scheduling.staticcapacity import pool_counts

# re-exported: callers import them from here
__all__ = [
    "DefaultsMode",
    "DriftReport",
    "DriftedNodeClaim",
    "PoolImpact",
    "drift_impact",
    "drift_impact_files",
    "parse_time",
]

log = logging.getLogger("nodewright")

NODEPOOL_DRIFTED: Final = "NodePoolDrifted"
REQUIREMENTS_DRIFTED: Final = "RequirementsDrifted"
INSTANCE_TYPE_NOT_FOUND: Final = "InstanceTypeNotFound"
NODECLASS_DRIFT: Final = "NodeClassDrift"


def _load_cluster(cluster: Any, release: Release) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
    """(nodeclaims, nodepools, nodeclasses, nodes) of a ClusterState-like object or a file path."""
    if isinstance(cluster, str | Path):
        from nodewright.cluster import load_cluster

        # claims stay raw mappings (drift reads them robustly), pods are not read at all
        cluster = load_cluster(
            cluster,
            kinds=("NodePool", "EC2NodeClass"),
            raw_nodeclaims=True,
            raw_nodes=True,
            release=release,
        )
        return (
            list(cluster.raw_nodeclaims),
            list(cluster.nodepools),
            list(cluster.nodeclasses),
            list(cluster.raw_nodes),
        )
    return (
        list(getattr(cluster, "nodeclaims", ()) or ()),
        list(getattr(cluster, "nodepools", ()) or ()),
        list(getattr(cluster, "nodeclasses", ()) or ()),
        list(getattr(cluster, "nodes", ()) or ()),
    )


def drift_impact(
    nodepools: Iterable[Any],
    cluster: Any,
    catalog: Any = None,
    *,
    nodeclasses: Iterable[Any] = (),
    now: datetime | None = None,
    defaults: DefaultsMode = "auto",
    ca_bundle: str | None = None,
    at: datetime | None = None,
    release: Release,
    karpenter: Mapping[str, Any] | None = None,
) -> DriftReport:
    """Which NodeClaims of ``cluster`` Karpenter marks Drifted once ``nodepools`` are applied.

    ``release``: the Karpenter release that reconciles the branch (its hash versions and
    EC2NodeClass hash); ``karpenter``: what the report states about it (``{version, settings...}``).

    ``nodepools``/``nodeclasses``: the branch's NodePools/EC2NodeClasses (raw mappings, Documents
    or api models). ``cluster``: a :class:`~nodewright.cluster.ClusterState` (or anything with
    ``nodeclaims``/``nodepools``/optional ``nodeclasses``) or a path to a ``kubectl get -o json``
    List. ``catalog``: a :class:`~nodewright.catalog.Catalog`, a catalog spec string, or ``None``
    to skip the InstanceTypeNotFound check. Live NodePools absent from ``nodepools`` keep their
    live hash. ``defaults``: ``"auto"`` hashes a branch NodePool without ``expireAfter`` with the
    CRD default (720h) when the live copy shows the API server defaulted it; ``"always"``/``"never"``.
    ``ca_bundle``: the cluster CA bundle Karpenter runs with (cluster info ``caBundle``); it is part
    of the EC2NodeClass hash, so with it NodeClassDrift is exact and a CA rotation is predicted.
    ``at``: the one time everything is judged at: the InstanceTypeNotFound age gate and every
    disruption budget, scheduled or not (None: now). ``now`` is its former name, still accepted.
    """
    now = at or now or datetime.now(UTC)
    if isinstance(catalog, str):
        from nodewright.catalog import load_catalog  # only with --catalog: not imported otherwise

        catalog = load_catalog(catalog)
    claims_raw, live_pools, live_classes, node_objs = _load_cluster(cluster, release)
    unmanaged: dict[str, str] = {}
    pools = _pools(list(nodepools), live_pools, defaults, release, unmanaged)
    class_hashes, notes = nodeclass_hashes(list(nodeclasses), live_classes, ca_bundle, release=release)
    notes = [*notes, *(f"NodePool {n} left out: {why}" for n, why in sorted(unmanaged.items()))]
    class_restamped: dict[str, int] = {}
    drifted: list[DriftedNodeClaim] = []
    skipped: list[tuple[str, str]] = []
    for obj in claims_raw:
        claim = _claim(obj)
        pool = pools.get(claim.pool)
        if pool is None:
            why = unmanaged.get(claim.pool)
            skipped.append(
                (
                    claim.name,
                    f"NodePool {claim.pool} is not this Karpenter's"
                    if why
                    else f"NodePool {claim.pool or '<none>'} not found",
                )
            )
            continue
        pool.claims.append(claim)
        pool.claim_bodies.append(claim.body)
        if _restamp(
            claim,
            hash_key=labels.NODEPOOL_HASH,
            version_key=labels.NODEPOOL_HASH_VERSION,
            current_version=release.nodepool_hash_version,
            live_version=pool.live_version,
            new_hash=pool.hash_after,
        ):
            pool.restamped += 1
        cls = class_hashes.get(claim.nodeclass or "")
        if cls is not None and _restamp(
            claim,
            hash_key=labels.EC2NODECLASS_HASH,
            version_key=labels.EC2NODECLASS_HASH_VERSION,
            current_version=release.ec2nodeclass_hash_version,
            live_version=cls.live_version,
            new_hash=cls.hash,
        ):
            class_restamped[claim.nodeclass or ""] = class_restamped.get(claim.nodeclass or "", 0) + 1
        launched = claim.conditions.get(CONDITION_LAUNCHED)
        if launched is None or launched.get("status") != "True":
            skipped.append(
                (claim.name, "not Launched=True: Karpenter evaluates drift only for launched NodeClaims")
            )
            continue
        reason, message = _first_reason(claim, pool, cls, catalog, now, release)
        if reason:
            drifted.append(
                DriftedNodeClaim(
                    node_claim=claim.name,
                    node_pool=pool.name,
                    reason=reason,
                    message=message,
                    already_drifted=claim.conditions.get(CONDITION_DRIFTED, {}).get("status") == "True",
                )
            )
    drifted.sort(key=lambda d: (d.node_pool, d.node_claim, d.reason))
    nodes_by_name = {
        str(_meta(b).get("name", "")): b for b in map(raw_body, node_objs) if isinstance(b, Mapping)
    }
    impacts = []
    drifted_by_pool: dict[str, list[DriftedNodeClaim]] = {}
    for d in drifted:
        drifted_by_pool.setdefault(d.node_pool, []).append(d)
    for name in sorted(pools):
        p = pools[name]
        mine = drifted_by_pool.get(name, [])
        reasons: dict[str, int] = {}
        for d in mine:
            reasons[d.reason] = reasons.get(d.reason, 0) + 1
        base, disrupting = budget_base(
            p.claim_bodies, nodes_by_name, conditions=[c.conditions for c in p.claims]
        )
        if p.replicas is not None:
            plan = static_rollout(
                p.budgets,
                drifted=len(mine),
                nodes=base,
                disrupting=disrupting,
                counts=pool_counts(p.claim_bodies, nodes_by_name),
                replicas=p.replicas,
                node_limit=p.node_limit,
                at=now,
            )
        else:
            plan = rollout(p.budgets, drifted=len(mine), nodes=base, disrupting=disrupting, at=now)
        impacts.append(
            PoolImpact(
                name=name,
                source=p.source,
                node_claims=len(p.claims),
                replaced=len(mine),
                reasons=reasons,
                hash_before=p.hash_before,
                hash_after=p.hash_after,
                version=release.nodepool_hash_version,
                version_before=p.live_version,
                restamped=p.restamped,
                rollout=plan,
            )
        )
    notes += _upgrade_notes(pools, class_hashes, class_restamped, release)
    return DriftReport(
        drifted=tuple(drifted),
        pools=tuple(impacts),
        node_claims=len(claims_raw),
        skipped=tuple(sorted(skipped)),
        notes=tuple(notes),
        at=now,
        karpenter=dict(karpenter) if karpenter else {"version": release.version},
    )


def _upgrade_notes(
    pools: Mapping[str, _Pool],
    classes: Mapping[str, ClassHash],
    class_restamped: Mapping[str, int],
    release: Release,
) -> list[str]:
    """What a hash-version change (a Karpenter upgrade or downgrade) does: a re-stamp, no roll."""
    notes: list[str] = []
    bumped = sorted(
        n for n, p in pools.items() if p.live_version and p.live_version != release.nodepool_hash_version
    )
    if bumped:
        before = sorted({pools[n].live_version or "" for n in bumped})
        restamped = sum(pools[n].restamped for n in bumped)
        notes.append(
            f"Karpenter {release.version} stamps nodepool-hash-version {release.nodepool_hash_version} "
            f"(live: {', '.join(before)}) on NodePool {', '.join(bumped)}: the hash controller re-stamps "
            f"the NodePools and {restamped} NodeClaim(s) with the new hash and rolls no node for it "
            "(already Drifted NodeClaims stay drifted)"
        )
    cbumped = sorted(
        n
        for n, c in classes.items()
        if c.live_version and c.live_version != release.ec2nodeclass_hash_version
    )
    if cbumped:
        before = sorted({classes[n].live_version or "" for n in cbumped})
        restamped = sum(class_restamped.get(n, 0) for n in cbumped)
        notes.append(
            f"Karpenter {release.version} stamps ec2nodeclass-hash-version {release.ec2nodeclass_hash_version} "
            f"(live: {', '.join(before)}) on EC2NodeClass {', '.join(cbumped)}: the provider's hash "
            f"controller re-stamps the EC2NodeClasses and {restamped} NodeClaim(s) and rolls no node for it"
        )
    return notes


def _first_reason(
    claim: _Claim, pool: _Pool, cls: ClassHash | None, catalog: Any, now: datetime, release: Release
) -> tuple[str, str]:
    if _static_drift(
        claim,
        hash_key=labels.NODEPOOL_HASH,
        version_key=labels.NODEPOOL_HASH_VERSION,
        owner_hash=pool.hash_after,
        owner_version=release.nodepool_hash_version,
    ):
        return NODEPOOL_DRIFTED, (
            f"nodepool-hash {claim.annotations.get(labels.NODEPOOL_HASH)} != NodePool's {pool.hash_after}"
        )
    if pool.requirements is None:
        pool.requirements = _requirements(pool.template, pool.origin)
    key = tuple(claim.labels.items())
    if key in pool.compatible:
        err = pool.compatible[key]
    else:
        err = pool.compatible[key] = Requirements.from_labels(claim.labels).compatible(pool.requirements)
    if err is not None:
        return REQUIREMENTS_DRIFTED, err
    if catalog is not None:
        msg = _instance_type_drift(claim, catalog, now)
        if msg is not None:
            return INSTANCE_TYPE_NOT_FOUND, msg
    if cls is not None and _static_drift(
        claim,
        hash_key=labels.EC2NODECLASS_HASH,
        version_key=labels.EC2NODECLASS_HASH_VERSION,
        owner_hash=cls.hash,
        owner_version=release.ec2nodeclass_hash_version,
    ):
        return NODECLASS_DRIFT, (
            f"ec2nodeclass-hash {claim.annotations.get(labels.EC2NODECLASS_HASH)} != EC2NodeClass's {cls.hash}"
        )
    return "", ""


def drift_impact_files(
    files: Iterable[str | Path],
    cluster: Any,
    catalog: Any = None,
    *,
    now: datetime | None = None,
    defaults: DefaultsMode = "auto",
    ca_bundle: str | None = None,
    at: datetime | None = None,
    release: Release,
    karpenter: Mapping[str, Any] | None = None,
) -> DriftReport:
    """:func:`drift_impact` over files: NodePools and EC2NodeClasses of ``files``, a cluster file.

    The files go through the one loading path (validated against ``release``'s CRDs); NodePools are
    hashed as the cluster stores them (defaulted), or as written with ``defaults="never"``.
    """
    objs = read_objects(files, release=release)
    return drift_impact(
        as_documents(objs.nodepools, as_written=defaults == "never"),
        cluster,
        catalog,
        nodeclasses=as_documents(objs.nodeclasses),
        now=now,
        defaults=defaults,
        ca_bundle=ca_bundle,
        at=at,
        release=release,
        karpenter=karpenter,
    )
