"""Render a :class:`~nodewright.osc.nodeplan.NodePlan` as a bash script (Gardener's oneshot shape).

Shape (gardener/gardener ``extensions/pkg/controller/operatingsystemconfig/bash.go``, made safe): ``#!/bin/bash``, errexit/nounset/pipefail, the run-once
marker (Gardener's ``/var/lib/osc/provision-osc-applied`` for purpose ``provision``), then every file and unit
written atomically (temp file in the target directory, chmod, ``mv -f``), ``systemctl
daemon-reload``, then per unit ``enable``/``disable`` and ``restart --no-block``/``stop``.
Contents travel in *quoted* heredocs (``<< 'NODEWRIGHT_EOF'``: no ``$``/backtick expansion) whose
delimiter is chosen to differ from every line of the body. Clear text keeps placeholders readable;
other content is base64 piped through ``base64 -d``. A body that does not end in a newline gets
one for the heredoc, removed again with ``truncate -s -1``. Pure function, no I/O.
"""

from __future__ import annotations

import base64
import posixpath
import re
from typing import Final

from nodewright.osc.nodeplan import UNIT_FILE_MODE, NodePlan, PlannedUnit

DELIMITER: Final = "NODEWRIGHT_EOF"
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")

_PRELUDE: Final = """\
nw_write() {
  # nw_write PATH MODE STRIP < DATA: atomic write (temp file beside PATH, chmod, rename).
  local path="$1" mode="$2" strip="$3" dir tmp
  dir="$(dirname "$path")"
  mkdir -p "$dir"
  tmp="$(mktemp "$dir/.nodewright.XXXXXX")"
  cat > "$tmp"
  if [ "$strip" = 1 ]; then truncate -s -1 "$tmp"; fi
  chmod "$mode" "$tmp"
  mv -f "$tmp" "$path"
}
"""


def quote(value: str) -> str:
    """Single-quote ``value`` for bash (no expansion of anything inside)."""
    return "'" + value.replace("'", "'\\''") + "'"


def delimiter_for(body: str) -> str:
    """A heredoc delimiter that is not a line of ``body``: ``NODEWRIGHT_EOF``, ``..._1``, ..."""
    lines = set(body.split("\n"))
    candidate, n = DELIMITER, 0
    while candidate in lines:
        n += 1
        candidate = f"{DELIMITER}_{n}"
    return candidate


def _b64_lines(data: bytes) -> str:
    encoded = base64.b64encode(data).decode("ascii")
    return "".join(encoded[i : i + 76] + "\n" for i in range(0, len(encoded), 76))


def write_command(path: str, data: bytes, *, mode: int, clear: bool) -> str:
    """The bash lines that write ``data`` to ``path`` atomically with ``mode``."""
    target = f"nw_write {quote(path)} {mode:04o}"
    if not data:
        return f"{target} 0 < /dev/null\n"
    if clear:
        text = data.decode("utf-8")
        strip = not text.endswith("\n")
        body = text + "\n" if strip else text
        delim = delimiter_for(body)
        return f"{target} {1 if strip else 0} << '{delim}'\n{body}{delim}\n"
    body = _b64_lines(data)
    delim = delimiter_for(body)
    return f"base64 -d << '{delim}' | {target} 0\n{body}{delim}\n"


def _comment(text: str) -> str:
    return _CONTROL.sub("?", text)


def unit_commands(unit: PlannedUnit) -> str:
    """enable/disable then restart/stop, tolerant like Gardener's ``enable && restart``."""
    name = quote(unit.name)
    first = f"systemctl disable {name}" if unit.enable is False else f"systemctl enable {name}"
    second = f"systemctl stop {name}" if unit.action == "stop" else f"systemctl restart --no-block {name}"
    warn = f"echo {quote(f'nodewright: {unit.name}: enable/start failed')} >&2"
    return f"{first} && {second} || {warn}\n"


def render_bash(plan: NodePlan) -> str:
    """The whole script."""
    out = [
        "#!/bin/bash\n",
        f"# OperatingSystemConfig {_comment(plan.name)} (purpose {plan.purpose}), rendered by nodewright.\n",
        "set -o errexit\nset -o nounset\nset -o pipefail\n",
    ]
    if plan.marker is not None:
        out.append(
            f"if [ -f {quote(plan.marker)} ]; then\n"
            '  echo "Provision OSC already applied, exiting..."\n'
            "  exit 0\n"
            "fi\n"
        )
    out.append("\n" + _PRELUDE + "\n")
    for f in plan.files:
        out.append(write_command(f.path, f.data, mode=f.mode, clear=f.clear))
    for u in plan.units:
        if u.content is not None:
            out.append(
                write_command(u.path, u.content.encode("utf-8"), mode=UNIT_FILE_MODE, clear=u.content_clear)
            )
        for d in u.drop_ins:
            path = f"{u.path}.d/{d.name}"
            out.append(write_command(path, d.content.encode("utf-8"), mode=UNIT_FILE_MODE, clear=d.clear))
    out.append("\nsystemctl daemon-reload\n")
    out.extend(unit_commands(u) for u in plan.units)
    if plan.marker is not None:
        out.append(f"\nmkdir -p {quote(posixpath.dirname(plan.marker))}\ntouch {quote(plan.marker)}\n")
    return "".join(out)
