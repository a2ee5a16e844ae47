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
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import repeat
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, Literal, cast

from nodewright import labels
from nodewright.algebra.requirements import (
    ALLOW_UNDEFINED_WELL_KNOWN,
    Requirement,
    RequirementError,
    Requirements,
)
from nodewright.api.raw import RawNodeClaim
from nodewright.crd import Release
from nodewright.drift.inputs import as_documents, read_objects
from nodewright.drift.nodeclassdrift import ClassHash, nodeclass_hashes
from nodewright.drift.nodepoolhash import (
    Origin,
    as_mapping,
    nodepool_template,
    raw_body,
    template_hash,
)
from nodewright.drift.rollout import (
    Rollout,
    budget_base,
    pool_budgets,
    rollout,
    static_rollout,
)
from nodewright.errors import InputError
from nodewright.scheduling.staticcapacity import node_limit, pool_counts

log = logging.getLogger("nodewright")

NODEPOOL_DRIFTED: Final = "NodePoolDrifted"
REQUIREMENTS_DRIFTED: Final = "RequirementsDrifted"
INSTANCE_TYPE_NOT_FOUND: Final = "InstanceTypeNotFound"
NODECLASS_DRIFT: Final = "NodeClassDrift"
INSTANCE_TYPE_CHECK_MIN_AGE: Final = timedelta(hours=1)

CONDITION_LAUNCHED: Final = "Launched"
CONDITION_DRIFTED: Final = "Drifted"

DefaultsMode = Literal["auto", "always", "never"]


@dataclass(frozen=True, kw_only=True)
class DriftedNodeClaim:
    """One NodeClaim Karpenter would mark ``Drifted=True`` with ``reason``."""

    node_claim: str
    node_pool: str
    reason: str
    message: str = ""
    already_drifted: bool = False

    def as_dict(self) -> dict[str, str]:
        return {"nodeClaim": self.node_claim, "nodePool": self.node_pool, "reason": self.reason}


@dataclass(frozen=True, kw_only=True)
class PoolImpact:
    """What the change does to one NodePool: its hash before/after and how many nodes get replaced."""

    name: str
    source: str  # "files" (a NodePool of the branch) or "cluster" (only live)
    node_claims: int
    replaced: int
    reasons: Mapping[str, int]
    hash_before: str | None
    hash_after: str
    version: str
    version_before: str | None = None
    restamped: int = 0
    rollout: Rollout | None = None

    @property
    def hash_changed(self) -> bool:
        return self.hash_before is not None and self.hash_before != self.hash_after

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "nodeClaims": self.node_claims,
            "replaced": self.replaced,
            "reasons": dict(self.reasons),
            "hash": {
                "before": self.hash_before,
                "after": self.hash_after,
                "version": self.version,
                "versionBefore": self.version_before,
            },
            "hashChanged": self.hash_changed,
            "restamped": self.restamped,
            **({"rollout": self.rollout.as_dict()} if self.rollout is not None else {}),
        }


@dataclass(frozen=True, kw_only=True)
class DriftReport:
    """The answer of :func:`drift_impact`."""

    drifted: tuple[DriftedNodeClaim, ...]
    pools: tuple[PoolImpact, ...]
    node_claims: int = 0
    skipped: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()
    at: datetime | None = None  # the one time the report was evaluated at (age gate, budgets)
    karpenter: Mapping[str, Any] = field(default_factory=dict)
    """The release and settings the forecast was made for (``{version, ...settings}``)."""

    @property
    def replaced(self) -> int:
        return len(self.drifted)

    def by_pool(self) -> dict[str, int]:
        return {p.name: p.replaced for p in self.pools}

    def as_dict(self) -> dict[str, Any]:
        return {
            "at": self.at.astimezone(UTC).isoformat().replace("+00:00", "Z") if self.at else None,
            "drifted": [d.as_dict() for d in self.drifted],
            "nodePools": [p.as_dict() for p in self.pools],
            "details": [
                {
                    "nodeClaim": d.node_claim,
                    "nodePool": d.node_pool,
                    "reason": d.reason,
                    "message": d.message,
                    "alreadyDrifted": d.already_drifted,
                }
                for d in self.drifted
            ],
            "skipped": [{"nodeClaim": n, "why": w} for n, w in self.skipped],
            "notes": list(self.notes),
            **({"karpenter": dict(self.karpenter)} if self.karpenter else {}),
            "summary": {
                "nodeClaims": self.node_claims,
                "drifted": len(self.drifted),
                "replacedByNodePool": self.by_pool(),
            },
        }


# -- inputs ------------------------------------------------------------------------------------


@dataclass(kw_only=True, slots=True)
class _Claim:
    name: str
    pool: str
    labels: Mapping[str, str]  # read only (may be the body's own mapping)
    annotations: Mapping[str, str]  # replaced, never changed in place (may be the body's own)
    conditions: Mapping[str, Mapping[str, Any]]
    created_at: Any  # metadata.creationTimestamp as written
    nodeclass: str | None
    body: Mapping[str, Any]

    @property
    def created(self) -> datetime | None:
        return parse_time(self.created_at)


@dataclass(frozen=True, kw_only=True)
class _Req:
    """A NodeSelectorRequirement shaped for :meth:`Requirements.from_node_selector_requirements`."""

    key: str
    operator: str
    values: tuple[str, ...] = ()
    min_values: int | None = None


_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})


def _map(v: Any) -> Mapping[str, Any]:
    """``v`` if it is a mapping, else an empty one (a plain dict, as decoded, is checked first:
    the ``Mapping`` check is an ABC check, slow over 10,000s of NodeClaims)."""
    return v if type(v) is dict or isinstance(v, Mapping) else _EMPTY


def _meta(body: Mapping[str, Any]) -> Mapping[str, Any]:
    return _map(body.get("metadata"))


def _str_map(v: Any) -> Mapping[str, str]:
    """``v`` with keys and values as strings: ``v`` itself when they already are (read only)."""
    if type(v) is dict:
        if all(map(isinstance, v, repeat(str))) and all(map(isinstance, v.values(), repeat(str))):
            return v
    elif not isinstance(v, Mapping):
        return _EMPTY
    return {str(k): str(x) for k, x in v.items()}


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 timestamp as an aware datetime (``None`` when absent or unreadable)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def _claim(obj: Any) -> _Claim:
    body = cast("RawNodeClaim", raw_body(obj))  # read raw on purpose: no model built per claim
    meta = _meta(body)
    lbls = _str_map(meta.get("labels"))
    conds: dict[str, Mapping[str, Any]] = {}
    for c in _map(body.get("status")).get("conditions") or []:
        if (type(c) is dict or isinstance(c, Mapping)) and type(t := c.get("type")) is str:
            conds[t] = c
    ref = _map(body.get("spec")).get("nodeClassRef")
    nodeclass = None
    if (type(ref) is dict or isinstance(ref, Mapping)) and (
        ref.get("group") == labels.AWS_GROUP or ref.get("kind") == "EC2NodeClass"
    ):
        nodeclass = str(ref.get("name", ""))
    return _Claim(
        name=str(meta.get("name", "")),
        pool=lbls.get(labels.NODEPOOL, ""),
        labels=lbls,
        annotations=_str_map(meta.get("annotations")),
        conditions=conds,
        created_at=meta.get("creationTimestamp"),
        nodeclass=nodeclass,
        body=body,
    )


def _requirements(template: Mapping[str, Any], origin: Origin) -> Any:
    spec = template.get("spec") if isinstance(template.get("spec"), Mapping) else {}
    raw = (spec or {}).get("requirements") or []
    reqs: list[_Req] = []
    for i, r in enumerate(raw if isinstance(raw, list) else []):
        where = origin.at(f"spec.template.spec.requirements[{i}]")
        if not isinstance(r, Mapping) or not isinstance(r.get("key"), str):
            raise InputError("a requirement needs key, operator and values", file=origin.file, path=where)
        values = r.get("values") or []
        reqs.append(
            _Req(
                key=r["key"],
                operator=str(r.get("operator", "")),
                values=tuple(str(v) for v in values),
                min_values=r.get("minValues"),
            )
        )
    try:
        return Requirements.from_node_selector_requirements(reqs)
    except RequirementError as exc:
        raise InputError(
            str(exc), file=origin.file, path=origin.at("spec.template.spec.requirements")
        ) from exc


@dataclass(kw_only=True)
class _Pool:
    name: str
    source: str
    template: Mapping[str, Any]
    origin: Origin
    hash_after: str
    hash_before: str | None
    live_version: str | None
    requirements: Any = None
    claims: list[_Claim] = field(default_factory=list)
    budgets: list[Mapping[str, Any]] = field(default_factory=list)
    claim_bodies: list[Mapping[str, Any]] = field(default_factory=list)
    # RequirementsDrifted per distinct label set of the pool's NodeClaims (they repeat: zone, type...)
    compatible: dict[tuple[tuple[str, str], ...], str | None] = field(default_factory=dict)
    replicas: int | None = None  # a static NodePool (``spec.replicas``)
    node_limit: int | None = None  # ``spec.limits.nodes``
    restamped: int = 0


def _static_fields(spec: Any) -> dict[str, Any]:
    """``replicas`` and ``limits.nodes`` of a NodePool spec (static pools roll differently)."""
    if not isinstance(spec, Mapping):
        return {}
    replicas = spec.get("replicas")
    return {
        "replicas": replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else None,
        "node_limit": node_limit(spec),
    }


def _unmanaged(obj: Any) -> str | None:
    """Why a NodePool (any shape) is not this Karpenter's (``nodepool.IsManaged``); None if it is."""
    from nodewright.api.karpenter import unmanaged_reason_of

    return unmanaged_reason_of(as_mapping(obj)[0])


def _template_has_expire(template: Any) -> bool:
    spec = template.get("spec") if isinstance(template, Mapping) else None
    return isinstance(spec, Mapping) and spec.get("expireAfter") is not None


def _pools(
    nodepools: Iterable[Any],
    live: Iterable[Any],
    defaults: DefaultsMode,
    release: Release,
    unmanaged: dict[str, str],
) -> dict[str, _Pool]:
    """The pools drift evaluates; those this Karpenter does not own go to ``unmanaged`` (name -> why)."""
    live_by_name: dict[str, tuple[Mapping[str, Any], Any, Origin]] = {}
    for obj in live:
        body, origin = as_mapping(obj)
        live_by_name[str(_meta(body).get("name", ""))] = (body, obj, origin)
    pools: dict[str, _Pool] = {}
    for obj in nodepools:
        body, _ = as_mapping(obj)
        name = str(_meta(body).get("name", ""))
        why = _unmanaged(obj)
        if why is not None:
            unmanaged[name] = why
            continue
        template, origin = nodepool_template(obj)
        live_entry = live_by_name.get(name)
        live_ann = _str_map(_meta(live_entry[0]).get("annotations")) if live_entry else {}
        apply_defaults = defaults == "always"
        if defaults == "auto" and live_entry is not None and not _template_has_expire(template):
            try:
                live_template, _ = nodepool_template(live_entry[1])
                apply_defaults = _template_has_expire(live_template)
            except InputError:
                apply_defaults = False
        pools[name] = _Pool(
            name=name,
            source="files",
            template=template,
            origin=origin,
            hash_after=template_hash(template, origin=origin, crd_defaults=apply_defaults),
            hash_before=live_ann.get(labels.NODEPOOL_HASH),
            live_version=live_ann.get(labels.NODEPOOL_HASH_VERSION),
            budgets=pool_budgets(body.get("spec")),
            **_static_fields(body.get("spec")),
        )
    for name, (body, obj, _) in live_by_name.items():
        if name in pools or name in unmanaged:
            continue
        why = _unmanaged(obj)
        if why is not None:
            unmanaged[name] = why
            continue
        template, origin = nodepool_template(obj)
        ann = _str_map(_meta(body).get("annotations"))
        current = ann.get(labels.NODEPOOL_HASH)
        version = ann.get(labels.NODEPOOL_HASH_VERSION)
        after = (
            current
            if current is not None and version == release.nodepool_hash_version
            else template_hash(template, origin=origin)
        )
        pools[name] = _Pool(
            name=name,
            source="cluster",
            template=template,
            origin=origin,
            hash_after=after,
            hash_before=current,
            live_version=version,
            budgets=pool_budgets(body.get("spec")),
            **_static_fields(body.get("spec")),
        )
    return pools


# -- the controllers -------------------------------------------------------------------------


def _restamp(
    claim: _Claim,
    *,
    hash_key: str,
    version_key: str,
    current_version: str,
    live_version: str | None,
    new_hash: str,
) -> bool:
    """The hash controllers' re-stamp on a hash-version change (drifted stays drifted); True
    when ``claim`` was re-stamped."""
    if live_version == current_version:
        return False
    if claim.annotations.get(version_key) == current_version:
        return False
    stamped = {**claim.annotations, version_key: current_version}
    if CONDITION_DRIFTED not in claim.conditions:
        stamped[hash_key] = new_hash
    claim.annotations = stamped
    return True


def _static_drift(
    claim: _Claim, *, hash_key: str, version_key: str, owner_hash: str, owner_version: str
) -> bool:
    h, v = claim.annotations.get(hash_key), claim.annotations.get(version_key)
    if h is None or v is None or v != owner_version:
        return False
    return h != owner_hash


def _instance_type_drift(claim: _Claim, catalog: Any, now: datetime) -> str | None:
    if claim.created is not None and now - claim.created <= INSTANCE_TYPE_CHECK_MIN_AGE:
        return None
    name = claim.labels.get(labels.INSTANCE_TYPE)
    it = catalog.get(name) if name else None
    if it is None:
        return f"instance type {name!r} is not in the catalog"
    lbls = dict(claim.labels)
    ct = lbls.get(labels.CAPACITY_TYPE)
    extra = []
    if ct == labels.CAPACITY_TYPE_RESERVED:
        del lbls[labels.CAPACITY_TYPE]
        extra.append(
            Requirement.new(
                labels.CAPACITY_TYPE, "In", (labels.CAPACITY_TYPE_RESERVED, labels.CAPACITY_TYPE_ON_DEMAND)
            )
        )
    reqs = Requirements.from_labels(lbls)
    reqs.add(*extra)
    for o in it.offerings:
        if reqs.is_compatible(o.requirements, allow_undefined=ALLOW_UNDEFINED_WELL_KNOWN):
            return None
    return f"instance type {name!r} has no offering compatible with the NodeClaim's zone and capacity type"


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
