"""The cost section of the pull-request comment: per NodePool, before, after and the change.

Boundary: pure over the ``cost`` of a preview document (:mod:`nodewright.stack.cost`). Money is
printed as infracost prints it: ``$1,234.56/mo``, a change as ``+$12.34``; hourly figures keep
four decimals (spot prices are fractions of a cent).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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


def cost_summary(cost: Mapping[str, Any]) -> str:
    """One line for the comment's summary: the monthly cost after the merge and its change."""
    _, before, _ = _side(cost["before"], None)
    _, after, _ = _side(cost["after"], None)
    return f"cost after merge **{monthly_with_change(after, before)}**"


def cost_section(cost: Mapping[str, Any] | None) -> list[str]:
    """``#### Cost``: one row per NodePool and a total, then the notes on how it was computed."""
    if not cost:
        return []
    before, after = cost["before"], cost["after"]
    pools = sorted({*(before.get("byNodePool") or {}), *(after.get("byNodePool") or {})})
    rows = []
    for pool in [*pools, None]:
        bh, bm, bn = _side(before, pool)
        ah, am, an = _side(after, pool)
        name = "**total**" if pool is None else f"`{pool or '(no NodePool)'}`"
        rows.append(
            (
                name,
                f"{bn} → {an}",
                f"{usd(bm)}/mo",
                f"{usd(am)}/mo",
                f"{usd(am - bm, sign=True)}/mo",
                f"{usd(bh, places=4)} → {usd(ah, places=4)}/h",
            )
        )
    sec = [
        f"#### Cost (catalog `{cost.get('catalog', '?')}`, {cost.get('hoursPerMonth', 730)} h/month)",
        format_markdown_table(["NodePool", "nodes", "before", "after", "change", "hourly"], rows),
    ]
    unpriced = [*before.get("unpriced", []), *after.get("unpriced", [])]
    notes = [f"> {n}" for n in cost.get("notes", [])]
    if unpriced:
        notes.append(f"> unpriced NodeClaims: {', '.join(f'`{u}`' for u in unpriced[:10])}")
    if notes:
        sec.append("\n".join(notes))
    return sec
