"""The requirements algebra: Karpenter's ``pkg/scheduling/requirement(s).go`` in Python.

A :class:`Requirement` is the set of label values one key may take: a (possibly complemented)
value set plus optional inclusive integer bounds (``Gt N`` is stored as ``gte N+1``, ``Lt N`` as
``lte N-1``) and an optional ``minValues``. :class:`Requirements` maps keys (normalised through
:func:`nodewright.labels.normalize`) to requirements; adding a key twice intersects.

This is the scheduler's hottest path. Requirement objects are immutable (``__slots__``,
frozensets, cached hash) so they are shared freely; :class:`Requirements` copies are O(1) and
copy-on-write. Error strings are Karpenter's, byte for byte, with deterministic ordering where
Go would iterate a map.

Boundary: pure set algebra; no pods, nodes or instance types beyond building requirements from a
pod's node selector and affinity (:func:`pod_requirements`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Final, Protocol

from nodewright import labels as wk
from nodewright.errors import NodewrightError

__all__ = [
    "ALLOW_UNDEFINED_WELL_KNOWN",
    "MAX_INT",
    "NO_UNDEFINED",
    "NodeSelectorRequirementLike",
    "Requirement",
    "RequirementError",
    "Requirements",
]

MAX_INT: Final = 2**63 - 1  # Go's math.MaxInt on 64-bit platforms
_MAX_LEN: Final = MAX_INT  # Requirement.Len() of a complement with no exclusions
IN: Final = "In"
NOT_IN: Final = "NotIn"
EXISTS: Final = "Exists"
DOES_NOT_EXIST: Final = "DoesNotExist"
GT: Final = "Gt"
LT: Final = "Lt"
GTE: Final = "Gte"
LTE: Final = "Lte"
_NUMERIC_OPERATORS: Final = frozenset({GT, LT, GTE, LTE})
_EMPTY: Final[frozenset[str]] = frozenset()
_INT: Final = re.compile(r"[+-]?[0-9]+")

ALLOW_UNDEFINED_WELL_KNOWN: Final[frozenset[str]] = wk.WELL_KNOWN_LABELS
NO_UNDEFINED: Final[frozenset[str]] = frozenset()


class RequirementError(NodewrightError, ValueError):
    """A node selector requirement that cannot be built (unknown operator, non-integer bound)."""


class NodeSelectorRequirementLike(Protocol):
    """``NodeSelectorRequirement`` or Karpenter's ``...WithMinValues`` (api models satisfy it)."""

    @property
    def key(self) -> str: ...
    @property
    def operator(self) -> str: ...
    @property
    def values(self) -> Sequence[str]: ...


_INTS: dict[str, int | None] = {}
_INTS_MAX: Final = 1 << 16


def _atoi(value: str) -> int | None:
    """Go's ``strconv.Atoi`` on 64-bit: optional sign, decimal digits, int64 range, else None.

    Memoised in a plain dict (label values repeat endlessly; an ``lru_cache`` costs more per hit).
    """
    try:
        return _INTS[value]
    except KeyError:
        pass
    n: int | None = None
    if _INT.fullmatch(value) is not None:
        n = int(value)
        if not -(2**63) <= n <= MAX_INT:
            n = None
    if len(_INTS) >= _INTS_MAX:
        _INTS.clear()
    _INTS[value] = n
    return n


def _within(value: str, gte: int | None, lte: int | None) -> bool:
    if gte is None and lte is None:
        return True
    n = _atoi(value)
    if n is None:
        return False
    return not ((gte is not None and n < gte) or (lte is not None and n > lte))


class Requirement:
    """The values one label key may take. Build with :meth:`new`.

    Immutable by contract: attributes are ``Final`` for mypy, with no runtime guard (a custom
    ``__setattr__`` makes construction ten times slower on the scheduler's hottest path), so
    instances are shared between Requirements without copying. Equality and hash are by value.
    """

    __slots__ = (
        "_hash",
        "bounded",
        "complement",
        "gte",
        "key",
        "lte",
        "min_values",
        "negative",
        "operator",
        "values",
    )

    def __init__(
        self,
        key: str,
        *,
        complement: bool,
        values: frozenset[str] = _EMPTY,
        gte: int | None = None,
        lte: int | None = None,
        min_values: int | None = None,
    ) -> None:
        """Low-level constructor over an already normalised key; most callers want :meth:`new`."""
        self.key: Final = key
        self.complement: Final = complement
        self.values: Final = values
        self.gte: Final = gte
        self.lte: Final = lte
        self.min_values: Final = min_values
        self.bounded: Final = gte is not None or lte is not None
        # Karpenter's Operator(): Gt/Lt/Gte/Lte read back as Exists (or NotIn) with bounds.
        operator = (NOT_IN if values else EXISTS) if complement else (IN if values else DOES_NOT_EXIST)
        self.operator: Final = operator
        # NotIn / DoesNotExist: the operators Intersects forgives when both sides have them.
        self.negative: Final = operator in (NOT_IN, DOES_NOT_EXIST)
        self._hash: int | None = None

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def new(
        cls, key: str, operator: str, values: Iterable[str] = (), *, min_values: int | None = None
    ) -> Requirement:
        """Karpenter ``NewRequirementWithFlexibility``: the key is normalised (beta labels).

        ``Gt N`` becomes ``gte N+1`` (``Gt MaxInt`` matches nothing: DoesNotExist), ``Lt N``
        becomes ``lte N-1``. Raises :class:`RequirementError` on an unknown operator or a
        non-integer bound.
        """
        key = wk.NORMALIZED_LABELS.get(key, key)
        if operator == IN:
            return cls(key, complement=False, values=frozenset(values), min_values=min_values)
        if operator == NOT_IN:
            return cls(key, complement=True, values=frozenset(values), min_values=min_values)
        if operator == EXISTS:
            return cls(key, complement=True, min_values=min_values)
        if operator == DOES_NOT_EXIST:
            return cls(key, complement=False, min_values=min_values)
        if operator in _NUMERIC_OPERATORS:
            vals = list(values)
            bound = _atoi(vals[0]) if len(vals) == 1 else None
            if bound is None:
                raise RequirementError(
                    f"requirement {key!r}: operator {operator} needs exactly one integer value, got {vals}"
                )
            if operator == GT:
                if bound == MAX_INT:
                    return cls(key, complement=False)
                return cls(key, complement=True, gte=bound + 1, min_values=min_values)
            if operator == LT:
                return cls(key, complement=True, lte=bound - 1, min_values=min_values)
            if operator == GTE:
                return cls(key, complement=True, gte=bound, min_values=min_values)
            return cls(key, complement=True, lte=bound, min_values=min_values)
        raise RequirementError(
            f"requirement {key!r}: unknown operator {operator!r}; expected one of {', '.join(wk.OPERATORS)}"
        )

    @classmethod
    def from_node_selector_requirement(cls, nsr: NodeSelectorRequirementLike) -> Requirement:
        return cls.new(nsr.key, nsr.operator, nsr.values, min_values=getattr(nsr, "min_values", None))

    # -- algebra -----------------------------------------------------------------------------
    def intersection(self, other: Requirement) -> Requirement:
        """Karpenter ``Intersection``: the values both allow (keeps this requirement's key).

        Returns ``self`` or ``other`` unchanged when the result equals one of them, so repeated
        narrowing allocates nothing.
        """
        if other is self:
            return self
        sc, oc = self.complement, other.complement
        complement = sc and oc
        min_values, omv = self.min_values, other.min_values
        if omv is not None and (min_values is None or omv > min_values):
            min_values = omv
        if not (self.bounded or other.bounded):
            if sc:
                values = self.values | other.values if oc else other.values - self.values
            else:
                values = self.values - other.values if oc else self.values & other.values
            if complement == sc and min_values == self.min_values and values == self.values:
                return self
            if complement == oc and min_values == omv and values == other.values:
                return other
            return Requirement(self.key, complement=complement, values=values, min_values=min_values)
        gte, lte, ogte, olte = self.gte, self.lte, other.gte, other.lte
        if ogte is not None and (gte is None or ogte > gte):
            gte = ogte
        if olte is not None and (lte is None or olte < lte):
            lte = olte
        if gte is not None and lte is not None and gte > lte:
            return Requirement(self.key, complement=False, min_values=min_values)
        if sc:
            values = self.values | other.values if oc else other.values - self.values
        else:
            values = self.values - other.values if oc else self.values & other.values
        if values:
            values = frozenset([v for v in values if _within(v, gte, lte)])
        if not complement:
            gte = lte = None
        for r in (self, other):
            if (
                complement == r.complement
                and gte == r.gte
                and lte == r.lte
                and min_values == r.min_values
                and values == r.values
            ):
                return r
        return Requirement(
            self.key, complement=complement, values=values, gte=gte, lte=lte, min_values=min_values
        )

    def has_intersection(self, other: Requirement) -> bool:
        """Karpenter ``HasIntersection``: :meth:`intersection` is non-empty, without building it."""
        if not (self.bounded or other.bounded):
            if self.complement:
                return other.complement or not other.values <= self.values
            if other.complement:
                return not self.values <= other.values
            return not self.values.isdisjoint(other.values)
        gte, lte, ogte, olte = self.gte, self.lte, other.gte, other.lte
        if ogte is not None and (gte is None or ogte > gte):
            gte = ogte
        if olte is not None and (lte is None or olte < lte):
            lte = olte
        if gte is not None and lte is not None and gte > lte:
            return False
        if self.complement:
            if other.complement:
                return True
            excluded, candidates = self.values, other.values
        elif other.complement:
            excluded, candidates = other.values, self.values
        else:  # two concrete sets never carry bounds; kept for completeness
            excluded, candidates = _EMPTY, self.values & other.values
        for v in candidates:
            if v in excluded:
                continue
            n = _atoi(v)
            if n is not None and (gte is None or n >= gte) and (lte is None or n <= lte):
                return True
        return False

    def has(self, value: str) -> bool:
        """True when the requirement allows ``value``."""
        if self.complement:
            return value not in self.values and _within(value, self.gte, self.lte)
        return value in self.values and _within(value, self.gte, self.lte)

    def __len__(self) -> int:
        """Karpenter ``Len``: the number of values, ``MaxInt - excluded`` for complements."""
        return _MAX_LEN - len(self.values) if self.complement else len(self.values)

    def is_empty(self) -> bool:
        """True when no value is allowed (``Len() == 0``)."""
        return not self.complement and not self.values

    def any(self) -> str:
        """Karpenter ``Any``, deterministic: an allowed value, or ``""`` for DoesNotExist.

        In: the smallest value. NotIn/Exists: the smallest non-excluded integer within the bounds
        (Karpenter picks a random one).
        """
        if not self.complement:
            return min(self.values) if self.values else ""
        n = self.gte if self.gte is not None else 0
        while str(n) in self.values:
            n += 1
        return str(n)

    def sorted_values(self) -> list[str]:
        return sorted(self.values)

    def node_selector_requirements(self) -> list[dict[str, object]]:
        """The NodeSelectorRequirement(s) with minValues this requirement serialises to.

        Both bounds give two entries (Gte and Lte), as ``BoundedNodeSelectorRequirements``.
        """
        extra: dict[str, object] = {} if self.min_values is None else {"minValues": self.min_values}
        if self.gte is not None and self.lte is not None:
            return [
                {"key": self.key, "operator": GTE, "values": [str(self.gte)], **extra},
                {"key": self.key, "operator": LTE, "values": [str(self.lte)], **extra},
            ]
        if self.gte is not None:
            return [{"key": self.key, "operator": GTE, "values": [str(self.gte)], **extra}]
        if self.lte is not None:
            return [{"key": self.key, "operator": LTE, "values": [str(self.lte)], **extra}]
        if self.operator in (IN, NOT_IN):
            return [{"key": self.key, "operator": self.operator, "values": self.sorted_values(), **extra}]
        return [{"key": self.key, "operator": self.operator, **extra}]

    # -- value semantics ---------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Requirement):
            return NotImplemented
        return (
            self.key == other.key
            and self.complement == other.complement
            and self.values == other.values
            and self.gte == other.gte
            and self.lte == other.lte
            and self.min_values == other.min_values
        )

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = self._hash = hash(
                (self.key, self.complement, self.values, self.gte, self.lte, self.min_values)
            )
        return h

    def __str__(self) -> str:
        """Karpenter ``Requirement.String``: ``zone In [a b]``, ``k Exists >=3 <=9 minValues 2``."""
        if self.operator in (EXISTS, DOES_NOT_EXIST):
            s = f"{self.key} {self.operator}"
        else:
            values = self.sorted_values()
            if len(values) > 5:
                values = [*values[:5], f"and {len(values) - 5} others"]
            s = f"{self.key} {self.operator} [{' '.join(values)}]"
        if self.gte is not None:
            s += f" >={self.gte}"
        if self.lte is not None:
            s += f" <={self.lte}"
        if self.min_values is not None:
            s += f" minValues {self.min_values}"
        return s

    def __repr__(self) -> str:
        return f"Requirement({str(self)!r})"


def _exists(key: str) -> Requirement:
    return Requirement(key, complement=True)


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
        for k, v in labels.items():
            key = normalized.get(k, k)
            r = Requirement(key, complement=False, values=frozenset((v,)))
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
