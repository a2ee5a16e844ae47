"""Reading user files into Kubernetes-style documents, with a JSON path for every object.

A file may be YAML (one or many documents) or JSON (one document, or several concatenated as
``kubectl cluster-info dump`` prints them); a ``kind: List`` and the API's typed lists
(``NodeList``, ``PodList``, ...) are unpacked, an item without ``kind``/``apiVersion`` taking them
from its list. A path may be a directory (its ``*.json``/``*.yaml``/``*.yml`` files, recursively,
in sorted order, e.g. ``kubectl cluster-info dump --output-directory``) or ``-`` for standard
input. Each object keeps its origin (file and path such as ``documents[1]`` or ``items[3]``) so every later error
can name the exact place: ``error: <file>:<path>: <what is wrong>``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from nodewright.errors import InputError


@dataclass(frozen=True, kw_only=True)
class Document:
    """One Kubernetes-style object read from a file."""

    file: str
    path: str
    body: Mapping[str, Any]

    @property
    def kind(self) -> str:
        return str(self.body.get("kind", ""))

    @property
    def api_version(self) -> str:
        return str(self.body.get("apiVersion", ""))

    @property
    def name(self) -> str:
        meta = self.body.get("metadata")
        return str(meta.get("name", "")) if isinstance(meta, Mapping) else ""

    def at(self, sub: str) -> str:
        """The JSON path of ``sub`` inside this document (``sub`` like ``spec.template``)."""
        if not sub:
            return self.path
        if not self.path:
            return sub
        return f"{self.path}.{sub}" if not sub.startswith("[") else f"{self.path}{sub}"


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate mapping keys instead of silently keeping the last."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    loader.flatten_mapping(node)
    return dict(loader.construct_pairs(node, deep=deep))


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def parse_text(text: str, *, file: str) -> list[Any]:
    """Parse JSON or (multi-document) YAML text into raw documents; None documents dropped."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            several = _concatenated_json(text) if exc.msg == "Extra data" else None
            if several is not None:
                return several
            # YAML is a superset of JSON; a flow-style YAML file may still parse.
            try:
                return [d for d in yaml.load_all(text, Loader=_UniqueKeyLoader) if d is not None]
            except yaml.YAMLError:
                raise InputError(
                    f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", file=file
                ) from exc
        return [data]
    try:
        return [d for d in yaml.load_all(text, Loader=_UniqueKeyLoader) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"invalid YAML{where}: {what}", file=file) from exc


def _concatenated_json(text: str) -> list[Any] | None:
    """Several JSON values one after another (``kubectl cluster-info dump``), or None."""
    decoder = json.JSONDecoder()
    out: list[Any] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return out
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            return None
        out.append(value)


STDIN: Final = "-"
_stdin_cache: list[str] = []
SUFFIXES: Final = (".json", ".yaml", ".yml")


def read_stdin() -> str:
    """Standard input, read once per process (several readers may ask for ``-``)."""
    if not _stdin_cache:
        _stdin_cache.append(sys.stdin.read())
    return _stdin_cache[0]


def expand_paths(paths: Iterable[str | Path]) -> list[str | Path]:
    """Paths with every directory replaced by its YAML/JSON files (recursive, sorted); ``-`` kept."""
    out: list[str | Path] = []
    for p in paths:
        if str(p) != STDIN and Path(p).is_dir():
            found = sorted(f for f in Path(p).rglob("*") if f.is_file() and f.suffix in SUFFIXES)
            if not found:
                raise InputError("directory holds no .json/.yaml/.yml file", file=str(p))
            out.extend(found)
        else:
            out.append(p)
    return out


def read_text(path: str | Path) -> str:
    if str(path) == STDIN:
        return read_stdin()
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise InputError("no such file; check the path", file=str(path)) from exc
    except IsADirectoryError as exc:
        raise InputError("is a directory; give a YAML or JSON file", file=str(path)) from exc
    except UnicodeDecodeError as exc:
        raise InputError("not UTF-8 text; give a YAML or JSON file", file=str(path)) from exc
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=str(path)) from exc


def _unpack(raw: Any, *, file: str, path: str) -> Iterator[Document]:
    if not isinstance(raw, Mapping):
        raise InputError(
            f"expected a Kubernetes object (a mapping with apiVersion and kind), got {type(raw).__name__}",
            file=file,
            path=path,
        )
    list_kind = str(raw.get("kind", ""))
    if list_kind == "List" or (list_kind.endswith("List") and "items" in raw):
        items = raw.get("items") or []
        if not isinstance(items, list):
            raise InputError("items must be a list", file=file, path=f"{path}.items" if path else "items")
        # A typed list (NodeList, PodList, ...) as the API returns it: its items carry no kind.
        item_kind = list_kind[: -len("List")] if list_kind != "List" else ""
        for i, item in enumerate(items):
            sub = f"{path}.items[{i}]" if path else f"items[{i}]"
            if item_kind and isinstance(item, Mapping) and not item.get("kind"):
                item = {"kind": item_kind, "apiVersion": raw.get("apiVersion", ""), **item}
            yield from _unpack(item, file=file, path=sub)
        return
    yield Document(file=file, path=path, body=raw)


def documents_from_text(text: str, *, file: str) -> list[Document]:
    """Every object in ``text``, ``kind: List`` unpacked, each with its JSON path."""
    raws = parse_text(text, file=file)
    docs: list[Document] = []
    for i, raw in enumerate(raws):
        if isinstance(raw, list):
            for j, item in enumerate(raw):
                docs.extend(_unpack(item, file=file, path=f"[{j}]"))
            continue
        path = f"documents[{i}]" if len(raws) > 1 else ""
        docs.extend(_unpack(raw, file=file, path=path))
    return docs


def load_documents(paths: Iterable[str | Path]) -> list[Document]:
    """Read every file in order; documents keep file order then document order.

    A directory stands for its YAML/JSON files and ``-`` for standard input (:func:`expand_paths`).
    """
    docs: list[Document] = []
    for p in expand_paths(paths):
        docs.extend(documents_from_text(read_text(p), file=str(p)))
    return docs
