#!/bin/bash
# OperatingSystemConfig worker-c-provision (purpose provision), rendered by nodewright.
set -o errexit
set -o nounset
set -o pipefail
if [ -f '/var/lib/nodewright-osc/init-applied' ]; then
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

nw_write '/var/lib/nodewright-osc/bootstrap-token' 0600 1 << 'NODEWRIGHT_EOF'
<<BOOTSTRAP_TOKEN>>
NODEWRIGHT_EOF
nw_write '/var/lib/nodewright-osc/machine-name' 0600 1 << 'NODEWRIGHT_EOF'
<<MACHINE_NAME>>
NODEWRIGHT_EOF
base64 -d << 'NODEWRIGHT_EOF' | nw_write '/var/lib/nodewright-osc/ca.crt' 0644 0
LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJleGFtcGxlCi0tLS0tRU5EIENFUlRJRklD
QVRFLS0tLS0K
NODEWRIGHT_EOF
nw_write '/var/lib/nodewright-osc/init.sh' 0755 0 << 'NODEWRIGHT_EOF'
#!/bin/bash
# nodewright OSC init: fetch the full OperatingSystemConfig rendering and apply it.
set -o errexit
set -o nounset
set -o pipefail
dir='/var/lib/nodewright-osc'
url='https://api.demo.dev.example.com/api/v1/namespaces/kube-system/secrets/osc-result-worker-c-provision'
umask 077
token="$(cat "$dir/bootstrap-token")"
machine="$(cat "$dir/machine-name")"
ca_args=()
if [ -s "$dir/ca.crt" ]; then ca_args=(--cacert "$dir/ca.crt"); fi
until curl --fail --silent --show-error ${ca_args[@]+"${ca_args[@]}"} \
    --header "Authorization: Bearer $token" --output "$dir/secret.json" "$url"; do
  echo "nodewright: waiting for the OSC secret at $url" >&2
  sleep 5
done
if command -v jq >/dev/null 2>&1; then
  data="$(jq -r '.data.full_config' "$dir/secret.json")"
else
  data="$(grep -o '"full_config": *"[A-Za-z0-9+/=]*"' "$dir/secret.json" | cut -d'"' -f4)"
fi
rm -f "$dir/secret.json"
script="$(printf '%s' "$data" | base64 -d; printf x)"
script="${script%x}"
ph_token="$(printf '<<%s>>' BOOTSTRAP_TOKEN)"
ph_machine="$(printf '<<%s>>' MACHINE_NAME)"
script="${script//"$ph_token"/"$token"}"
script="${script//"$ph_machine"/"$machine"}"
printf '%s' "$script" > "$dir/osc.sh"
chmod 0700 "$dir/osc.sh"
exec /bin/bash "$dir/osc.sh"
NODEWRIGHT_EOF
nw_write '/etc/systemd/system/nodewright-osc-init.service' 0644 0 << 'NODEWRIGHT_EOF'
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
ExecStart=/var/lib/nodewright-osc/init.sh
StandardOutput=journal+console
StandardError=journal+console
[Install]
WantedBy=multi-user.target
NODEWRIGHT_EOF

systemctl daemon-reload
systemctl enable 'nodewright-osc-init.service' && systemctl restart --no-block 'nodewright-osc-init.service' || echo 'nodewright: nodewright-osc-init.service: enable/start failed' >&2

mkdir -p '/var/lib/nodewright-osc'
touch '/var/lib/nodewright-osc/init-applied'
