"""A Python port of mitchellh/hashstructure v2.0.2 (FormatV2), the hash Karpenter stamps on objects.

Boundary: pure algorithm over a small model of Go types (:class:`GoType` subclasses) and Python
values shaped like the Go values. It knows nothing about NodePools; :mod:`nodewright.drift.types`
describes the Karpenter structs with these types.

Value conventions (``nil`` is ``None`` wherever Go allows nil):

* string/int/uint/float/bool: ``str``/``int``/``float``/``bool``;
* pointer: ``None`` (nil) or the pointee's value; slice: ``None`` (nil) or a ``list``/``tuple``;
  map: ``None`` (nil) or a ``dict``; interface: ``None`` (nil) or ``(GoType, value)``;
* struct: a mapping from Go field name to value, a missing name meaning the field's zero value;
* ``time.Time``: :class:`GoTimeValue` (``None`` = the zero time).

The algorithm (hashstructure.go at v2.0.2): FNV-1 64 (multiply then XOR) reset for every leaf,
integers written little-endian at their native width (``int``/``uint`` widened to 64 bits, bool as
int8), ``ordered(a, b) = FNV1(LE64(a) || LE64(b))``, ``unordered(a, b) = a ^ b``,
``finish(a) = FNV1(LE64(a))``; structs start from FNV1(type name) and apply
``finish(h ^ ordered(FNV1(field name), visit(field)))`` after every included field; maps XOR their
``ordered(key, value)`` pairs then finish; slices are ordered unless a set (``hash:"set"`` tag, which
also finishes, or SlicesAsSets, which does not); a nil pointer is the int 0 unless ZeroNil, then the
pointee type's zero value.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

FNV_OFFSET: Final = 14695981039346656037
FNV_PRIME: Final = 1099511628211
_MASK: Final = (1 << 64) - 1


def fnv1_64(data: bytes) -> int:
    """FNV-1 64-bit (Go's ``hash/fnv.New64``): multiply by the prime, then XOR the byte."""
    h = FNV_OFFSET
    for b in data:
        h = (h * FNV_PRIME) & _MASK
        h ^= b
    return h


def _go_div(a: int, b: int) -> int:
    """Go integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _le64(v: int) -> bytes:
    return (v & _MASK).to_bytes(8, "little")


def hash_update_ordered(a: int, b: int) -> int:
    return fnv1_64(_le64(a) + _le64(b))


def hash_update_unordered(a: int, b: int) -> int:
    return a ^ b


def hash_finish_unordered(a: int) -> int:
    return fnv1_64(_le64(a))


# -- Go type model -------------------------------------------------------------------------------


class GoType:
    """Base of the Go type descriptors."""

    def zero(self) -> Any:
        """The Python value standing for this type's zero value."""
        raise NotImplementedError

    def is_zero(self, value: Any) -> bool:
        """``reflect.Value.IsZero`` for ``value`` of this type."""
        raise NotImplementedError


@dataclass(frozen=True)
class GoString(GoType):
    name: str = "string"

    def zero(self) -> Any:
        return ""

    def is_zero(self, value: Any) -> bool:
        return bool(value == "")


@dataclass(frozen=True)
class GoInt(GoType):
    """A Go integer kind: ``bits`` 8/16/32/64, ``signed``; Go's ``int``/``uint`` are 64 bits here."""

    bits: int = 64
    signed: bool = True

    def zero(self) -> Any:
        return 0

    def is_zero(self, value: Any) -> bool:
        return int(value) == 0

    def encode(self, value: int) -> bytes:
        size = self.bits // 8
        lo = -(1 << (self.bits - 1)) if self.signed else 0
        hi = (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1
        if not lo <= value <= hi:
            raise OverflowError(f"{value} does not fit a Go {'int' if self.signed else 'uint'}{self.bits}")
        return int(value).to_bytes(size, "little", signed=self.signed)


@dataclass(frozen=True)
class GoFloat(GoType):
    bits: int = 64

    def zero(self) -> Any:
        return 0.0

    def is_zero(self, value: Any) -> bool:
        # IsZero compares the bit pattern: -0.0 is not zero.
        return bool(struct.pack("<d", float(value)) == b"\x00" * 8)

    def encode(self, value: float) -> bytes:
        return struct.pack("<f" if self.bits == 32 else "<d", float(value))


@dataclass(frozen=True)
class GoBool(GoType):
    def zero(self) -> Any:
        return False

    def is_zero(self, value: Any) -> bool:
        return not value


@dataclass(frozen=True)
class GoTimeValue:
    """A Go ``time.Time``: seconds since the Unix epoch, nanoseconds, and its location.

    ``offset_seconds`` is ``None`` for the UTC location, else the zone offset east of UTC (a
    ``metav1.Time`` decoded from JSON is converted to Local; Karpenter's image has Local = UTC, so
    such values carry offset 0, not ``None``).
    """

    unix_seconds: int
    nanos: int = 0
    offset_seconds: int | None = None

    _UNIX_TO_INTERNAL: Final = 62135596800  # seconds from 0001-01-01 to 1970-01-01

    def marshal_binary(self) -> bytes:
        """``time.Time.MarshalBinary`` (version 1, or 2 when the offset has seconds)."""
        version = 1
        offset_sec = 0
        if self.offset_seconds is None:
            offset_min = -1
        else:
            offset = self.offset_seconds
            rem = offset - _go_div(offset, 60) * 60  # Go's % truncates toward zero
            if rem != 0:
                version = 2
                offset_sec = rem
            offset_min = _go_div(offset, 60)
            if offset_min < -32768 or offset_min == -1 or offset_min > 32767:
                raise ValueError("Time.MarshalBinary: unexpected zone offset")
        sec = self.unix_seconds + self._UNIX_TO_INTERNAL
        out = bytes([version]) + sec.to_bytes(8, "big", signed=True)
        out += self.nanos.to_bytes(4, "big", signed=True) + offset_min.to_bytes(2, "big", signed=True)
        if version == 2:
            out += offset_sec.to_bytes(1, "big", signed=True)
        return out


@dataclass(frozen=True)
class GoTime(GoType):
    """The exact type ``time.Time`` (hashed through MarshalBinary)."""

    def zero(self) -> Any:
        return None

    def is_zero(self, value: Any) -> bool:
        return value is None


@dataclass(frozen=True)
class GoPtr(GoType):
    elem: GoType

    def zero(self) -> Any:
        return None

    def is_zero(self, value: Any) -> bool:
        return value is None


@dataclass(frozen=True)
class GoInterface(GoType):
    def zero(self) -> Any:
        return None

    def is_zero(self, value: Any) -> bool:
        return value is None


@dataclass(frozen=True)
class GoSlice(GoType):
    elem: GoType

    def zero(self) -> Any:
        return None

    def is_zero(self, value: Any) -> bool:
        return value is None  # an empty non-nil slice is not zero


@dataclass(frozen=True)
class GoArray(GoType):
    elem: GoType
    length: int

    def zero(self) -> Any:
        return [self.elem.zero()] * self.length

    def is_zero(self, value: Any) -> bool:
        return all(self.elem.is_zero(v) for v in value)


@dataclass(frozen=True)
class GoMap(GoType):
    key: GoType
    value: GoType

    def zero(self) -> Any:
        return None

    def is_zero(self, value: Any) -> bool:
        return value is None  # an empty non-nil map is not zero


@dataclass(frozen=True)
class GoField:
    """One struct field in declaration order. ``tag`` is the ``hash:"..."`` tag value."""

    name: str
    type: GoType
    tag: str = ""
    exported: bool = True
    stringer: Any = None  # callable(value) -> str for ``hash:"string"`` fields


@dataclass(frozen=True)
class GoStruct(GoType):
    """A named (or anonymous, ``name=""``) struct type."""

    name: str
    fields: tuple[GoField, ...] = field(default_factory=tuple)

    def zero(self) -> Any:
        return {}

    def get(self, value: Mapping[str, Any], f: GoField) -> Any:
        return value.get(f.name, f.type.zero()) if value is not None else f.type.zero()

    def is_zero(self, value: Any) -> bool:
        if value is None:
            return True
        return all(f.type.is_zero(self.get(value, f)) for f in self.fields)


GO_INT: Final = GoInt(64, True)


@dataclass(frozen=True)
class HashOptions:
    """hashstructure.HashOptions (the subset with behaviour; Hasher is always FNV-1 64)."""

    zero_nil: bool = False
    ignore_zero_value: bool = False
    slices_as_sets: bool = False
    use_stringer: bool = False


KARPENTER_OPTIONS: Final = HashOptions(zero_nil=True, ignore_zero_value=True, slices_as_sets=True)


class HashError(ValueError):
    """A value cannot be hashed (hashstructure's "unknown kind to hash" and friends)."""


def hash_value(value: Any, typ: GoType, opts: HashOptions | None = None) -> int:
    """``hashstructure.Hash(v, FormatV2, opts)`` for ``value`` of Go type ``typ``."""
    return _Walker(opts or HashOptions()).visit(typ, value, set_flag=False)


class _Walker:
    def __init__(self, opts: HashOptions) -> None:
        self.opts = opts

    def visit(self, typ: GoType, value: Any, *, set_flag: bool) -> int:
        t: GoType = GO_INT
        valid = True
        while True:
            if isinstance(typ, GoInterface):
                if value is None:
                    valid = False
                    break
                typ, value = value
                continue
            if isinstance(typ, GoPtr):
                if self.opts.zero_nil:
                    t = typ.elem
                if value is None:
                    valid = False
                    break
                typ = typ.elem
                continue
            break
        if not valid:
            typ, value = t, t.zero()

        if isinstance(typ, GoBool):
            typ, value = GoInt(8, True), 1 if value else 0
        if isinstance(typ, GoInt):
            return fnv1_64(typ.encode(int(value)))
        if isinstance(typ, GoFloat):
            return fnv1_64(typ.encode(float(value)))
        if isinstance(typ, GoTime):
            if value is None:
                value = GoTimeValue(unix_seconds=-GoTimeValue._UNIX_TO_INTERNAL)
            return fnv1_64(value.marshal_binary())
        if isinstance(typ, GoString):
            if not isinstance(value, str):
                raise HashError(f"expected a string, got {type(value).__name__}")
            return fnv1_64(value.encode("utf-8"))
        if isinstance(typ, GoArray):
            h = 0
            for e in value:
                h = hash_update_ordered(h, self.visit(typ.elem, e, set_flag=False))
            return h
        if isinstance(typ, GoMap):
            h = 0
            for k, v in (value or {}).items():
                kh = self.visit(typ.key, k, set_flag=False)
                vh = self.visit(typ.value, v, set_flag=False)
                h = hash_update_unordered(h, hash_update_ordered(kh, vh))
            return hash_finish_unordered(h)
        if isinstance(typ, GoStruct):
            return self._struct(typ, value)
        if isinstance(typ, GoSlice):
            return self._slice(typ, value, set_flag=set_flag)
        raise HashError(f"unknown kind to hash: {type(typ).__name__}")

    def _struct(self, typ: GoStruct, value: Any) -> int:
        h = fnv1_64(typ.name.encode("utf-8"))
        for f in typ.fields:
            if not f.exported or f.tag in ("ignore", "-"):
                continue
            inner = typ.get(value, f)
            if self.opts.ignore_zero_value and f.type.is_zero(inner):
                continue
            ftype = f.type
            if f.tag == "string" or (self.opts.use_stringer and f.stringer is not None):
                if f.stringer is None:
                    raise HashError(f"field {f.name} has the string tag but no String() method")
                inner, ftype = f.stringer(inner), GoString()
            kh = fnv1_64(f.name.encode("utf-8"))
            vh = self.visit(ftype, inner, set_flag=f.tag == "set")
            h = hash_finish_unordered(h ^ hash_update_ordered(kh, vh))
        return h

    def _slice(self, typ: GoSlice, value: Sequence[Any] | None, *, set_flag: bool) -> int:
        h = 0
        for e in value or ():
            current = self.visit(typ.elem, e, set_flag=False)
            if set_flag or self.opts.slices_as_sets:
                h = hash_update_unordered(h, current)
            else:
                h = hash_update_ordered(h, current)
        if set_flag:
            h = hash_finish_unordered(h)
        return h
