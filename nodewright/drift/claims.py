"""What drift reads of a cluster and a branch, and the per-NodeClaim rules of Karpenter's controllers.

The NodeClaims are read raw (no model per claim, robust to odd shapes); the NodePools drift
evaluates (the branch's and the live-only ones, this Karpenter's only) with their hashes before
and after; the hash controllers' re-stamp on a hash-version change and the static drift rules
(hash annotations, instance type gone). :mod:`nodewright.drift.detect` runs them in order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import repeat
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
from nodewright.drift.nodepoolhash import (
    Origin,
    as_mapping,
    nodepool_template,
    raw_body,
    template_hash,
)
from nodewright.drift.rollout import pool_budgets
from nodewright.errors import InputError
from nodewright.scheduling.staticcapacity import node_limit

INSTANCE_TYPE_CHECK_MIN_AGE: Final = timedelta(hours=1)

CONDITION_LAUNCHED: Final = "Launched"
CONDITION_DRIFTED: Final = "Drifted"

DefaultsMode = Literal["auto", "always", "never"]


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
