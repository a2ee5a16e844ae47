"""Kubernetes label selectors as topology groups use them (apimachinery semantics).

Compiles a ``metav1.LabelSelector`` the two ways Karpenter's topology code does:

* :func:`selector_for_matching` is ``metav1.LabelSelectorAsSelector``: a ``None`` selector selects
  **nothing**, an empty one ``{}`` selects **everything**, an invalid one selects nothing
  (Karpenter falls back to ``labels.Nothing()`` on error).
* :func:`selector_for_listing` is Karpenter's ``TopologyListOptions``: used to list the existing
  cluster pods a new group counts; a ``None`` selector lists **everything** there (upstream quirk,
  kept on purpose), an invalid one nothing.

Validation mirrors ``labels.NewRequirement`` (qualified-name keys, label-value values, value
cardinality per operator). :func:`selector_key` is the dedupe key of Karpenter's ``hashSelector``.
Boundary: pure functions over plain data; no pods, no requirements algebra.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from nodewright.crd.k8svalidation import is_qualified_name, is_valid_label_value

IN: Final = "In"
NOT_IN: Final = "NotIn"
EXISTS: Final = "Exists"
DOES_NOT_EXIST: Final = "DoesNotExist"
_OPERATORS: Final = frozenset({IN, NOT_IN, EXISTS, DOES_NOT_EXIST})


class SelectorRequirementLike(Protocol):
    """What a ``metav1.LabelSelectorRequirement`` offers (api model or :class:`Expression`)."""

    @property
    def key(self) -> str: ...
    @property
    def operator(self) -> str: ...
    @property
    def values(self) -> Sequence[str] | None: ...


@dataclass(frozen=True, slots=True)
class Expression:
    """One ``matchExpressions`` entry, normalised (values kept in input order)."""

    key: str
    operator: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RawSelector:
    """A ``metav1.LabelSelector`` as plain data (``matchLabels`` and ``matchExpressions``)."""

    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[Expression, ...] = ()

    @staticmethod
    def of(
        match_labels: Mapping[str, str] | None = None,
        match_expressions: Iterable[SelectorRequirementLike] | None = None,
    ) -> RawSelector:
        return RawSelector(
            match_labels=tuple((match_labels or {}).items()),
            match_expressions=tuple(
                Expression(e.key, e.operator, tuple(e.values or ())) for e in (match_expressions or ())
            ),
        )

    def with_expressions(self, extra: Iterable[Expression]) -> RawSelector:
        return RawSelector(self.match_labels, self.match_expressions + tuple(extra))


@dataclass(frozen=True, slots=True)
class _Term:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist (Equals is In with one value)
    values: frozenset[str]

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == IN:
            value = labels.get(self.key)
            return value is not None and value in self.values
        if op == NOT_IN:
            value = labels.get(self.key)
            return value is None or value not in self.values
        if op == EXISTS:
            return self.key in labels
        return self.key not in labels


@dataclass(frozen=True, slots=True)
class Selector:
    """A compiled selector: ``everything``, ``nothing`` or a conjunction of terms.

    Single-value ``In`` terms (all ``matchLabels``) are checked first as plain equalities.
    """

    terms: tuple[_Term, ...] = ()
    nothing: bool = False
    equals: tuple[tuple[str, str], ...] = ()
    others: tuple[_Term, ...] = ()

    @staticmethod
    def of(terms: tuple[_Term, ...]) -> Selector:
        equals = tuple(
            (t.key, next(iter(t.values))) for t in terms if t.operator == IN and len(t.values) == 1
        )
        others = tuple(t for t in terms if not (t.operator == IN and len(t.values) == 1))
        return Selector(terms=terms, equals=equals, others=others)

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        for key, value in self.equals:
            if labels.get(key) != value:
                return False
        for term in self.others:  # noqa: SIM110 - hot path
            if not term.matches(labels):
                return False
        return True

    @property
    def everything(self) -> bool:
        return not self.nothing and not self.terms


NOTHING: Final = Selector(nothing=True)
EVERYTHING: Final = Selector()


def is_valid_label_key(key: str) -> bool:
    """Kubernetes qualified-name rule for label keys (the one owner: :mod:`nodewright.crd.k8svalidation`)."""
    return not is_qualified_name(key)


def _term(key: str, operator: str, values: Sequence[str]) -> _Term | None:
    """``labels.NewRequirement``: ``None`` when invalid."""
    if operator not in _OPERATORS or not is_valid_label_key(key):
        return None
    if operator in (IN, NOT_IN):
        if not values:
            return None
    elif values:
        return None
    if any(is_valid_label_value(v) for v in values):  # a non-empty list of what is wrong
        return None
    return _Term(key, operator, frozenset(values))


def _compile(raw: RawSelector) -> Selector:
    terms: list[_Term] = []
    for key, value in raw.match_labels:
        term = _term(key, IN, (value,))
        if term is None:
            return NOTHING
        terms.append(term)
    for expression in raw.match_expressions:
        term = _term(expression.key, expression.operator, expression.values)
        if term is None:
            return NOTHING
        terms.append(term)
    # apimachinery sorts requirements by key; matching is a conjunction so order is irrelevant.
    return Selector.of(tuple(terms))


def selector_for_matching(raw: RawSelector | None) -> Selector:
    """``metav1.LabelSelectorAsSelector`` with Karpenter's error fallback to ``Nothing``."""
    if raw is None:
        return NOTHING
    if not raw.match_labels and not raw.match_expressions:
        return EVERYTHING
    return _compile(raw)


def selector_for_listing(raw: RawSelector | None) -> Selector:
    """Karpenter's ``TopologyListOptions``: ``None`` lists every pod of the namespace."""
    if raw is None:
        return EVERYTHING
    return _compile(raw)


SelectorKey = tuple[object, ...]


def selector_key(raw: RawSelector | None) -> SelectorKey:
    """Dedupe key equivalent to Karpenter's ``hashSelector``.

    Expressions form a set (duplicates, e.g. a ``matchLabelKeys`` expression injected twice, do not
    matter), values inside an expression form a set, ``matchLabels`` is a map. ``None`` and ``{}``
    differ (the Go hash of a nil selector skips the ``matchLabels`` map hash).
    """
    if raw is None:
        return ("nil",)
    return (
        "sel",
        frozenset((e.key, e.operator, frozenset(e.values)) for e in raw.match_expressions),
        frozenset(raw.match_labels),
    )
