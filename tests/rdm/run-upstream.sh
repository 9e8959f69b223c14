#!/bin/sh
# Run the RDM device tests built against Debian's libfabric 1.17 (the
# <name>_upstream executables) with its "verbs;ofi_rxm", to check the tests
# themselves. Inside tests/rxe/run:
#   tests/rxe/run -- tests/rdm/run-upstream.sh BUILD_DIR [TEST...]
# FI_UNIVERSE_SIZE=16: upstream's rxm sizes its CQs from the universe size
# and rxe refuses the default (issue 14). Prints one PASS/FAIL/SKIP line
# per test; exits 1 if any failed.
build=${1:?usage: run-upstream.sh BUILD_DIR [TEST...]}
shift
[ $# -gt 0 ] || set -- $(cd "$build/tests" && ls *_upstream | sed 's/_upstream$//')
export FI_PROVIDER="verbs;ofi_rxm" FI_UNIVERSE_SIZE=${FI_UNIVERSE_SIZE:-16}
fail=0
for t in "$@"; do
	start=$(date +%s.%N)
	timeout 120 "$build/tests/${t}_upstream" > "$build/tests/$t.upstream.log" 2>&1
	rc=$?
	secs=$(echo "$(date +%s.%N) - $start" | bc 2>/dev/null || echo "?")
	case $rc in
	0) echo "PASS $t (${secs}s)" ;;
	77) echo "SKIP $t" ;;
	*) echo "FAIL $t (rc $rc, ${secs}s)"; sed 's/^/    /' "$build/tests/$t.upstream.log" | tail -15; fail=1 ;;
	esac
done
exit $fail
