#!/bin/sh
# Summarise the TAP output of VM test runs (POSIX sh + awk; mawk-safe).
#
# Usage: scripts/vm/tap-summary.sh FILE...
#
# FILE is a tap.txt from run-vm.sh (suites framed by
#   "# accelstream-begin NAME" ... "# accelstream-end NAME rc=RC")
# or a plain kselftest TAP file (then the whole file is one suite).
# Counted per suite: top-level (column 0) "ok"/"not ok" lines; "# SKIP"
# directive = skipped, "# XFAIL"/"# TODO" = passed/skipped; results missing from
# the "1..N" plan are failures.  A suite without result lines counts as one
# case: rc 0 = pass, rc 4 (KSFT_SKIP) = skip, else fail.  A non-zero rc
# (other than 4) without any failing line adds one failure; a suite without
# its end line (crash/hang) adds one; a planned suite never started adds
# one.  Top-level "not ok" lines outside suites (kernel reports, taint,
# pin balance, host checks) are failures too.
#
# Prints one line per suite and per extra failure, then exactly one last
# line: "P passed, F failed" (+ ", S skipped" when S > 0).  Exit 1 if F > 0.
[ $# -gt 0 ] || { echo "usage: $0 FILE..." >&2; exit 2; }
empties=
for f in "$@"; do
	[ -r "$f" ] || { echo "$0: cannot read $f" >&2; echo "0 passed, 1 failed"; exit 1; }
	[ -s "$f" ] || empties="$empties $f"
done

awk -v empties="$empties" '
function reset_suite() { sp = 0; sf = 0; ss = 0; splan = -1; stotals = ""; snote = "" }
function label(n) { return (kern != "" && nfiles > 1) ? "[" kern "] " n : n }
function open_suite(n) { cur = n; insuite = 1; reset_suite(); started[FILENAME, n] = 1 }
function close_suite(rc, secs,   seen, st, extra) {
	seen = sp + sf + ss
	extra = ""
	if (splan > seen) { sf += splan - seen; extra = extra " missing " (splan - seen) " of plan 1.." splan ";" }
	if (rc == "none") {
		sf++; extra = extra " no end line (crash, panic or hang);"
	} else if (rc != "") {
		if (seen == 0 && splan <= 0) {
			if (rc == 0) sp++
			else if (rc == 4) { ss++; extra = extra " skipped (exit 4);" }
			else { sf++; extra = extra " exit " rc (rc == 124 || rc == 137 || rc == 143 ? " (timeout)" : "") ";" }
		} else if (rc != 0 && rc != 4 && sf == 0) {
			sf++; extra = extra " exit " rc (rc == 124 || rc == 137 || rc == 143 ? " (timeout)" : "") " without a failing TAP line;"
		}
	} else if (seen == 0 && splan != 0) {
		sf++; extra = extra " no TAP results;"
	}
	st = sf > 0 ? "FAIL" : (sp == 0 && ss > 0 ? "SKIP" : "ok  ")
	line = sprintf("%s %-28s %d passed, %d failed, %d skipped", st, label(cur), sp, sf, ss)
	if (rc != "" && rc != "none") line = line " (rc=" rc (secs != "" ? ", " secs : "") ")"
	if (extra != "") line = line " -" extra
	print line
	P += sp; F += sf; S += ss
	insuite = 0
}
function extra_fail(msg) { F++; printf "FAIL %s\n", (kern != "" && nfiles > 1 ? "[" kern "] " : "") msg }
function end_file() {
	if (FILENAME_prev == "") return
	if (insuite) close_suite(accel ? "none" : "")
	if (accel) {
		for (i = 1; i <= nplan; i++)
			if (!((FILENAME_prev, plan[i]) in started)) extra_fail(plan[i] " - not run")
		if (!verdict && !hostseen) extra_fail("guest verdict missing")
	}
}
BEGIN { nfiles = ARGC - 1 }
FNR == 1 { end_file(); FILENAME_prev = FILENAME; accel = 0; insuite = 0; nplan = 0; kern = ""; verdict = 0; hostseen = 0 }
{ sub(/\r$/, "") }
/^# accelstream-vm / {
	accel = 1
	for (i = 3; i <= NF; i++) if ($i ~ /^kernel=/) kern = substr($i, 8)
	next
}
/^# accelstream-plan/ { nplan = 0; for (i = 3; i <= NF; i++) plan[++nplan] = $i; next }
/^# accelstream-begin / { if (insuite) close_suite("none"); open_suite($3); next }
/^# accelstream-end / {
	rc = ""; secs = ""
	for (i = 4; i <= NF; i++) {
		if ($i ~ /^rc=/) rc = substr($i, 4)
		if ($i ~ /^time=/) secs = substr($i, 6)
	}
	if (!insuite || cur != $3) open_suite($3)
	close_suite(rc, secs); next
}
/^# accelstream-verdict: / { verdict = 1; next }
/^# accelstream-host / { if (insuite) close_suite("none"); hostseen = 1; next }
/^(not )?ok( |$)/ {
	if (!insuite && !accel) open_suite(FILENAME)
	if (!insuite) {
		# infrastructure checks outside suites: only failures count
		if ($0 ~ /^not ok/) { m = $0; sub(/^not ok[ 0-9]*(- )?/, "", m); extra_fail(m) }
		next
	}
	d = ""
	if (match($0, /#[ \t]*[A-Za-z]+/)) { d = toupper(substr($0, RSTART, RLENGTH)); gsub(/[# \t]/, "", d) }
	if ($1 == "ok") {
		if (d == "SKIP") ss++; else sp++
	} else {
		if (d == "SKIP" || d == "TODO") ss++; else sf++
	}
	next
}
/^1\.\.[0-9]+/ {
	if (!insuite && !accel) open_suite(FILENAME)
	if (insuite) { splan = substr($1, 4) + 0 }
	next
}
END {
	end_file()
	ne = split(empties, e, " ")
	for (i = 1; i <= ne; i++) { F++; printf "FAIL %s - empty (no output at all)\n", e[i] }
	if (P + F + S == 0) { F++; print "FAIL no test results at all" }
	line = (P + 0) " passed, " (F + 0) " failed"
	if (S > 0) line = line ", " S " skipped"
	print line
	exit F > 0 ? 1 : 0
}
' "$@"
