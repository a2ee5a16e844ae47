"""Which existing nodes still have room for a request (:class:`FitIndex`), leftmost first."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import compress
from operator import gt, le, ne
from typing import TYPE_CHECKING, Final

from nodewright.algebra.resources import ResourceList

if TYPE_CHECKING:
    from nodewright.scheduling.existingnode import ExistingNode


_NONE: Final = -(1 << 62)


def none_leaf(dims: tuple[str, ...]) -> tuple[int, ...]:
    """The leaf below any request (it matches nothing)."""
    return (_NONE,) * len(dims)


def fit_leaf(remaining: Mapping[str, int], dims: tuple[str, ...]) -> tuple[int, ...]:
    """A node's leaf in an index over ``dims``: its remaining resources (nothing for a node with a
    negative remainder: it covers nothing, as ``fits`` says)."""
    if any(v < 0 for v in remaining.values()):
        return none_leaf(dims)
    return tuple(remaining.get(d, 0) for d in dims)


class FitIndex:
    """Which existing nodes still have room for a request, leftmost first, in O(log n) per answer.

    A segment tree over the nodes (in the scheduler's order) of the per-resource maximum of their
    remaining resources. ``candidates(requests)`` yields, in order, only the nodes whose remaining
    resources cover ``requests`` (a node with any negative remainder covers nothing, as ``fits``
    says): a necessary condition of :meth:`ExistingNode.can_add`, so trying just these nodes gives
    the same decisions as trying every node, without rescanning the full ones for every pod.
    Call :meth:`update` after a node's ``remaining`` shrinks.
    """

    def __init__(
        self,
        nodes: Sequence[ExistingNode],
        *,
        previous: FitIndex | None = None,
        dims: tuple[str, ...] | None = None,
        leaves: list[tuple[int, ...]] | None = None,
    ) -> None:
        """``previous``: an index built before (never changed since), whose maxima are reused where
        the leaves below them hold the same values. ``dims`` and ``leaves``: the nodes' resource
        names and leaves (:func:`fit_leaf`), when the caller keeps them."""
        self.nodes = nodes
        self.count = len(nodes)
        if dims is None:
            dims = tuple(sorted({k for n in nodes for k in n.remaining}))
        self.dims = dims
        self._dimset = frozenset(dims)
        self._none = none_leaf(dims)  # below any request: matches nothing
        size = 1
        while size < len(nodes):
            size *= 2
        self.size = size
        self.tree: list[tuple[int, ...]] = [self._none] * (2 * size)
        # per request vector, the first node that covered it at the last walk
        self._first: dict[tuple[int, ...], int] = {}
        if leaves is None:
            leaves = [fit_leaf(n.remaining, dims) for n in nodes]
        if previous is not None and previous.size == size and previous.dims == dims:
            self._patch(previous, leaves)
            return
        self.tree[size : size + len(leaves)] = leaves
        for i in range(size - 1, 0, -1):
            self.tree[i] = tuple(map(max, self.tree[2 * i], self.tree[2 * i + 1]))

    def _patch(self, previous: FitIndex, leaves: list[tuple[int, ...]]) -> None:
        """The tree of ``previous`` with the leaves that differ replaced and the maxima above them
        recomputed (the same tree a full build gives)."""
        size = self.size
        tree = self.tree = list(previous.tree)
        old = tree[size : size + max(len(leaves), previous.count)]
        leaves = leaves + [self._none] * (len(old) - len(leaves))
        dirty = set()
        for i in compress(range(len(leaves)), map(ne, leaves, old)):
            tree[size + i] = leaves[i]
            if size > 1:  # one node: its leaf is the root
                dirty.add((size + i) >> 1)
        while dirty:
            above = set()
            for j in dirty:
                new = tuple(map(max, tree[2 * j], tree[2 * j + 1]))
                if new != tree[j]:
                    tree[j] = new
                    if j > 1:
                        above.add(j >> 1)
            dirty = above

    def _vec(self, node: ExistingNode) -> tuple[int, ...]:
        return fit_leaf(node.remaining, self.dims)

    def copy(self, nodes: Sequence[ExistingNode]) -> FitIndex:
        """The same index over ``nodes`` (a copy of this index's node list whose entries a solve
        may replace), sharing nothing mutable with this one."""
        out = FitIndex.__new__(FitIndex)
        out.nodes = nodes
        out.count = self.count
        out.dims = self.dims
        out._dimset = self._dimset
        out._none = self._none
        out.size = self.size
        out.tree = list(self.tree)
        out._first = {}
        return out

    def exclude(self, i: int) -> None:
        """Node ``i`` no longer takes any pod (it left the round)."""
        self._set(i, self._none)

    def update(self, i: int) -> None:
        vec = self._vec(self.nodes[i])
        if self._first and any(map(gt, vec, self.tree[self.size + i])):
            self._first.clear()  # the node grew: walks may no longer skip it
        self._set(i, vec)

    def _set(self, i: int, vec: tuple[int, ...]) -> None:
        tree = self.tree
        j = self.size + i
        tree[j] = vec
        j //= 2
        while j:
            new = tuple(map(max, tree[2 * j], tree[2 * j + 1]))
            if new == tree[j]:
                break  # the maxima above are unchanged too
            tree[j] = new
            j //= 2

    def candidates(self, requests: ResourceList) -> Iterator[int]:
        """Indexes of the nodes whose remaining resources cover ``requests``, in order.

        A walk from the leaf where the last walk for the same request started answering (nodes
        shrink during a solve, so those before it still cannot cover it; :meth:`update` of a node
        that grew forgets those starts), climbing to each next
        subtree to the right and descending into those whose per-resource maxima cover the
        request: a pod every node has room for but none accepts costs O(n), not O(n log n). A
        subtree is tested when it is reached, so an :meth:`update` between two answers is seen by
        the rest of the walk.
        """
        if any(v > 0 for k, v in requests.items() if k not in self._dimset):
            return  # a resource no node has: nothing fits
        req = tuple(requests.get(d, 0) for d in self.dims)
        first = self._first
        start = first.get(req, 0)
        tree, size, count = self.tree, self.size, self.count
        if start >= count:
            return
        j = size + start
        unanswered = True
        while True:
            if all(map(le, req, tree[j])):
                if j < size:
                    j *= 2  # the left child first
                    continue
                i = j - size
                if i >= count:
                    break
                if unanswered:
                    first[req] = i
                    unanswered = False
                yield i
            while j & 1:  # a right child: climb to the first ancestor that is a left child
                j >>= 1
            if not j:
                break
            j += 1
        if unanswered:
            first[req] = count  # nothing covers it now, nor will
