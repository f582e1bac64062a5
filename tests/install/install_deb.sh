#!/bin/sh
# tests/install/install_deb.sh BUILD_DIR — `cpack -G DEB` makes a package
# holding the service install: teenycd and the tools, both libraries, the
# units, sysusers/tmpfiles, man pages, the Python package, and a postinst
# that creates the teenyc user.  Skipped where dpkg-deb is absent.
set -u
build=$1
command -v dpkg-deb >/dev/null 2>&1 || { echo "SKIP: dpkg-deb is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
(cd "$tmp" && cpack --config "$build/CPackConfig.cmake" -G DEB -B "$tmp/out" >"$tmp/cpack.log" 2>&1) ||
  { cat "$tmp/cpack.log"; fail "cpack -G DEB"; }
deb=$(ls "$tmp"/out/*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || fail "no .deb made"
dpkg-deb -c "$deb" > "$tmp/contents"
for f in bin/teenycd bin/teenyctl bin/teenyc bin/teenyc-gen lib/libteenyc-client.so.0 \
         lib/libteenyc-embedded.so.0 lib/systemd/system/teenycd.service \
         lib/systemd/system/teenycd.socket lib/sysusers.d/teenyc.conf \
         lib/tmpfiles.d/teenycd.conf share/man/man8/teenycd.8 teenyc/_kernel.py; do
  grep -q "$f" "$tmp/contents" || fail "$deb lacks $f"
done
dpkg-deb -I "$deb" | grep -q "Depends:.*libuv1" || fail "no Depends"
dpkg-deb -e "$deb" "$tmp/control"
grep -q systemd-sysusers "$tmp/control/postinst" || fail "postinst makes no teenyc user"
echo "ok: $(basename "$deb"): $(wc -l < "$tmp/contents") entries, units, man pages, Python, postinst"
