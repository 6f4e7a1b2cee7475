#!/bin/sh
# SPDX-License-Identifier: MIT
# The one runner of libaccel's test programs, liburing style: the host
# suites (make test, test-asan, test-tsan, test-fakecuda, make check), the
# VM run (one call per program, from tests.list) and the core fuzzer's
# bounded run (fuzz/Makefile) all go through it.
#
# Usage: runtests.sh DIR TEST...
#   TEST_TIMEOUT  seconds per program (default 60)
#   RUNTESTS_KLOG=1  after each program, fail it on a kernel report (WARNING,
#                 BUG, Oops, KASAN, UBSAN, lockdep) logged since its marker
#                 (the VM run sets it; elsewhere the marker alone is written)
#   VERBOSE=1     also echo the output of programs that passed
#
# Each program prints TAP and exits 0 (pass), 77 (skip) or anything else
# (fail). The runner passes the TAP lines through unchanged, adds
# "not ok - ..." for a program that failed without saying so (a crash, a
# timeout, a kernel report), and ends with one "# programs:" line.
# Exit status: 0 when nothing failed, else 1.

dir=$1
shift
timeout_s=${TEST_TIMEOUT:-60}
pass=0 fail=0 skip=0 failed=""
out=${TMPDIR:-/tmp}/runtests.$$
trap 'rm -f "$out"' EXIT
report_re='WARNING:|BUG:|Oops|KASAN:|UBSAN:|possible recursive locking|circular locking|general protection fault|kernel BUG'

mark() { [ -w /dev/kmsg ] && echo "libaccel test: $1" > /dev/kmsg; }

# The kernel log since this program's marker: the lines reporting trouble.
klog_reports() {
	[ "${RUNTESTS_KLOG:-0}" = 1 ] || return 0
	dmesg 2>/dev/null | sed -n "/libaccel test: running $1\$/,\$p" |
		grep -E "$report_re" | grep -v 'libaccel test:'
}

for t in "$@"; do
	bin="$dir/$t"
	[ -x "$bin" ] || bin="$dir/libaccel-$t"
	mark "running $t"
	timeout -s INT "$timeout_s" "$bin" > "$out" 2>&1
	rc=$?
	mark "done $t rc=$rc"
	reports=$(klog_reports "$t")
	grep -E '^(TAP version|1\.\.|(not )?ok |# Totals)' "$out"
	if [ -n "$reports" ]; then
		echo "not ok - $t: kernel report since its marker"
		echo "$reports" | head -n 20 | sed 's/^/#   dmesg: /'
		rc=1
	fi
	case $rc in
	0)	pass=$((pass + 1)); echo "# PASS $t" ;;
	77)	skip=$((skip + 1)); echo "# SKIP $t" ;;
	*)	fail=$((fail + 1)); failed="$failed $t"
		grep -q '^not ok' "$out" || [ -n "$reports" ] ||
			echo "not ok - $t: exit status $rc$([ $rc -eq 124 ] && echo " (timed out after ${timeout_s}s)")"
		echo "# FAIL $t (exit $rc)"
		sed 's/^/#    /' "$out" ;;
	esac
	if [ -n "$VERBOSE" ] && [ $rc -eq 0 ]; then sed 's/^/#    /' "$out"; fi
done

echo "# programs: pass $pass, fail $fail, skip $skip${failed:+, failed:$failed}"
[ "$fail" -eq 0 ]
