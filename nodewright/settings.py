"""Karpenter's controller settings that change decisions, as one immutable value.

Boundary: the names, syntax, defaults and validation of the v1.14.1 options that change what
Karpenter launches or disrupts (kubernetes-sigs/karpenter ``pkg/operator/options/options.go`` and
aws/karpenter-provider-aws ``pkg/operator/options/options.go``, tag v1.14.1), and the precedence of
their sources: flag > environment > stack > snapshot > the release's default. Nothing here reads
the process environment by itself: callers pass ``os.environ`` (or any mapping) in, and the
resulting :class:`KarpenterSettings` is passed down explicitly, never stored in module state.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Final, Literal

from nodewright.errors import InputError, UsageError

PreferencePolicy = Literal["Respect", "Ignore"]
MinValuesPolicy = Literal["Strict", "BestEffort"]

# Karpenter's gate names (FeatureGates in options.go) -> the attribute here.
GATE_NAMES: Final[dict[str, str]] = {
    "NodeRepair": "node_repair",
    "ReservedCapacity": "reserved_capacity",
    "SpotToSpotConsolidation": "spot_to_spot_consolidation",
    "NodeOverlay": "node_overlay",
    "StaticCapacity": "static_capacity",
    "CapacityBuffer": "capacity_buffer",
}


@dataclass(frozen=True, kw_only=True)
class FeatureGates:
    """Karpenter v1.14.1's feature gates; the defaults are ``DefaultFeatureGates()``."""

    node_repair: bool = False
    reserved_capacity: bool = True
    spot_to_spot_consolidation: bool = False
    node_overlay: bool = False
    static_capacity: bool = False
    capacity_buffer: bool = False

    def as_string(self) -> str:
        """Karpenter's own syntax, every gate named: ``NodeRepair=false,ReservedCapacity=true,...``."""
        return ",".join(f"{name}={str(getattr(self, attr)).lower()}" for name, attr in GATE_NAMES.items())

    def enabled(self) -> list[str]:
        return [name for name, attr in GATE_NAMES.items() if getattr(self, attr)]


def parse_feature_gates(text: str, *, source: str, base: FeatureGates | None = None) -> FeatureGates:
    """``Name=true,Other=false`` (Kubernetes' MapStringBool syntax) over ``base`` (default: defaults).

    Unlike Karpenter, which ignores an unknown gate name, an unknown name is an error with the
    closest known name: a misspelt gate would otherwise forecast the wrong controller silently.
    """
    gates = base or FeatureGates()
    changes: dict[str, bool] = {}
    for raw in text.split(","):
        item = raw.strip()
        if not item:
            continue
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name:
            raise InputError(
                f"feature gate {item!r} is not Name=true|false (e.g. NodeRepair=true)", file=source
            )
        attr = GATE_NAMES.get(name)
        if attr is None:
            close = difflib.get_close_matches(name, GATE_NAMES, n=1)
            hint = f"; did you mean {close[0]}?" if close else f"; known gates: {', '.join(GATE_NAMES)}"
            raise InputError(f"unknown feature gate {name!r}{hint}", file=source)
        if value.lower() not in ("true", "false"):
            raise InputError(f"feature gate {name}={value!r}: the value must be true or false", file=source)
        changes[attr] = value.lower() == "true"
    return replace(gates, **changes)


@dataclass(frozen=True, kw_only=True)
class KarpenterSettings:
    """The controller options that change decisions, with Karpenter's defaults."""

    feature_gates: FeatureGates = field(default_factory=FeatureGates)
    preference_policy: PreferencePolicy = "Respect"
    min_values_policy: MinValuesPolicy = "Strict"
    reserved_enis: int = 0
    vm_memory_overhead_percent: float = 0.075
    ignore_dra_requests: bool = True
    # Where each non-default value came from (setting name -> "flag" | "env" | "stack" | "snapshot").
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)

    def as_dict(self) -> dict[str, object]:
        return {
            "featureGates": self.feature_gates.as_string(),
            "preferencePolicy": self.preference_policy,
            "minValuesPolicy": self.min_values_policy,
            "reservedENIs": self.reserved_enis,
            "vmMemoryOverheadPercent": self.vm_memory_overhead_percent,
            "ignoreDRARequests": self.ignore_dra_requests,
        }


# setting attribute -> (Karpenter's environment variable, its CLI flag, the stack config key)
SETTING_NAMES: Final[dict[str, tuple[str, str, str]]] = {
    "feature_gates": ("FEATURE_GATES", "--feature-gates", "featureGates"),
    "preference_policy": ("PREFERENCE_POLICY", "--preference-policy", "preferencePolicy"),
    "min_values_policy": ("MIN_VALUES_POLICY", "--min-values-policy", "minValuesPolicy"),
    "reserved_enis": ("RESERVED_ENIS", "--reserved-enis", "reservedENIs"),
    "vm_memory_overhead_percent": (
        "VM_MEMORY_OVERHEAD_PERCENT",
        "--vm-memory-overhead-percent",
        "vmMemoryOverheadPercent",
    ),
    "ignore_dra_requests": ("IGNORE_DRA_REQUESTS", "--ignore-dra-requests", "ignoreDRARequests"),
}


def _coerce(attr: str, value: object, source: str, current: KarpenterSettings) -> object:
    names = SETTING_NAMES[attr]
    label = names[1] if source == "<args>" else names[0] if source == "<environment>" else names[2]
    text = value if isinstance(value, str) else None
    if attr == "feature_gates":
        if not isinstance(value, str):
            raise InputError(f"{label}: expected a string such as NodeRepair=true", file=source)
        return parse_feature_gates(value, source=source, base=current.feature_gates)
    if attr == "preference_policy":
        if value not in ("Respect", "Ignore"):
            raise InputError(f"invalid {label} {value!r}: one of Respect, Ignore", file=source)
        return value
    if attr == "min_values_policy":
        if value not in ("Strict", "BestEffort"):
            raise InputError(f"invalid {label} {value!r}: one of Strict, BestEffort", file=source)
        return value
    if attr == "reserved_enis":
        try:
            number = int(text.strip()) if text is not None else value
        except ValueError:
            number = None
        if not isinstance(number, int) or isinstance(number, bool) or number < 0:
            raise InputError(f"invalid {label} {value!r}: a whole number >= 0", file=source)
        return number
    if attr == "vm_memory_overhead_percent":
        try:
            ratio = float(text.strip()) if text is not None else value
        except ValueError:
            ratio = None
        if isinstance(ratio, bool) or not isinstance(ratio, int | float) or not 0 <= ratio < 1:
            raise InputError(
                f"invalid {label} {value!r}: a fraction from 0 to below 1 (0.075 is 7.5%)",
                file=source,
            )
        return float(ratio)
    # ignore_dra_requests
    if isinstance(value, bool):
        return value
    if text is not None and text.strip().lower() in ("true", "false"):
        return text.strip().lower() == "true"
    raise InputError(f"invalid {label} {value!r}: true or false", file=source)


def _apply(
    settings: KarpenterSettings, values: Mapping[str, object], origin: str, source: str
) -> KarpenterSettings:
    changes: dict[str, Any] = {}
    where = dict(settings.sources)
    for attr, value in values.items():
        if value is None:
            continue
        try:
            changes[attr] = _coerce(attr, value, source, replace(settings, **changes))
        except InputError as exc:
            if origin in ("flag", "env"):  # the command line or its environment: a usage error
                raise UsageError(exc.message, file=exc.file, path=exc.path) from exc
            raise
        where[attr] = origin
    return replace(settings, **changes, sources=where) if changes else settings


def resolve(
    *,
    flags: Mapping[str, object] | None = None,
    env: Mapping[str, str] | None = None,
    stack: Mapping[str, object] | None = None,
    snapshot: Mapping[str, object] | None = None,
    default: KarpenterSettings | None = None,
) -> KarpenterSettings:
    """The settings in force: flag > environment > stack > snapshot > ``default``.

    ``flags`` is keyed by attribute name; ``env`` by Karpenter's variable names (``os.environ``);
    ``stack`` and ``snapshot`` by the stack config keys (``featureGates``, ``reservedENIs``...). Feature
    gates merge gate by gate across sources (a flag naming one gate keeps the others from below).
    An invalid value is an :class:`InputError` naming the setting and its source.
    """
    settings = default or KarpenterSettings()
    layers: list[tuple[str, str, dict[str, object]]] = []
    if snapshot:
        layers.append(("snapshot", "cluster snapshot", _by_attr(snapshot, 2, "cluster snapshot")))
    if stack:
        layers.append(
            ("stack", "config.nodewright:karpenter", _by_attr(stack, 2, "config.nodewright:karpenter"))
        )
    if env:
        layers.append(("env", "<environment>", {a: env.get(n[0]) for a, n in SETTING_NAMES.items()}))
    if flags:
        layers.append(("flag", "<args>", {a: v for a, v in flags.items() if a in SETTING_NAMES}))
    for origin, source, values in layers:
        settings = _apply(settings, values, origin, source)
    return settings


def _by_attr(values: Mapping[str, object], column: int, source: str) -> dict[str, object]:
    known = {names[column]: attr for attr, names in SETTING_NAMES.items()}
    out: dict[str, object] = {}
    for key, value in values.items():
        attr = known.get(key)
        if attr is None:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"; did you mean {close[0]}?" if close else f"; known: {', '.join(known)}"
            raise InputError(f"unknown Karpenter setting {key!r}{hint}", file=source)
        out[attr] = value
    return out


def setting_attrs() -> list[str]:
    return [f.name for f in fields(KarpenterSettings) if f.name != "sources"]
