#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# accelctl against the real module, inside the test VM, as root.
# Prints kselftest-style TAP; exit 0 when every test passed.
#
# Environment:
#   ACCELCTL  the accelctl to test (default /bin/accelctl)
#   ACCEL_KO  the module file (default /lib/modules/accelstream.ko)
#   HOLDER    test/holder.c built static (default: next to $ACCELCTL)
#   RUNAS     test/runas.c built static (default: next to $ACCELCTL)

A=${ACCELCTL:-/bin/accelctl}
KO=${ACCEL_KO:-/lib/modules/accelstream.ko}
bindir=$(dirname "$A")
HOLDER=${HOLDER:-$bindir/holder}
RUNAS=${RUNAS:-$bindir/runas}
STREAMS=3
PIN_BYTES=1048576
NTESTS=24

tmp=$(mktemp -d /tmp/vm-accelctl.XXXXXX) || exit 1
n=0 pass=0 fail=0 skip=0 hpid=

cleanup() {
	[ -n "$hpid" ] && kill "$hpid" 2>/dev/null && wait "$hpid" 2>/dev/null
	"$A" unload > /dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

# ok STATUS NAME: one TAP line; on failure, what the command printed
ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		pass=$((pass + 1)); echo "ok $n $2"
	else
		fail=$((fail + 1)); echo "not ok $n $2"
		for f in out err; do
			[ -s "$tmp/$f" ] && sed "s/^/# $f: /" "$tmp/$f" | head -n 30
		done
	fi
}
skip() { n=$((n + 1)); skip=$((skip + 1)); echo "ok $n $1 # SKIP $2"; }

run() { "$A" "$@" > "$tmp/out" 2> "$tmp/err"; }
# show: the last command's output as TAP diagnostics, for the record
show() { sed 's/^/#   /' "$tmp/out" "$tmp/err"; }
fails() { run "$@"; [ $? -eq 1 ]; }
has() { grep -q -- "$1" "$tmp/out"; }
err_has() { grep -q -- "$1" "$tmp/err"; }
# field NAME: the value of a "name value..." line of `accelctl status`
field() { awk -v k="$1" '$1 == k { print $2; exit }' "$tmp/out"; }

echo "TAP version 13"
echo "1..$NTESTS"
echo "# accelctl=$A ko=$KO kernel=$(uname -r)"

"$A" unload > /dev/null 2>&1	# a module left by an earlier suite

run load "$KO"; ok $? "load $KO"
fails load "$KO" && err_has "already loaded"
ok $? "load again: already loaded"
run status && [ "$(field state)" = live ] && [ "$(field abi_version)" = 1 ] &&
	[ "$(field contexts)" = 0 ] && [ "$(field refcount)" = 0 ]
ok $? "status: live, ABI 1, no contexts, refcount 0"
run status --json && has '"state": "live"' && has '"abi_version": 1' &&
	has '"max_pinned_mb": "'
ok $? "status --json: live, ABI, parameters"

# A process holding STREAMS streams and PIN_BYTES pinned bytes.
"$HOLDER" "$STREAMS" "$PIN_BYTES" > "$tmp/holder" 2>&1 &
hpid=$!
i=0
while ! grep -q '^ready' "$tmp/holder" 2>/dev/null && [ $i -lt 100 ]; do
	kill -0 "$hpid" 2>/dev/null || break
	sleep 0.1; i=$((i + 1))
done
grep -q "^ready $hpid" "$tmp/holder"
st=$?
cp "$tmp/holder" "$tmp/out"; : > "$tmp/err"
ok $st "holder: $STREAMS streams, $PIN_BYTES bytes registered (pid $hpid)"

run status && [ "$(field contexts)" = 1 ] && [ "$(field streams)" = "$STREAMS" ] &&
	[ "$(field regions)" = 1 ] && [ "$(field pinned_bytes)" = "$PIN_BYTES" ] &&
	[ "$(field refcount)" -ge 1 ]
st=$?; show
ok $st "status: 1 context, $STREAMS streams, 1 region, $PIN_BYTES pinned, refcount >= 1"

run ps; show
# (copies: assigning a field would rejoin the line with spaces)
row=$(awk -F'|' -v pid="$hpid" '{ p = $3; gsub(/ /, "", p) } p == pid' "$tmp/out")
ctx=$(echo "$row" | awk -F'|' '{ c = $2; gsub(/ /, "", c); print c }')
echo "$row" | awk -F'|' -v s="$STREAMS" '
	{ for (i = 2; i <= NF; i++) { f[i] = $i; gsub(/^ +| +$/, "", f[i]) } }
	f[4] == "holder" && f[5] == s && f[7] == 1 && f[8] == 0 &&
	f[9] == "1.0 MiB" && f[11] == "soft" && f[12] == "ok" { found = 1 }
	END { exit !found }'
ok $? "ps: pid $hpid holder, $STREAMS streams, 1 region, 1.0 MiB pinned, soft, ok"
run ps --json && has "\"pid\": $hpid" && has "\"pinned_bytes\": $PIN_BYTES" &&
	has '"comm": "holder"'
ok $? "ps --json: pid, pinned bytes, comm"

if [ -n "$ctx" ]; then
	run stats "$ctx"; show
	nlive=$(grep -c '| live ' "$tmp/out")
	grep -q "| host *| *$PIN_BYTES |" "$tmp/out" && [ "$nlive" -eq $((STREAMS + 1)) ]
	ok $? "stats $ctx: $STREAMS live streams, one host region of $PIN_BYTES bytes"
	run stats --json "$ctx" 1 && has '"handle": 1' && has '"submitted": 0' &&
		has '"error": 0' && ! has regions
	ok $? "stats $ctx 1 --json: one stream"
	fails stats "$ctx" 999 && err_has "no stream 999"
	ok $? "stats $ctx 999: no such stream"
else
	skip "stats CTX" "no context id from ps"
	skip "stats CTX 1 --json" "no context id from ps"
	skip "stats CTX 999" "no context id from ps"
fi

fails unload && err_has "in use" && err_has "pid $hpid (holder)"
st=$?; show
ok $st "unload while open: refused, names pid $hpid (holder)"
run status && [ "$(field state)" = live ]
ok $? "status: still live after the refused unload"

kill "$hpid"; wait "$hpid" 2>/dev/null; hpid=
run status && [ "$(field contexts)" = 0 ] && [ "$(field pinned_bytes)" = 0 ] &&
	[ "$(field refcount)" = 0 ]
ok $? "status after kill: no contexts, nothing pinned, refcount 0"
run unload && has "unloaded"
ok $? "unload after kill"
run status && [ "$(field state)" = "not" ] && has "not loaded"
ok $? "status: not loaded"
fails unload && err_has "not loaded"
ok $? "unload when not loaded: error"

fails load /nonexistent/accelstream.ko && err_has "not found"
ok $? "load of a nonexistent path: not found"
echo "this is not a kernel module" > "$tmp/notamodule.ko"
fails load "$tmp/notamodule.ko" && err_has "not a valid module"
st=$?; show
ok $st "load of a non-module file: ENOEXEC message"
"$RUNAS" 65534 "$A" load "$KO" > "$tmp/out" 2> "$tmp/err"
[ $? -eq 1 ] && err_has "needs root"
st=$?; show
ok $st "load as uid 65534: needs root"
fails load "$KO" max_pinned_mb=lots && err_has "invalid parameters"
ok $? "load with a bad parameter value: invalid parameters"

run load "$KO" max_pinned_mb=32 && run status && has "max_pinned_mb=32"
ok $? "load with max_pinned_mb=32: status shows it"
run unload
ok $? "unload"

# By name, when the module is installed under /lib/modules (depmod'ed).
if grep -q 'accelstream\.ko' "/lib/modules/$(uname -r)/modules.dep" 2>/dev/null; then
	run load && run status && [ "$(field state)" = live ] && run unload
	ok $? "load by name (modules.dep), unload"
else
	skip "load by name" "accelstream is not in modules.dep"
fi

echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ "$n" -eq "$NTESTS" ] || echo "# planned $NTESTS tests, ran $n"
[ "$fail" -eq 0 ] && [ "$n" -eq "$NTESTS" ]
