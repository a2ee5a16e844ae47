"""Gardener's small-init pattern for OSCs whose user data would exceed 16384 bytes.

Gardener keeps provision user data tiny (gardener/gardener
``pkg/component/extensions/operatingsystemconfig/nodeinit/``: gardener-node-init fetches the rest). nodewright does the same when a rendered provision OSC is too large: the user data becomes
a *small* plan -- the bootstrap token and machine name as placeholders, the cluster CA, an init
script and a oneshot ``nodewright-osc-init.service`` -- rendered in the requested format. On the
node the script reads Secret ``<namespace>/osc-result-<name>`` key ``full_config`` from the API
server with the bootstrap token, base64-decodes the full bash rendering, substitutes the
placeholders there with the node's own values (machine-controller-manager only substitutes the
user data), and runs it. This module builds that plan; it does no I/O.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import yaml

from nodewright import reader
from nodewright.osc.nodeplan import BOOTSTRAP_TOKEN, MACHINE_NAME, NodePlan, PlannedFile, PlannedUnit

INIT_DIR: Final = "/var/lib/nodewright-osc"
INIT_UNIT: Final = "nodewright-osc-init.service"
INIT_MARKER: Final = f"{INIT_DIR}/init-applied"
"""Run-once marker of the init user data (the full config keeps Gardener's own marker)."""
RESULT_NAMESPACE: Final = "kube-system"
FULL_CONFIG_KEY: Final = "full_config"
NODE_AGENT_CONFIG: Final = "/var/lib/gardener-node-agent/config.yaml"
NODE_AGENT_CA: Final = "/var/lib/gardener-node-agent/cluster-ca.crt"


@dataclass(frozen=True, kw_only=True)
class InitOptions:
    """Where the node fetches the full config: API server URL, its CA, the Secret's namespace."""

    api_server: str
    ca_bundle: bytes | None = None
    namespace: str = RESULT_NAMESPACE


def result_secret_name(osc_name: str) -> str:
    """Gardener's ``osc-result-<name>``."""
    return f"osc-result-{osc_name}"


def options_from_plan(plan: NodePlan, *, namespace: str = RESULT_NAMESPACE) -> InitOptions | None:
    """API server and CA from gardener-node-agent's own files in the OSC, when it carries them."""
    files = {f.path: f for f in plan.files}
    server: str | None = None
    ca: bytes | None = None
    cfg = files.get(NODE_AGENT_CONFIG)
    if cfg is not None:
        try:
            doc: Any = reader.safe_load(cfg.data.decode("utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError):
            doc = None
        api = doc.get("apiServer") if isinstance(doc, Mapping) else None
        if isinstance(api, Mapping):
            if isinstance(api.get("server"), str):
                server = api["server"]
            if isinstance(api.get("caBundle"), str):
                try:
                    ca = base64.b64decode(api["caBundle"], validate=True)
                except (binascii.Error, ValueError):
                    ca = None
    if ca is None and NODE_AGENT_CA in files:
        ca = files[NODE_AGENT_CA].data
    if server is None:
        return None
    return InitOptions(api_server=server, ca_bundle=ca, namespace=namespace)


def _q(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def init_script(url: str, *, directory: str = INIT_DIR) -> str:
    """The node-side fetch-and-apply script (no literal placeholder inside: MCM would replace it)."""
    return f"""\
#!/bin/bash
# nodewright OSC init: fetch the full OperatingSystemConfig rendering and apply it.
set -o errexit
set -o nounset
set -o pipefail
dir={_q(directory)}
url={_q(url)}
umask 077
token="$(cat "$dir/bootstrap-token")"
machine="$(cat "$dir/machine-name")"
ca_args=()
if [ -s "$dir/ca.crt" ]; then ca_args=(--cacert "$dir/ca.crt"); fi
until curl --fail --silent --show-error ${{ca_args[@]+"${{ca_args[@]}}"}} \\
    --header "Authorization: Bearer $token" --output "$dir/secret.json" "$url"; do
  echo "nodewright: waiting for the OSC secret at $url" >&2
  sleep 5
done
if command -v jq >/dev/null 2>&1; then
  data="$(jq -r '.data.{FULL_CONFIG_KEY}' "$dir/secret.json")"
else
  data="$(grep -o '"{FULL_CONFIG_KEY}": *"[A-Za-z0-9+/=]*"' "$dir/secret.json" | cut -d'"' -f4)"
fi
rm -f "$dir/secret.json"
script="$(printf '%s' "$data" | base64 -d; printf x)"
script="${{script%x}}"
ph_token="$(printf '<<%s>>' BOOTSTRAP_TOKEN)"
ph_machine="$(printf '<<%s>>' MACHINE_NAME)"
script="${{script//"$ph_token"/"$token"}}"
script="${{script//"$ph_machine"/"$machine"}}"
printf '%s' "$script" > "$dir/osc.sh"
chmod 0700 "$dir/osc.sh"
exec /bin/bash "$dir/osc.sh"
"""


INIT_UNIT_CONTENT: Final = f"""\
[Unit]
Description=Fetches the full OperatingSystemConfig from the cluster and applies it (nodewright).
After=network-online.target
Wants=network-online.target
StartLimitIntervalSec=0
[Service]
Type=oneshot
RemainAfterExit=yes
Restart=on-failure
RestartSec=5
ExecStart={INIT_DIR}/init.sh
StandardOutput=journal+console
StandardError=journal+console
[Install]
WantedBy=multi-user.target
"""


def init_plan(full: NodePlan, options: InitOptions) -> NodePlan:
    """The small provision plan that fetches ``full`` from its result Secret."""
    server = options.api_server.rstrip("/")
    url = f"{server}/api/v1/namespaces/{options.namespace}/secrets/{result_secret_name(full.name)}"
    files = [
        PlannedFile(
            path=f"{INIT_DIR}/bootstrap-token", data=BOOTSTRAP_TOKEN.encode(), mode=0o600, clear=True
        ),
        PlannedFile(path=f"{INIT_DIR}/machine-name", data=MACHINE_NAME.encode(), mode=0o600, clear=True),
    ]
    if options.ca_bundle:
        files.append(PlannedFile(path=f"{INIT_DIR}/ca.crt", data=options.ca_bundle, mode=0o644, clear=False))
    files.append(
        PlannedFile(path=f"{INIT_DIR}/init.sh", data=init_script(url).encode(), mode=0o755, clear=True)
    )
    unit = PlannedUnit(
        name=INIT_UNIT,
        content=INIT_UNIT_CONTENT,
        content_clear=True,
        enable=True,
        command="start",
        drop_ins=(),
        file_paths=(f"{INIT_DIR}/init.sh",),
    )
    return NodePlan(
        name=full.name,
        namespace=full.namespace,
        purpose="provision",
        files=tuple(files),
        units=(unit,),
        marker=INIT_MARKER,
    )
