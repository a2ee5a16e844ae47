"""Bottlerocket user data: the user's TOML settings, with Karpenter's overrides, as go-toml writes them.

Port of ``bootstrap/bottlerocket.go`` + ``bottlerocketsettings.go`` (aws/karpenter-provider-aws v1.14.1
``pkg/providers/amifamily/bootstrap/``). The user's TOML is parsed with tomlkit (errors name the line); every ``settings.*``
table other than ``kubernetes`` and ``bootstrap-commands`` is kept as-is; ``settings.kubernetes``
is decoded into Karpenter's fixed schema, so unknown keys are dropped (with a warning on the
``nodewright`` logger, naming keys, never values); cluster name/endpoint/certificate and max-pods
are forced, node-labels merged with Karpenter winning, node-taints rebuilt from Karpenter's taints
only, kubelet-derived settings replaced only when ``spec.kubelet`` sets them; RAID0 adds the
``000-mount-instance-storage`` bootstrap command.
"""

from __future__ import annotations

import logging
import tomllib
from collections.abc import Mapping
from typing import Any, Final

import tomlkit
import tomlkit.exceptions

from nodewright.userdata import gotoml
from nodewright.userdata.gotoml import Struct
from nodewright.userdata.options import RAID0, Options, UserDataError

log = logging.getLogger("nodewright")

STR, INT, BOOL, LIST_STR, MAP_STR, MAP_LIST_STR, CRED, STATIC, ANY = (
    "string",
    "integer",
    "boolean",
    "array of strings",
    "table of strings",
    "table of string arrays",
    "table of credential providers",
    "table of static pods",
    "any",
)

# BottlerocketKubernetes, in Go declaration order (TOML name -> type); the order go-toml writes.
KUBERNETES_FIELDS: Final[dict[str, str]] = {
    "api-server": STR,
    "cloud-provider": STR,
    "cluster-certificate": STR,
    "cluster-name": STR,
    "cluster-dns-ip": ANY,
    "credential-providers": CRED,
    "node-labels": MAP_STR,
    "node-taints": MAP_LIST_STR,
    "max-pods": INT,
    "static-pods": STATIC,
    "eviction-hard": MAP_STR,
    "eviction-soft": MAP_STR,
    "eviction-soft-grace-period": MAP_STR,
    "eviction-max-pod-grace-period": INT,
    "kube-reserved": MAP_STR,
    "system-reserved": MAP_STR,
    "allowed-unsafe-sysctls": LIST_STR,
    "server-tls-bootstrap": BOOL,
    "registry-qps": INT,
    "registry-burst": INT,
    "event-qps": INT,
    "event-burst": INT,
    "kube-api-qps": INT,
    "kube-api-burst": INT,
    "container-log-max-size": STR,
    "container-log-max-files": INT,
    "cpu-manager-policy": STR,
    "cpu-manager-policy-options": LIST_STR,
    "cpu-manager-reconcile-period": STR,
    "memory-manager-policy": STR,
    "memory-manager-reserved-memory": ANY,
    "topology-manager-scope": STR,
    "topology-manager-policy": STR,
    "topology-manager-policy-options": ANY,
    "image-gc-high-threshold-percent": STR,
    "image-gc-low-threshold-percent": STR,
    "ids-per-pod": INT,
    "cpu-cfs-quota-enforced": BOOL,
    "shutdown-grace-period": STR,
    "shutdown-grace-period-for-critical-pods": STR,
    "cluster-domain": STR,
    "seccomp-default": BOOL,
    "pod-pids-limit": INT,
    "device-ownership-from-security-context": BOOL,
    "single-process-oom-kill": BOOL,
    "container-log-max-workers": INT,
    "container-log-monitor-interval": STR,
    "hostname-override-source": STR,
    "log-level": INT,
}
# Fields without omitempty: written even when empty (when set at all).
_NO_OMITEMPTY: Final = frozenset({"api-server", "cloud-provider", "cluster-certificate", "cluster-name"})
MOUNT_COMMAND: Final = "000-mount-instance-storage"


def _where(*path: str) -> str:
    return ".".join(path)


def _type_error(path: str, want: str, got: Any) -> UserDataError:
    hint = " (write it as a quoted string)" if want == STR and isinstance(got, int | float) else ""
    return UserDataError(
        f"invalid UserData: Bottlerocket setting {path} must be a TOML {want}, not {_toml_type(got)}{hint}"
    )


def _toml_type(v: Any) -> str:
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, float):
        return "a float"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, Mapping):
        return "a table"
    return f"a {type(v).__name__}"


def _typed(path: str, kind: str, value: Any) -> Any:
    """Decode ``value`` into Karpenter's Go type for the field, as go-toml would (or raise)."""
    if kind == ANY:
        return value
    if kind == STR:
        if not isinstance(value, str):
            raise _type_error(path, kind, value)
        return value
    if kind == INT:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _type_error(path, kind, value)
        return value
    if kind == BOOL:
        if not isinstance(value, bool):
            raise _type_error(path, kind, value)
        return value
    if kind == LIST_STR:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _type_error(path, kind, value)
        return list(value)
    if not isinstance(value, Mapping):
        raise _type_error(path, kind, value)
    if kind == MAP_STR:
        return {str(k): _typed(f"{path}.{k}", STR, v) for k, v in value.items()}
    if kind == MAP_LIST_STR:
        return {str(k): _typed(f"{path}.{k}", LIST_STR, v) for k, v in value.items()}
    if kind == CRED:
        out: dict[str, Any] = {}
        for name, provider in value.items():
            p = provider
            if not isinstance(p, Mapping):
                raise _type_error(f"{path}.{name}", "table", p)
            s = Struct()
            s["enabled"] = _typed(f"{path}.{name}.enabled", BOOL, p["enabled"]) if "enabled" in p else None
            if "cache-duration" in p:
                s["cache-duration"] = _typed(f"{path}.{name}.cache-duration", STR, p["cache-duration"])
            s["image-patterns"] = _typed(
                f"{path}.{name}.image-patterns", LIST_STR, p.get("image-patterns", [])
            )
            env = (
                _typed(f"{path}.{name}.environment", MAP_STR, p["environment"])
                if "environment" in p
                else None
            )
            if env:
                s["environment"] = env
            out[str(name)] = s
        return out
    if kind == STATIC:
        pods: dict[str, Any] = {}
        for name, pod in value.items():
            if not isinstance(pod, Mapping):
                raise _type_error(f"{path}.{name}", "table", pod)
            s = Struct()
            if "enabled" in pod:
                s["enabled"] = _typed(f"{path}.{name}.enabled", BOOL, pod["enabled"])
            if pod.get("manifest"):
                s["manifest"] = _typed(f"{path}.{name}.manifest", STR, pod["manifest"])
            pods[str(name)] = s
        return pods
    raise AssertionError(kind)


def parse_toml(text: str) -> dict[str, Any]:
    """The user's TOML as plain Python values; invalid TOML raises naming the line and column."""
    try:
        doc = tomlkit.parse(text)
        tomllib.loads(text)
    except tomlkit.exceptions.ParseError as exc:
        raise UserDataError(
            f"invalid UserData: Bottlerocket user data is not valid TOML: line {exc.line}, column {exc.col}: "
            f"{str(exc).split(' at line ')[0]}"
        ) from None
    except (tomlkit.exceptions.TOMLKitError, tomllib.TOMLDecodeError) as exc:
        raise UserDataError(f"invalid UserData: Bottlerocket user data is not valid TOML: {exc}") from None
    return dict(doc.unwrap())


def unmarshal_toml(text: str | None) -> tuple[dict[str, Any], Struct, dict[str, Any] | None]:
    """Karpenter's ``UnmarshalTOML``: (raw settings, typed settings.kubernetes, typed bootstrap-commands).

    Dropped keys (outside ``settings``, unknown ``settings.kubernetes`` keys) are logged as warnings.
    """
    doc = parse_toml(text) if text else {}
    dropped = sorted(k for k in doc if k != "settings")
    settings = doc.get("settings", {})
    if not isinstance(settings, Mapping):
        raise _type_error("settings", "table", settings)
    raw = dict(settings)
    kube = raw.get("kubernetes", {})
    if not isinstance(kube, Mapping):
        raise _type_error("settings.kubernetes", "table", kube)
    typed = Struct()
    for key, kind in KUBERNETES_FIELDS.items():
        if key in kube:
            typed[key] = _typed(_where("settings", "kubernetes", key), kind, kube[key])
    unknown = sorted(k for k in kube if k not in KUBERNETES_FIELDS)
    if unknown:
        log.warning(
            "Bottlerocket user data: unknown settings.kubernetes key(s) %s are dropped: Karpenter re-writes "
            "settings.kubernetes from its fixed schema (aws/karpenter-provider-aws#8738); set them another way "
            "or check the spelling",
            ", ".join(unknown),
        )
    if dropped:
        log.warning(
            "Bottlerocket user data: top-level key(s) %s are dropped: only [settings] is kept; move them under settings",
            ", ".join(dropped),
        )
    commands: dict[str, Any] | None = None
    if "bootstrap-commands" in raw:
        cmds = raw["bootstrap-commands"]
        if not isinstance(cmds, Mapping):
            raise _type_error("settings.bootstrap-commands", "table", cmds)
        commands = {}
        for name, cmd in cmds.items():
            where = f"settings.bootstrap-commands.{name}"
            if not isinstance(cmd, Mapping):
                raise _type_error(where, "table", cmd)
            lines = cmd.get("commands", [])
            if not isinstance(lines, list) or not all(
                isinstance(c, list) and all(isinstance(a, str) for a in c) for c in lines
            ):
                raise _type_error(f"{where}.commands", "array of string arrays", lines)
            commands[str(name)] = Struct(
                commands=[list(c) for c in lines],
                mode=_typed(f"{where}.mode", STR, cmd.get("mode", "")),
                essential=_typed(f"{where}.essential", BOOL, cmd.get("essential", False)),
            )
    return raw, typed, commands


def apply_overrides(typed: Struct, options: Options) -> Struct:
    """What ``Bottlerocket.Script`` forces into settings.kubernetes (a new Struct, declaration order)."""
    values: dict[str, Any] = dict(typed)
    values["cluster-name"] = options.cluster_name
    values["api-server"] = options.cluster_endpoint
    values["cluster-certificate"] = options.ca_bundle
    values["node-labels"] = {**values.get("node-labels", {}), **options.labels}
    k = options.kubelet
    if k is not None:
        if k.max_pods is not None:
            values["max-pods"] = k.max_pods
        if k.cluster_dns:
            values["cluster-dns-ip"] = k.cluster_dns[0]
        for name, value in (
            ("system-reserved", k.system_reserved),
            ("kube-reserved", k.kube_reserved),
            ("eviction-hard", k.eviction_hard),
            ("eviction-soft", k.eviction_soft),
            ("eviction-soft-grace-period", k.grace_periods()),
        ):
            if value is not None:
                values[name] = dict(value)
        if k.eviction_max_pod_grace_period is not None:
            values["eviction-max-pod-grace-period"] = k.eviction_max_pod_grace_period
        if k.image_gc_high_threshold_percent is not None:
            values["image-gc-high-threshold-percent"] = str(k.image_gc_high_threshold_percent)
        if k.image_gc_low_threshold_percent is not None:
            values["image-gc-low-threshold-percent"] = str(k.image_gc_low_threshold_percent)
        if k.cpu_cfs_quota is not None:
            values["cpu-cfs-quota-enforced"] = k.cpu_cfs_quota
    taints: dict[str, list[str]] = {}
    for taint in options.taints:
        taints.setdefault(taint.key, []).append(f"{taint.value}:{taint.effect}")
    values["node-taints"] = taints
    out = Struct()
    for key in KUBERNETES_FIELDS:
        if key not in values or values[key] is None:
            continue
        value = values[key]
        if key not in _NO_OMITEMPTY and isinstance(value, dict | list | str) and len(value) == 0:
            continue
        out[key] = value
    return out


def render_bottlerocket(options: Options) -> str:
    """The decoded Bottlerocket user data (TOML)."""
    raw, typed, commands = unmarshal_toml(options.custom_user_data)
    settings = dict(raw)
    settings["kubernetes"] = apply_overrides(typed, options)
    if options.instance_store_policy == RAID0:
        commands = dict(commands or {})
        bind = ["apiclient", "ephemeral-storage", "bind"]
        if not options.bottlerocket_default_mount_paths:
            bind += ["--dirs", "/var/lib/containerd", "/var/lib/kubelet", "/var/log/pods"]
        commands[MOUNT_COMMAND] = Struct(
            commands=[["apiclient", "ephemeral-storage", "init"], bind], mode="always", essential=True
        )
    if commands is not None:
        settings["bootstrap-commands"] = commands
    return gotoml.dumps(Struct(settings=settings))
