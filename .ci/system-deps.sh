#!/usr/bin/env bash
# Installs the real parsers the renderers are validated against: Debian's cloud-init (for
# tools/validate_userdata.py) and ignition-validate. Idempotent; quiet when present.
set -u
need=()
/usr/bin/python3 -c 'import cloudinit' 2>/dev/null || need+=(cloud-init)
command -v ignition-validate >/dev/null 2>&1 || need+=(ignition)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then echo "not root: cannot apt-get install ${need[*]}"; exit 1; fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null 2>&1 || true
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1
