#!/bin/sh
# tests/integration/valgrind-teenycd.sh — stands in for teenycd (as
# $TEENYCD_BIN) so the integration tests run the daemon under valgrind
# memcheck.  $TEENY_VALGRIND_TARGET is the real teenycd; each daemon
# process writes its report to $TEENY_VALGRIND_DIR/teenycd.PID.vg.  Any
# memcheck error or definite leak makes the daemon exit 99 instead of 0,
# which the tests report as an unclean exit; scripts/soak valgrind sums the
# reports up.  The compile processes teenycd starts are not traced.
exec valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
  --show-leak-kinds=definite --errors-for-leak-kinds=definite \
  --num-callers=30 \
  --log-file="${TEENY_VALGRIND_DIR:-/tmp}/teenycd.%p.vg" \
  "${TEENY_VALGRIND_TARGET:?set TEENY_VALGRIND_TARGET to teenycd}" "$@"
