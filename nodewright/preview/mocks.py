"""Pulumi mock runtime for the offline preview: deterministic resource state and invoke answers.

Boundary: this module (with the rest of :mod:`nodewright.preview`) is the only core code that
imports ``pulumi``. It answers what a cloud provider would during ``pulumi preview``:

* ``new_resource`` echoes the inputs plus deterministic computed fields (``id``, ``arn``,
  ``latestVersion`` ...), so ``apply`` callbacks run with known values;
* ``call`` answers the invokes the program makes (SSM AMI-alias parameters) from a recorded fixture
  (``ssm-parameters.json`` beside this module, or a file the stack names) and, for an
  ``/aws/service/...`` parameter missing from it, a deterministic synthetic AMI id; any other
  invoke token is an error, never a silent ``None``;
* :class:`CapturingMonitor` keeps every ``RegisterResourceRequest`` (type, name, URN, parent,
  the raw ``object`` Struct with secret markers) for the policy analyzer and the report.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Final

import pulumi
from google.protobuf import json_format, struct_pb2  # type: ignore[import-untyped]
from pulumi.runtime.mocks import MockMonitor

from nodewright import reader
from nodewright.errors import InputError

SECRET_SIG: Final = "1b47061264138c4ac30d75fd1eb44270"
RESOURCE_SIG: Final = "5cf8f73096256a8f31e491e813e4eb8e"
SIG_KEY: Final = "4dabf18193072939515e22adb298388d"
UNKNOWN: Final = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"

SSM_GET_PARAMETER: Final = "aws:ssm/getParameter:getParameter"
DEFAULT_SSM_FIXTURE: Final = Path(__file__).with_name("ssm-parameters.json")


def _digest(*parts: str, length: int = 17) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:length]


def load_ssm_fixture(path: Path | None) -> dict[str, str]:
    """The recorded SSM parameters (name -> value); the default fixture when ``path`` is None."""
    p = path or DEFAULT_SSM_FIXTURE
    if path is None and not p.exists():
        return {}
    data = reader.load_json(reader.read_text(p), file=str(p))
    params = data.get("parameters", data) if isinstance(data, dict) else None
    if not isinstance(params, dict):
        raise InputError(
            'expected a JSON object {"parameters": {name: value}} of SSM parameters', file=str(p)
        )
    return {str(k): str(v) for k, v in params.items()}


@dataclass
class InvokeRecord:
    token: str
    args: dict[str, Any]
    synthesized: bool


@dataclass
class PreviewMocks(pulumi.runtime.Mocks):
    """Answers resources and invokes deterministically; records invokes."""

    ssm_parameters: dict[str, str] = field(default_factory=dict)
    invokes: list[InvokeRecord] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str | None, dict[Any, Any]]:
        rid, computed = computed_state(
            args.typ, args.name, custom=bool(args.custom), has=args.inputs.__contains__
        )
        return rid, {**args.inputs, **computed}

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[Any, Any], list[tuple[str, str]]]:
        if args.token == SSM_GET_PARAMETER:
            name = str(args.args.get("name", ""))
            synthesized = name not in self.ssm_parameters
            if synthesized and not name.startswith("/aws/service/"):
                raise KeyError(
                    f"SSM parameter {name!r} is not in the recorded fixture; add it to the stack's "
                    "nodewright:ssmFixture file"
                )
            value = self.ssm_parameters.get(name) or f"ami-{_digest(name)}"
            with self._lock:
                self.invokes.append(InvokeRecord(args.token, dict(args.args), synthesized))
            return {
                "arn": f"arn:aws:ssm:::parameter{name}",
                "id": name,
                "name": name,
                "type": "String",
                "value": value,
                "insecureValue": value,
                "version": 1,
                "withDecryption": bool(args.args.get("withDecryption", True)),
            }, []
        raise NotImplementedError(
            f"the offline preview has no answer for invoke {args.token!r}; add it to nodewright.preview.mocks"
        )


def computed_state(
    typ: str, name: str, *, custom: bool, has: Callable[[str], bool]
) -> tuple[str | None, dict[str, Any]]:
    """A resource's mocked id and the state fields a provider would compute that its inputs (``has``:
    whether an input is set) do not give: the one answer of the full and the light path
    (:mod:`nodewright.preview.light`). Components get no id and no state."""
    if not custom:
        return None, {}
    rid = _fake_id(typ, name)
    out: dict[str, Any] = {}
    if not has("arn"):
        out["arn"] = f"arn:aws:mock:::{typ.split(':')[-1].lower()}/{rid}"
    if typ == "aws:ec2/launchTemplate:LaunchTemplate":
        for key in ("latestVersion", "defaultVersion"):
            if not has(key):
                out[key] = 1
    if typ == "aws:iam/instanceProfile:InstanceProfile" and not has("name"):
        out["name"] = name
    if typ == "aws:ec2/instance:Instance" and not has("privateIp"):
        out["privateIp"] = "10.0." + str(int(_digest(name, length=2), 16) % 250) + ".10"
    return rid, out


def _fake_id(typ: str, name: str) -> str:
    prefix = {
        "aws:ec2/launchTemplate:LaunchTemplate": "lt-",
        "aws:ec2/instance:Instance": "i-",
        "aws:iam/instanceProfile:InstanceProfile": "",
    }.get(typ)
    if prefix is None:
        return f"{name}-id"
    return f"{prefix}{_digest(typ, name)}" if prefix else name


@dataclass(frozen=True)
class RecordedRegistration:
    """One ``RegisterResource`` call as the engine would see it."""

    type: str
    name: str
    urn: str
    parent: str
    custom: bool
    object: struct_pb2.Struct
    protect: bool
    dependencies: tuple[str, ...]
    provider: str

    def raw(self) -> dict[str, Any]:
        """The inputs as wire JSON (secret wrappers kept, camelCase keys): decoded once and shared
        by the analyzer and the report, so callers read it and never change it."""
        return self._wire

    @cached_property
    def _wire(self) -> dict[str, Any]:
        try:
            return _struct_json(self.object)
        except _NotFinite:  # json_format's own error for it
            out: dict[str, Any] = json_format.MessageToDict(self.object)
            return out


class _NotFinite(ValueError):
    pass


def _struct_json(struct: Any) -> dict[str, Any]:
    """``json_format.MessageToDict`` of a ``Struct`` (same keys, order and values), without its
    per-field descriptor lookups."""
    fields = struct.fields
    return {key: _value_json(fields[key]) for key in fields}


def _value_json(value: Any) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        return value.string_value
    if kind == "struct_value":
        return _struct_json(value.struct_value)
    if kind == "list_value":
        return [_value_json(v) for v in value.list_value.values]
    if kind == "number_value":
        number = value.number_value
        if math.isinf(number) or math.isnan(number):
            raise _NotFinite(number)
        return number
    if kind == "bool_value":
        return value.bool_value
    return None  # null_value, or unset


class CapturingMonitor(MockMonitor):
    """A MockMonitor that keeps every registration request (pulumi gives no API for that)."""

    def __init__(self, mocks: pulumi.runtime.Mocks) -> None:
        super().__init__(mocks)
        self.registrations: list[RecordedRegistration] = []
        self._reg_lock = threading.Lock()

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)  # type: ignore[no-untyped-call]
        if request.type != "pulumi:pulumi:Stack":
            obj = struct_pb2.Struct()
            obj.CopyFrom(request.object)
            reg = RecordedRegistration(
                type=request.type,
                name=request.name,
                urn=response.urn,
                parent=request.parent,
                custom=bool(request.custom),
                object=obj,
                protect=bool(request.protect),
                dependencies=tuple(sorted(request.dependencies)),  # set order is arbitrary
                provider=request.provider,
            )
            with self._reg_lock:
                self.registrations.append(reg)
        return response


def unwrap(value: Any, *, reveal: bool = False) -> Any:
    """Wire JSON -> plain JSON; secrets become ``"[secret]"`` unless ``reveal``."""
    if isinstance(value, list):
        return [unwrap(v, reveal=reveal) for v in value]
    if isinstance(value, Mapping):
        sig = value.get(SIG_KEY)
        if sig == SECRET_SIG:
            return unwrap(value.get("value"), reveal=reveal) if reveal else "[secret]"
        if sig == RESOURCE_SIG:
            return str(value.get("urn", ""))
        return {str(k): unwrap(v, reveal=reveal) for k, v in value.items()}
    if value == UNKNOWN:
        return "[unknown]"
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def secret_paths(value: Any, prefix: str = "") -> list[str]:
    """JSON paths (``spec.userData``) of every secret value in wire JSON."""
    out: list[str] = []
    if isinstance(value, list):
        for i, v in enumerate(value):
            out += secret_paths(v, f"{prefix}[{i}]")
    elif isinstance(value, Mapping):
        if value.get(SIG_KEY) == SECRET_SIG:
            return [prefix]
        for k, v in value.items():
            out += secret_paths(v, f"{prefix}.{k}" if prefix else str(k))
    return out
