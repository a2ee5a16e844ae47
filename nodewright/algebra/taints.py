"""Taints and tolerations: Kubernetes ``ToleratesTaint`` and Karpenter's ``pkg/scheduling/taints.go``.

A taint is tolerated when some toleration matches it: a toleration with an effect matches only
that effect (empty matches every effect); with a key only that key (empty key + ``Exists``
matches every taint); operator ``Exists`` matches any value, ``Equal`` (or empty) compares
values. Karpenter checks every effect, ``PreferNoSchedule`` included, and reports each
untolerated taint as ``did not tolerate taint (taint=key=value:Effect)``, joined by ``"; "``.

Boundary: matching and messages only; which taints apply (startup, ephemeral while a node
initialises) is the scheduler's decision, helped by :func:`is_known_ephemeral_taint`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol, TypeVar

from nodewright import labels as wk

__all__ = [
    "EQUAL",
    "EXISTS",
    "NO_EXECUTE",
    "NO_SCHEDULE",
    "PREFER_NO_SCHEDULE",
    "PREFER_NO_SCHEDULE_TOLERATION",
    "TaintLike",
    "TolerationLike",
    "has_prefer_no_schedule",
    "is_known_ephemeral_taint",
    "is_tolerated",
    "match_taint",
    "merge_taints",
    "taint_str",
    "tolerates",
    "tolerates_pod",
    "tolerates_prefer_no_schedule",
    "tolerates_taint",
    "untolerated",
]

NO_SCHEDULE: Final = "NoSchedule"
PREFER_NO_SCHEDULE: Final = "PreferNoSchedule"
NO_EXECUTE: Final = "NoExecute"
EXISTS: Final = "Exists"
EQUAL: Final = "Equal"


class TaintLike(Protocol):
    """``Taint`` or a NodePool template taint (api models satisfy it)."""

    @property
    def key(self) -> str: ...
    @property
    def value(self) -> str | None: ...
    @property
    def effect(self) -> str: ...


class TolerationLike(Protocol):
    @property
    def key(self) -> str | None: ...
    @property
    def operator(self) -> str | None: ...
    @property
    def value(self) -> str | None: ...
    @property
    def effect(self) -> str | None: ...


class _HasTolerations(Protocol):
    @property
    def tolerations(self) -> Sequence[TolerationLike]: ...


class PodTolerationsLike(Protocol):
    @property
    def spec(self) -> _HasTolerations: ...


_T = TypeVar("_T", bound=TaintLike)


@dataclass(frozen=True)
class _Toleration:
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None


# The toleration Karpenter's preference relaxation adds as its last step.
PREFER_NO_SCHEDULE_TOLERATION: Final[TolerationLike] = _Toleration(operator=EXISTS, effect=PREFER_NO_SCHEDULE)


def tolerates_taint(toleration: TolerationLike, taint: TaintLike) -> bool:
    """Kubernetes ``Toleration.ToleratesTaint``.

    Operators other than ``Equal``/``Exists`` (e.g. the alpha ``Gt``/``Lt``) tolerate nothing.
    """
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    op = toleration.operator
    if not op or op == EQUAL:
        return (toleration.value or "") == (taint.value or "")
    return op == EXISTS


def taint_str(taint: TaintLike) -> str:
    """Karpenter ``pretty.Taint``: ``key=value:Effect``, or ``key:Effect`` without a value."""
    if taint.value:
        return f"{taint.key}={taint.value}:{taint.effect}"
    return f"{taint.key}:{taint.effect}"


def _tolerated(taint: TaintLike, tolerations: Sequence[TolerationLike]) -> bool:
    for t in tolerations:  # noqa: SIM110 - a plain loop is faster on this hot path
        if tolerates_taint(t, taint):
            return True
    return False


def untolerated(taints: Iterable[TaintLike], tolerations: Sequence[TolerationLike]) -> list[TaintLike]:
    """The taints no toleration matches, in their given order."""
    return [taint for taint in taints if not _tolerated(taint, tolerations)]


def tolerates(taints: Iterable[TaintLike], tolerations: Sequence[TolerationLike]) -> str | None:
    """Karpenter ``Taints.Tolerates``: ``None`` when every taint is tolerated, else the error."""
    missing = untolerated(taints, tolerations)
    if not missing:
        return None
    return "; ".join(f"did not tolerate taint (taint={taint_str(t)})" for t in missing)


def is_tolerated(taints: Iterable[TaintLike], tolerations: Sequence[TolerationLike]) -> bool:
    """``tolerates(...) is None`` without building error text (Karpenter ``IsToleratedBy``)."""
    for taint in taints:  # noqa: SIM110 - a plain loop is faster on this hot path
        if not _tolerated(taint, tolerations):
            return False
    return True


def tolerates_pod(taints: Iterable[TaintLike], pod: PodTolerationsLike) -> str | None:
    """Karpenter ``Taints.ToleratesPod``: :func:`tolerates` with the pod's tolerations."""
    return tolerates(taints, pod.spec.tolerations)


def match_taint(a: TaintLike, b: TaintLike) -> bool:
    """Kubernetes ``Taint.MatchTaint``: same key and effect (the value is not compared)."""
    return a.key == b.key and a.effect == b.effect


def merge_taints(taints: Sequence[_T], extra: Iterable[_T]) -> list[_T]:
    """Karpenter ``Taints.Merge``: ``taints`` plus each of ``extra`` not matching one already there."""
    out = list(taints)
    for taint in extra:
        if not any(match_taint(taint, t) for t in out):
            out.append(taint)
    return out


def is_known_ephemeral_taint(taint: TaintLike) -> bool:
    """Karpenter ``IsKnownEphemeralTaint``: a taint node lifecycle controllers remove on their own.

    Exact key/effect match against the known list (and value, when the list gives one), or a key
    under the node-readiness prefix.
    """
    for key, value, effect in wk.KNOWN_EPHEMERAL_TAINTS:
        if taint.key == key and taint.effect == effect and (value is None or (taint.value or "") == value):
            return True
    return taint.key.startswith(wk.EPHEMERAL_TAINT_KEY_PREFIX)


def has_prefer_no_schedule(taints: Iterable[TaintLike]) -> bool:
    """True when any taint has the ``PreferNoSchedule`` effect (enables that relaxation step)."""
    return any(t.effect == PREFER_NO_SCHEDULE for t in taints)


def tolerates_prefer_no_schedule(tolerations: Iterable[TolerationLike]) -> bool:
    """True when the tolerations already hold ``Exists``/``PreferNoSchedule`` (nothing to relax)."""
    return any(
        t.operator == EXISTS and t.effect == PREFER_NO_SCHEDULE and not t.key and not t.value
        for t in tolerations
    )
