"""From a validated OSC to a flat node plan: exact file bytes, modes, units, in apply order.

This is the one place that decides *what* lands on the node; the renderers only decide *how*
to say it in their format. Resolution: inline data decoded, ``secretRef`` looked up in the given
Secret set (values never shown), containerd registries turned into
``/etc/containerd/certs.d/<upstream>/hosts.toml`` files (exact gardener-node-agent template), files
with a ``hostName`` kept only for that host. Each file/unit gets a transport decision: *clear*
(written as readable text) or base64. Clear is chosen for plain inline files,
``transmitUnencoded`` files, units, drop-ins, and any content holding a placeholder such as
``<<BOOTSTRAP_TOKEN>>`` -- placeholders must stay contiguous clear text so that the
machine-controller-manager can substitute them. Content that cannot travel as clear text (NUL,
control characters, invalid UTF-8) goes base64; if such content holds a placeholder that is an
error.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Final, Literal

from nodewright.errors import Collector
from nodewright.osc.loading import LoadedOSC, find_secret
from nodewright.osc.models import File, RegistryConfig, Unit

log = logging.getLogger("nodewright")

DEFAULT_FILE_MODE: Final = 0o600
"""Mode of files without ``permissions`` (gardener-node-agent's default; Ignition's would be 0644)."""
UNIT_FILE_MODE: Final = 0o644
SYSTEMD_DIR: Final = "/etc/systemd/system"
CERTS_DIR: Final = "/etc/containerd/certs.d"
PROVISION_MARKER: Final = "/var/lib/osc/provision-osc-applied"
"""Gardener's run-once marker of provision user data."""
PLACEHOLDER: Final = re.compile(r"<<[A-Z][A-Z0-9_]*>>")
BOOTSTRAP_TOKEN: Final = "<<BOOTSTRAP_TOKEN>>"
MACHINE_NAME: Final = "<<MACHINE_NAME>>"
# Characters outside YAML's printable set, YAML line breaks other than \n, and ASCII controls
# other than tab/newline cannot travel unescaped in every format.
_NOT_CLEAR: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")

Source = Literal["inline", "secret", "registry"]


@dataclass(frozen=True, kw_only=True)
class PlannedFile:
    """One file exactly as it must land on the node."""

    path: str
    data: bytes
    mode: int
    clear: bool
    secret: bool = False
    source: Source = "inline"

    @property
    def text(self) -> str:
        """The data as text (only meaningful when ``clear``)."""
        return self.data.decode("utf-8")


@dataclass(frozen=True, kw_only=True)
class PlannedDropIn:
    name: str
    content: str
    clear: bool


@dataclass(frozen=True, kw_only=True)
class PlannedUnit:
    """A systemd unit: optional content, drop-ins, and what to do with it after daemon-reload."""

    name: str
    content: str | None
    content_clear: bool
    enable: bool | None
    command: Literal["start", "restart", "stop"] | None
    drop_ins: tuple[PlannedDropIn, ...]
    file_paths: tuple[str, ...]

    @property
    def path(self) -> str:
        return f"{SYSTEMD_DIR}/{self.name}"

    @property
    def action(self) -> Literal["restart", "stop"]:
        """gardener-node-agent's command: stop when disabled or told to stop, else restart."""
        return "stop" if self.enable is False or self.command == "stop" else "restart"


@dataclass(frozen=True, kw_only=True)
class NodePlan:
    """Everything a renderer needs: files then units, in OSC order."""

    name: str
    namespace: str | None
    purpose: Literal["provision", "reconcile"]
    files: tuple[PlannedFile, ...]
    units: tuple[PlannedUnit, ...]
    marker: str | None = None
    """Run-once marker file: present -> the rendering exits at once; touched at the end."""

    def placeholders(self) -> list[str]:
        """Every placeholder in the plan, sorted."""
        found: set[str] = set()
        for f in self.files:
            if f.clear:
                found.update(PLACEHOLDER.findall(f.text))
        for u in self.units:
            found.update(PLACEHOLDER.findall(u.content or ""))
            for d in u.drop_ins:
                found.update(PLACEHOLDER.findall(d.content))
        return sorted(found)

    def secret_paths(self) -> list[str]:
        """Paths of files whose bytes came from a Secret (never print their content)."""
        return sorted(f.path for f in self.files if f.secret)


def is_clear_text(data: bytes) -> bool:
    """True when ``data`` can be written as readable text in YAML, bash heredocs and data URLs."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return _NOT_CLEAR.search(text) is None


def has_placeholder(data: bytes | str) -> bool:
    text = data if isinstance(data, str) else data.decode("utf-8", errors="replace")
    return PLACEHOLDER.search(text) is not None


def _clear(data: bytes, *, prefer: bool, where: str, collector: Collector) -> bool:
    clear_ok = is_clear_text(data)
    if has_placeholder(data):
        if not clear_ok:
            collector.add(
                where,
                "content holds a placeholder (<<...>>) but also bytes that cannot travel as clear text "
                "(NUL, control characters or invalid UTF-8); the placeholder would be hidden by base64: "
                "split the file or remove those bytes",
            )
        return clear_ok
    return prefer and clear_ok


def _plan_file(f: File, loaded: LoadedOSC, where: str, collector: Collector) -> PlannedFile | None:
    c = f.content
    mode = f.permissions if f.permissions is not None else DEFAULT_FILE_MODE
    if c.inline is not None:
        data = c.inline.decoded()
        prefer = c.inline.encoding == "" or bool(c.transmit_unencoded)
        clear = _clear(data, prefer=prefer, where=f"{where}.content.inline.data", collector=collector)
        return PlannedFile(path=f.path, data=data, mode=mode, clear=clear)
    if c.secret_ref is not None:
        ref = c.secret_ref
        secret = find_secret(loaded.secrets, ref.name, loaded.osc.metadata.namespace)
        if secret is None:
            collector.add(
                f"{where}.content.secretRef.name",
                f"Secret {ref.name!r} not found; add a v1 Secret document with that name to the input files",
            )
            return None
        if ref.data_key not in secret.values:
            keys = ", ".join(repr(k) for k in secret.key_names()) or "none"
            collector.add(
                f"{where}.content.secretRef.dataKey",
                f"Secret {ref.name!r} has no key {ref.data_key!r} (keys: {keys})",
            )
            return None
        data = secret.values[ref.data_key]
        clear = _clear(
            data, prefer=bool(c.transmit_unencoded), where=f"{where}.content.secretRef", collector=collector
        )
        return PlannedFile(path=f.path, data=data, mode=mode, clear=clear, secret=True, source="secret")
    if c.image_ref is not None:
        collector.add(
            f"{where}.content.imageRef",
            "imageRef files are extracted from an image by gardener-node-agent and cannot be rendered "
            "into user data; use inline or secretRef",
        )
    return None


def hosts_toml(registry: RegistryConfig) -> str:
    """gardener-node-agent's ``containerd-hosts.toml.tpl``, byte for byte."""
    out = "# managed by gardener-node-agent\n"
    if registry.server:
        out += f"server = {json.dumps(registry.server)}\n\n"
    for host in registry.hosts:
        caps = list(host.capabilities) if host.capabilities is not None else ["pull", "resolve"]
        out += f"[host.{json.dumps(host.url)}]\n"
        out += f"  capabilities = {json.dumps(caps, separators=(',', ':'))}\n"
        if host.ca_certs:
            out += f"  ca = {json.dumps(list(host.ca_certs), separators=(',', ':'))}\n"
        if host.override_path:
            out += "  override_path = true\n"
        out += "\n"
    return out


def _plan_unit(u: Unit, where: str, collector: Collector) -> PlannedUnit:
    def clear(text: str, sub: str) -> bool:
        return _clear(text.encode("utf-8"), prefer=True, where=f"{where}.{sub}", collector=collector)

    return PlannedUnit(
        name=u.name,
        content=u.content,
        content_clear=clear(u.content, "content") if u.content is not None else True,
        enable=u.enable,
        command=u.command,
        drop_ins=tuple(
            PlannedDropIn(name=d.name, content=d.content, clear=clear(d.content, f"dropIns[{j}].content"))
            for j, d in enumerate(u.drop_ins)
        ),
        file_paths=u.file_paths,
    )


def node_plan(loaded: LoadedOSC, *, host_name: str | None = None) -> NodePlan:
    """Resolve ``loaded`` into a :class:`NodePlan`; every problem reported at once."""
    osc = loaded.osc
    collector = Collector(loaded.file)
    files: list[PlannedFile] = []
    groups = (
        ("spec.files", osc.spec.files),
        ("status.extensionFiles", osc.status.extension_files if osc.status else ()),
    )
    for prefix, group in groups:
        for i, f in enumerate(group):
            if f.host_name is not None and f.host_name != host_name:
                log.warning(
                    "%s:%s: file %s is only for host %r; not rendered (pass a host name to include it)",
                    loaded.file,
                    loaded.at(f"{prefix}[{i}].hostName"),
                    f.path,
                    f.host_name,
                )
                continue
            planned = _plan_file(f, loaded, loaded.at(f"{prefix}[{i}]"), collector)
            if planned is not None:
                files.append(planned)
    cri = osc.spec.cri_config
    if cri is not None and cri.containerd is not None:
        for reg in cri.containerd.registries:
            data = hosts_toml(reg).encode("utf-8")
            files.append(
                PlannedFile(
                    path=f"{CERTS_DIR}/{reg.upstream}/hosts.toml",
                    data=data,
                    mode=0o644,
                    clear=is_clear_text(data),
                    source="registry",
                )
            )
    units = [_plan_unit(u, loaded.at(f"spec.units[{i}]"), collector) for i, u in enumerate(osc.all_units())]
    collector.raise_if_any()
    return NodePlan(
        name=osc.name,
        namespace=osc.metadata.namespace,
        purpose=osc.spec.purpose,
        files=tuple(files),
        units=tuple(units),
        marker=PROVISION_MARKER if osc.spec.purpose == "provision" else None,
    )
