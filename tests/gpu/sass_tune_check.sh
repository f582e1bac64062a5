#!/usr/bin/env bash
# tests/gpu/sass_tune_check.sh — issue 16 on the GPU machine, from the
# bundle (scripts/gpu-check --sass-only runs it; $BIN is the bundle's bin/,
# $BUNDLE its root, $OUT where logs go):
#   1. the store made on the build machine with ptxas (bundle's store-ptxas/)
#      serves cubins this GPU loads: every start-up run loads the cubin;
#   2. start-up, new process to first kernel, CUDA's JIT cache off: the PTX
#      path (teenycd --sass off, a fresh store: what it was), then the cubin
#      path (--sass auto: the driver's JIT makes the cubins in the
#      background), against the targets (matmul 260 ms, vector_add 215 ms);
#   3. autotuning: 16 processes together on one key run one tuning, a 17th
#      gets the winner in under 1 ms, the winner is within 2% of the best
#      found by timing every candidate by hand.
# Exit status 0 when every check holds.
set -uo pipefail
: "${BIN:?set BIN to the bin/ folder of the bundle}"
: "${OUT:=$PWD/gpu-out}"
export TEENY_SOURCE_DIR=${TEENY_SOURCE_DIR:-$PWD}
status=0
run=$(mktemp -d)
daemon=

start_daemon() { # store-dir sass-mode
  "$BIN/teenycd" --socket "$run/sock" --cache-dir "$1" --sass "$2" --log-level info \
    --log-file "$run/teenycd-$2.log" &
  daemon=$!
  for _ in $(seq 100); do [ -S "$run/sock" ] && return 0; sleep 0.1; done
  echo "teenycd did not start"; cat "$run/teenycd-$2.log"; return 1
}
stop_daemon() {
  [ -n "$daemon" ] && kill -TERM "$daemon" && wait "$daemon"
  daemon=
  rm -f "$run/sock"
}
counter() { "$BIN/teenyctl" --json stats | python3 -c "import json,sys; print(int(json.load(sys.stdin).get('$1', -1)))"; }
wait_cubins() { # how many
  for _ in $(seq 600); do
    [ "$(counter cubins)" -ge "$1" ] && [ "$(counter sass_queued)" -eq 0 ] && return 0
    sleep 0.2
  done
  echo "the cubins did not come"; "$BIN/teenyctl" stats; return 1
}
bench() { CUDA_CACHE_DISABLE=1 "$BIN/teeny_bench_startup" "$@"; }
export TEENYCD_SOCKET="$run/sock" TEENYC_MODE=daemon

echo "== 1. a store made on the build machine with ptxas, served as it is (--sass off)"
if [ -d "$BUNDLE/store-ptxas" ]; then
  cp -r "$BUNDLE/store-ptxas" "$run/store-ptxas"
  start_daemon "$run/store-ptxas" off || exit 1
  "$BIN/teenyctl" list
  for k in vector_add matmul; do
    out=$(bench --kernel "$k" --runs 3) || status=1
    echo "$out"
    echo "$out" | grep -q "(3 of 3 loaded the cubin)" || { echo "FAILED: $k did not load the ptxas cubin"; status=1; }
  done
  stop_daemon
else
  echo "SKIP: this bundle has no store-ptxas/ (the build machine had no ptxas)"
fi

echo "== 2a. start-up without cubins (teenycd --sass off, fresh store): the PTX path"
start_daemon "$run/store-ptx" off || exit 1
for k in vector_add matmul; do bench --kernel "$k" --runs 1 >/dev/null; bench --kernel "$k" --runs 5 || status=1; done
stop_daemon

echo "== 2b. start-up with cubins (teenycd --sass auto, fresh store)"
start_daemon "$run/store" auto || exit 1
for k in vector_add matmul; do bench --kernel "$k" --runs 1 >/dev/null; done # cold: compile
wait_cubins 2 || status=1
"$BIN/teenyctl" list
for key in $("$BIN/teenyctl" --json list | python3 -c "import json,sys; [print(e['key'][:12]) for e in json.load(sys.stdin)['entries']]"); do
  "$BIN/teenyctl" show "$key" | grep -A3 '^cubins'
done
bench --kernel vector_add --runs 11 --expect-ms 215 || status=1
bench --kernel matmul --runs 11 --expect-ms 260 || status=1

echo "== 3. autotuning: 16 processes, one tuning; a 17th; every candidate by hand"
"$BIN/teeny_bench_tune" --processes 16 --check-by-hand || status=1
"$BIN/teenyctl" tuned
"$BIN/teenyctl" stats | tail -17
stop_daemon
cp "$run"/teenycd-*.log "$OUT/" 2>/dev/null
rm -rf "$run"
echo "sass_tune_check: $([ $status -eq 0 ] && echo ok || echo FAILED)"
exit $status
