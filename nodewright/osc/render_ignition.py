"""Render a :class:`~nodewright.osc.nodeplan.NodePlan` as an Ignition spec 3.3.0 config (JSON).

Files: ``overwrite: true`` (Ignition fails on an existing file otherwise), ``mode`` in decimal,
``contents.source`` an RFC 2397 data URL: ``data:,`` plus percent-encoding (``%20`` for a space,
never ``+``: Ignition's decoder only knows ``%XX``) for clear text -- so ``<<BOOTSTRAP_TOKEN>>``
becomes the exact ``%3C%3CBOOTSTRAP_TOKEN%3E%3E`` token machine-controller-manager substitutes --
or ``data:;base64,`` otherwise. Units: ``enabled`` (Gardener's default true), ``contents``,
lower-case ``dropins``; a unit ``command`` has no Ignition equivalent (enabled units start at
boot). Compact JSON, one trailing newline. Pure function, no I/O; the only side effect is a
warning for an enabled unit without ``[Install]``, which ``ignition-validate`` would flag.
"""

from __future__ import annotations

import base64
import json
import logging
import re
from typing import Any, Final
from urllib.parse import quote

from nodewright.errors import RenderError
from nodewright.osc.nodeplan import NodePlan, PlannedUnit

log = logging.getLogger("nodewright")

SPEC_VERSION: Final = "3.3.0"
_INSTALL: Final = re.compile(r"^\s*\[Install\]\s*$", re.MULTILINE)


def data_url(data: bytes, *, clear: bool) -> str:
    """RFC 2397 data URL: percent-encoded clear text, else base64."""
    if clear:
        return "data:," + quote(data, safe="")
    return "data:;base64," + base64.b64encode(data).decode("ascii")


def _unit(u: PlannedUnit) -> dict[str, Any]:
    out: dict[str, Any] = {"name": u.name}
    enabled = u.enable is not False
    if enabled and u.content is not None and not _INSTALL.search(u.content):
        log.warning(
            "unit %s is enabled but has no [Install] section: Ignition cannot enable it; "
            "add [Install] WantedBy=multi-user.target to start it at boot",
            u.name,
        )
    else:
        out["enabled"] = enabled
    if u.content is not None:
        out["contents"] = u.content
    if u.drop_ins:
        out["dropins"] = [{"name": d.name, "contents": d.content} for d in u.drop_ins]
    return out


def ignition_config(plan: NodePlan) -> dict[str, Any]:
    """The Ignition config as a mapping."""
    files: list[dict[str, Any]] = []
    for f in plan.files:
        if f.mode & 0o7000:
            raise RenderError(
                f"{f.path}: mode {f.mode:04o} has setuid/setgid/sticky bits, which Ignition does not "
                "support; drop them or use the cloud-init or bash format"
            )
        files.append(
            {
                "path": f.path,
                "overwrite": True,
                "mode": f.mode,
                "contents": {"source": data_url(f.data, clear=f.clear)},
            }
        )
    config: dict[str, Any] = {"ignition": {"version": SPEC_VERSION}}
    if files:
        config["storage"] = {"files": files}
    if plan.units:
        config["systemd"] = {"units": [_unit(u) for u in plan.units]}
    return config


def render_ignition(plan: NodePlan) -> str:
    """Compact JSON plus a newline."""
    return json.dumps(ignition_config(plan), separators=(",", ":"), ensure_ascii=False) + "\n"
