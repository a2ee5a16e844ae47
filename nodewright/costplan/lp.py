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

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

_INF = float("inf")


@contextlib.contextmanager
def _quiet_stdout() -> Iterator[None]:
    """File descriptor 1 points at /dev/null for the block: a C library's prints (HiGHS's banner)
    never reach a machine-readable stdout. Python's own buffered output is flushed first."""
    with contextlib.suppress(ValueError, OSError):
        sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no fd 1 (closed): nothing to protect
        yield
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, 1)
        finally:
            os.close(devnull)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


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

    with _quiet_stdout():  # HiGHS prints its banner on fd 1 in the constructor, before any option
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("log_to_console", False)
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
