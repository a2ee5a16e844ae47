"""Taint toleration as the scheduler checks it (Karpenter ``Taints.ToleratesPod``).

A taint is tolerated when some toleration matches it (k8s ``ToleratesTaint``: empty effect
matches every effect, empty key with ``Exists`` matches every key, ``Equal``/empty operator
compares values). Every effect counts, ``PreferNoSchedule`` included. The error lists each
untolerated taint as ``did not tolerate taint (taint=key=value:Effect)`` joined by ``"; "``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class TaintLike(Protocol):
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


def tolerates_taint(t: TolerationLike, taint: TaintLike) -> bool:
    if t.effect and t.effect != taint.effect:
        return False
    if t.key and t.key != taint.key:
        return False
    op = t.operator or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        return (t.value or "") == (taint.value or "")
    return False


def pretty_taint(taint: TaintLike) -> str:
    if not taint.value:
        return f"{taint.key}:{taint.effect}"
    return f"{taint.key}={taint.value}:{taint.effect}"


def tolerates(taints: Sequence[TaintLike], tolerations: Sequence[TolerationLike]) -> str | None:
    """None when every taint is tolerated, else Karpenter's error text."""
    errs = [
        f"did not tolerate taint (taint={pretty_taint(taint)})"
        for taint in taints
        if not any(tolerates_taint(t, taint) for t in tolerations)
    ]
    return "; ".join(errs) if errs else None
