"""The aggregate covering LP of a cost plan, solved with HiGHS (``highspy``).

    min  Σ_t price_t · x_t
    s.t. Σ_t cap_t[r] · x_t >= demand[r]      for every requested resource r
         Σ_t limcap_t[r] · x_t <= limit[r]     for every NodePool limit (optional)
         x_t >= 0

``cap_t`` is what type ``t`` offers the pods (allocatable less daemon overhead). Its optimum is a
lower bound on any packing of the demand onto those types (each NodeClaim is one integral x),
and its basic solution names the few types worth filling; the row duals price each resource.
Boundary: numbers in, numbers out; no scheduling objects.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_INF = float("inf")


@dataclass(frozen=True, slots=True)
class LpResult:
    value: float  # inf when infeasible
    x: tuple[float, ...]
    duals: tuple[float, ...]  # one per demand row (>= 0)


def cover_lp(
    prices: Sequence[float],
    caps: Sequence[Sequence[float]],
    demand: Sequence[float],
    *,
    limits: Mapping[int, tuple[Sequence[float], float]] | None = None,
    time_limit: float | None = None,
) -> LpResult:
    """Solve the covering LP above. ``caps[t][r]`` per type and resource; ``limits`` maps a row id
    to (per-type usage, bound). Deterministic (one thread, fixed options)."""
    n = len(prices)
    rows = [r for r, d in enumerate(demand) if d > 0]
    if n == 0 or not rows:
        return LpResult(value=0.0 if not rows else _INF, x=(0.0,) * n, duals=(0.0,) * len(demand))
    import highspy  # lazily: a heavy import only the cost strategy needs
    import numpy as np

    h = _new_highs(highspy)
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("random_seed", 0)
    if time_limit is not None:
        h.setOptionValue("time_limit", max(0.05, float(time_limit)))
    h.addVars(n, np.zeros(n), np.full(n, highspy.kHighsInf))
    h.changeColsCost(n, np.arange(n, dtype=np.int32), np.asarray(prices, dtype=np.float64))
    idx = np.arange(n, dtype=np.int32)
    # every row scaled by its right-hand side (memory in milli-bytes reaches 1e16)
    for r in rows:
        vals = np.asarray([caps[t][r] / demand[r] for t in range(n)], dtype=np.float64)
        nz = vals != 0
        h.addRow(1.0, highspy.kHighsInf, int(nz.sum()), idx[nz], vals[nz])
    for usage, bound in (limits or {}).values():
        scale = max(abs(float(bound)), 1.0)
        vals = np.asarray(usage, dtype=np.float64) / scale
        nz = vals != 0
        h.addRow(-highspy.kHighsInf, float(bound) / scale, int(nz.sum()), idx[nz], vals[nz])
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return LpResult(value=_INF, x=(0.0,) * n, duals=(0.0,) * len(demand))
    sol = h.getSolution()
    x = tuple(float(v) for v in sol.col_value)
    row_duals = list(sol.row_dual)
    duals = [0.0] * len(demand)
    if len(row_duals) >= len(rows):
        for i, r in enumerate(rows):
            duals[r] = max(0.0, float(row_duals[i])) / demand[r]
    value = float(sum(p * v for p, v in zip(prices, x, strict=True)))
    return LpResult(value=value, x=x, duals=tuple(duals))


def _new_highs(highspy: Any) -> Any:
    """A ``Highs`` solver without its licence banner: the library prints it on the process's
    standard output (file descriptor 1) when the first solver is built, before any option can
    silence it, which would corrupt ``plan --strategy cost -o json``. The descriptor points at
    the null device for that call only."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w", encoding="utf-8") as null:
            os.dup2(null.fileno(), 1)
            return highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
