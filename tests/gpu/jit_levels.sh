#!/usr/bin/env bash
# tests/gpu/jit_levels.sh — runs ON THE GPU MACHINE: each GPU-only
# reproducer (tests/diff/repro-gpu/) and each seed of $SEEDS replayed with
# the driver JIT at optimisation levels 1, 2 and 3 ($TEENY_CUDA_JIT_OPT;
# the default is 4), one line each, to tell which levels carry ptxas's
# optimiser bugs (docs/reliability.md).  DIFFFUZZ: the bundle's difffuzz.
set -u
verdict() { # the first line's verdict of a replay, or agreed/mismatch of a seed run
  "$@" 2>&1 | awk '/: ok$|mismatch|engine-error|timeout|crash/ && !v {v=$0} /agreed/ {a=$0} END {print (v ? v : a)}' |
    sed 's/.*: \(ok\|mismatch [a-z_]*\|engine-error [a-z]*\)$/\1/' | cut -c1-60
}
for r in tests/diff/repro-gpu/*.txt; do
  line="$(basename "$r" .txt):"
  for o in 1 2 3; do
    line="$line O$o $(TEENY_CUDA_JIT_OPT=$o verdict "$DIFFFUZZ" --engine gpu --replay "$r" --timeout 30);"
  done
  echo "$line"
done
for s in ${SEEDS:-}; do
  line="seed $s:"
  for o in 1 2 3 4; do
    line="$line O$o $(TEENY_CUDA_JIT_OPT=$o verdict "$DIFFFUZZ" --engine gpu --seed "$s" --count 1 --no-reduce --timeout 30);"
  done
  echo "$line"
done
