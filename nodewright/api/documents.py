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

import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from nodewright import reader
from nodewright.errors import InputError


@dataclass(frozen=True, kw_only=True)
class Document:
    """One Kubernetes-style object read from a file."""

    file: str
    path: str
    body: Mapping[str, Any]

    @property
    def kind(self) -> str:
        kind = self.body.get("kind", "")
        return kind if type(kind) is str else str(kind)

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


def _document(file: str, path: str, body: Mapping[str, Any]) -> Document:
    """``Document(file=file, path=path, body=body)``, without the frozen dataclass's three
    ``object.__setattr__`` calls (half the cost of a document, paid 10,000s of times per cluster)."""
    doc = _new(Document)
    doc.__dict__.update(file=file, path=path, body=body)
    return doc


_new = object.__new__

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


def read_input(path: str | Path) -> str:
    """The UTF-8 text of a user file (``-``: standard input), within :mod:`nodewright.reader`'s limits."""
    if str(path) == STDIN:
        return read_stdin_input()
    return reader.read_text(path)


def read_stdin_input() -> str:
    """Standard input within :mod:`nodewright.reader`'s size limit."""
    text = read_stdin()
    if len(text) > reader.MAX_BYTES:
        raise InputError(
            f"input larger than {reader.MAX_BYTES // (1024 * 1024)} MiB; refusing to read it", file=STDIN
        )
    return text


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
            if type(item) is dict and type(kind := item.get("kind")) is str and not kind.endswith("List"):
                yield _document(file, sub, item)  # an object (the common case): at once
            else:
                yield from _unpack(item, file=file, path=sub)
        return
    yield Document(file=file, path=path, body=raw)


def documents_from_text(text: str, *, file: str) -> list[Document]:
    """Every object in ``text``, ``kind: List`` unpacked, each with its JSON path."""
    return _documents(reader.parse_text(text, file=file), file=file)


def _documents(raws: list[Any], *, file: str) -> list[Document]:
    docs: list[Document] = []
    for i, raw in enumerate(raws):
        if isinstance(raw, list):
            for j, item in enumerate(raw):
                docs.extend(_unpack(item, file=file, path=f"[{j}]"))
            continue
        path = f"documents[{i}]" if len(raws) > 1 else ""
        docs.extend(_unpack(raw, file=file, path=path))
    return docs


_PARSED: dict[str, tuple[str | bytes, list[Document]]] = {}
_PARSED_MAX = 4


def _documents_of_file(path: str | Path) -> list[Document]:
    """The documents of one file, parsed once per process for the same content (a preview reads
    the cluster state for health, drift and the program: a big file is decoded once). The content
    is kept with its documents and compared whole (a memory compare: cheaper than hashing it).
    Bodies are shared: readers never mutate them (copies are made where a body is changed). A file
    is parsed from its bytes (:func:`~nodewright.reader.parse_bytes`), standard input as text."""
    content: str | bytes = read_stdin_input() if str(path) == STDIN else reader.read_bytes(path)
    entry = _PARSED.get(str(path))
    if entry is not None and entry[0] == content:
        return list(entry[1])
    if isinstance(content, str):
        docs = documents_from_text(content, file=str(path))
    else:
        docs = _documents(reader.parse_bytes(content, file=str(path)), file=str(path))
    if len(content) > 1 << 20:  # only big files are worth keeping
        _PARSED.pop(str(path), None)
        while len(_PARSED) >= _PARSED_MAX:
            _PARSED.pop(next(iter(_PARSED)))
        _PARSED[str(path)] = (content, docs)
    return list(docs)


def load_documents(paths: Iterable[str | Path]) -> list[Document]:
    """Read every file in order; documents keep file order then document order.

    A directory stands for its YAML/JSON files and ``-`` for standard input (:func:`expand_paths`).
    """
    docs: list[Document] = []
    for p in expand_paths(paths):
        docs.extend(_documents_of_file(p))
    return docs
