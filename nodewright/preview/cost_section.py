"""The cost section of the pull-request comment: per NodePool, before, after and the change.

Boundary: pure over the ``cost`` of a preview document (:mod:`nodewright.stack.cost`). Money is
printed as infracost prints it: ``$1,234.56/mo``, a change as ``+$12.34``; hourly figures keep
four decimals (spot prices are fractions of a cent).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nodewright.catalog.prices import HOURS_PER_MONTH
from nodewright.tables import format_markdown_table


def usd(amount: float, *, places: int = 2, sign: bool = False) -> str:
    """``$1,234.56`` (``-$1.00`` for a negative amount; ``+$`` too with ``sign``)."""
    text = f"${abs(amount):,.{places}f}"
    if amount < 0 and round(abs(amount), places) != 0:
        return "-" + text
    return ("+" + text) if sign else text


def monthly_with_change(after: float, before: float) -> str:
    """``$1,234.56/mo (+$12.34)``, infracost's way of showing a cost and its change."""
    return f"{usd(after)}/mo ({usd(after - before, sign=True)})"


def _side(side: Mapping[str, Any], pool: str | None) -> tuple[float, float, int]:
    d = side if pool is None else (side.get("byNodePool") or {}).get(pool) or {}
    return float(d.get("hourly", 0.0)), float(d.get("monthly", 0.0)), int(d.get("nodes", 0))


def cost_summary(cost: Mapping[str, Any], base: Mapping[str, Any] | None = None) -> str:
    """One line for the comment's summary: the monthly cost after the merge and its change (and
    the change against the base branch's forecast, when the base document has one)."""
    _, before, _ = _side(cost["before"], None)
    _, after, _ = _side(cost["after"], None)
    line = f"cost after merge **{monthly_with_change(after, before)}**"
    if base:
        _, base_after, _ = _side(base["after"], None)
        line += f" ({usd(after - base_after, sign=True)}/mo against the base branch)"
    return line


def cost_section(cost: Mapping[str, Any] | None, base: Mapping[str, Any] | None = None) -> list[str]:
    """``#### Cost``: one row per NodePool and a total, then the notes on how it was computed.

    before: the cluster's NodeClaims now; after: once Karpenter converges on the branch; with the
    base branch's ``cost`` (``--base``), a column compares after with the base branch's after."""
    if not cost:
        return []
    before, after = cost["before"], cost["after"]
    sides = [before, after] + ([base["after"]] if base else [])
    pools = sorted({p for side in sides for p in side.get("byNodePool") or {}})
    rows = []
    for pool in [*pools, None]:
        bh, bm, bn = _side(before, pool)
        ah, am, an = _side(after, pool)
        name = "**total**" if pool is None else f"`{pool or '(no NodePool)'}`"
        row = [
            name,
            f"{bn} → {an}",
            f"{usd(bm)}/mo",
            f"{usd(am)}/mo",
            f"{usd(am - bm, sign=True)}/mo",
            f"{usd(bh, places=4)} → {usd(ah, places=4)}/h",
        ]
        if base:
            row.append(f"{usd(am - _side(base['after'], pool)[1], sign=True)}/mo")
        rows.append(row)
    headers = ["NodePool", "nodes", "before", "after", "change", "hourly"] + (
        ["vs base branch"] if base else []
    )
    sec = [
        f"#### Cost (catalog `{cost.get('catalog', '?')}`, {cost.get('hoursPerMonth', HOURS_PER_MONTH)} h/month)",
        format_markdown_table(headers, rows),
    ]
    unpriced = [*before.get("unpriced", []), *after.get("unpriced", [])]
    notes = [f"> {n}" for n in cost.get("notes", [])]
    if unpriced:
        more = f" and {len(unpriced) - 10} more" if len(unpriced) > 10 else ""
        notes.append(f"> unpriced NodeClaims: {', '.join(f'`{u}`' for u in unpriced[:10])}{more}")
    if notes:
        sec.append("\n>\n".join(notes))
    return sec
