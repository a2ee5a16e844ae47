"""Whether two sequences hold the very same objects in the same order: how the facts kept between
rounds (a forecast's many reconciles) tell that what they were derived from has not changed."""

from __future__ import annotations

from collections.abc import Sequence
from operator import is_


def same_objects(a: Sequence[object], b: Sequence[object]) -> bool:
    """``a`` and ``b`` are the same sequence, or hold the same objects (by identity) in order."""
    return a is b or (len(a) == len(b) and all(map(is_, a, b)))
