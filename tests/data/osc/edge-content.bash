#!/bin/bash
# OperatingSystemConfig edge (purpose provision), rendered by nodewright.
set -o errexit
set -o nounset
set -o pipefail
if [ -f '/var/lib/osc/provision-osc-applied' ]; then
  echo "Provision OSC already applied, exiting..."
  exit 0
fi

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

nw_write '/etc/edge/collide' 0644 0 << 'NODEWRIGHT_EOF_2'
NODEWRIGHT_EOF
NODEWRIGHT_EOF_1
EOF
NODEWRIGHT_EOF_2
nw_write '/etc/edge/no-newline' 0644 1 << 'NODEWRIGHT_EOF'
no trailing newline $HOME `id` \ 'x'
NODEWRIGHT_EOF
nw_write '/etc/edge/empty' 0600 0 < /dev/null
nw_write '/etc/edge/trailing' 0644 0 << 'NODEWRIGHT_EOF'
a


NODEWRIGHT_EOF
nw_write '/etc/edge/it'\''s here' 0600 0 << 'NODEWRIGHT_EOF'
Grüße, 世界 — <<MACHINE_NAME>>	tab
NODEWRIGHT_EOF
nw_write '/etc/edge/token-from-b64' 0600 0 << 'NODEWRIGHT_EOF'
token=<<BOOTSTRAP_TOKEN>>
NODEWRIGHT_EOF
base64 -d << 'NODEWRIGHT_EOF' | nw_write '/etc/edge/binary' 0755 0
AAECA//+/Q==
NODEWRIGHT_EOF
nw_write '/etc/systemd/system/kubelet.service.d/10-edge.conf' 0644 0 << 'NODEWRIGHT_EOF'
[Service]
Environment="A=B C"
NODEWRIGHT_EOF
nw_write '/etc/systemd/system/legacy.service' 0644 0 << 'NODEWRIGHT_EOF'
[Unit]
Description=Legacy
[Service]
ExecStart=/bin/true
NODEWRIGHT_EOF

systemctl daemon-reload
systemctl enable 'kubelet.service' && systemctl restart --no-block 'kubelet.service' || echo 'nodewright: kubelet.service: enable/start failed' >&2
systemctl disable 'legacy.service' && systemctl stop 'legacy.service' || echo 'nodewright: legacy.service: enable/start failed' >&2

mkdir -p '/var/lib/osc'
touch '/var/lib/osc/provision-osc-applied'
