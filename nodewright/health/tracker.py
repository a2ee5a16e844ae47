"""The NodePool registration-health tracker, with Karpenter's semantics (``pkg/state/nodepoolhealth``).

Boundary: pure state. A per-NodePool ring buffer of the last :data:`BUFFER_SIZE` launch/registration
results (``True`` = a NodeClaim registered, ``False`` = it timed out launching or registering).
``status()`` is Unknown when the buffer is empty, Unhealthy when failures / BUFFER_SIZE (always 4,
not the number of entries) reach :data:`THRESHOLD_FALSE`, else Healthy. ``set_status`` rehydrates
from an existing condition (Healthy -> ``[True]``, Unhealthy -> ``[False, False]``, Unknown -> ``[]``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Final, Literal

BUFFER_SIZE: Final = 4
THRESHOLD_FALSE: Final = 0.5

HEALTHY: Final = "Healthy"
UNHEALTHY: Final = "Unhealthy"
UNKNOWN: Final = "Unknown"
Status = Literal["Healthy", "Unhealthy", "Unknown"]


class RingBuffer:
    """A FIFO of at most ``size`` bools; inserting into a full buffer drops the oldest."""

    def __init__(self, size: int = BUFFER_SIZE, items: Iterable[bool] = ()) -> None:
        self.size = size
        self._items: deque[bool] = deque(maxlen=size)
        for v in items:
            self._items.append(v)

    def insert(self, value: bool) -> None:
        self._items.append(value)

    def items(self) -> list[bool]:
        return list(self._items)

    def reset(self) -> None:
        self._items.clear()

    def __len__(self) -> int:
        return len(self._items)

    def copy(self) -> RingBuffer:
        return RingBuffer(self.size, self._items)


def status_of(buffer: RingBuffer) -> Status:
    """Karpenter's ``Status()`` of a buffer."""
    if len(buffer) == 0:
        return UNKNOWN
    failures = sum(1 for v in buffer.items() if not v)
    return UNHEALTHY if failures / BUFFER_SIZE >= THRESHOLD_FALSE else HEALTHY


class Tracker:
    """Per-NodePool (by UID) ring buffers, as Karpenter keeps them in memory."""

    def __init__(self) -> None:
        self._buffers: dict[str, RingBuffer] = {}
        self._seen: set[tuple[str, str]] = set()
        # the last condition derived per NodePool, when replaying a series of cluster states
        self.last_condition: dict[str, object] = {}

    def first_time(self, uid: str, event: str) -> bool:
        """True the first time ``event`` is offered for ``uid`` (replaying a series of states)."""
        key = (uid, event)
        if key in self._seen:
            return False
        self._seen.add(key)
        return True

    def _buffer(self, uid: str) -> RingBuffer:
        return self._buffers.setdefault(uid, RingBuffer())

    def status(self, uid: str) -> Status:
        return status_of(self._buffer(uid))

    def update(self, uid: str, ok: bool) -> None:
        """Record one launch/registration result."""
        self._buffer(uid).insert(ok)

    def dry_run(self, uid: str, ok: bool) -> Status:
        """The status after recording ``ok``, without recording it."""
        b = self._buffer(uid).copy()
        b.insert(ok)
        return status_of(b)

    def set_status(self, uid: str, status: Status) -> None:
        """Rehydrate from a condition: Healthy -> [True], Unhealthy -> [False, False], else empty."""
        b = self._buffer(uid)
        b.reset()
        if status == HEALTHY:
            b.insert(True)
        elif status == UNHEALTHY:
            b.insert(False)
            b.insert(False)

    def reset(self, uid: str) -> None:
        self._buffer(uid).reset()

    def buffer(self, uid: str) -> list[bool]:
        return self._buffer(uid).items()
