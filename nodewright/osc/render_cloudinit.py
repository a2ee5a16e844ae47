"""Render a :class:`~nodewright.osc.nodeplan.NodePlan` as a ``#cloud-config`` document.

``write_files`` carries every file, unit and drop-in (``permissions`` as a quoted octal string,
``encoding: b64`` for content that is not clear text), ``runcmd`` does ``systemctl daemon-reload``
and per unit ``enable``/``disable`` and ``restart --no-block``/``stop`` (list form: no shell
quoting), then touches Gardener's run-once marker for purpose ``provision``. Clear text is emitted
as YAML literal blocks (or quoted scalars) with unlimited line width, so a placeholder such as
``<<BOOTSTRAP_TOKEN>>`` is never folded or split. Pure function, no I/O.
"""

from __future__ import annotations

import base64
import posixpath
from typing import Any, Final

import yaml

from nodewright.osc.nodeplan import UNIT_FILE_MODE, NodePlan, PlannedUnit

HEADER: Final = "#cloud-config\n"


class _Text(str):
    """A string emitted as a literal block when it spans lines."""


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """libyaml's emitter when present (10x faster), same output as the pure-Python one."""


def _represent_text(dumper: yaml.SafeDumper, value: _Text) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(value), style=style)


class _Command(list[str]):
    """A runcmd entry, emitted in flow style: ``[systemctl, daemon-reload]``."""


def _represent_command(dumper: yaml.SafeDumper, value: _Command) -> yaml.SequenceNode:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", list(value), flow_style=True)


_Dumper.add_representer(_Text, _represent_text)
_Dumper.add_representer(_Command, _represent_command)


def _entry(path: str, data: bytes, *, mode: int, clear: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"path": path, "permissions": f"{mode:04o}"}
    if clear:
        entry["content"] = _Text(data.decode("utf-8"))
    else:
        entry["encoding"] = "b64"
        entry["content"] = base64.b64encode(data).decode("ascii")
    return entry


def _commands(unit: PlannedUnit) -> list[_Command]:
    first = _Command(["systemctl", "disable" if unit.enable is False else "enable", unit.name])
    second = _Command(
        ["systemctl", "stop", unit.name]
        if unit.action == "stop"
        else ["systemctl", "restart", "--no-block", unit.name]
    )
    return [first, second]


def cloud_config(plan: NodePlan) -> dict[str, Any]:
    """The cloud-config as a mapping (before YAML serialisation)."""
    files = [_entry(f.path, f.data, mode=f.mode, clear=f.clear) for f in plan.files]
    for u in plan.units:
        if u.content is not None:
            files.append(
                _entry(u.path, u.content.encode("utf-8"), mode=UNIT_FILE_MODE, clear=u.content_clear)
            )
        for d in u.drop_ins:
            files.append(
                _entry(f"{u.path}.d/{d.name}", d.content.encode("utf-8"), mode=UNIT_FILE_MODE, clear=d.clear)
            )
    runcmd: list[_Command] = [_Command(["systemctl", "daemon-reload"])]
    for u in plan.units:
        runcmd.extend(_commands(u))
    if plan.marker is not None:
        runcmd += [
            _Command(["mkdir", "-p", posixpath.dirname(plan.marker)]),
            _Command(["touch", plan.marker]),
        ]
    config: dict[str, Any] = {}
    if files:
        config["write_files"] = files
    config["runcmd"] = runcmd
    return config


def render_cloudinit(plan: NodePlan) -> str:
    """``#cloud-config`` followed by the YAML document."""
    body = yaml.dump(
        cloud_config(plan),
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=2**30,
    )
    return HEADER + body
