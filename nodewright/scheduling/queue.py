"""The scheduling queue (Karpenter ``queue.go``).

Pods are ordered CPU request descending, then memory descending, then creation time ascending,
then UID ascending (pod priority is not used). ``pop`` stops when the head pod has gone a full
cycle without progress: its recorded queue length equals the current one.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from itertools import islice, takewhile
from typing import Generic, Protocol, TypeVar


class Queued(Protocol):
    @property
    def key(self) -> str: ...
    @property
    def sort_key(self) -> tuple[int, int, str, str, str]: ...


T = TypeVar("T", bound=Queued)


class Queue(Generic[T]):
    """FIFO over the initially sorted pods, with Karpenter's no-progress stop."""

    __slots__ = ("_last_len", "_pods")

    def __init__(self, pods: Iterable[T]) -> None:
        self._pods: deque[T] = deque(sorted(pods, key=lambda p: p.sort_key))
        self._last_len: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._pods)

    def pop(self) -> T | None:
        if not self._pods:
            return None
        head = self._pods[0]
        if self._last_len.get(head.key) == len(self._pods):
            return None
        self._pods.popleft()
        return head

    def head_run(self, same: Callable[[T], bool], limit: int) -> list[T]:
        """The pods ``pop`` would return next, in order, while ``same`` holds, at most ``limit``
        (none removed)."""
        if not self._last_len:  # no pod went round yet: only ``same`` and ``limit`` stop the run
            return list(takewhile(same, islice(self._pods, max(0, limit))))
        out: list[T] = []
        n = len(self._pods)
        for pod in self._pods:
            if len(out) >= limit or self._last_len.get(pod.key) == n - len(out) or not same(pod):
                break
            out.append(pod)
        return out

    def drop(self, n: int) -> None:
        """Remove the first ``n`` pods (those a ``head_run`` returned)."""
        for _ in range(n):
            self._pods.popleft()

    def push(self, pod: T) -> None:
        self._pods.append(pod)
        self._last_len[pod.key] = len(self._pods)
