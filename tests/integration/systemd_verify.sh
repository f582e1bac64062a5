#!/bin/sh
# tests/integration/systemd_verify.sh SYSTEMD_DIR TEENYCD_BIN
#
# `systemd-analyze verify` on teenycd.service and teenycd.socket (with
# ExecStart pointed at the built binary, since verify checks that it
# exists), then the sysusers and tmpfiles snippets applied to a scratch
# root.  Any warning fails.  Exits 77 (skip) with the reason when
# systemd-analyze is absent or cannot run here (e.g. some containers).
set -u
dir=$1
bin=$2
if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "SKIP: systemd-analyze is not installed"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '[Service]\nExecStart=/bin/true\n' > "$tmp/probe.service"
if ! out=$(systemd-analyze verify "$tmp/probe.service" 2>&1) || [ -n "$out" ]; then
  echo "SKIP: systemd-analyze cannot verify units here: $out"
  exit 77
fi
sed "s|/usr/bin/teenycd|$bin|" "$dir/teenycd.service" > "$tmp/teenycd.service"
cp "$dir/teenycd.socket" "$tmp/teenycd.socket"
out=$(cd "$tmp" && systemd-analyze verify ./teenycd.socket ./teenycd.service 2>&1)
rc=$?
if [ $rc -ne 0 ] || [ -n "$out" ]; then
  echo "systemd-analyze verify failed (rc $rc):"
  echo "$out"
  exit 1
fi
echo "units verified"
if command -v systemd-sysusers >/dev/null 2>&1 &&
   command -v systemd-tmpfiles >/dev/null 2>&1; then
  mkdir -p "$tmp/root/etc"
  if ! systemd-sysusers --root="$tmp/root" "$dir/teenyc.sysusers.conf"; then
    echo "teenyc.sysusers.conf failed"
    exit 1
  fi
  if ! systemd-tmpfiles --root="$tmp/root" --create "$dir/teenycd.tmpfiles.conf" ||
     [ ! -d "$tmp/root/run/teenycd" ] || [ ! -d "$tmp/root/var/cache/teenyc" ]; then
    echo "teenycd.tmpfiles.conf failed"
    exit 1
  fi
  echo "sysusers and tmpfiles snippets applied to a scratch root"
else
  echo "note: systemd-sysusers/systemd-tmpfiles absent; snippets not checked"
fi
exit 0
