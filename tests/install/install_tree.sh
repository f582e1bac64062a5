#!/bin/sh
# tests/install/install_tree.sh BUILD_DIR — the service install, checked:
# cmake --install into a DESTDIR, then
#   1. every part is there (programs, libraries, headers, pkg-config, the
#      Python package, units, sysusers/tmpfiles, man pages, docs);
#   2. the units name the installed teenycd (paths from the prefix);
#   3. `systemd-analyze verify` accepts the system units (and the user
#      units where a user manager can be asked), the tree mounted at its
#      prefix by a symlink; skipped, saying why, where systemd-analyze
#      cannot run;
#   4. sysusers and tmpfiles apply to a scratch root;
#   5. the man pages format without a groff warning;
#   6. the installed tools run from the tree, teenyctl without LLVM, and
#      the installed Python package imports and finds its library.
set -u
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix          # the prefix the units name
dest=$tmp/dest              # the DESTDIR the files go to
fail() { echo "FAIL: $*"; exit 1; }
DESTDIR=$dest cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "cmake --install"; }
root=$dest$prefix
for f in bin/teenycd bin/teenyctl bin/teenyc bin/teenyc-gen \
         lib/libteenyc-client.so.0 lib/libteenyc-embedded.so.0 lib/libteenyc-client.a \
         include/teeny/client.h include/teeny/dsl.h lib/pkgconfig/teenyc-client.pc \
         lib/cmake/teenyc/teenycConfig.cmake \
         lib/systemd/system/teenycd.service lib/systemd/system/teenycd.socket \
         lib/systemd/user/teenycd.service lib/systemd/user/teenycd.socket \
         lib/sysusers.d/teenyc.conf lib/tmpfiles.d/teenycd.conf \
         share/man/man8/teenycd.8 share/man/man1/teenyctl.1 share/man/man1/teenyc.1 \
         share/man/man1/teenyc-gen.1 share/man/man7/teenyc-lang.7 \
         share/doc/teenyc/README.md share/doc/teenyc/operations.md share/doc/teenyc/python.md; do
  [ -e "$root/$f" ] || fail "not installed: $f"
done
py=$(ls -d "$root"/lib/python3*/dist-packages/teenyc 2>/dev/null | head -1)
[ -n "$py" ] && [ -f "$py/__init__.py" ] && [ -f "$py/_installed.py" ] || fail "no Python package"
echo "ok: every part installed under $prefix"
grep -qx "ExecStart=$prefix/bin/teenycd --socket /run/teenycd/teenycd.sock --cache-dir /var/cache/teenyc" \
  "$root/lib/systemd/system/teenycd.service" || fail "system unit's ExecStart is not the installed teenycd"
grep -q "^ExecStart=$prefix/bin/teenycd " "$root/lib/systemd/user/teenycd.service" ||
  fail "user unit's ExecStart is not the installed teenycd"
grep -q "@" "$root/lib/systemd/system/teenycd.service" &&
  grep "@[A-Z_]*@" "$root/lib/systemd/system/teenycd.service" && fail "unfilled template variable"
echo "ok: the units name $prefix/bin/teenycd"
ln -s "$root" "$prefix"     # mount the DESTDIR tree at its prefix
if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "SKIP (part): systemd-analyze is not installed: units not verified"
else
  printf '[Service]\nExecStart=/bin/true\n' > "$tmp/probe.service"
  if ! out=$(systemd-analyze verify "$tmp/probe.service" 2>&1) || [ -n "$out" ]; then
    echo "SKIP (part): systemd-analyze cannot verify units here: $out"
  else
    # Documentation= names man pages: verify looks them up, in the tree
    export MANPATH="$prefix/share/man"
    out=$(cd "$root/lib/systemd/system" && systemd-analyze verify ./teenycd.socket ./teenycd.service 2>&1)
    [ $? -eq 0 ] && [ -z "$out" ] || { echo "$out"; fail "systemd-analyze verify (system units)"; }
    echo "ok: systemd-analyze verify accepts the installed system units"
    mkdir -p "$tmp/xdg" && chmod 700 "$tmp/xdg"
    if out=$(XDG_RUNTIME_DIR="$tmp/xdg" systemd-analyze --user verify "$tmp/probe.service" 2>&1) &&
       [ -z "$out" ]; then
      out=$(cd "$root/lib/systemd/user" &&
            XDG_RUNTIME_DIR="$tmp/xdg" systemd-analyze --user verify ./teenycd.socket ./teenycd.service 2>&1)
      [ $? -eq 0 ] && [ -z "$out" ] || { echo "$out"; fail "systemd-analyze verify (user units)"; }
      echo "ok: systemd-analyze --user verify accepts the installed user units"
    else
      echo "note: no user manager to ask here ($out): user units not verified"
    fi
  fi
fi
if command -v systemd-sysusers >/dev/null 2>&1 && command -v systemd-tmpfiles >/dev/null 2>&1; then
  mkdir -p "$tmp/sysroot/etc"
  systemd-sysusers --root="$tmp/sysroot" "$root/lib/sysusers.d/teenyc.conf" || fail "sysusers"
  grep -q '^teenyc:' "$tmp/sysroot/etc/passwd" && grep -q '^teenyc:' "$tmp/sysroot/etc/group" ||
    fail "sysusers made no teenyc user and group"
  systemd-tmpfiles --root="$tmp/sysroot" --create "$root/lib/tmpfiles.d/teenycd.conf" || fail "tmpfiles"
  [ -d "$tmp/sysroot/run/teenycd" ] && [ -d "$tmp/sysroot/var/cache/teenyc" ] || fail "tmpfiles dirs"
  echo "ok: sysusers and tmpfiles applied to a scratch root"
else
  echo "note: systemd-sysusers/systemd-tmpfiles absent: snippets not applied"
fi
if command -v groff >/dev/null 2>&1; then
  for m in "$root"/share/man/man*/*; do
    w=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$m" 2>&1)
    [ -z "$w" ] || { echo "$w"; fail "groff warns about $m"; }
  done
  echo "ok: the man pages format cleanly"
else
  echo "note: groff absent: man pages not formatted"
fi
"$prefix/bin/teenyctl" --help >/dev/null || fail "installed teenyctl"
ldd "$prefix/bin/teenyctl" | grep -qE "libteenyc-client.so.0 => ($prefix|$root)/(bin/\.\./)?lib/" ||
  { ldd "$prefix/bin/teenyctl"; fail "teenyctl does not use the installed library"; }
ldd "$prefix/bin/teenyctl" | grep -qE 'libLLVM|libsqlite3' && fail "installed teenyctl maps LLVM"
"$prefix/bin/teenyc" --mode offline "$(dirname "$0")/../../examples/kernels/vector_add.c" \
  -k vector_add -d D=f32 -c BLOCK_SIZE=256 --emit id | grep -qx vector_add__f32__256 ||
  fail "installed teenyc (offline: libteenyc-embedded beside the client)"
pydir=$(dirname "$py")
out=$(cd "$tmp" && env -u TEENYC_CLIENT_LIBRARY PYTHONPATH="$pydir" python3 -c \
  'import teenyc, teenyc._lib as l; print(teenyc.version(), l.lib().path)' 2>&1) ||
  { echo "$out"; fail "the installed Python package"; }
case "$out" in *"$prefix/lib/libteenyc-client.so.0"*) ;; *) echo "$out"; fail "Python found another library";; esac
echo "ok: installed tools and Python package work ($out)"
