"""The running Karpenter controller's settings, read from its Deployment, and the snapshot's own record.

The Helm chart (aws/karpenter-provider-aws v1.14.1, charts/karpenter/templates/deployment.yaml)
passes the settings that change decisions as container env (FEATURE_GATES, RESERVED_ENIS,
VM_MEMORY_OVERHEAD_PERCENT, MIN_VALUES_POLICY, PREFERENCE_POLICY, IGNORE_DRA_REQUESTS) to the
container ``controller`` of the Deployment named after the release (``karpenter``), usually in
``kube-system``; a ``--flag`` in the container's args wins over its env, as in Karpenter's options
parsing. The snapshot records them in the stack config spelling of
:data:`nodewright.settings.SETTING_NAMES` (``featureGates``...), in one ``ClusterSnapshot`` item
that also lists the kinds the cluster does not serve; :func:`snapshot_settings` reads them back
for :func:`nodewright.settings.resolve` (``snapshot=``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from nodewright.settings import SETTING_NAMES

if TYPE_CHECKING:
    from nodewright.cluster.state import ClusterState

SNAPSHOT_API_VERSION: Final = "nodewright.dev/v1alpha1"
SNAPSHOT_KIND: Final = "ClusterSnapshot"
DEFAULT_NAMESPACE: Final = "kube-system"
DEFAULT_NAME: Final = "karpenter"
# Where the chart's Deployment usually is when no flag names it: the documented namespace, then
# the one older install guides used.
CANDIDATES: Final = ((DEFAULT_NAMESPACE, DEFAULT_NAME), ("karpenter", DEFAULT_NAME))
CONTAINER: Final = "controller"
CHART_LABEL: Final = ("app.kubernetes.io/name", "karpenter")


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def find_controller(
    deployments: Sequence[Mapping[str, Any]], *, namespace: str | None = None, name: str | None = None
) -> Mapping[str, Any] | None:
    """The Karpenter Deployment: the one named (namespace/name), else the chart's usual places, else
    the only Deployment labelled ``app.kubernetes.io/name=karpenter``."""
    by_key = {(_meta(d).get("namespace"), _meta(d).get("name")): d for d in deployments}
    if namespace is not None or name is not None:
        return by_key.get((namespace or DEFAULT_NAMESPACE, name or DEFAULT_NAME))
    for key in CANDIDATES:
        if key in by_key:
            return by_key[key]
    labelled = [
        d
        for d in deployments
        if isinstance(_meta(d).get("labels"), Mapping)
        and _meta(d)["labels"].get(CHART_LABEL[0]) == CHART_LABEL[1]
    ]
    return labelled[0] if len(labelled) == 1 else None


def _container(deployment: Mapping[str, Any]) -> Mapping[str, Any] | None:
    spec = deployment.get("spec")
    template = spec.get("template") if isinstance(spec, Mapping) else None
    pod = template.get("spec") if isinstance(template, Mapping) else None
    containers = pod.get("containers") if isinstance(pod, Mapping) else None
    if not isinstance(containers, list):
        return None
    named = [c for c in containers if isinstance(c, Mapping) and c.get("name") == CONTAINER]
    if named:
        return named[0]
    mappings = [c for c in containers if isinstance(c, Mapping)]
    return mappings[0] if len(mappings) == 1 else None


def _flag_values(args: Any) -> dict[str, str]:
    """``--flag=value`` and ``--flag value`` pairs of a container's command/args."""
    out: dict[str, str] = {}
    words = [a for a in args if isinstance(a, str)] if isinstance(args, list) else []
    for i, word in enumerate(words):
        if not word.startswith("--"):
            continue
        if "=" in word:
            flag, value = word.split("=", 1)
            out[flag] = value
        elif i + 1 < len(words) and not words[i + 1].startswith("--"):
            out[word] = words[i + 1]
    return out


def controller_settings(deployment: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    """(settings by stack config key, notes on what could not be read) of the controller Deployment."""
    where = f"{_meta(deployment).get('namespace')}/{_meta(deployment).get('name')}"
    container = _container(deployment)
    if container is None:
        return {}, [f"Deployment {where}: no container {CONTAINER!r}; Karpenter settings not recorded"]
    env: dict[str, Any] = {}
    for entry in container.get("env") or []:
        if isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
            env[entry["name"]] = entry
    flags = {**_flag_values(container.get("command")), **_flag_values(container.get("args"))}
    settings: dict[str, str] = {}
    notes: list[str] = []
    for variable, flag, key in SETTING_NAMES.values():
        if flag in flags:
            settings[key] = flags[flag]
            continue
        entry = env.get(variable)
        if entry is None:
            continue
        if isinstance(entry.get("value"), str):
            settings[key] = entry["value"]
        elif "valueFrom" in entry:
            notes.append(f"Deployment {where}: {variable} comes from valueFrom; not recorded")
    return settings, notes


def snapshot_record(
    *, skipped: Sequence[Mapping[str, str]], controller: str | None, settings: Mapping[str, str]
) -> dict[str, Any]:
    """The ``ClusterSnapshot`` item a snapshot carries (docs/cli.md, "cluster snapshot")."""
    return {
        "apiVersion": SNAPSHOT_API_VERSION,
        "kind": SNAPSHOT_KIND,
        "metadata": {"name": "snapshot"},
        "skippedKinds": [dict(s) for s in skipped],
        "karpenter": {"controller": controller, "settings": dict(settings)},
    }


def snapshot_settings(state: ClusterState) -> dict[str, object]:
    """The running controller's settings recorded in a snapshot, keyed as ``settings.resolve(snapshot=)`` takes them."""
    return dict(state.karpenter_settings)
