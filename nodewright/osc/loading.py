"""Reading OperatingSystemConfigs and the Secrets their files refer to, with every problem reported.

Input files go through :mod:`nodewright.api.documents` (YAML or JSON, many documents, ``kind:
List`` unpacked). ``OperatingSystemConfig`` documents are validated against
Gardener's shipped CRD (:mod:`nodewright.crd`, as the API server would), then
:mod:`nodewright.osc.models` plus Gardener's cross-field rules (``pkg/api/extensions/validation``);
``v1`` ``Secret`` documents become the secret set that ``secretRef`` contents resolve from; other
kinds are ignored with a warning. Every malformed field is reported at once as
``<file>:<json path>: <what>`` (an :class:`~nodewright.errors.InputErrors`). Secret values never
appear in any message: only names and keys do.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from pydantic import ValidationError

from nodewright import crd
from nodewright.api.documents import Document, load_documents
from nodewright.errors import Collector, InputError
from nodewright.osc.models import API_VERSION, KIND, OperatingSystemConfig, ReferencedSecret

log = logging.getLogger("nodewright")

UNIT_SUFFIXES: Final = (
    ".service",
    ".socket",
    ".device",
    ".mount",
    ".automount",
    ".swap",
    ".target",
    ".path",
    ".timer",
    ".slice",
    ".scope",
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_UPSTREAM = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(:[0-9]{1,5})?$")


@dataclass(frozen=True, kw_only=True)
class LoadedOSC:
    """One validated OSC, where it came from, and the Secrets given beside it."""

    osc: OperatingSystemConfig
    file: str
    path: str
    secrets: tuple[ReferencedSecret, ...] = ()

    def at(self, sub: str) -> str:
        """JSON path of ``sub`` inside the OSC document."""
        if not self.path:
            return sub
        return f"{self.path}{sub}" if sub.startswith("[") else f"{self.path}.{sub}"


def json_path(loc: Iterable[int | str]) -> str:
    """``("spec", "files", 0, "path")`` -> ``spec.files[0].path``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _message(err: Mapping[str, Any]) -> str:
    kind = err.get("type", "")
    msg = str(err.get("msg", "invalid value"))
    if kind == "extra_forbidden":
        return "unknown field; check the spelling against the OperatingSystemConfig API (extensions.gardener.cloud/v1alpha1, docs/osc.md)"
    if kind == "missing":
        return "required field is missing"
    if kind == "literal_error":
        value = err.get("input")
        shown = f", got {value!r}" if isinstance(value, str | int | bool | None) else ""
        return msg.replace("Input should be", "must be") + shown
    if msg.startswith("Value error, "):
        return msg[len("Value error, ") :]
    return msg.replace("Input should be", "must be")


def _join(base: str, sub: str) -> str:
    if not base:
        return sub
    if not sub:
        return base
    return f"{base}{sub}" if sub.startswith("[") else f"{base}.{sub}"


def parse_secret(doc: Document, collector: Collector) -> ReferencedSecret | None:
    """A core/v1 Secret document; ``data`` is base64, ``stringData`` plain (wins, as in Kubernetes)."""
    body = doc.body
    values: dict[str, bytes] = {}
    data = body.get("data") or {}
    if not isinstance(data, Mapping):
        collector.add(doc.at("data"), "must be a mapping of key to base64 value")
        data = {}
    for key, value in data.items():
        try:
            values[str(key)] = base64.b64decode(str(value).encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError, ValueError):
            collector.add(doc.at(f"data.{key}"), "value is not valid base64 (use stringData for plain text)")
    string_data = body.get("stringData") or {}
    if not isinstance(string_data, Mapping):
        collector.add(doc.at("stringData"), "must be a mapping of key to string")
        string_data = {}
    for key, value in string_data.items():
        values[str(key)] = str(value).encode("utf-8")
    if not doc.name:
        collector.add(doc.at("metadata.name"), "a Secret needs a name to be referenced")
        return None
    meta = body.get("metadata") or {}
    namespace = meta.get("namespace") if isinstance(meta, Mapping) else None
    return ReferencedSecret(name=doc.name, namespace=str(namespace) if namespace else None, values=values)


def _validate_model(doc: Document, collector: Collector) -> OperatingSystemConfig | None:
    try:
        return OperatingSystemConfig.model_validate(dict(doc.body))
    except ValidationError as exc:
        for err in exc.errors(include_url=False, include_input=True):
            collector.add(_join(doc.path, json_path(err["loc"])), _message(err))
        return None


def check_semantics(osc: OperatingSystemConfig, collector: Collector, *, base: str = "") -> None:
    """Gardener's cross-field rules, every violation added to ``collector``."""
    spec = osc.spec

    def at(sub: str) -> str:
        return _join(base, sub)

    file_paths: set[str] = set()
    seen: dict[tuple[str, str | None], int] = {}
    groups = (
        ("spec.files", spec.files),
        ("status.extensionFiles", osc.status.extension_files if osc.status else ()),
    )
    for prefix, files in groups:
        for i, f in enumerate(files):
            where = f"{prefix}[{i}]"
            file_paths.add(f.path)
            if not f.path.startswith("/"):
                collector.add(at(f"{where}.path"), f"path {f.path!r} is not absolute; start it with '/'")
            if _CONTROL.search(f.path):
                collector.add(at(f"{where}.path"), "path contains a control character (newline, tab...)")
            key = (f.path, f.host_name)
            if key in seen:
                collector.add(
                    at(f"{where}.path"),
                    f"duplicate path {f.path!r} (also file [{seen[key]}]); paths must be unique unless "
                    "each duplicate sets a distinct hostName",
                )
            else:
                seen[key] = i
            c = f.content
            sources = [
                n
                for n, v in (("inline", c.inline), ("secretRef", c.secret_ref), ("imageRef", c.image_ref))
                if v
            ]
            if len(sources) != 1:
                collector.add(
                    at(f"{where}.content"),
                    "either 'secretRef', 'inline' or 'imageRef' must be provided, not multiple at the same time"
                    if sources
                    else "one of 'inline', 'secretRef' or 'imageRef' must be provided",
                )
    unit_groups = (
        ("spec.units", spec.units),
        ("status.extensionUnits", osc.status.extension_units if osc.status else ()),
    )
    for prefix, units in unit_groups:
        for i, u in enumerate(units):
            where = f"{prefix}[{i}]"
            if not u.name.endswith(UNIT_SUFFIXES) or "/" in u.name or _CONTROL.search(u.name):
                collector.add(
                    at(f"{where}.name"),
                    f"{u.name!r} is not a systemd unit name; end it with a unit type such as '.service'",
                )
            for j, d in enumerate(u.drop_ins):
                if not d.name.endswith(".conf") or "/" in d.name or _CONTROL.search(d.name):
                    collector.add(
                        at(f"{where}.dropIns[{j}].name"),
                        f"drop-in {d.name!r} must be a file name ending in '.conf' (systemd ignores others)",
                    )
            for j, fp in enumerate(u.file_paths):
                if fp not in file_paths:
                    collector.add(
                        at(f"{where}.filePaths[{j}]"),
                        f"'filePath' {fp!r} requires a matching 'path' in 'spec.files'",
                    )
    cri = spec.cri_config
    if cri is not None and cri.containerd is not None:
        if spec.purpose == "provision":
            collector.add(
                at("spec.criConfig.containerd"),
                "containerd config is not allowed for OperatingSystemConfig with purpose 'provision'",
            )
        _check_containerd(cri.containerd, collector, at)


def _check_containerd(containerd: Any, collector: Collector, at: Any) -> None:
    upstreams: dict[str, int] = {}
    for i, reg in enumerate(containerd.registries):
        where = f"spec.criConfig.containerd.registries[{i}]"
        if reg.upstream != "_default" and not _UPSTREAM.match(reg.upstream):
            collector.add(at(f"{where}.upstream"), f"{reg.upstream!r} must be a host[:port] or '_default'")
        elif ":" in reg.upstream and not 1 <= int(reg.upstream.rsplit(":", 1)[1]) <= 65535:
            collector.add(at(f"{where}.upstream"), "port must be in 1..65535")
        if reg.upstream in upstreams:
            collector.add(
                at(f"{where}.upstream"), f"duplicate upstream (also registries[{upstreams[reg.upstream]}])"
            )
        upstreams.setdefault(reg.upstream, i)
        if reg.server is not None and not _is_http_url(reg.server):
            collector.add(at(f"{where}.server"), "must be an http:// or https:// URL with a host")
        for j, host in enumerate(reg.hosts):
            if not _is_http_url(host.url):
                collector.add(at(f"{where}.hosts[{j}].url"), "must be an http:// or https:// URL with a host")
    for i, plugin in enumerate(containerd.plugins):
        if plugin.op == "remove" and plugin.values is not None:
            collector.add(
                at(f"spec.criConfig.containerd.plugins[{i}].values"),
                "values are not allowed with op 'remove'",
            )


def find_secret(
    secrets: Iterable[ReferencedSecret], name: str, namespace: str | None
) -> ReferencedSecret | None:
    """The Secret called ``name``: same namespace first, then one without a namespace."""
    candidates = [s for s in secrets if s.name == name]
    for s in candidates:
        if s.namespace == namespace or namespace is None:
            return s
    for s in candidates:
        if s.namespace is None:
            return s
    return None


def check_secret_refs(
    osc: OperatingSystemConfig, secrets: Iterable[ReferencedSecret], collector: Collector, *, base: str = ""
) -> None:
    """Every ``secretRef`` names a given Secret and one of its keys (values never shown)."""
    pool = list(secrets)
    groups = (
        ("spec.files", osc.spec.files),
        ("status.extensionFiles", osc.status.extension_files if osc.status else ()),
    )
    for prefix, files in groups:
        for i, f in enumerate(files):
            ref = f.content.secret_ref
            if ref is None:
                continue
            where = _join(base, f"{prefix}[{i}].content.secretRef")
            secret = find_secret(pool, ref.name, osc.metadata.namespace)
            if secret is None:
                collector.add(
                    f"{where}.name",
                    f"Secret {ref.name!r} not found; add a v1 Secret document with that name to the input files",
                )
            elif ref.data_key not in secret.values:
                keys = ", ".join(repr(k) for k in secret.key_names()) or "none"
                collector.add(
                    f"{where}.dataKey", f"Secret {ref.name!r} has no key {ref.data_key!r} (keys: {keys})"
                )


def _is_http_url(value: str) -> bool:
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc) and not _CONTROL.search(value)


def load_osc_documents(docs: Iterable[Document]) -> list[LoadedOSC]:
    """Every OSC among ``docs``, validated, each paired with every Secret among ``docs``."""
    by_file: dict[str, Collector] = {}
    oscs: list[tuple[OperatingSystemConfig, Document]] = []
    secrets: list[ReferencedSecret] = []

    def collector_for(file: str) -> Collector:
        return by_file.setdefault(file, Collector(file))

    for doc in docs:
        if doc.kind == KIND:
            if doc.api_version != API_VERSION:
                collector_for(doc.file).add(
                    doc.at("apiVersion"), f"must be {API_VERSION!r}, got {doc.api_version!r}"
                )
                continue
            col = collector_for(doc.file)
            # Gardener's CRD first (the shipped extensions.gardener.cloud_operatingsystemconfigs.yaml):
            # schema, enums, defaults, as the API server; then the model and Gardener's rules.
            # The model's messages are the more specific ones; the CRD adds what they miss.
            admitted = crd.admit(doc.body, kind=KIND, file=doc.file, path=doc.path)
            body = admitted.body if admitted.ok else doc.body
            model_col = Collector(doc.file)
            osc = _validate_model(Document(file=doc.file, path=doc.path, body=body), model_col)
            col.extend(model_col.problems)
            seen = {p.path for p in model_col.problems}
            col.extend(p for p in admitted.problems if p.path not in seen)
            if osc is not None:
                check_semantics(osc, col, base=doc.path)
                oscs.append((osc, doc))
        elif doc.kind == "Secret" and doc.api_version == "v1":
            secret = parse_secret(doc, collector_for(doc.file))
            if secret is not None:
                secrets.append(secret)
        else:
            where = f"{doc.file}:{doc.path}" if doc.path else doc.file
            log.warning("%s: ignoring kind %r (not an OperatingSystemConfig or v1 Secret)", where, doc.kind)
    for osc, doc in oscs:
        check_secret_refs(osc, secrets, collector_for(doc.file), base=doc.path)
    problems = [p for c in by_file.values() for p in c.problems]
    if problems:
        merged = Collector("<input>")
        merged.extend(problems)
        merged.raise_if_any()
    return [LoadedOSC(osc=o, file=d.file, path=d.path, secrets=tuple(secrets)) for o, d in oscs]


def load_osc(paths: Iterable[str | Path], *, name: str | None = None) -> LoadedOSC:
    """Exactly one OSC from ``paths`` (or the one called ``name``), with the Secrets of all files."""
    path_list = [str(p) for p in paths]
    loaded = load_osc_documents(load_documents(path_list))
    where = path_list[0] if len(path_list) == 1 else ", ".join(path_list)
    if name is not None:
        loaded = [lo for lo in loaded if lo.osc.name == name]
        if not loaded:
            raise InputError(f"no OperatingSystemConfig named {name!r}; check --name", file=where)
    if not loaded:
        raise InputError(
            f"no OperatingSystemConfig (apiVersion {API_VERSION}, kind {KIND}) found; give one with -f",
            file=where,
        )
    if len(loaded) > 1:
        names = ", ".join(repr(lo.osc.name) for lo in loaded)
        raise InputError(
            f"{len(loaded)} OperatingSystemConfigs found ({names}); pick one with --name", file=where
        )
    return loaded[0]
