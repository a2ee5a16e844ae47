#!/usr/bin/env bash
# Installs the real parsers the renderers are validated against: Debian's cloud-init (for
# tools/validate_userdata.py) and ignition-validate, and promtool (Debian's prometheus package) for
# `promtool check metrics` over `nodewright health -o prometheus` (tests/health/test_metrics_lint.py;
# a pure-Python promlint check runs either way). Idempotent; quiet when present.
set -u
need=()
/usr/bin/python3 -c 'import cloudinit' 2>/dev/null || need+=(cloud-init)
command -v ignition-validate >/dev/null 2>&1 || need+=(ignition)
optional=()
command -v promtool >/dev/null 2>&1 || optional+=(prometheus)
[ ${#need[@]} -eq 0 ] && [ ${#optional[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then echo "not root: cannot apt-get install ${need[*]}"; exit 1; fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null 2>&1 || true
rc=0
[ ${#need[@]} -eq 0 ] || apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 || rc=$?
# promtool: its own call, so a failure there never blocks the validators above.
if [ ${#optional[@]} -gt 0 ]; then
  apt-get install -y -qq --no-install-recommends "${optional[@]}" >/dev/null 2>&1 || echo "warning: could not install ${optional[*]} (promtool); the pure-Python promlint test still runs"
fi
exit $rc
