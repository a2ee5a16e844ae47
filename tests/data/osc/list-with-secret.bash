#!/bin/bash
# OperatingSystemConfig json-list (purpose provision), rendered by nodewright.
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

base64 -d << 'NODEWRIGHT_EOF' | nw_write '/var/lib/kubelet/kubeconfig-bootstrap' 0600 0
YXBpVmVyc2lvbjogdjEKa2luZDogQ29uZmlnCg==
NODEWRIGHT_EOF
nw_write '/var/lib/kubelet/token' 0600 1 << 'NODEWRIGHT_EOF'
<<BOOTSTRAP_TOKEN>>
NODEWRIGHT_EOF
nw_write '/etc/systemd/system/kubelet.service' 0644 0 << 'NODEWRIGHT_EOF'
[Unit]
Description=kubelet
[Service]
ExecStart=/opt/bin/kubelet --bootstrap-kubeconfig=/var/lib/kubelet/kubeconfig-bootstrap
[Install]
WantedBy=multi-user.target
NODEWRIGHT_EOF
nw_write '/etc/systemd/system/kubelet.service.d/20-args.conf' 0644 0 << 'NODEWRIGHT_EOF'
[Service]
Environment="KUBELET_EXTRA=--node-labels=a=b"
NODEWRIGHT_EOF

systemctl daemon-reload
systemctl enable 'kubelet.service' && systemctl restart --no-block 'kubelet.service' || echo 'nodewright: kubelet.service: enable/start failed' >&2

mkdir -p '/var/lib/osc'
touch '/var/lib/osc/provision-osc-applied'
