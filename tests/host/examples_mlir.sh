#!/usr/bin/env bash
# tests/host/examples_mlir.sh TEENYC [LIST] — every specialisation listed in
# LIST (default examples/kernels/examples.list; its kernel files are in
# LIST's folder), as MLIR from teenyc, must parse with mlir-opt-19
# --allow-unregistered-dialect.  Exits 77 (skipped) when mlir-opt-19 is not
# installed.
set -uo pipefail
teenyc=${1:?usage: examples_mlir.sh TEENYC [LIST]}
root=$(cd "$(dirname "$0")/../.." && pwd)
list=${2:-$root/examples/kernels/examples.list}
dir=$(dirname "$list")
opt=$(command -v mlir-opt-19 || true)
if [ -z "$opt" ]; then
  echo "SKIP: mlir-opt-19 not found (apt-get install mlir-19-tools)"
  exit 77
fi
export TEENYC_MODE=offline
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0
while read -r file kernel bindings; do
  case "$file" in ''|'#'*) continue ;; esac
  args=()
  for b in $bindings; do
    if [[ "${b#*=}" =~ ^-?[0-9]+$ ]]; then args+=(--const "$b"); else args+=(--dtype "$b"); fi
  done
  n=$((n + 1))
  out="$tmp/$kernel-$n.mlir"
  if ! "$teenyc" "$dir/$file.c" --kernel "$kernel" "${args[@]}" --emit mlir -o "$out"; then
    echo "FAIL: teenyc $file $kernel $bindings"; fail=1; continue
  fi
  if ! "$opt" --allow-unregistered-dialect "$out" -o /dev/null; then
    echo "FAIL: mlir-opt rejects $file $kernel $bindings"; fail=1; continue
  fi
  echo "ok   $file $kernel $bindings"
done < "$list"
echo "$n specialisations checked"
exit $fail
