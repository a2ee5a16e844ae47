"""The structural schema of a shipped CRD, compiled once per release and kind.

Boundary: reads ``nodewright/data/crds/<release>/<file>`` (package data), picks the served
storage version's ``openAPIV3Schema`` and turns it into a tree of :class:`Schema` nodes with
compiled patterns and compiled CEL rules (:mod:`nodewright.crd.celrules`). No validation logic
lives here (that is :mod:`nodewright.crd.admission`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Final

import yaml

from nodewright.crd import regex
from nodewright.crd.celrules import Rule, compile_rule
from nodewright.crd.releases import CRD_FILES, Release, default_release
from nodewright.errors import InputError

MISSING: Final = object()


@dataclass(eq=False)
class Schema:
    """One node of a structural schema (only the keywords the API server acts on)."""

    type: str | None = None
    properties: dict[str, Schema] = field(default_factory=dict)
    additional: Schema | None = None
    items: Schema | None = None
    required: tuple[str, ...] = ()
    enum: tuple[Any, ...] | None = None
    pattern: Any = None  # a compiled RE2 regexp (nodewright.crd.regex)
    pattern_memo: dict[str, bool] = field(default_factory=dict)  # value -> matches (bounded)
    pattern_text: str = ""
    format: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    min_properties: int | None = None
    max_properties: int | None = None
    nullable: bool = False
    default: Any = MISSING
    int_or_string: bool = False
    preserve_unknown: bool = False
    embedded_resource: bool = False
    list_type: str | None = None
    list_map_keys: tuple[str, ...] = ()
    rules: tuple[Rule, ...] = ()

    @property
    def is_object(self) -> bool:
        return self.type == "object"


@dataclass(frozen=True, kw_only=True)
class CRD:
    """A compiled CRD: group, kind, version and the schema of that version."""

    group: str
    kind: str
    version: str
    scope: str
    schema: Schema
    file: str
    scale_spec_path: str = ""  # the scale subresource's specReplicasPath (".spec.replicas"), if any


def _compile(node: Mapping[str, Any], *, where: str) -> Schema:
    s = Schema(type=node.get("type"))
    for name, sub in (node.get("properties") or {}).items():
        s.properties[name] = _compile(sub, where=f"{where}.{name}")
    add = node.get("additionalProperties")
    if isinstance(add, Mapping):
        s.additional = _compile(add, where=f"{where}[*]")
    if isinstance(node.get("items"), Mapping):
        s.items = _compile(node["items"], where=f"{where}[*]")
    s.required = tuple(node.get("required") or ())
    if "enum" in node:
        s.enum = tuple(node["enum"])
    if "pattern" in node:
        s.pattern_text = str(node["pattern"])
        s.pattern = regex.compile_re2(s.pattern_text)
    s.format = node.get("format")
    s.minimum = node.get("minimum")
    s.maximum = node.get("maximum")
    s.exclusive_minimum = bool(node.get("exclusiveMinimum"))
    s.exclusive_maximum = bool(node.get("exclusiveMaximum"))
    s.min_length = node.get("minLength")
    s.max_length = node.get("maxLength")
    s.min_items = node.get("minItems")
    s.max_items = node.get("maxItems")
    s.min_properties = node.get("minProperties")
    s.max_properties = node.get("maxProperties")
    s.nullable = bool(node.get("nullable"))
    if "default" in node:
        s.default = node["default"]
    s.int_or_string = bool(node.get("x-kubernetes-int-or-string"))
    s.preserve_unknown = bool(node.get("x-kubernetes-preserve-unknown-fields"))
    s.embedded_resource = bool(node.get("x-kubernetes-embedded-resource"))
    s.list_type = node.get("x-kubernetes-list-type")
    s.list_map_keys = tuple(node.get("x-kubernetes-list-map-keys") or ())
    s.rules = tuple(compile_rule(entry, where=where) for entry in node.get("x-kubernetes-validations") or ())
    return s


def read_crd_text(rel: Release, kind: str) -> str:
    """The CRD file of ``kind`` for ``rel``: package data (``nodewright/data/crds/<crd_folder>``),
    or the folder itself when ``crd_folder`` is an absolute path (a release registered from outside)."""
    if os.path.isabs(rel.crd_folder):
        return Path(rel.crd_folder, CRD_FILES[kind]).read_text(encoding="utf-8")
    path = resources.files("nodewright") / "data" / "crds" / rel.crd_folder / CRD_FILES[kind]
    return path.read_text(encoding="utf-8")


@functools.lru_cache(maxsize=32)
def _load(rel: Release, kind: str) -> CRD:
    name = f"{rel.crd_folder}/{CRD_FILES[kind]}"
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: 5x faster startup
    doc = yaml.load(read_crd_text(rel, kind), Loader=loader)  # a safe loader (package data)
    spec = doc["spec"]
    served = [v for v in spec["versions"] if v.get("served")]
    ver = next((v for v in served if v.get("storage")), served[0])
    schema = _compile(ver["schema"]["openAPIV3Schema"], where=f"{name}:{ver['name']}")
    return CRD(
        group=spec["group"],
        kind=spec["names"]["kind"],
        version=ver["name"],
        scope=spec.get("scope", "Namespaced"),
        schema=schema,
        file=name,
        scale_spec_path=str(
            ((ver.get("subresources") or {}).get("scale") or {}).get("specReplicasPath") or ""
        ),
    )


def crd(kind: str, rel: Release | None = None) -> CRD:
    """The compiled CRD of ``kind`` in ``rel`` (None: the default release); cached per release.
    A kind the release does not ship is an :class:`~nodewright.errors.InputError`."""
    rel = rel or default_release()
    if not rel.ships(kind):
        raise InputError(
            f"Karpenter v{rel.version} does not ship the {kind} CRD; select a release that has it "
            "(--karpenter-version)",
            file="--karpenter-version",
        )
    return _load(rel, kind)


def kinds() -> tuple[str, ...]:
    return tuple(CRD_FILES)
