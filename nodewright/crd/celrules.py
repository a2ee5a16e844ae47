"""``x-kubernetes-validations`` rules: compiled once with cel-expr-python, evaluated per object.

Boundary: a CEL environment shaped like the API server's for CRD rules (``self``/``oldSelf`` as
dynamic values, CEL's standard library and the strings extension), plus the Kubernetes CEL
library functions that cel-expr-python lacks, implemented here as extensions: the regex library
(``find``, ``findAll``; k8s.io/apiserver ``pkg/cel/library/regex.go``) and the quantity library
(``quantity``, ``isQuantity``, ``isInteger``, ``asInteger``, ``asApproximateFloat``, ``sign``,
``isGreaterThan``, ``isLessThan``, ``compareTo``, ``add``, ``sub``; ``pkg/cel/library/quantity.go``;
a quantity travels as its canonical string, so equal quantities compare equal). Each rule is compiled once
per CRD load (:func:`compile_rule`, cached); a rule that does not compile (an unsupported
function) is an error naming the CRD and the rule, never a silent pass. Evaluation errors (e.g.
``int('abc')``) are reported as failures of the rule, as the API server rejects the object too.
Library choice and comparison: docs/validation.md.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from cel_expr_python import cel
from cel_expr_python.ext import ext_strings

from nodewright.algebra.quantity import Quantity, is_quantity, parse_quantity
from nodewright.crd import regex

_MEMO_LIMIT: Final = 4096


class RuleCompileError(Exception):
    """A CRD rule that cannot be compiled in nodewright's CEL environment."""


def _find(s: str, pattern: str) -> str:
    """``<string>.find(<regex>)``: the first match, or ``""`` (Kubernetes regex library, RE2)."""
    return regex.find(s, pattern)


def _find_all(s: str, pattern: str) -> list[str]:
    """``<string>.findAll(<regex>)``: every non-overlapping match (Go's ``FindAllString``)."""
    return regex.find_all(s, pattern)


def _find_all_n(s: str, pattern: str, limit: int) -> list[str]:
    """``<string>.findAll(<regex>, <limit>)``: at most ``limit`` matches (all when negative)."""
    return regex.find_all(s, pattern, limit)


def _q(text: str) -> Quantity:
    if not isinstance(text, str):
        raise ValueError(f"quantity expects a string, got {type(text).__name__}")
    return parse_quantity(text)


def _quantity(text: str) -> str:
    """``quantity(<string>)``: the quantity, carried as its canonical string (Kubernetes quantity
    library, k8s.io/apiserver ``pkg/cel/library/quantity.go``); invalid input is an error."""
    return str(_q(text))


def _is_quantity(text: str) -> bool:
    return is_quantity(text) if isinstance(text, str) else False


def _as_integer(text: str) -> int:
    q = _q(text)
    if q.amount.denominator != 1 or not -(2**63) <= q.amount.numerator < 2**63:
        raise ValueError(f"cannot convert quantity {text} to an int64 without losing precision")
    return q.amount.numerator


def _compare(a: str, b: str) -> int:
    x, y = _q(a), _q(b)
    return (x > y) - (x < y)


def _sign(text: str) -> int:
    amount = _q(text).amount
    return (amount > 0) - (amount < 0)


def _add(a: str, b: str | int) -> str:
    return str(_q(a) + (_q(b) if isinstance(b, str) else parse_quantity(b)))


def _sub(a: str, b: str | int) -> str:
    return str(_q(a) - (_q(b) if isinstance(b, str) else parse_quantity(b)))


_S = cel.Type.STRING
_I = cel.Type.INT
_B = cel.Type.BOOL


def _member(name: str, ret: Any, params: list[Any], impl: Any, oid: str) -> Any:
    return cel.FunctionDecl(name, [cel.Overload(oid, ret, params, is_member=True, impl=impl)])


QUANTITY_EXTENSIONS: Final = (
    cel.FunctionDecl("quantity", [cel.Overload("quantity_string", _S, [_S], impl=_quantity)]),
    cel.FunctionDecl("isQuantity", [cel.Overload("is_quantity_string", _B, [_S], impl=_is_quantity)]),
    _member("isInteger", _B, [_S], lambda t: _q(t).amount.denominator == 1, "quantity_is_integer"),
    _member("asInteger", _I, [_S], _as_integer, "quantity_as_integer"),
    _member("asApproximateFloat", cel.Type.DOUBLE, [_S], lambda t: float(_q(t).amount), "quantity_as_float"),
    _member("sign", _I, [_S], _sign, "quantity_sign"),
    _member("isGreaterThan", _B, [_S, _S], lambda a, b: _compare(a, b) > 0, "quantity_is_greater_than"),
    _member("isLessThan", _B, [_S, _S], lambda a, b: _compare(a, b) < 0, "quantity_is_less_than"),
    _member("compareTo", _I, [_S, _S], _compare, "quantity_compare_to"),
    cel.FunctionDecl(
        "add",
        [
            cel.Overload("quantity_add", _S, [_S, _S], is_member=True, impl=_add),
            cel.Overload("quantity_add_int", _S, [_S, _I], is_member=True, impl=_add),
        ],
    ),
    cel.FunctionDecl(
        "sub",
        [
            cel.Overload("quantity_sub", _S, [_S, _S], is_member=True, impl=_sub),
            cel.Overload("quantity_sub_int", _S, [_S, _I], is_member=True, impl=_sub),
        ],
    ),
)
KUBERNETES_EXTENSIONS: Final = (
    cel.FunctionDecl(
        "find",
        [cel.Overload("string_find_string", _S, [_S, _S], is_member=True, impl=_find)],
    ),
    cel.FunctionDecl(
        "findAll",
        [
            cel.Overload(
                "string_find_all_string", cel.Type.List(_S), [_S, _S], is_member=True, impl=_find_all
            ),
            cel.Overload(
                "string_find_all_string_int",
                cel.Type.List(_S),
                [_S, _S, cel.Type.INT],
                is_member=True,
                impl=_find_all_n,
            ),
        ],
    ),
)


@functools.lru_cache(maxsize=1)
def environment() -> Any:
    """The CEL environment every CRD rule compiles in (built once per process)."""
    return cel.NewEnv(
        variables={"self": cel.Type.DYN, "oldSelf": cel.Type.DYN},
        extensions=[ext_strings.ExtStrings()],
        functions=[*KUBERNETES_EXTENSIONS, *QUANTITY_EXTENSIONS],
    )


_OLD_SELF = re.compile(r"\boldSelf\b")
_SELF_FIELD = re.compile(r"\bself\.([A-Za-z_][A-Za-z0-9_]*)(\s*\()?")
_SELF = re.compile(r"\bself\b")


def _fields_read(text: str) -> frozenset[str] | None:
    """The fields of an object ``self`` a rule reads, when it reads ``self`` only as ``self.<field>``
    (then evaluating on those fields alone gives the same result, and converts far less data);
    None when the rule uses ``self`` whole (macros, indexing, ``size(self)``...)."""
    fields: set[str] = set()
    plain = 0
    for m in _SELF_FIELD.finditer(text):
        if m.group(2):  # self.all(...), self.exists(...): a macro over the whole value
            return None
        fields.add(m.group(1))
        plain += 1
    return frozenset(fields) if plain == len(_SELF.findall(text)) else None


@dataclass(eq=False)
class Rule:
    """One compiled ``x-kubernetes-validations`` entry."""

    rule: str
    message: str
    field_path: str = ""
    reason: str = ""
    transition: bool = False
    fields: frozenset[str] | None = None
    program: Any = None
    _memo: dict[Any, tuple[bool, str]] = field(default_factory=dict)

    def evaluate(self, value: Any, old: Any = None) -> tuple[bool, str]:
        """``(passed, evaluation error or "")`` for ``self = value`` (and ``oldSelf = old`` for a
        transition rule)."""
        if self.transition:
            return self._run({"self": value, "oldSelf": old})
        memo_key: Any = None
        if self.fields is not None and type(value) is dict:
            value = {k: value[k] for k in self.fields if k in value}
        elif isinstance(value, str | int | float | bool):
            memo_key = (type(value), value)
            hit = self._memo.get(memo_key)
            if hit is not None:
                return hit
        out = self._run({"self": value})
        if memo_key is not None and len(self._memo) < _MEMO_LIMIT:
            self._memo[memo_key] = out
        return out

    def _run(self, data: dict[str, Any]) -> tuple[bool, str]:
        try:
            result = self.program.eval(data=data)
        except Exception as exc:  # the binding raises for values it cannot convert
            return False, str(exc)
        if result.type() == cel.Type.ERROR:
            return False, str(result.value())
        got = result.value()
        return (True, "") if got is True else (False, "" if got is False else f"rule returned {got!r}")


def compile_rule(entry: Mapping[str, Any], *, where: str) -> Rule:
    """Compile one ``x-kubernetes-validations`` entry; ``where`` names the CRD and schema path."""
    text = str(entry.get("rule", ""))
    message = entry.get("message")
    if entry.get("messageExpression") is not None and message is None:
        message = f"failed rule: {text}"
    if entry.get("optionalOldSelf"):
        # oldSelf is then an optional (optional.none() on create), which the CEL library here lacks:
        # refuse the CRD rather than evaluate the rule wrongly.
        raise RuleCompileError(
            f"{where}: CEL rule {text!r} sets optionalOldSelf, which nodewright does not support"
        )
    rule = Rule(
        rule=text,
        message=str(message) if message else f"failed rule: {text}",
        field_path=str(entry.get("fieldPath") or ""),
        reason=str(entry.get("reason") or ""),
        transition=bool(_OLD_SELF.search(text)),
        fields=None if _OLD_SELF.search(text) else _fields_read(text),
    )
    try:
        rule.program = environment().compile(text)
    except Exception as exc:
        raise RuleCompileError(f"{where}: CEL rule {text!r} does not compile: {exc}") from exc
    return rule
