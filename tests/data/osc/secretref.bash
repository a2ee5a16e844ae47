#!/bin/bash
# OperatingSystemConfig worker-b-provision (purpose provision), rendered by nodewright.
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

base64 -d << 'NODEWRIGHT_EOF' | nw_write '/var/lib/gardener-node-agent/cluster-ca.crt' 0640 0
LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJkdW1teUNBY2VydGlmaWNhdGVGb3JFeGFt
cGxlc09ubHlOb3RBUmVhbEtleTAxMjM0NTY3ODlhYmNkZWYKLS0tLS1FTkQgQ0VSVElGSUNBVEUt
LS0tLQo=
NODEWRIGHT_EOF
nw_write '/etc/motd' 0644 0 << 'NODEWRIGHT_EOF_1'
Welcome to $(hostname) -- managed by `nodewright`; 100% "quoted" 'text'.
NODEWRIGHT_EOF
NODEWRIGHT_EOF_1
base64 -d << 'NODEWRIGHT_EOF' | nw_write '/etc/sysctl.d/99-nodewright.conf' 0600 0
bmV0LmlwdjQuaXBfZm9yd2FyZCA9IDEK
NODEWRIGHT_EOF
nw_write '/etc/systemd/system/kubelet.service.d/10-node-name.conf' 0644 0 << 'NODEWRIGHT_EOF'
[Service]
Environment="NODE_NAME=<<MACHINE_NAME>>"
NODEWRIGHT_EOF
nw_write '/etc/systemd/system/motd-refresh.service' 0644 0 << 'NODEWRIGHT_EOF'
[Unit]
Description=Print the motd at boot
[Service]
Type=oneshot
ExecStart=/bin/cat /etc/motd
[Install]
WantedBy=multi-user.target
NODEWRIGHT_EOF

systemctl daemon-reload
systemctl enable 'kubelet.service' && systemctl restart --no-block 'kubelet.service' || echo 'nodewright: kubelet.service: enable/start failed' >&2
systemctl enable 'motd-refresh.service' && systemctl restart --no-block 'motd-refresh.service' || echo 'nodewright: motd-refresh.service: enable/start failed' >&2

mkdir -p '/var/lib/osc'
touch '/var/lib/osc/provision-osc-applied'
