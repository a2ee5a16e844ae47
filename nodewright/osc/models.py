"""Pydantic v2 models of Gardener's ``extensions.gardener.cloud/v1alpha1`` OperatingSystemConfig.

Field names and shapes follow the CRD (``criConfig``, ``dropIns``, ``filePaths``,
``transmitUnencoded``, ``content.inline.encoding`` in ``{"", "b64"}``); see
gardener/gardener ``pkg/apis/extensions/v1alpha1/types_operatingsystemconfig.go``. Models are frozen and reject unknown fields
(``extra="forbid"``), except Kubernetes ``metadata`` and the operator-owned parts of ``status``,
which carry many fields nodewright does not model. Cross-field rules that need more than one
field (exactly one content source, ``filePaths`` naming a file, containerd not allowed for
``provision``) live in :mod:`nodewright.osc.loading`, which reports them all at once.
Only data shapes here: no I/O, no rendering.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

API_VERSION: Final = "extensions.gardener.cloud/v1alpha1"
KIND: Final = "OperatingSystemConfig"
MAX_PERMISSIONS: Final = 0o7777


class _Strict(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        extra="forbid",
    )


class _Lenient(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        extra="allow",
    )


class OscMetadata(_Lenient):
    """Kubernetes metadata; only what nodewright reads is typed, the rest is kept."""

    name: str = ""
    namespace: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)


class DropIn(_Strict):
    """A systemd drop-in written to ``/etc/systemd/system/<unit>.d/<name>``."""

    name: str = Field(min_length=1)
    content: str


class Unit(_Strict):
    """A systemd unit; ``content`` None means an OS unit of which only drop-ins/enable are touched."""

    name: str = Field(min_length=1)
    command: Literal["start", "restart", "stop"] | None = None
    enable: bool | None = None
    content: str | None = None
    drop_ins: tuple[DropIn, ...] = ()
    file_paths: tuple[str, ...] = ()


class InlineContent(_Strict):
    """File data given in the OSC itself: ``encoding`` ``""`` (plain) or ``"b64"``."""

    encoding: Literal["", "b64"]
    data: str

    @field_validator("data")
    @classmethod
    def _b64_decodes(cls, value: str, info: Any) -> str:
        if info.data.get("encoding") == "b64":
            try:
                _strict_b64(value)
            except (binascii.Error, UnicodeEncodeError, ValueError) as exc:
                raise ValueError("data is not valid base64 although encoding is 'b64'") from exc
        return value

    def decoded(self) -> bytes:
        """The file's bytes."""
        if self.encoding == "b64":
            return _strict_b64(self.data)
        return self.data.encode("utf-8")


def _strict_b64(value: str) -> bytes:
    compact = "".join(value.split())
    return base64.b64decode(compact.encode("ascii"), validate=True)


class SecretRef(_Strict):
    """File data taken from key ``data_key`` of the Secret ``name`` (same namespace)."""

    name: str = Field(min_length=1)
    data_key: str = Field(min_length=1)


class ImageRef(_Strict):
    """File extracted from an OCI image by gardener-node-agent (cannot be rendered into user data)."""

    image: str = Field(min_length=1)
    file_path_in_image: str = Field(min_length=1)


class FileContent(_Strict):
    """Where a file's bytes come from; exactly one source must be set (checked by the loader)."""

    inline: InlineContent | None = None
    secret_ref: SecretRef | None = None
    image_ref: ImageRef | None = None
    transmit_unencoded: bool | None = None


class File(_Strict):
    """A file written on the node."""

    path: str = Field(min_length=1)
    permissions: int | None = None
    host_name: str | None = None
    content: FileContent

    @field_validator("permissions", mode="before")
    @classmethod
    def _permissions_integer(cls, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(
                f"permissions must be an integer (YAML 0644 or JSON 420), got {type(value).__name__} "
                f"{value!r}; write it unquoted"
            )
        if not 0 <= value <= MAX_PERMISSIONS:
            raise ValueError(f"permissions {value} is outside 0..{MAX_PERMISSIONS} (0o7777)")
        return value


class RegistryHost(_Strict):
    """One mirror of a registry (``[host."<url>"]`` in containerd's hosts.toml)."""

    url: str = Field(min_length=1)
    capabilities: tuple[Literal["pull", "resolve", "push"], ...] | None = None
    ca_certs: tuple[str, ...] = ()
    override_path: bool | None = None


class RegistryConfig(_Strict):
    """containerd registry configuration for one upstream (``certs.d/<upstream>/hosts.toml``)."""

    upstream: str = Field(min_length=1)
    server: str | None = None
    hosts: tuple[RegistryHost, ...] = ()
    readiness_probe: bool | None = None


class PluginConfig(_Strict):
    """A containerd config.toml plugin patch."""

    op: Literal["add", "remove"] | None = None
    path: tuple[str, ...]
    values: Any = None


class ContainerdConfig(_Strict):
    """containerd settings (only allowed for purpose ``reconcile``)."""

    sandbox_image: str = Field(min_length=1)
    registries: tuple[RegistryConfig, ...] = ()
    plugins: tuple[PluginConfig, ...] = ()


class CRIConfig(_Strict):
    """Container runtime settings."""

    name: Literal["containerd"]
    cgroup_driver: Literal["cgroupfs", "systemd"] | None = None
    containerd: ContainerdConfig | None = None


class InPlaceUpdates(_Lenient):
    """In-place update settings (kept, not rendered)."""


class OperatingSystemConfigSpec(_Strict):
    """What the node must look like."""

    type: str = Field(min_length=1)
    class_: str | None = Field(default=None, alias="class")
    provider_config: Any = None
    purpose: Literal["provision", "reconcile"]
    cri_config: CRIConfig | None = None
    units: tuple[Unit, ...] = ()
    files: tuple[File, ...] = ()
    in_place_updates: InPlaceUpdates | None = None


class OperatingSystemConfigStatus(_Lenient):
    """Extension-provided units/files (purpose ``reconcile``) plus operator-owned fields (kept)."""

    extension_units: tuple[Unit, ...] = ()
    extension_files: tuple[File, ...] = ()


class OperatingSystemConfig(_Strict):
    """``extensions.gardener.cloud/v1alpha1`` ``OperatingSystemConfig``."""

    api_version: Literal["extensions.gardener.cloud/v1alpha1"]
    kind: Literal["OperatingSystemConfig"]
    metadata: OscMetadata = Field(default_factory=OscMetadata)
    spec: OperatingSystemConfigSpec
    status: OperatingSystemConfigStatus | None = None

    @property
    def name(self) -> str:
        return self.metadata.name

    def all_units(self) -> tuple[Unit, ...]:
        """Spec units merged with status extension units as gardener-node-agent merges them."""
        extra = self.status.extension_units if self.status else ()
        return merge_units(self.spec.units, extra)


def merge_units(base: tuple[Unit, ...], extra: tuple[Unit, ...]) -> tuple[Unit, ...]:
    """node-agent ``mergeUnits``: same-name units merge; non-nil overrides win; lists append."""
    merged: dict[str, Unit] = {}
    order: list[str] = []
    for unit in (*base, *extra):
        prior = merged.get(unit.name)
        if prior is None:
            merged[unit.name] = unit
            order.append(unit.name)
            continue
        merged[unit.name] = prior.model_copy(
            update={
                "command": unit.command if unit.command is not None else prior.command,
                "enable": unit.enable if unit.enable is not None else prior.enable,
                "content": unit.content if unit.content is not None else prior.content,
                "drop_ins": prior.drop_ins + unit.drop_ins,
                "file_paths": prior.file_paths + unit.file_paths,
            }
        )
    return tuple(merged[name] for name in order)


class ReferencedSecret(BaseModel):
    """A core/v1 Secret given beside the OSC to resolve ``secretRef`` file contents.

    Values never appear in ``repr`` or errors: only key names are ever shown.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    name: str
    namespace: str | None = None
    values: dict[str, bytes] = Field(default_factory=dict, repr=False)

    def key_names(self) -> list[str]:
        return sorted(self.values)
