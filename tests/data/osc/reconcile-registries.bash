#!/bin/bash
# OperatingSystemConfig worker-a-reconcile (purpose reconcile), rendered by nodewright.
set -o errexit
set -o nounset
set -o pipefail

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

nw_write '/opt/gardener/bin/install-ntp.sh' 0755 0 << 'NODEWRIGHT_EOF'
#!/bin/bash
apt-get install -y chrony
NODEWRIGHT_EOF
nw_write '/etc/containerd/certs.d/docker.io/hosts.toml' 0644 0 << 'NODEWRIGHT_EOF'
# managed by gardener-node-agent
server = "https://registry.hub.docker.com"

[host."https://10.10.10.100:8080"]
  capabilities = ["pull","resolve"]

[host."https://10.10.10.200:8080"]
  capabilities = ["pull","resolve"]

NODEWRIGHT_EOF
nw_write '/etc/containerd/certs.d/registry.k8s.io/hosts.toml' 0644 0 << 'NODEWRIGHT_EOF'
# managed by gardener-node-agent
server = "https://registry.k8s.io"

[host."https://10.10.10.101:8080"]
  capabilities = ["pull"]
  ca = ["/var/certs/ca.crt"]
  override_path = true

NODEWRIGHT_EOF
nw_write '/etc/systemd/system/install-ntp-client.service' 0644 0 << 'NODEWRIGHT_EOF'
[Unit]
Description=Install NTP client
[Service]
Type=oneshot
ExecStart=/opt/gardener/bin/install-ntp.sh
[Install]
WantedBy=multi-user.target
NODEWRIGHT_EOF

systemctl daemon-reload
systemctl enable 'install-ntp-client.service' && systemctl restart --no-block 'install-ntp-client.service' || echo 'nodewright: install-ntp-client.service: enable/start failed' >&2
