"""One requirement of the requirements algebra: Karpenter's ``pkg/scheduling/requirement.go``.

A :class:`Requirement` is the set of label values one key may take: a (possibly complemented)
value set plus optional inclusive integer bounds (``Gt N`` is stored as ``gte N+1``, ``Lt N`` as
``lte N-1``) and an optional ``minValues``. The set of them per key is
:class:`nodewright.algebra.requirements.Requirements`.

Boundary: pure set algebra over one label key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Final, Protocol

from nodewright import labels as wk
from nodewright.errors import NodewrightError

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
