"""Disruption budgets and drift rollouts: how many drifted nodes Karpenter replaces at once.

Translated from kubernetes-sigs/karpenter v1.14.1:

* ``pkg/apis/v1/nodepool.go``: ``Budget.IsActive`` (walk back ``duration`` from now, the schedule's
  next hit must not be after now; schedules in UTC), ``Budget.GetAllowedDisruptions`` (inactive:
  unbounded; ``nodes`` as an int or a percentage of the pool's nodes **rounded up**, as
  ``intstr.GetScaledValueFromIntOrPercent(..., true)``), ``NodePool.GetAllowedDisruptionsByReason``
  (the minimum over the budgets whose ``reasons`` is unset or holds the reason) and
  ``MustGetAllowedDisruptions`` (any invalid budget fails closed: 0);
* ``pkg/controllers/disruption/helpers.go`` ``BuildDisruptionBudgetMapping``: the pool's node count
  is its initialized, not-terminating nodes; nodes NotReady or already being disrupted consume the
  budget (``allowed - disrupting``, floored at 0).

A *wave* is the set of drifted nodes the budget lets be disrupting at the same time: Karpenter's
drift method starts one replacement per disruption loop while the budget has room. By arithmetic
``waves`` = ceil(drifted / allowedPerWave); when the rollout was simulated
(:mod:`nodewright.disruption.rollout`: Karpenter's emptiness, static drift and drift methods in
waves, empty nodes first, every replacement scheduled) ``waves``, ``order`` and ``notRolled`` come
from the simulation (:class:`RollStep`, :class:`NotRolled`). The CRD default budget is ``nodes: 10%``. Every budget, scheduled
or not, is evaluated at the one time given (the command's ``--at``, default now); each scheduled
budget that applies to drift also says when it next opens or closes (its *window*): a schedule's
active spans are ``[hit, hit + duration)`` for each cron hit, and overlapping or touching spans
join, as ``Budget.IsActive`` evaluated minute after minute would see them.

Boundary: pure; no I/O.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from nodewright.drift.cron import CronError
from nodewright.drift.cron import parse as parse_cron
from nodewright.goduration import DurationError, parse_duration
from nodewright.scheduling.staticcapacity import PoolCounts, static_drift_allowance

MAX_INT32: Final = 2**31 - 1
DRIFTED: Final = "Drifted"
DEFAULT_BUDGETS: Final[tuple[Mapping[str, Any], ...]] = ({"nodes": "10%"},)
_INT: Final = re.compile(r"^[+-]?\d+$")


class BudgetError(ValueError):
    """A budget Karpenter could not evaluate (it then allows 0 disruptions)."""


def budget_active(budget: Mapping[str, Any], at: datetime) -> bool:
    """``Budget.IsActive``: no schedule (and no duration) is always active."""
    schedule, duration = budget.get("schedule"), budget.get("duration")
    if schedule is None and duration is None:
        return True
    try:
        parsed = parse_cron(str(schedule or ""))
    except CronError as exc:
        raise BudgetError(f"invariant violated, invalid cron, {exc}") from exc
    try:
        span_ns = parse_duration(str(duration)) if duration is not None else 0
    except DurationError as exc:
        raise BudgetError(f"invalid duration {duration!r}: {exc}") from exc
    now = at.astimezone(UTC)
    check_point = now - timedelta(microseconds=span_ns // 1000)
    next_hit = parsed.next(check_point)
    return next_hit is not None and next_hit <= now


def scaled_value(nodes: str, total: int) -> int:
    """``intstr.GetScaledValueFromIntOrPercent(nodes, total, roundUp=true)``."""
    if _INT.match(nodes):
        return int(nodes)
    if not nodes.endswith("%") or not _INT.match(nodes[:-1]):
        raise BudgetError(
            f"invalid value for IntOrString: invalid type: string is not a percentage: {nodes!r}"
        )
    return math.ceil(int(nodes[:-1]) * total / 100)


def allowed_by_budget(budget: Mapping[str, Any], at: datetime, num_nodes: int) -> int:
    """``Budget.GetAllowedDisruptions``: MaxInt32 when inactive; raises :class:`BudgetError` (= 0)."""
    if not budget_active(budget, at):
        return MAX_INT32
    return scaled_value(str(budget.get("nodes", "10%")), num_nodes)


def allowed_disruptions(
    budgets: Sequence[Mapping[str, Any]],
    at: datetime,
    num_nodes: int,
    reason: str = DRIFTED,
    *,
    indices: Sequence[int] | None = None,
) -> tuple[int, list[str]]:
    """``GetAllowedDisruptionsByReason``: (the minimum over matching budgets, errors naming ``budgets[i]``)."""
    allowed = MAX_INT32
    errors: list[str] = []
    for n, budget in enumerate(budgets):
        i = indices[n] if indices is not None else n
        try:
            value = allowed_by_budget(budget, at, num_nodes)
        except BudgetError as exc:
            errors.append(f"budgets[{i}]: {exc}")
            value = 0
        reasons = budget.get("reasons")
        if reasons is None or reason in reasons:
            allowed = min(allowed, value)
    return allowed, errors


def must_allowed_disruptions(
    budgets: Sequence[Mapping[str, Any]], at: datetime, num_nodes: int, reason: str = DRIFTED
) -> int:
    """``MustGetAllowedDisruptions``: any error fails closed (0)."""
    allowed, errors = allowed_disruptions(budgets, at, num_nodes, reason)
    return 0 if errors else allowed


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.astimezone(UTC).isoformat().replace("+00:00", "Z")


_MAX_JOINS: Final = 1000
"""How many touching active spans a window's end is searched over (a schedule that fires more
often than its duration stays active: its end is reported unknown)."""


@dataclass(frozen=True, kw_only=True)
class Window:
    """One scheduled budget at the evaluation time: active or not, and when that changes."""

    budget: int  # index in spec.disruption.budgets
    nodes: str
    schedule: str
    duration: str
    active: bool
    change: datetime | None  # closes (active) or opens (inactive); None: not within five years

    def as_dict(self) -> dict[str, Any]:
        return {
            "budget": self.budget,
            "nodes": self.nodes,
            "schedule": self.schedule,
            "duration": self.duration,
            "active": self.active,
            ("closesAt" if self.active else "opensAt"): _iso(self.change),
        }

    def describe(self) -> str:
        when = _iso(self.change)
        if self.active:
            state = (
                f"active until {when}" if when else "active, with no end (it fires more often than it lasts)"
            )
        else:
            state = f"inactive, opens at {when}" if when else "inactive, does not open within five years"
        return f"budgets[{self.budget}] (nodes {self.nodes}, schedule {self.schedule!r} for {self.duration}) {state}"


def budget_window(budget: Mapping[str, Any], at: datetime, index: int = 0) -> Window | None:
    """The window of a scheduled budget at ``at`` (None: unscheduled or invalid: no window)."""
    schedule, duration = budget.get("schedule"), budget.get("duration")
    if schedule is None or duration is None:
        return None
    try:
        parsed = parse_cron(str(schedule))
        span = timedelta(microseconds=parse_duration(str(duration)) // 1000)
        active = budget_active(budget, at)
    except (CronError, DurationError, BudgetError):
        return None
    now = at.astimezone(UTC)
    change: datetime | None
    if not active:
        change = parsed.next(now)
    else:
        hit = parsed.next(now - span)
        change = None
        end = hit + span if hit is not None else None
        for _ in range(_MAX_JOINS):
            following = parsed.next(hit) if hit is not None else None
            if end is None or following is None or following > end:
                change = end
                break
            hit, end = following, following + span
    return Window(
        budget=index,
        nodes=str(budget.get("nodes", "10%")),
        schedule=str(schedule),
        duration=str(duration),
        active=active,
        change=change,
    )


@dataclass(frozen=True, kw_only=True)
class RollStep:
    """One drifted node as the simulated rollout disrupts it."""

    node_claim: str
    wave: int  # the wave it rolls in (numbered over the whole cluster; 1 = at once)
    method: str  # emptiness, static-drift or drift
    reason: str  # the budget's reason it counts against: Empty or Drifted
    decision: str  # delete (its pods fit elsewhere) or replace
    pods_moved: int
    replacements: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "nodeClaim": self.node_claim,
            "wave": self.wave,
            "method": self.method,
            "reason": self.reason,
            "decision": self.decision,
            "podsMoved": self.pods_moved,
            "replacements": self.replacements,
        }


@dataclass(frozen=True, kw_only=True)
class NotRolled:
    """A drifted node the simulated rollout leaves in place, and why (Karpenter's message)."""

    node_claim: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return {"nodeClaim": self.node_claim, "reason": self.reason}


@dataclass(frozen=True, kw_only=True)
class Rollout:
    """How a NodePool's drifted nodes get replaced under its budgets, at the time ``at``."""

    drifted: int
    nodes: int  # initialized, not terminating nodes of the pool (the budget's base)
    disrupting: int  # NotReady or already being disrupted: they consume the budget
    allowed: int  # MustGetAllowedDisruptions (MAX_INT32 = unbounded)
    notes: tuple[str, ...] = ()
    # static NodePools only: replacements the node limit lets launch at once (None: no cap)
    headroom: int | None = None
    static: bool = False
    at: datetime | None = None
    windows: tuple[Window, ...] = ()
    # set by the simulation (nodewright.disruption.rollout); the arithmetic leaves them empty
    simulated: bool = False
    order: tuple[RollStep, ...] = ()
    not_rolled: tuple[NotRolled, ...] = ()

    @property
    def next_change(self) -> datetime | None:
        """The earliest time a scheduled budget opens or closes (the waves may change then)."""
        return min((w.change for w in self.windows if w.change is not None), default=None)

    @property
    def allowed_per_wave(self) -> int | None:
        """Nodes disrupted at once (None = unbounded)."""
        per = None if self.allowed >= MAX_INT32 else max(self.allowed - self.disrupting, 0)
        if self.headroom is not None:
            per = self.headroom if per is None else min(per, self.headroom)
        return per

    @property
    def blocked(self) -> bool:
        return self.drifted > 0 and self.allowed_per_wave == 0

    @property
    def empty_first(self) -> int:
        """Simulated: the drifted nodes that roll empty (no pod to move), which Karpenter takes first."""
        return sum(1 for s in self.order if s.pods_moved == 0)

    @property
    def waves(self) -> int | None:
        """ceil(drifted / allowedPerWave), or simulated: the last wave a node of the pool rolls in;
        0 when nothing drifts (or, simulated, nothing rolls); None when the budget blocks it."""
        if self.drifted == 0:
            return 0
        if self.simulated:
            if self.blocked and not self.order:
                return None
            return max((s.wave for s in self.order), default=0)
        per = self.allowed_per_wave
        if per is None:
            return 1
        if per == 0:
            return None
        return math.ceil(self.drifted / per)

    def as_dict(self) -> dict[str, Any]:
        return {
            "drifted": self.drifted,
            "nodes": self.nodes,
            "disrupting": self.disrupting,
            "allowedPerWave": self.allowed_per_wave,
            "waves": self.waves,
            "blocked": self.blocked,
            "notes": list(self.notes),
            **({"static": True, "headroom": self.headroom} if self.static else {}),
            "windows": [w.as_dict() for w in self.windows],
            "nextChange": _iso(self.next_change),
            "simulated": self.simulated,
            "emptyFirst": self.empty_first,
            "order": [s.as_dict() for s in self.order],
            "notRolled": [n.as_dict() for n in self.not_rolled],
        }


def pool_budgets(spec: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """``spec.disruption.budgets`` of a NodePool, the CRD default when unset."""
    disruption = (spec or {}).get("disruption")
    budgets = disruption.get("budgets") if isinstance(disruption, Mapping) else None
    if budgets is None:
        return [dict(b) for b in DEFAULT_BUDGETS]
    return [b for b in budgets if isinstance(b, Mapping)]


def rollout(
    budgets: Sequence[Mapping[str, Any]],
    *,
    drifted: int,
    nodes: int,
    disrupting: int = 0,
    at: datetime | None = None,
) -> Rollout:
    """The rollout of ``drifted`` nodes of a pool of ``nodes`` under ``budgets`` at time ``at``
    (None: now). Every budget is evaluated at ``at``; scheduled ones that apply to drift also
    give their window (when they open or close)."""
    when = at or datetime.now(UTC)
    allowed, errors = allowed_disruptions(budgets, when, nodes)
    notes = [f"{e}; Karpenter fails closed (0 disruptions)" for e in errors]
    if errors:
        allowed = 0
    windows = tuple(
        w
        for i, b in enumerate(budgets)
        if b.get("reasons") is None or DRIFTED in (b.get("reasons") or ())
        for w in [budget_window(b, when, i)]
        if w is not None
    )
    return Rollout(
        drifted=drifted,
        nodes=nodes,
        disrupting=disrupting,
        allowed=allowed,
        notes=tuple(notes),
        at=when,
        windows=windows,
    )


def _is_map(v: Any) -> bool:
    """A mapping (a plain dict, as decoded, is checked first: the ``Mapping`` ABC check is slow)."""
    return type(v) is dict or isinstance(v, Mapping)


def _condition(body: Mapping[str, Any], type_: str) -> str | None:
    """The ``status`` of the last condition of ``type_`` in ``status.conditions`` (as text)."""
    status: Any = body.get("status")
    conds = status.get("conditions") if _is_map(status) else None
    found = None
    if type(conds) is list:
        for c in conds:
            if _is_map(c) and str(c.get("type")) == type_:
                found = str(c.get("status"))
    return found


def budget_base(
    claims: Sequence[Mapping[str, Any]],
    nodes_by_name: Mapping[str, Mapping[str, Any]],
    *,
    conditions: Sequence[Mapping[str, Mapping[str, Any]]] | None = None,
) -> tuple[int, int]:
    """(nodes, disrupting) of one pool, as ``BuildDisruptionBudgetMapping`` counts them.

    ``claims``: the pool's NodeClaims. A node counts when its NodeClaim is ``Initialized=True`` and
    not ``InstanceTerminating=True``; it consumes the budget when its Node is not ``Ready=True`` or
    it is marked for deletion (a deletion timestamp, or the ``karpenter.sh/disrupted`` taint).
    ``conditions``: each claim's conditions by type (the last of a type), when already read.
    """
    from nodewright.labels import DISRUPTED_TAINT_KEY

    total = disrupting = 0
    for i, claim in enumerate(claims):
        if conditions is not None:
            init, gone = conditions[i].get("Initialized"), conditions[i].get("InstanceTerminating")
            if init is None or str(init.get("status")) != "True":
                continue
            if gone is not None and str(gone.get("status")) == "True":
                continue
        elif _condition(claim, "Initialized") != "True" or _condition(claim, "InstanceTerminating") == "True":
            continue
        total += 1
        meta = claim.get("metadata") if _is_map(claim.get("metadata")) else {}
        status = claim.get("status") if _is_map(claim.get("status")) else {}
        node = nodes_by_name.get(str((status or {}).get("nodeName", "")))
        node_meta = (node or {}).get("metadata") or {}
        taints = ((node or {}).get("spec") or {}).get("taints") or []
        marked = bool((meta or {}).get("deletionTimestamp") or node_meta.get("deletionTimestamp")) or any(
            _is_map(t) and t.get("key") == DISRUPTED_TAINT_KEY for t in taints
        )
        ready = node is not None and _condition(node, "Ready") == "True"
        if marked or not ready:
            disrupting += 1
    return total, disrupting


def static_rollout(
    budgets: Sequence[Mapping[str, Any]],
    *,
    drifted: int,
    nodes: int,
    disrupting: int,
    counts: PoolCounts,
    replicas: int,
    node_limit: int | None,
    at: datetime | None = None,
) -> Rollout:
    """The rollout of a static NodePool's drifted nodes: the budget's waves, each capped by what
    :func:`static_drift_allowance` grants per disruption loop (the next wave starts once the
    previous replacements are done and the pool is back at ``replicas``)."""
    base = rollout(budgets, drifted=drifted, nodes=nodes, disrupting=disrupting, at=at)
    budget = MAX_INT32 if base.allowed_per_wave is None else base.allowed_per_wave
    granted, why = static_drift_allowance(
        replicas=replicas, node_limit=node_limit, counts=counts, budget=budget, drifted=MAX_INT32
    )
    notes = base.notes + ((why,) if why and drifted else ())
    return replace(
        base,
        notes=notes,
        headroom=None if granted >= MAX_INT32 or (node_limit is None and why is None) else granted,
        static=True,
    )
