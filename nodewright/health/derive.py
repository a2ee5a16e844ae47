"""NodePool registration health derived from a cluster state (or a series of them).

Boundary: pure evaluation over NodePools, NodeClaims, EC2NodeClasses and pods of cluster states.
Per NodePool it reconstructs what Karpenter's controllers hold at ``now``:

* the ``NodeRegistrationHealthy`` condition and the tracker buffer: rehydrated from the existing
  condition (True -> [true], False -> [false, false]); reset to Unknown when the NodePool's
  ``generation`` differs from the condition's ``observedGeneration`` or the NodeClass's
  ``generation`` differs from ``status.nodeClassObservedGeneration`` (Karpenter resets at its next
  reconcile, i.e. at ``now``: earlier results no longer count); then the launch/registration
  results of the pool's NodeClaims (owner reference UID = NodePool UID) that happened after the
  condition last changed are replayed in time order: ``Registered=True`` is a success;
  ``Launched`` not True 5 min after its lastTransitionTime, or ``Registered`` not True 15 min after
  its lastTransitionTime, is a failure (reason = the Launched condition's reason/message for a
  launch failure, else ``RegistrationFailed`` / ``Failed to register node``). The condition flips
  exactly as Karpenter flips it (True on a success whose dry run is Healthy, False on a failure
  whose dry run is Unhealthy).
* the Degraded NodePool RFC's (kubernetes-sigs/karpenter pull request #1885) record: ``verifiedNodeClasses``, NodeClass name+UID -> True once a NodeClaim of
  the pool with that NodeClass is ``Initialized=True``; the current pair is verified when the
  NodePool's nodeClassRef is in it; and the RFC's ``Degraded`` reading of it.
* the pending pods (Karpenter's ``IsProvisionable``) each NodePool would take (first pool by
  weight, then name descending, whose taints the pod tolerates and whose requirements + labels
  are compatible with the pod's node selector / required node affinity).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final, TypeGuard, cast

from nodewright import labels
from nodewright.api.karpenter import unmanaged_reason_of
from nodewright.api.raw import RawNodeClaim
from nodewright.cluster import load_cluster
from nodewright.crd import Release
from nodewright.drift.detect import parse_time
from nodewright.drift.nodepoolhash import as_mapping, raw_body
from nodewright.health.pending import assign_pending
from nodewright.health.repair import node_repairs
from nodewright.health.report import (
    CONDITION_TYPE,
    HealthCondition,
    HealthReport,
    PoolHealth,
    Result,
)
from nodewright.health.tracker import HEALTHY, UNHEALTHY, UNKNOWN, Status, Tracker
from nodewright.settings import FeatureGates

LAUNCH_TIMEOUT: Final = timedelta(minutes=5)
REGISTRATION_TIMEOUT: Final = timedelta(minutes=15)
REASON_REGISTRATION_FAILED: Final = "RegistrationFailed"
MESSAGE_REGISTRATION_FAILED: Final = "Failed to register node"
REASON_AWAITING: Final = "AwaitingReconciliation"
MESSAGE_AWAITING: Final = "object is awaiting reconciliation"


# -- reading -----------------------------------------------------------------------------------


def _is_map(v: Any) -> TypeGuard[Mapping[str, Any]]:
    """A mapping (a plain dict, as decoded, is checked first: the ``Mapping`` ABC check is slow
    over 10,000s of NodeClaims)."""
    return type(v) is dict or isinstance(v, Mapping)


def _meta(body: Mapping[str, Any]) -> Mapping[str, Any]:
    m = body.get("metadata")
    return m if _is_map(m) else {}


def _conditions(body: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    status = body.get("status")
    out: dict[str, Mapping[str, Any]] = {}
    if type(status) is dict or isinstance(status, Mapping):  # _is_map, inline: once per NodeClaim
        for c in status.get("conditions") or []:
            if (type(c) is dict or isinstance(c, Mapping)) and (
                type(t := c.get("type")) is str or isinstance(t, str)
            ):
                out[t] = c
    return out


def _owned_by(claim: RawNodeClaim, pool_uid: str, pool_name: str) -> bool:
    refs = [r for r in _meta(claim).get("ownerReferences") or [] if isinstance(r, Mapping)]
    pool_refs = [r for r in refs if r.get("kind") == "NodePool"]
    if pool_refs and pool_uid:
        return any(r.get("uid") == pool_uid for r in pool_refs)
    if pool_refs:
        return any(r.get("name") == pool_name for r in pool_refs)
    labels_ = _meta(claim).get("labels") or {}
    return not pool_uid and labels_.get(labels.NODEPOOL) == pool_name


class _ClaimIndex:
    """NodeClaims by owning NodePool uid, by owning NodePool name, and (for claims without a NodePool
    owner reference) by their ``karpenter.sh/nodepool`` label: :func:`_owned_by` for every pool in
    one pass over the claims instead of one pass per pool."""

    def __init__(self, claims: Sequence[RawNodeClaim]) -> None:
        self.claims = claims
        self.by_uid: dict[str, list[int]] = {}
        self.by_name: dict[str, list[int]] = {}
        self.by_label: dict[str, list[int]] = {}
        for i, claim in enumerate(claims):
            meta = _meta(claim)
            pool_refs = [
                r
                for r in meta.get("ownerReferences") or []
                if (type(r) is dict or isinstance(r, Mapping)) and r.get("kind") == "NodePool"
            ]
            if pool_refs:
                for key, index in (("uid", self.by_uid), ("name", self.by_name)):
                    for value in dict.fromkeys(r.get(key) for r in pool_refs):
                        if isinstance(value, str):
                            index.setdefault(value, []).append(i)
            else:
                label = (meta.get("labels") or {}).get(labels.NODEPOOL)
                if isinstance(label, str):
                    self.by_label.setdefault(label, []).append(i)

    def owned_by(self, pool_uid: str, pool_name: str) -> list[RawNodeClaim]:
        """The claims :func:`_owned_by` matches, in their original order."""
        if pool_uid:
            found = self.by_uid.get(pool_uid, [])
        else:
            found = sorted({*self.by_name.get(pool_name, []), *self.by_label.get(pool_name, [])})
        return [self.claims[i] for i in found]


def claim_results(claim: RawNodeClaim, now: datetime) -> list[Result]:
    """The launch/registration result of one NodeClaim at ``now`` (none while still in flight)."""
    name = str(_meta(claim).get("name", ""))
    conds = _conditions(claim)
    created = parse_time(_meta(claim).get("creationTimestamp"))
    registered = conds.get("Registered")
    launched = conds.get("Launched")
    if registered is not None and registered.get("status") == "True":
        at = parse_time(registered.get("lastTransitionTime")) or created or now
        return [Result(node_claim=name, ok=True, at=at)]
    if launched is None or launched.get("status") != "True":
        since = (parse_time(launched.get("lastTransitionTime")) if launched else None) or created
        if since is not None and now - since >= LAUNCH_TIMEOUT:
            reason = str((launched or {}).get("reason") or "LaunchFailed")
            message = str((launched or {}).get("message") or "Failed to launch node")
            return [
                Result(node_claim=name, ok=False, at=since + LAUNCH_TIMEOUT, reason=reason, message=message)
            ]
        return []
    since = (parse_time(registered.get("lastTransitionTime")) if registered else None) or parse_time(
        launched.get("lastTransitionTime")
    )
    since = since or created
    if since is not None and now - since >= REGISTRATION_TIMEOUT:
        return [
            Result(
                node_claim=name,
                ok=False,
                at=since + REGISTRATION_TIMEOUT,
                reason=REASON_REGISTRATION_FAILED,
                message=MESSAGE_REGISTRATION_FAILED,
            )
        ]
    return []


def _condition_status(cond: Mapping[str, Any] | None) -> Status:
    if cond is None:
        return UNKNOWN
    return (
        HEALTHY if cond.get("status") == "True" else UNHEALTHY if cond.get("status") == "False" else UNKNOWN
    )


def _iso(t: datetime) -> str:
    return t.astimezone(UTC).isoformat().replace("+00:00", "Z")


def evaluate_pool(
    pool: Mapping[str, Any],
    claims: Iterable[RawNodeClaim],
    *,
    now: datetime,
    nodeclasses: Mapping[str, Mapping[str, Any]] | None = None,
    tracker: Tracker | None = None,
) -> tuple[Status, HealthCondition, list[bool], list[Result], bool]:
    """Tracker status, condition, buffer, replayed results and whether a reset happened."""
    tracker = tracker or Tracker()
    meta = _meta(pool)
    uid = str(meta.get("uid") or meta.get("name") or "")
    generation = meta.get("generation")
    status = pool.get("status") if isinstance(pool.get("status"), Mapping) else {}
    cond = _conditions(pool).get(CONDITION_TYPE)
    ref = _nodeclass_ref(pool)
    nc = (nodeclasses or {}).get(ref) if ref else None
    nc_gen = _meta(nc).get("generation") if nc else None
    observed_nc = (status or {}).get("nodeClassObservedGeneration")
    reset = cond is not None and (
        (generation is not None and cond.get("observedGeneration") not in (None, generation))
        or (nc_gen is not None and observed_nc is not None and observed_nc != nc_gen)
    )
    since: datetime | None
    previous = tracker.last_condition.get(uid)
    if cond is None and isinstance(previous, HealthCondition):
        current = previous  # a series of states without conditions: carry our own
        since = None
    elif cond is None:
        tracker.reset(uid)
        current = HealthCondition(
            status="Unknown", reason=REASON_AWAITING, message=MESSAGE_AWAITING, observed_generation=generation
        )
        since = None
    elif reset:
        tracker.reset(uid)
        current = HealthCondition(
            status="Unknown",
            reason=REASON_AWAITING,
            message=MESSAGE_AWAITING,
            observed_generation=generation,
            last_transition_time=_iso(now),
        )
        since = now
    else:
        if tracker.status(uid) == UNKNOWN:
            tracker.set_status(uid, _condition_status(cond))
        current = HealthCondition(
            status=str(cond.get("status", "Unknown")),
            reason=str(cond.get("reason") or ""),
            message=str(cond.get("message") or ""),
            observed_generation=cond.get("observedGeneration", generation),
            last_transition_time=cond.get("lastTransitionTime"),
        )
        since = parse_time(cond.get("lastTransitionTime"))
    results = sorted(
        (r for c in claims for r in claim_results(c, now) if since is None or r.at > since),
        key=lambda r: (r.at, r.node_claim),
    )
    results = [r for r in results if tracker.first_time(uid, f"{r.node_claim}/{r.ok}")]
    for r in results:
        if r.ok:
            if tracker.dry_run(uid, True) == HEALTHY and current.status != "True":
                current = HealthCondition(
                    status="True",
                    reason=CONDITION_TYPE,
                    message="",
                    observed_generation=generation,
                    last_transition_time=_iso(r.at),
                )
        elif tracker.dry_run(uid, False) == UNHEALTHY and current.status != "False":
            current = HealthCondition(
                status="False",
                reason=r.reason,
                message=r.message,
                observed_generation=generation,
                last_transition_time=_iso(r.at),
            )
        tracker.update(uid, r.ok)
    tracker.last_condition[uid] = current
    return tracker.status(uid), current, tracker.buffer(uid), results, reset


def _nodeclass_ref(pool: Mapping[str, Any]) -> str:
    spec = pool.get("spec") if isinstance(pool.get("spec"), Mapping) else {}
    tmpl = (spec or {}).get("template") if isinstance((spec or {}).get("template"), Mapping) else {}
    tspec = (tmpl or {}).get("spec") if isinstance((tmpl or {}).get("spec"), Mapping) else {}
    ref = (tspec or {}).get("nodeClassRef")
    return str(ref.get("name", "")) if isinstance(ref, Mapping) else ""


def nodeclass_key(name: str, uid: str) -> str:
    """The RFC's NodeClass name+UID key (``name/uid``; ``name`` when the UID is unknown)."""
    return f"{name}/{uid}" if uid else name


def verified_nodeclasses(
    pool: Mapping[str, Any], claims: Iterable[RawNodeClaim], nodeclasses: Mapping[str, Mapping[str, Any]]
) -> dict[str, bool]:
    """RFC option 4: NodeClass name+UID -> True for every NodeClass this pool initialized a node with."""
    out: dict[str, bool] = {}
    status = pool.get("status") if isinstance(pool.get("status"), Mapping) else {}
    for key in ("verifiedNodeClasses", "launches"):
        prior = (status or {}).get(key)
        if isinstance(prior, Mapping):
            out.update({str(k): bool(v) for k, v in prior.items() if v})
    for c in claims:
        init = _conditions(c).get("Initialized")
        if init is None or init.get("status") != "True":
            continue
        spec = c.get("spec")
        ref = spec.get("nodeClassRef") if _is_map(spec) else None
        name = str(ref.get("name", "")) if _is_map(ref) else ""
        if not name:
            continue
        uid = str(_meta(nodeclasses.get(name, {})).get("uid") or "")
        out[nodeclass_key(name, uid)] = True
    return dict(sorted(out.items()))


def degraded_reading(
    condition: HealthCondition, verified: bool, results: Sequence[Result]
) -> HealthCondition:
    """The RFC's ``Degraded`` reading: a pair that never launched and keeps failing is degraded.

    True when the registration health is False (reason carried over), or when the current
    NodePool/NodeClass pair was never verified and at least one launch/registration failed
    (``NeverVerified``); False when the pair is verified and healthy or no failure is seen after a
    success; Unknown when the pair is unverified and nothing has been tried yet.
    """
    failures = [r for r in results if not r.ok]
    if condition.status == "False":
        return HealthCondition(
            status="True",
            reason=condition.reason,
            message=condition.message,
            observed_generation=condition.observed_generation,
        )
    if not verified and failures:
        return HealthCondition(
            status="True",
            reason="NeverVerified",
            message=f"this NodePool/NodeClass pair has never launched an initialized node; {len(failures)} failed",
            observed_generation=condition.observed_generation,
        )
    if verified:
        return HealthCondition(
            status="False", reason="Verified", message="", observed_generation=condition.observed_generation
        )
    return HealthCondition(
        status="Unknown",
        reason="NotVerified",
        message="this NodePool/NodeClass pair has never launched an initialized node",
        observed_generation=condition.observed_generation,
    )


def read_cluster(cluster: str | Path, release: Release | None = None) -> Any:
    """The cluster state as health reads it: NodeClaims and Nodes stay raw mappings, and only
    pending pods are built (bound ones never matter here); the snapshot's record is kept."""
    from nodewright.api.loading import unbound_pods

    return load_cluster(
        cluster,
        kinds=("NodePool", "EC2NodeClass", "Pod"),
        pods_where=unbound_pods,
        raw_nodeclaims=True,
        raw_nodes=True,
        release=release,
    )


def _load(
    cluster: Any, release: Release | None
) -> tuple[list[Any], list[Any], list[Any], list[Any], list[Any]]:
    if isinstance(cluster, str | Path):
        cluster = read_cluster(cluster, release)
    return (
        list(getattr(cluster, "nodepools", ()) or ()),
        [*(getattr(cluster, "nodeclaims", ()) or ()), *(getattr(cluster, "raw_nodeclaims", ()) or ())],
        list(getattr(cluster, "nodeclasses", ()) or ()),
        list(getattr(cluster, "pods", ()) or ()),
        [*(getattr(cluster, "nodes", ()) or ()), *(getattr(cluster, "raw_nodes", ()) or ())],
    )


def nodepool_health(
    cluster: Any,
    *,
    now: datetime | None = None,
    nodeclasses: Iterable[Any] = (),
    tracker: Tracker | None = None,
    release: Release | None = None,
    feature_gates: FeatureGates | None = None,
) -> HealthReport:
    """Health of every NodePool of ``cluster`` (a ClusterState-like object or a kubectl List path).

    ``nodeclasses`` adds EC2NodeClasses the cluster state does not list (their ``generation`` and
    ``uid`` drive resets and the verified map). Pass the same ``tracker`` across a series of
    states (oldest first) to carry buffers from one to the next. ``release``: the Karpenter release
    whose CRDs read a cluster file (None: the default release). ``feature_gates`` (NodeRepair)
    decides whether the nodes :func:`~nodewright.health.repair.node_repairs` finds are repaired.
    """
    now = now or datetime.now(UTC)
    pools_raw, claims_raw, classes_raw, pods, nodes_raw = _load(cluster, release)
    classes: dict[str, Mapping[str, Any]] = {}
    for obj in [*classes_raw, *nodeclasses]:
        body, _ = as_mapping(obj)
        classes[str(_meta(body).get("name", ""))] = body
    claims = [cast("RawNodeClaim", raw_body(c)) for c in claims_raw]  # raw on purpose: no models
    pools = [(obj, as_mapping(obj)[0]) for obj in pools_raw]
    # registrationhealth watches managed NodePools only (nodepool.IsManagedPredicateFuncs)
    skipped = tuple(
        (str(_meta(b).get("name", "")), why) for _, b in pools if (why := unmanaged_reason_of(b)) is not None
    )
    pools = [(o, b) for o, b in pools if unmanaged_reason_of(b) is None]
    index = _ClaimIndex(claims)
    verified_by_pool: dict[str, bool] = {}
    out: list[PoolHealth] = []
    staged: list[tuple[Mapping[str, Any], list[RawNodeClaim]]] = []
    vmaps: list[dict[str, bool]] = []
    for _, body in pools:
        meta = _meta(body)
        name = str(meta.get("name", ""))
        uid = str(meta.get("uid") or "")
        mine = index.owned_by(uid, name)
        staged.append((body, mine))
        ref = _nodeclass_ref(body)
        vmap = verified_nodeclasses(body, mine, classes)
        vmaps.append(vmap)
        ref_uid = str(_meta(classes.get(ref, {})).get("uid") or "")
        verified_by_pool[name] = nodeclass_key(ref, ref_uid) in vmap or (
            not ref_uid and any(k.split("/", 1)[0] == ref for k in vmap)
        )
    pending, unmatched, since = assign_pending(pools, pods)
    for (body, mine), vmap in zip(staged, vmaps, strict=True):
        meta = _meta(body)
        name = str(meta.get("name", ""))
        status, cond, buffer, results, reset = evaluate_pool(
            body, mine, now=now, nodeclasses=classes, tracker=tracker
        )
        verified = verified_by_pool[name]
        out.append(
            PoolHealth(
                name=name,
                uid=str(meta.get("uid") or ""),
                generation=meta.get("generation"),
                tracker_status=status,
                condition=cond,
                buffer=tuple(buffer),
                results=tuple(results),
                nodeclass=_nodeclass_ref(body),
                verified_nodeclasses=vmap,
                verified=verified,
                degraded=degraded_reading(cond, verified, results),
                pending_pods=tuple(pending.get(name, ())),
                reset=reset,
            )
        )
    out.sort(key=lambda p: p.name)
    repairs = node_repairs(
        map(raw_body, nodes_raw),
        claims,
        now=now,
        enabled=(feature_gates or FeatureGates()).node_repair,
    )
    return HealthReport(
        now=now,
        pools=tuple(out),
        unmatched_pods=tuple(unmatched),
        pending_since=since,
        repairs=tuple(repairs),
        skipped=skipped,
    )


@dataclass(frozen=True, kw_only=True)
class PoolFlag:
    """A NodePool the preview/policy should warn about before more capacity lands on it."""

    name: str
    status: str  # Healthy / Unhealthy / Unknown (the condition, read as the tracker would)
    reason: str
    verified: bool
    message: str


def flag_pools(
    cluster: Any, *, names: Iterable[str] | None = None, now: datetime | None = None
) -> list[PoolFlag]:
    """Pools (optionally only ``names``) whose pair is Unhealthy or was never verified."""
    report = nodepool_health(cluster, now=now)
    wanted = set(names) if names is not None else None
    out = []
    for p in report.pools:
        if wanted is not None and p.name not in wanted:
            continue
        if not p.flagged:
            continue
        status = {"True": HEALTHY, "False": UNHEALTHY}.get(p.condition.status, UNKNOWN)
        if p.condition.status == "False":
            msg = f"NodePool {p.name} is Unhealthy ({p.condition.reason}: {p.condition.message})"
        else:
            msg = f"NodePool {p.name} has never launched an initialized node with EC2NodeClass {p.nodeclass}"
        out.append(
            PoolFlag(name=p.name, status=status, reason=p.condition.reason, verified=p.verified, message=msg)
        )
    return out
