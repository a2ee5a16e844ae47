"""The scheduling queue (Karpenter ``queue.go``).

Pods are ordered CPU request descending, then memory descending, then creation time ascending,
then UID ascending (pod priority is not used). ``pop`` stops when the head pod has gone a full
cycle without progress: its recorded queue length equals the current one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import islice, takewhile
from operator import attrgetter
from typing import Generic, Protocol, TypeVar


class Queued(Protocol):
    @property
    def key(self) -> str: ...
    @property
    def sort_key(self) -> tuple[int, int, str, str, str]: ...


T = TypeVar("T", bound=Queued)


_SORT_KEY = attrgetter("sort_key")


class Queue(Generic[T]):
    """FIFO over the initially sorted pods, with Karpenter's no-progress stop (a list read from a
    head index; the part already read is dropped once it is most of the list)."""

    __slots__ = ("_head", "_last_len", "_pods")

    def __init__(self, pods: Iterable[T]) -> None:
        self._pods: list[T] = sorted(pods, key=_SORT_KEY)
        self._head = 0
        self._last_len: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._pods) - self._head

    def pop(self) -> T | None:
        pods, at = self._pods, self._head
        if at >= len(pods):
            return None
        head = pods[at]
        if self._last_len.get(head.key) == len(pods) - at:
            return None
        self._head = at + 1
        return head

    def head_run(self, same: Callable[[T], bool], limit: int) -> list[T]:
        """The pods ``pop`` would return next, in order, while ``same`` holds, at most ``limit``
        (none removed)."""
        at = self._head
        if not self._last_len:  # no pod went round yet: only ``same`` and ``limit`` stop the run
            return list(takewhile(same, islice(self._pods, at, at + max(0, limit))))
        out: list[T] = []
        n = len(self._pods) - at
        for pod in islice(self._pods, at, None):
            if len(out) >= limit or self._last_len.get(pod.key) == n - len(out) or not same(pod):
                break
            out.append(pod)
        return out

    def drop(self, n: int) -> None:
        """Remove the first ``n`` pods (those a ``head_run`` returned)."""
        self._head += n

    def push(self, pod: T) -> None:
        pods = self._pods
        if self._head > len(pods) // 2:
            del pods[: self._head]
            self._head = 0
        pods.append(pod)
        self._last_len[pod.key] = len(pods) - self._head
