"""What ``kubectl apply --validate=strict`` does to a custom resource, from its shipped CRD.

Boundary: one raw object (a mapping read from YAML/JSON) in, the object the API server would
store (pruned, defaulted) and every problem it would report out. Order as in the
apiextensions-apiserver (k8s.io/apiextensions-apiserver ``pkg/apiserver/schema/pruning``,
``.../schema/defaulting``, ``pkg/registry/customresource/validator.go``): unknown fields are
reported (strict field validation) and pruned; ``null`` in a non-nullable field is replaced by its
default or dropped; defaults are applied top-down (a nested default only where its parent object
exists, recursing into inserted defaults); then the OpenAPI checks (exact types, no coercion,
formats, enums, patterns, bounds incl. int64, lengths, ``x-kubernetes-list-type`` set/map
uniqueness) and every ``x-kubernetes-validations`` rule. Like the API server, a rule is not run on
a value that has a type/enum/required/length error inside it (it is reported, and the rest is
still checked, so every problem comes out in one pass). ``metadata`` is checked as ObjectMeta
(:mod:`nodewright.crd.objectmeta`); ``status`` is pruned (an unknown field is a strict error) but
not validated (a status subresource drops it on create and keeps the stored one on update;
cluster state files carry it). Patterns run on RE2 (:mod:`nodewright.crd.regex`). An update
(:func:`run` with ``old``, :mod:`nodewright.crd.update`) adds transition rules and ratcheting.
The walk never coerces: ``weight: "10"`` is an error, not 10.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from nodewright.crd.celrules import Rule
from nodewright.crd.objectmeta import check_metadata, check_metadata_update
from nodewright.crd.ratchet import ABSENT, map_key, map_list, same
from nodewright.crd.releases import Release
from nodewright.crd.schema import MISSING, Schema, crd
from nodewright.crd.subresources import check_scale, prune
from nodewright.crd.values import kind_of, plain, show
from nodewright.errors import Problem, typo_hint

INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1
_RFC3339: Final = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})"
)
# What a CRD pattern means, for the fix part of an error line (patterns as the CRDs spell them).
_PATTERN_HELP: Final[dict[str, str]] = {
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$": "use a Kubernetes quantity such as 500m, 2 or 4Gi",
    r"^(([0-9]+(s|m|h))+|Never)$": "use a duration such as 720h, 30m, 1h30m or Never",
    r"^([0-9]+(s|m|h))+$": "use a duration such as 720h, 30m or 1h30m",
    r"^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$": "use hours and/or minutes such as 10m, 1h or 1h30m",
    r"^((100|[0-9]{1,2})%|[0-9]+)$": "use a node count such as 5 or a percentage such as 10%",
    r"^[^/]*$": "use the API group alone, without a version (e.g. karpenter.k8s.aws)",
    r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$": "a label value has at most 63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric",
}


@dataclass
class Admitted:
    """The object as stored (pruned and defaulted) and every problem found."""

    body: dict[str, Any]
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _entry(path: str, key: str) -> str:
    return f"{path}[{key}]"


def _index(path: str, i: int) -> str:
    return f"{path}[{i}]"


class _Walk:
    """One admission pass over one object (problems collected, never raised)."""

    def __init__(self, file: str, base: str, *, update: bool = False) -> None:
        self.file = file
        self.base = base
        self.update = update
        self.problems: list[Problem] = []
        self.list_problems: list[Problem] = []  # list-set/map uniqueness (ratcheted all-or-nothing)
        self.sticky: set[int] = set()  # ids of transition-rule problems (never ratcheted)
        self.skipped = False

    def at(self, path: str) -> str:
        if not self.base:
            return path
        if not path:
            return self.base
        return f"{self.base}{path}" if path.startswith("[") else f"{self.base}.{path}"

    def add(self, path: str, message: str, *, sticky: bool = False) -> None:
        problem = Problem(file=self.file, path=self.at(path), message=message)
        self.problems.append(problem)
        if sticky:
            self.sticky.add(id(problem))

    def add_list(self, path: str, message: str) -> None:
        self.list_problems.append(Problem(file=self.file, path=self.at(path), message=message))

    # -- pruning and defaulting (in place), then validation; returns True on a blocking error --
    def walk(self, value: Any, s: Schema, path: str, old: Any = ABSENT) -> tuple[Any, bool]:
        """Admit ``value`` at ``path``; ``old`` is the correlated value of the object being updated
        (:data:`ABSENT` on create). On update, problems inside a node equal to its old value are
        dropped (CRDValidationRatcheting), except failed transition rules."""
        start = len(self.problems)
        value, blocking = self._walk(value, s, path, old)
        if old is not ABSENT and len(self.problems) > start and same(value, old, s):
            kept = [p for p in self.problems[start:] if id(p) in self.sticky]
            del self.problems[start:]
            self.problems.extend(kept)
            blocking = blocking and bool(kept)
        return value, blocking

    def _walk(self, value: Any, s: Schema, path: str, old: Any) -> tuple[Any, bool]:
        blocking = False
        if value is None:
            # A null the pruning step kept (list items, map values, nullable fields).
            if s.nullable:
                return value, False
            self.add(path, f"must be of type {self._want(s)}, got null; remove the entry or give a value")
            return value, True
        if not self._type_ok(value, s, path):
            return value, True
        if type(value) is float and (s.type == "integer" or s.int_or_string):
            value = int(value)  # 2.0 is the integer 2 (as the API server types it for CEL and storage)
        if isinstance(value, dict):
            blocking = self._object(value, s, path, old)
        elif isinstance(value, list):
            blocking = self._array(value, s, path, old)
        else:
            blocking = self._scalar(value, s, path)
        if s.enum is not None and value not in s.enum:
            shown = ", ".join(str(e) for e in s.enum)
            hint = typo_hint(value, [str(e) for e in s.enum]) if isinstance(value, str) else ""
            self.add(path, f"unsupported value {show(value)}; use one of {shown}{hint}")
            blocking = True
        if s.rules:
            self._rules(value, s, path, checked=not blocking, old=old)
        return value, blocking

    def _want(self, s: Schema) -> str:
        if s.int_or_string:
            return "integer or string"
        return s.type or "any"

    def _type_ok(self, value: Any, s: Schema, path: str) -> bool:
        t = s.type
        got = kind_of(value)
        if s.int_or_string:
            ok = got in ("integer", "string") or (got == "number" and float(value).is_integer())
        elif t is None:
            return True
        elif t == "integer":
            ok = got == "integer" or (got == "number" and math.isfinite(value) and float(value).is_integer())
            if ok and not INT64_MIN <= int(value) <= INT64_MAX:
                self.add(
                    path,
                    f"{value} is outside the int64 range; use a value between {INT64_MIN} and {INT64_MAX}",
                )
                return False
        elif t == "number":
            ok = got in ("integer", "number")
        else:
            ok = got == t
        if ok:
            return True
        fix = ""
        if got == "string" and t in ("integer", "number", "boolean"):
            fix = "; remove the quotes"
        elif t == "string" and got in ("integer", "number", "boolean"):
            fix = "; quote the value"
        self.add(path, f"must be of type {self._want(s)}, got {got} {show(value)}{fix}")
        return False

    def _object(self, obj: dict[str, Any], s: Schema, path: str, old: Any = ABSENT) -> bool:
        blocking = False
        props = s.properties
        if props or s.additional is not None or not s.preserve_unknown:
            for key in list(obj):
                sub = props.get(key)
                if sub is None and s.additional is None:
                    if s.preserve_unknown:
                        continue
                    hint = typo_hint(key, list(props))
                    self.add(
                        _child(path, key),
                        f'unknown field "{key}"{hint}; the CRD has no such field (strict field validation rejects it)',
                    )
                    del obj[key]
                    continue
                # PruneNonNullableNullsWithoutDefaults, then defaulting: a null property or map
                # value that is not nullable becomes its default, or goes
                sub = sub if sub is not None else s.additional
                if sub is not None and obj[key] is None and not sub.nullable:
                    if sub.default is not MISSING:
                        obj[key] = plain(sub.default)
                    else:
                        del obj[key]
        for key, sub in props.items():
            if sub.default is not MISSING and key not in obj:
                obj[key] = plain(sub.default)
        olds = old if isinstance(old, dict) else {}
        for key in list(obj):
            sub = props.get(key)
            before = olds.get(key, ABSENT)
            if sub is not None:
                obj[key], b = self.walk(obj[key], sub, _child(path, key), before)
            elif s.additional is not None:
                obj[key], b = self.walk(obj[key], s.additional, _entry(path, key), before)
            else:
                continue
            blocking = blocking or b
        for req in s.required:
            if req not in obj:
                self.add(_child(path, req), f'required field "{req}" is missing')
                blocking = True
        n = len(obj)
        if s.max_properties is not None and n > s.max_properties:
            self.add(path, f"has {n} entries, at most {s.max_properties} are allowed; remove some")
            blocking = True
        if s.min_properties is not None and n < s.min_properties:
            self.add(path, f"has {n} entries, at least {s.min_properties} are required")
        return blocking

    def _array(self, items: list[Any], s: Schema, path: str, old: Any = ABSENT) -> bool:
        blocking = False
        olds = map_list(old, s) if isinstance(old, list) else {}
        if s.items is not None:
            for i in range(len(items)):
                before = olds.get(map_key(items[i], s), ABSENT) if olds else ABSENT
                items[i], b = self.walk(items[i], s.items, _index(path, i), before)
                blocking = blocking or b
        n = len(items)
        if s.max_items is not None and n > s.max_items:
            self.add(path, f"has {n} items, at most {s.max_items} are allowed; remove some")
            blocking = True
        if s.min_items is not None and n < s.min_items:
            self.add(path, f"has {n} items, at least {s.min_items} are required")
        if s.list_type == "set":
            seen: dict[str, int] = {}
            for i, item in enumerate(items):
                k = json.dumps(item, sort_keys=True)
                if k in seen:
                    self.add_list(
                        _index(path, i),
                        f"duplicate value {show(item)} (also at [{seen[k]}]); a set lists each value once",
                    )
                else:
                    seen[k] = i
        elif s.list_type == "map" and s.list_map_keys:
            seen_keys: dict[tuple[str, ...], int] = {}
            for i, item in enumerate(items):
                if not isinstance(item, dict):
                    continue
                mk = tuple(json.dumps(item.get(k)) for k in s.list_map_keys)
                if mk in seen_keys:
                    what = ", ".join(f"{k}={show(item.get(k))}" for k in s.list_map_keys)
                    self.add_list(
                        _index(path, i),
                        f"duplicate entry with {what} (also at [{seen_keys[mk]}]); keys must be unique",
                    )
                else:
                    seen_keys[mk] = i
        return blocking

    def _scalar(self, value: Any, s: Schema, path: str) -> bool:
        blocking = False
        if isinstance(value, str):
            n = len(value)
            if s.max_length is not None and n > s.max_length:
                self.add(path, f"is {n} characters long, at most {s.max_length} are allowed")
                blocking = True
            if s.min_length is not None and n < s.min_length:
                self.add(path, f"is {n} characters long, at least {s.min_length} are required")
            if s.pattern is not None and not _matches(s, value):
                what = _PATTERN_HELP.get(s.pattern_text)
                if what:
                    self.add(path, f"invalid value {show(value)}: {what} (CRD pattern {s.pattern_text})")
                else:
                    self.add(
                        path, f"invalid value {show(value)}: does not match the CRD pattern {s.pattern_text}"
                    )
            if s.format == "date-time" and not _RFC3339.fullmatch(value):
                self.add(path, f"{show(value)} is not an RFC 3339 date-time; use e.g. 2024-01-02T15:04:05Z")
        elif isinstance(value, int | float) and not isinstance(value, bool):
            if s.minimum is not None and (value < s.minimum or (s.exclusive_minimum and value == s.minimum)):
                op = "greater than" if s.exclusive_minimum else "greater than or equal to"
                self.add(path, f"{value} is too small; must be {op} {_num(s.minimum)}")
            if s.maximum is not None and (value > s.maximum or (s.exclusive_maximum and value == s.maximum)):
                op = "less than" if s.exclusive_maximum else "less than or equal to"
                self.add(path, f"{value} is too large; must be {op} {_num(s.maximum)}")
        return blocking

    def _rules(self, value: Any, s: Schema, path: str, *, checked: bool = True, old: Any = ABSENT) -> None:
        """Evaluate the rules on ``value``. ``checked=False``: the value has a blocking error inside
        (the API server would skip these rules); clean failures are still reported so the user
        sees them in the same pass, rules that error on the ill-typed value are noted as skipped."""
        for rule in s.rules:
            if rule.transition:
                if old is ABSENT:
                    continue  # a transition rule runs only when there is an old value to compare
                passed, error = rule.evaluate(value, old)
            else:
                passed, error = rule.evaluate(value)
            if passed:
                continue
            if error and not checked:
                self.skipped = True
                continue
            if self._per_element(rule, value, path):
                continue
            where = path
            if rule.field_path:
                fp = rule.field_path
                where = (
                    f"{path}{fp}" if fp.startswith("[") else f"{path}{fp if fp.startswith('.') else '.' + fp}"
                )
                where = where.lstrip(".")
            msg = rule.message
            if error:
                msg += f" (the rule could not be evaluated: {error})"
            if rule.reason:
                msg += f" [{rule.reason}]"
            if rule.transition:
                msg += " (a transition rule: compares the update with the object in the cluster)"
            self.add(where, f"{msg}; the CRD rule is: {_short(rule.rule)}", sticky=rule.transition)

    def _per_element(self, rule: Rule, value: Any, path: str) -> bool:
        """For a failed ``self.all(...)`` rule on a map or list, report the failing entries at their
        own paths (the message stays upstream's); False when no single entry fails alone."""
        if (
            rule.transition
            or not rule.rule.lstrip().startswith("self.all(")
            or not isinstance(value, dict | list)
            or not value
        ):
            return False
        failing: list[str] = []
        if isinstance(value, dict):
            for k, v in value.items():
                ok, err = rule.evaluate({k: v})
                if not ok:
                    failing.append(_entry(path, k) + ("\0" + err if err else ""))
        else:
            for i, v in enumerate(value):
                ok, err = rule.evaluate([v])
                if not ok:
                    failing.append(_index(path, i) + ("\0" + err if err else ""))
        for item in failing:
            where, _, err = item.partition("\0")
            msg = rule.message + (f" (the rule could not be evaluated: {err})" if err else "")
            self.add(where, f"{msg}; the CRD rule is: {_short(rule.rule)}")
        return bool(failing)


_PATTERN_MEMO_LIMIT: Final = 4096


def _matches(s: Schema, value: str) -> bool:
    """RE2 search of the node's pattern, memoised per node (fleets repeat durations, keys, counts)."""
    hit = s.pattern_memo.get(value)
    if hit is None:
        hit = s.pattern.search(value) is not None
        if len(s.pattern_memo) < _PATTERN_MEMO_LIMIT and len(value) <= 256:  # bounded memory
            s.pattern_memo[value] = hit
    return hit


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else str(v)


def _short(rule: str) -> str:
    return rule if len(rule) <= 160 else rule[:157] + "..."


def admit(
    body: Mapping[str, Any], *, kind: str, file: str = "<input>", path: str = "", rel: Release | None = None
) -> Admitted:
    """``body`` as the API server would store it on create, and everything it would reject.

    ``kind`` names a CRD shipped for the release (NodePool, NodeClaim, EC2NodeClass,
    OperatingSystemConfig); ``file``/``path`` locate the object for error lines.
    """
    admitted, _ = run(body, kind=kind, file=file, path=path, rel=rel)
    return admitted


def run(
    body: Mapping[str, Any],
    *,
    kind: str,
    file: str = "<input>",
    path: str = "",
    rel: Release | None = None,
    old: Mapping[str, Any] | None = None,
    old_list_ok: bool = True,
) -> tuple[Admitted, _Walk]:
    """One admission pass: a create, or (``old``: the stored object, admitted) an update of it.

    On update (``customResourceStrategy.ValidateUpdate``): ObjectMeta is checked as an update,
    schema and CEL problems ratchet (a node equal to its old value keeps its problems as
    warnings), transition rules run against the old value, list-set/map uniqueness is checked
    only when the old object passed it (``old_list_ok``), and the status stays the old one.
    """
    c = crd(kind, rel)
    obj = plain(body)
    w = _Walk(file, path, update=old is not None)
    root = c.schema
    if not isinstance(obj, dict):
        w.add("", f"must be of type object, got {kind_of(obj)}")
        return Admitted(body={}, problems=w.problems), w
    status = obj.pop("status", None)
    meta = obj.pop("metadata", None)
    if old is None:
        check_metadata(w.add, meta, namespaced=c.scope == "Namespaced")
    else:
        check_metadata_update(w.add, meta, old.get("metadata"), namespaced=c.scope == "Namespaced")
    for key in list(obj):
        if key not in root.properties:
            hint = typo_hint(key, list(root.properties))
            w.add(
                key, f'unknown field "{key}"{hint}; a {kind} has apiVersion, kind, metadata, spec and status'
            )
            del obj[key]
    old_obj: Any = dict(old) if old is not None else ABSENT
    spec_schema = root.properties.get("spec")
    if spec_schema is not None:
        if obj.get("spec") is None:
            obj.pop("spec", None)
            if spec_schema.default is not MISSING:
                obj["spec"] = plain(spec_schema.default)
        if "spec" in obj:
            before = old_obj.get("spec", ABSENT) if old is not None else ABSENT
            obj["spec"], _ = w.walk(obj["spec"], spec_schema, "spec", before)
        elif "spec" in root.required:
            w.add("spec", f'required field "spec" is missing; a {kind} needs a spec')
    status_schema = root.properties.get("status")
    if status is not None and status_schema is not None:
        # Pruned at decoding (unknown fields are strict errors), then dropped by PrepareForCreate /
        # replaced by the old status on update: never validated. Kept here for cluster-state files.
        status = prune(w.add, status, status_schema, "status")
    check_scale(w.add, obj, c.scale_spec_path)
    if root.rules:
        if meta is not None:
            obj["metadata"] = meta
        w._rules(obj, root, "", old=old_obj)
        obj.pop("metadata", None)
    if w.skipped and w.problems:  # (on update, the problems that caused it may have ratcheted)
        w.add(
            "",
            "some validation rules were not checked because the object was invalid; correct the "
            "errors above and validate again",
        )
    if old_list_ok:
        w.problems.extend(w.list_problems)
    if meta is not None:
        obj["metadata"] = meta
    if old is not None and "status" in old:
        obj["status"] = old["status"]
    elif status is not None and old is None:
        obj["status"] = status
    return Admitted(body=obj, problems=w.problems), w
