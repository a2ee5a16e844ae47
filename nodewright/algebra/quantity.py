"""Exact Kubernetes resource quantities (``100m``, ``1.5Gi``, ``2e3``...).

Mirrors ``k8s.io/apimachinery/pkg/api/resource``: the accepted grammar, the three formats
(BinarySI, DecimalSI, DecimalExponent), nano precision (finer values round away from zero, as
``ParseQuantity`` does), ``MilliValue``/``Value`` rounding (away from zero) and the canonical
string (``Quantity.String``). Values are held as exact :class:`fractions.Fraction`; no floats.

Boundary: parsing and formatting single quantities only. Resource lists live in
:mod:`nodewright.algebra.resources`.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Final, Literal

from nodewright.errors import NodewrightError

__all__ = [
    "Format",
    "Quantity",
    "QuantityError",
    "format_milli",
    "is_quantity",
    "parse_quantity",
    "to_gib_ceil",
]

Format = Literal["BinarySI", "DecimalSI", "DecimalExponent"]

_BINARY_SUFFIXES: Final[dict[str, int]] = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIXES: Final[dict[str, int]] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_DECIMAL_BY_EXPONENT: Final[dict[int, str]] = {e: s for s, e in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_EXPONENT: Final[dict[int, str]] = {0: "", **{e // 10: s for s, e in _BINARY_SUFFIXES.items()}}
_NUMBER: Final = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)", re.DOTALL)
_EXPONENT: Final = re.compile(r"[eE]([+-]?[0-9]+)")
_LETTERS: Final = re.compile(r"[A-Za-z]+")
# Exponents beyond this are certainly typos and would let a 10-byte string allocate gigabytes.
_MAX_EXPONENT: Final = 1000
_NANO: Final = 10**9
_EXPECTED: Final = "expected a number with an optional suffix (m, Ki, Mi, Gi, k, M, G, ...)"


class QuantityError(NodewrightError, ValueError):
    """A string that is not a Kubernetes quantity; the message says why and the valid form."""

    def __init__(self, value: object, reason: str = "", *, resource: str | None = None) -> None:
        self.value = value
        self.reason = reason
        self.resource = resource
        shown = value if isinstance(value, str) else repr(value)
        prefix = f"{reason}; " if reason else ""
        where = f"{resource}: " if resource else ""
        super().__init__(f'{where}invalid quantity "{shown}": {prefix}{_EXPECTED}')


def _round_nano(v: Fraction) -> Fraction:
    """Round to nano precision away from zero, as ParseQuantity does for finer values."""
    scaled = v * _NANO
    if scaled.denominator == 1:
        return v
    n = math.ceil(scaled) if scaled > 0 else math.floor(scaled)
    return Fraction(n, _NANO)


def _away_from_zero(v: Fraction) -> int:
    if v.denominator == 1:
        return v.numerator
    return math.ceil(v) if v > 0 else math.floor(v)


@dataclass(frozen=True, eq=False, slots=True)
class Quantity:
    """An exact quantity; equality, ordering and hashing follow the numeric value only."""

    amount: Fraction
    format: Format = "DecimalSI"

    @classmethod
    def from_milli(cls, milli: int, *, binary: bool = False) -> Quantity:
        """The quantity of ``milli`` thousandths, BinarySI when ``binary``."""
        return cls(Fraction(milli, 1000), "BinarySI" if binary else "DecimalSI")

    @property
    def milli(self) -> int:
        """Kubernetes ``MilliValue``: thousandths, rounded away from zero (up, for positives)."""
        return _away_from_zero(self.amount * 1000)

    @property
    def value(self) -> int:
        """Kubernetes ``Value``: whole units, rounded away from zero (up, for positives)."""
        return _away_from_zero(self.amount)

    def is_zero(self) -> bool:
        return self.amount == 0

    def __str__(self) -> str:
        return _canonical(self.amount, self.format)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Quantity):
            return self.amount == other.amount
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.amount)

    def __lt__(self, other: Quantity) -> bool:
        return self.amount < other.amount

    def __le__(self, other: Quantity) -> bool:
        return self.amount <= other.amount

    def __gt__(self, other: Quantity) -> bool:
        return self.amount > other.amount

    def __ge__(self, other: Quantity) -> bool:
        return self.amount >= other.amount

    def __add__(self, other: Quantity) -> Quantity:
        return Quantity(self.amount + other.amount, self.format)

    def __sub__(self, other: Quantity) -> Quantity:
        return Quantity(self.amount - other.amount, self.format)

    def __neg__(self) -> Quantity:
        return Quantity(-self.amount, self.format)


@functools.lru_cache(maxsize=8192)
def _parse_str(text: str) -> Quantity:
    # Cached: a cluster state repeats the same few request strings thousands of times, and a
    # Quantity is immutable. (Errors are raised, never cached.)
    if not text:
        raise QuantityError(text, "empty string")
    m = _NUMBER.fullmatch(text)
    assert m is not None  # the pattern matches any string
    sign, whole, frac, suffix = m.group(1), m.group(2), m.group(3), m.group(4)
    if not whole and not frac:
        if _LETTERS.fullmatch(suffix) and (suffix in _DECIMAL_SUFFIXES or suffix in _BINARY_SUFFIXES):
            raise QuantityError(text, f'suffix "{suffix}" without a number')
        raise QuantityError(text)
    digits = whole + (frac or "")
    mantissa = Fraction(int(digits), 10 ** len(frac or ""))
    fmt: Format
    if suffix in _DECIMAL_SUFFIXES:
        fmt = "DecimalSI"
        scale = Fraction(10) ** _DECIMAL_SUFFIXES[suffix]
    elif suffix in _BINARY_SUFFIXES:
        fmt = "BinarySI"
        scale = Fraction(2 ** _BINARY_SUFFIXES[suffix])
    elif (e := _EXPONENT.fullmatch(suffix)) is not None:
        fmt = "DecimalExponent"
        exponent = int(e.group(1))
        if abs(exponent) > _MAX_EXPONENT:
            raise QuantityError(text, f"exponent {exponent} out of range (at most {_MAX_EXPONENT})")
        scale = Fraction(10) ** exponent
    elif _LETTERS.fullmatch(suffix):
        raise QuantityError(text, f'unknown suffix "{suffix}"')
    else:
        raise QuantityError(text)
    amount = _round_nano(mantissa * scale)
    return Quantity(-amount if sign == "-" else amount, fmt)


def parse_quantity(value: str | int | float | Quantity) -> Quantity:
    """Parse a quantity as Kubernetes does; YAML ints and floats are accepted too.

    Raises :class:`QuantityError` (a ``ValueError``) naming the bad input and the valid form.
    """
    if isinstance(value, Quantity):
        return value
    if isinstance(value, bool):
        raise QuantityError(value, "a boolean is not a quantity")
    if isinstance(value, int):
        return Quantity(Fraction(value), "DecimalSI")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(value, "not a finite number")
        return _parse_str(repr(value))
    if isinstance(value, str):
        return _parse_str(value)
    raise QuantityError(value, f"a {type(value).__name__} is not a quantity")


def is_quantity(value: object) -> bool:
    """True when :func:`parse_quantity` accepts ``value``."""
    try:
        parse_quantity(value)  # type: ignore[arg-type]
    except QuantityError:
        return False
    return True


def _decimal_parts(amount: Fraction) -> tuple[int, int]:
    """(mantissa, exponent) with exponent a multiple of 3, mantissa stripped of factors of 10.

    ``amount`` has nano precision, so the exponent is at least -9.
    """
    mantissa = amount.numerator * (_NANO // amount.denominator)
    exponent = -9
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    drop = exponent % 3
    return mantissa * 10**drop, exponent - drop


def _canonical(amount: Fraction, fmt: Format) -> str:
    if amount == 0:
        return "0"
    amount = _round_nano(amount)
    if fmt == "BinarySI" and amount.denominator == 1 and abs(amount) >= 1024:
        number = amount.numerator
        exponent = 0
        while exponent < 6 and number % 1024 == 0:
            number //= 1024
            exponent += 1
        return f"{number}{_BINARY_BY_EXPONENT[exponent]}"
    mantissa, exponent = _decimal_parts(amount)
    if fmt == "DecimalExponent":
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    if exponent > 18:
        mantissa *= 10 ** (exponent - 18)
        exponent = 18
    return f"{mantissa}{_DECIMAL_BY_EXPONENT[exponent]}"


def format_milli(milli: int, *, binary: bool) -> str:
    """The canonical Kubernetes string of ``milli`` thousandths.

    ``binary`` picks BinarySI (``10Mi``) when the value is a whole number of at least 1Ki, as
    Kubernetes prints memory; otherwise the largest exact decimal suffix (``1100m``, ``2k``).
    """
    return _canonical(Fraction(milli, 1000), "BinarySI" if binary else "DecimalSI")


_GIB: Final = 2**30


def to_gib_ceil(value: str | int | float | Quantity) -> int:
    """Whole GiB, rounded up: ``ceil(bytes / 2^30)`` (``200G`` -> 187, ``1T`` -> 932, ``20Gi`` -> 20).

    The AWS provider's ``volumeSize`` conversion for launch-template block devices
    (aws/karpenter-provider-aws v1.14.1 ``pkg/providers/launchtemplate/launchtemplate.go``
    ``volumeSize``), computed exactly rather than through a float64. Raises :class:`QuantityError`.
    """
    amount = parse_quantity(value).amount
    return math.ceil(amount / _GIB)
