"""The requirements algebra: Karpenter's ``pkg/scheduling/requirement(s).go`` in Python.

A :class:`Requirement` (:mod:`nodewright.algebra.requirement`) is the set of label values one
key may take: a (possibly complemented) value set plus optional inclusive integer bounds (``Gt N``
is stored as ``gte N+1``, ``Lt N`` as ``lte N-1``) and an optional ``minValues``.
:class:`Requirements` maps keys (normalised through :func:`nodewright.labels.normalize`) to
requirements; adding a key twice intersects.

This is the scheduler's hottest path. Requirement objects are immutable (``__slots__``,
frozensets, cached hash) so they are shared freely; :class:`Requirements` copies are O(1) and
copy-on-write. Error strings are Karpenter's, byte for byte, with deterministic ordering where
Go would iterate a map.

Boundary: pure set algebra; no pods, nodes or instance types beyond building requirements from a
pod's node selector and affinity (:func:`pod_requirements`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Final

from nodewright import labels as wk
from nodewright.algebra.requirement import (
    ALLOW_UNDEFINED_WELL_KNOWN,
    MAX_INT,
    NO_UNDEFINED,
    NodeSelectorRequirementLike,
    Requirement,
    RequirementError,
    _exists,
)

__all__ = [
    "ALLOW_UNDEFINED_WELL_KNOWN",
    "MAX_INT",
    "NO_UNDEFINED",
    "NodeSelectorRequirementLike",
    "Requirement",
    "RequirementError",
    "Requirements",
]


# ``key In [value]`` of a label, shared (a Requirement is immutable): the same zone, arch, type and
# pool labels on thousands of nodes are one object each. Bounded; past it, new ones are not kept.
_LABEL_REQS: dict[tuple[str, str], Requirement] = {}
_LABEL_REQS_MAX: Final = 1 << 16


def _levenshtein(a: str, b: str) -> int:
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def _suffix(key: str) -> str:
    return key.split("/", 1)[1] if "/" in key else key


def label_hint(known: Iterable[str], key: str, allowed_undefined: Iterable[str]) -> str:
    """Karpenter ``labelHint``: `` (typo of "k"?)`` for the first similar key, or ``""``.

    Candidates are the allowed-undefined (well-known) keys, then the receiver's keys, each with
    exact name matches first, then sorted (Go iterates maps randomly). A candidate is similar when it contains ``key``,
    is within edit distance ``len(candidate) // 5``, or ends with the part of ``key`` after the
    ``/``.
    """
    suffix = _suffix(key)
    name = key.rsplit("/", 1)[-1]

    def closest_first(candidates: Iterable[str]) -> list[str]:
        # A candidate whose name part is exactly the key's ("zone" -> ".../zone") beats one that
        # merely contains it (".../zone-id"); then lexicographic, for a deterministic answer.
        return sorted(candidates, key=lambda c: (c.rsplit("/", 1)[-1] != name, c))

    for group in (closest_first(allowed_undefined), closest_first(known)):
        for candidate in group:
            if (
                key in candidate
                or _levenshtein(key, candidate) < len(candidate) // 5
                or (suffix and candidate.endswith(suffix))
            ):
                return f' (typo of "{candidate}"?)'
    return ""


_is_restricted_node_label = wk.is_restricted_node_label


class Requirements:
    """Key -> :class:`Requirement`; ``add`` intersects. Copies are O(1), copy-on-write."""

    __slots__ = ("_reqs", "_shared")

    _reqs: dict[str, Requirement]
    _shared: bool

    def __init__(self, requirements: Iterable[Requirement] = ()) -> None:
        self._reqs = {}
        self._shared = False
        self.add(*requirements)

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def from_node_selector_requirements(cls, nsrs: Iterable[NodeSelectorRequirementLike]) -> Requirements:
        """Karpenter ``NewNodeSelectorRequirementsWithMinValues`` (``min_values`` if present)."""
        return cls(Requirement.from_node_selector_requirement(n) for n in nsrs)

    @classmethod
    def from_labels(cls, labels: Mapping[str, str]) -> Requirements:
        """Karpenter ``NewLabelRequirements``: ``key In [value]`` per label."""
        reqs: dict[str, Requirement] = {}
        normalized = wk.NORMALIZED_LABELS
        memo = _LABEL_REQS
        for k, v in labels.items():
            key = normalized.get(k, k)
            r = memo.get((key, v))
            if r is None:
                r = Requirement(key, complement=False, values=frozenset((v,)))
                if len(memo) < _LABEL_REQS_MAX:
                    memo[(key, v)] = r
            existing = reqs.get(key)
            reqs[key] = r if existing is None else r.intersection(existing)
        return cls._wrap(reqs)

    @classmethod
    def _wrap(cls, reqs: dict[str, Requirement]) -> Requirements:
        out = cls.__new__(cls)
        out._reqs = reqs
        out._shared = False
        return out

    def copy(self) -> Requirements:
        """An independent copy in O(1): the dict is shared until either side writes."""
        out = Requirements.__new__(Requirements)
        out._reqs = self._reqs
        out._shared = True
        self._shared = True
        return out

    # -- mutation ----------------------------------------------------------------------------
    def add(self, *requirements: Requirement) -> None:
        """Karpenter ``Add``: intersect each requirement into the one of the same key."""
        if not requirements:
            return
        if self._shared:
            self._reqs = dict(self._reqs)
            self._shared = False
        reqs = self._reqs
        for r in requirements:
            existing = reqs.get(r.key)
            reqs[r.key] = r if existing is None else r.intersection(existing)

    def add_all(self, other: Requirements) -> None:
        """Add every requirement of ``other``."""
        self.add(*other._reqs.values())

    def union(self, *others: Requirements) -> Requirements:
        """A new Requirements with ``others`` added; this one is untouched."""
        out = self.copy()
        for o in others:
            out.add_all(o)
        return out

    # -- access ------------------------------------------------------------------------------
    def get(self, key: str) -> Requirement:
        """The requirement of ``key``; a missing key allows anything (Exists)."""
        r = self._reqs.get(key)
        return _exists(key) if r is None else r

    def has(self, key: str) -> bool:
        return key in self._reqs

    def keys(self) -> frozenset[str]:
        return frozenset(self._reqs)

    def values(self) -> list[Requirement]:
        """The requirements, sorted by key."""
        return [self._reqs[k] for k in sorted(self._reqs)]

    def __contains__(self, key: object) -> bool:
        return key in self._reqs

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._reqs))

    def __len__(self) -> int:
        return len(self._reqs)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Requirements):
            return NotImplemented
        return self._reqs == other._reqs

    def __hash__(self) -> int:
        return hash(frozenset(self._reqs.values()))

    def frozen(self) -> frozenset[tuple[str, Requirement]]:
        """A hashable snapshot, equal exactly when the Requirements are."""
        return frozenset(self._reqs.items())

    def has_min_values(self) -> bool:
        return any(r.min_values is not None for r in self._reqs.values())

    # -- checks ------------------------------------------------------------------------------
    def compatible(
        self, other: Requirements, *, allow_undefined: frozenset[str] = NO_UNDEFINED
    ) -> str | None:
        """Karpenter ``Compatible``: ``None`` when ``other`` can loosely be met, else the error.

        Every key of ``other`` that is not in ``allow_undefined`` must be defined here unless
        ``other`` requires NotIn/DoesNotExist for it (first failure: ``label "k" does not have
        known values`` + typo hint); then :meth:`intersects`.
        """
        mine = self._reqs
        for key in sorted(other._reqs) if len(other._reqs) > 1 else other._reqs:
            if key in mine or key in allow_undefined:
                continue
            if other._reqs[key].negative:
                continue
            return f'label "{key}" does not have known values{label_hint(mine, key, allow_undefined)}'
        return self.intersects(other)

    def incompatibility(
        self, other: Requirements, *, allow_undefined: frozenset[str] = NO_UNDEFINED
    ) -> Incompatible | None:
        """:meth:`compatible` whose error text (with its typo hint, an edit-distance search over
        the keys) is only built when printed: ``None`` when compatible, else an
        :class:`Incompatible` whose ``str()`` is the text :meth:`compatible` returns."""
        if self.is_compatible(other, allow_undefined=allow_undefined):
            return None
        return Incompatible(self.copy(), other.copy(), allow_undefined)

    def is_compatible(self, other: Requirements, *, allow_undefined: frozenset[str] = NO_UNDEFINED) -> bool:
        """``compatible(...) is None`` without building error text when it is not."""
        mine = self._reqs
        for key, r in other._reqs.items():
            if key in mine or key in allow_undefined or r.negative:
                continue
            return False
        return self.has_intersection(other)

    def intersects(self, other: Requirements) -> str | None:
        """Karpenter ``Intersects``: ``None`` when every shared key overlaps, else the errors.

        A key fails when the two requirements share no value, unless both are NotIn or
        DoesNotExist. Each failure reads ``key k, <incoming> not in <existing>`` (incoming =
        ``other``); several are joined by ``"; "`` in key order, as ``multierr`` prints them.
        """
        if self.has_intersection(other):
            return None
        errors = []
        mine, theirs = self._reqs, other._reqs
        for key in sorted(mine.keys() & theirs.keys()):
            existing, incoming = mine[key], theirs[key]
            if not existing.has_intersection(incoming) and not (incoming.negative and existing.negative):
                errors.append(f"key {key}, {incoming} not in {existing}")
        return "; ".join(errors)

    def has_intersection(self, other: Requirements) -> bool:
        """``intersects(other) is None``, fast: no error text, no sorting."""
        small, large = (
            (self._reqs, other._reqs) if len(self._reqs) <= len(other._reqs) else (other._reqs, self._reqs)
        )
        get = large.get
        for key, a in small.items():
            b = get(key)
            if b is None or a is b:
                continue
            # Requirement.has_intersection inlined for the unbounded cases (the common ones).
            if a.bounded or b.bounded:
                if a.has_intersection(b):
                    continue
            elif a.complement:
                if b.complement or not b.values <= a.values:
                    continue
            elif b.complement:
                if not a.values <= b.values:
                    continue
            elif not a.values.isdisjoint(b.values):
                continue
            if a.negative and b.negative:
                continue
            return False
        return True

    def intersection(self, other: Requirements) -> Requirements:
        """A new Requirements holding both (``copy`` then ``add``)."""
        return self.union(other)

    # -- derived -----------------------------------------------------------------------------
    def labels(self, *, include_restricted: bool = False) -> dict[str, str]:
        """Labels implied by single-valued ``In`` requirements, sorted by key.

        Restricted node labels (well-known labels the cloud provider sets, ``kubernetes.io`` and
        ``karpenter.sh`` domains, hostname) are left out unless ``include_restricted``.
        """
        out: dict[str, str] = {}
        for key in sorted(self._reqs):
            r = self._reqs[key]
            if r.complement or len(r.values) != 1:
                continue
            if not include_restricted and _is_restricted_node_label(key):
                continue
            out[key] = next(iter(r.values))
        return out

    def any_labels(self) -> dict[str, str]:
        """Karpenter ``Requirements.Labels``: ``Any()`` of every non-restricted key, deterministic."""
        out: dict[str, str] = {}
        for key in sorted(self._reqs):
            if _is_restricted_node_label(key):
                continue
            value = self._reqs[key].any()
            if value:
                out[key] = value
        return out

    def node_selector_requirements(self) -> list[dict[str, object]]:
        """Serialised as Karpenter ``NodeSelectorRequirements`` (sorted by key)."""
        return [nsr for r in self.values() for nsr in r.node_selector_requirements()]

    def __str__(self) -> str:
        """Karpenter ``Requirements.String``: sorted, restricted labels (hostname) left out."""
        return ", ".join(sorted(str(r) for k, r in self._reqs.items() if k not in wk.RESTRICTED_LABELS))

    def __repr__(self) -> str:
        return f"Requirements({str(self)!r})"


class Incompatible:
    """A failed :meth:`Requirements.compatible` check; ``str()`` builds Karpenter's text once.

    A pod refused by thousands of existing nodes gets thousands of these and reads none of them
    (Karpenter discards existing nodes' errors): the text is never built for them."""

    __slots__ = ("_allow", "_mine", "_other", "_text")

    def __init__(self, mine: Requirements, other: Requirements, allow_undefined: frozenset[str]) -> None:
        self._mine, self._other, self._allow = mine, other, allow_undefined
        self._text: str | None = None

    def __str__(self) -> str:
        if self._text is None:
            self._text = self._mine.compatible(self._other, allow_undefined=self._allow) or ""
        return self._text
