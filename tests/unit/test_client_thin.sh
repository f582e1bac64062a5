#!/bin/sh
# tests/unit/test_client_thin.sh EMBEDDED_LIB FILE... — the thin client
# maps no compiler: `ldd` of each FILE (libteenyc-client.so, teenyctl,
# teenyc, a daemon-mode example app) names neither LLVM nor what LLVM
# drags in (z3, ICU, libxml2, libstdc++) nor SQLite.  EMBEDDED_LIB
# (libteenyc-embedded.so) must show LLVM, or the pattern proves nothing.
set -u
heavy='libLLVM|libz3|libicu|libxml2|libstdc\+\+|libsqlite3|libedit|libffi'
emb=$1
shift
if ! ldd "$emb" | grep -qE 'libLLVM'; then
  echo "FAIL: $emb does not link LLVM: the check below would prove nothing"
  exit 1
fi
status=0
for f in "$@"; do
  hits=$(ldd "$f" | grep -E "$heavy")
  if [ -n "$hits" ]; then
    echo "FAIL: $f maps the compiler's libraries:"
    echo "$hits"
    status=1
  else
    echo "ok: $f ($(ldd "$f" | grep -c '=>') shared libraries, none of the compiler's)"
  fi
done
exit $status
