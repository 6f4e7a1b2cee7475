#!/bin/sh
# SPDX-License-Identifier: MIT
# Run libaccel test programs with a per-test timeout, liburing style.
# Usage: runtests.sh DIR TEST...   (TEST_TIMEOUT seconds, default 60)
# Each program prints TAP and exits 0 (pass), 1 (fail), 4 or 77 (skip).

dir=$1
shift
timeout_s=${TEST_TIMEOUT:-60}
pass=0 fail=0 skip=0 failed=""

for t in "$@"; do
	bin="$dir/$t"
	[ -x "$bin" ] || bin="$dir/libaccel-$t"
	# Mark the kernel log, so that a warning can be tied to a test.
	[ -w /dev/kmsg ] && echo "libaccel test: running $t" > /dev/kmsg
	out=$(timeout -s INT "$timeout_s" "$bin" 2>&1)
	rc=$?
	case $rc in
	0)	pass=$((pass + 1)); echo "PASS $t" ;;
	4|77)	skip=$((skip + 1)); echo "SKIP $t" ;;
	124)	fail=$((fail + 1)); failed="$failed $t"
		echo "FAIL $t (timed out after ${timeout_s}s)"
		echo "$out" | sed 's/^/    /' ;;
	*)	fail=$((fail + 1)); failed="$failed $t"
		echo "FAIL $t (exit $rc)"
		echo "$out" | sed 's/^/    /' ;;
	esac
	if [ -n "$VERBOSE" ]; then echo "$out" | sed 's/^/    /'; fi
	cases=$(echo "$out" | grep -c '^ok ')
	bad=$(echo "$out" | grep -c '^not ok ')
	echo "     $t: $cases ok, $bad not ok"
done

echo "programs: pass $pass, fail $fail, skip $skip"
[ -n "$failed" ] && echo "failed:$failed"
[ "$fail" -eq 0 ]
