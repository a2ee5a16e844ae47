"""What a reconcile would do: gardener-node-agent's diff of the previous and the new OSC.

gardener/gardener ``pkg/nodeagent/controller/operatingsystemconfig/changes.go``:
a file changed when it is new or its bytes/mode differ; a unit gets a command when it is new, its
spec changed (name/command/enable/content/dropIns/filePaths), or any file in its ``filePaths``
changed. The command is ``stop`` if ``enable: false`` or ``command: stop``, else ``restart``.
Removed units that nodewright/node-agent created (had ``content``) are stopped and deleted;
removed OS units (no content) are restarted so they lose the drop-ins. containerd is restarted
when its config (sandbox image, cgroup driver, plugins) changed; registry changes only rewrite
``hosts.toml`` files, which containerd reads without restart. Pure; deterministic order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from nodewright.osc.loading import LoadedOSC
from nodewright.osc.nodeplan import NodePlan, PlannedUnit, node_plan

Command = Literal["restart", "stop"]
CONTAINERD_UNIT = "containerd.service"


@dataclass(frozen=True, kw_only=True)
class ReconcileChanges:
    """Files to write/delete and unit commands, each list sorted by name."""

    files_changed: tuple[str, ...]
    files_removed: tuple[str, ...]
    unit_commands: tuple[tuple[str, Command], ...]
    units_removed: tuple[str, ...]
    restart_containerd: bool

    @property
    def units_to_restart(self) -> tuple[str, ...]:
        restart = {name for name, cmd in self.unit_commands if cmd == "restart"}
        if self.restart_containerd:
            restart.add(CONTAINERD_UNIT)
        return tuple(sorted(restart))

    @property
    def units_to_stop(self) -> tuple[str, ...]:
        return tuple(name for name, cmd in self.unit_commands if cmd == "stop")

    def summary(self) -> dict[str, object]:
        """JSON-ready form (paths and names only, never contents)."""
        return {
            "filesChanged": list(self.files_changed),
            "filesRemoved": list(self.files_removed),
            "unitsToRestart": list(self.units_to_restart),
            "unitsToStop": list(self.units_to_stop),
            "unitsRemoved": list(self.units_removed),
            "restartContainerd": self.restart_containerd,
        }


def _unit_key(u: PlannedUnit) -> tuple[object, ...]:
    return (
        u.name,
        u.command,
        u.enable,
        u.content,
        tuple((d.name, d.content) for d in u.drop_ins),
        u.file_paths,
    )


def diff_plans(
    previous: NodePlan | None, current: NodePlan, *, containerd_changed: bool = False
) -> ReconcileChanges:
    """The changes that turn a node at ``previous`` (None: nothing applied yet) into ``current``."""
    old_files = {f.path: (f.data, f.mode) for f in previous.files} if previous else {}
    new_files = {f.path: (f.data, f.mode) for f in current.files}
    changed = sorted(p for p, v in new_files.items() if old_files.get(p) != v)
    removed_files = sorted(p for p in old_files if p not in new_files)
    changed_set = set(changed)
    old_units = {u.name: u for u in previous.units} if previous else {}
    commands: dict[str, Command] = {}
    for u in current.units:
        prior = old_units.get(u.name)
        spec_changed = prior is None or _unit_key(prior) != _unit_key(u)
        files_touched = any(p in changed_set for p in u.file_paths)
        if spec_changed or files_touched:
            commands[u.name] = u.action
    current_names = {u.name for u in current.units}
    removed_units: list[str] = []
    for name, prior in sorted(old_units.items()):
        if name in current_names:
            continue
        if prior.content is not None:
            removed_units.append(name)
        else:
            commands.setdefault(name, "restart")
    return ReconcileChanges(
        files_changed=tuple(changed),
        files_removed=tuple(removed_files),
        unit_commands=tuple(sorted(commands.items())),
        units_removed=tuple(removed_units),
        restart_containerd=containerd_changed,
    )


def _containerd_key(loaded: LoadedOSC | None) -> tuple[object, ...] | None:
    if loaded is None or loaded.osc.spec.cri_config is None:
        return None
    cri = loaded.osc.spec.cri_config
    c = cri.containerd
    return (
        cri.cgroup_driver,
        c.sandbox_image if c else None,
        tuple(p.model_dump_json() for p in c.plugins) if c else (),
    )


def reconcile_changes(
    previous: LoadedOSC | None, current: LoadedOSC, *, host_name: str | None = None
) -> ReconcileChanges:
    """Plan both OSCs (Secrets resolved) and diff them as gardener-node-agent does."""
    old = node_plan(previous, host_name=host_name) if previous is not None else None
    new = node_plan(current, host_name=host_name)
    return diff_plans(old, new, containerd_changed=_containerd_key(previous) != _containerd_key(current))
