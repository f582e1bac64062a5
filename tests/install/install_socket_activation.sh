#!/bin/sh
# tests/install/install_socket_activation.sh BUILD_DIR SOURCE_DIR — the
# installed teenycd started by socket activation (systemd-socket-activate
# passes the listening socket as fd 3, LISTEN_FDS=1, as teenycd.socket
# does), serving:
#   - root through the installed teenyc (daemon mode) and teenyctl;
#   - a login user (XDG_RUNTIME_DIR set, no per-user daemon) in the
#     socket's group, found by discovery at the system socket;
#   - and refusing a user outside the group with a message naming it
#     (teenyctl exit 5).
# The group is Debian's "users" standing in for teenyc; the system socket
# path comes by $TEENYC_SYSTEM_SOCKET.  Needs root and
# systemd-socket-activate; exits 77 (skipped), saying which is missing.
set -u
build=$1
src=$2
command -v systemd-socket-activate >/dev/null 2>&1 ||
  { echo "SKIP: systemd-socket-activate is not installed (package systemd)"; exit 77; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (to be a login user in and out of a group)"; exit 77; }
command -v setpriv >/dev/null 2>&1 || { echo "SKIP: needs setpriv (util-linux)"; exit 77; }
tmp=$(mktemp -d)
chmod 755 "$tmp"
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/teenycd.log" ] && cat "$tmp/teenycd.log"; exit 1; }
p=$tmp/prefix
cmake --install "$build" --prefix "$p" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail install; }
mkdir -p "$tmp/run" "$tmp/xdg"
chmod 755 "$tmp/run"
sock=$tmp/run/teenycd.sock
systemd-socket-activate -l "$sock" "$p/bin/teenycd" --cache-dir "$tmp/cache" \
  --log-file "$tmp/teenycd.log" >"$tmp/activate.log" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
[ -S "$sock" ] || fail "systemd-socket-activate made no socket"
chgrp users "$sock" && chmod 0660 "$sock"
k=$src/examples/kernels/vector_add.c
out=$("$p/bin/teenyc" --mode daemon --socket "$sock" "$k" -k vector_add -d D=f32 \
      -c BLOCK_SIZE=256 --emit info 2>&1) || { echo "$out"; fail "compile through the activated daemon"; }
echo "$out" | grep -q "mode:       daemon" || fail "not compiled by the daemon"
grep -q "socket-activated" "$tmp/teenycd.log" || fail "teenycd did not take the passed socket"
echo "ok: the installed teenycd, socket-activated, compiled for root"
as() { # as [in-group] CMD...: a login user (nobody), with group users or not
  groups=--clear-groups
  [ "$1" = in-group ] && groups=--groups=users
  shift
  setpriv --reuid=65534 --regid=65534 $groups env -u TEENYCD_SOCKET XDG_RUNTIME_DIR="$tmp/xdg" \
    TEENYC_SYSTEM_SOCKET="$sock" HOME="$tmp" "$@"
}
out=$(as in-group "$p/bin/teenyc" "$k" -k vector_add -d D=f16 -c BLOCK_SIZE=256 --emit info 2>&1) ||
  { echo "$out"; fail "a login user in the group could not compile"; }
echo "$out" | grep -q "mode:       daemon" || { echo "$out"; fail "the login user did not reach the daemon"; }
as in-group "$p/bin/teenyctl" stats >/dev/null 2>&1 || fail "teenyctl stats for a group member"
echo "ok: a login user in the socket's group compiles through it (discovery past \$XDG_RUNTIME_DIR)"
out=$(as outside "$p/bin/teenyctl" stats 2>&1)
rc=$?
[ $rc -eq 5 ] || { echo "$out"; fail "teenyctl outside the group exited $rc, not 5"; }
echo "$out" | grep -q "add yourself to group users" || { echo "$out"; fail "the message names no group"; }
echo "ok: a user outside the group is told which group to join (exit 5)"
"$p/bin/teenyctl" --socket "$sock" --json stats | grep -q '"compiles": 2' || fail "stats: want 2 compiles"
