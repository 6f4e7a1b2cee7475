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
NOBODY=65534
NOBODY_BYTES=65536
# A UTF-8 command name of 8 characters in 11 bytes, and its ASCII stand-in.
UNAME='hölder-✓'
UPLAIN=XXXXXXXX
NTESTS=39

tmp=$(mktemp -d /tmp/vm-accelctl.XXXXXX) || exit 1
n=0 pass=0 fail=0 skip=0 hpid= npid= remount=

cleanup() {
	for p in $hpid $npid; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	"$A" unload > /dev/null 2>&1
	[ -n "$remount" ] && mount -t debugfs debugfs /sys/kernel/debug
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
# as_nobody ARGS: accelctl as uid 65534, no capabilities
as_nobody() { "$RUNAS" "$NOBODY" "$A" "$@" > "$tmp/out" 2> "$tmp/err"; }
# show: the last command's output as TAP diagnostics, for the record
show() { sed 's/^/#   /' "$tmp/out" "$tmp/err"; }
fails() { run "$@"; [ $? -eq 1 ]; }
has() { grep -q -- "$1" "$tmp/out"; }
err_has() { grep -q -- "$1" "$tmp/err"; }
one_line() { [ "$(wc -l < "$tmp/err")" -eq 1 ]; }
lines() { grep -c . "$tmp/out"; }
# field NAME: the value of a "name value..." line of `accelctl status`
field() { awk -v k="$1" '$1 == k { print $2; exit }' "$tmp/out"; }
# start_holder VAR FILE CMD...: start a holder, wait for its "ready"
start_holder() {
	var=$1 file=$2
	shift 2
	"$@" > "$file" 2>&1 &
	eval "$var=\$!"
	i=0
	while ! grep -q '^ready' "$file" 2>/dev/null && [ $i -lt 300 ]; do
		eval "kill -0 \$$var" 2>/dev/null || break
		sleep 0.1; i=$((i + 1))
	done
	eval "grep -q \"^ready \$$var\" \"$file\""
}

echo "TAP version 13"
echo "1..$NTESTS"
echo "# accelctl=$A ko=$KO kernel=$(uname -r)"

"$A" unload > /dev/null 2>&1	# a module left by an earlier suite
# The stable interface must not need debugfs: take it away for the run.
if grep -q ' /sys/kernel/debug debugfs ' /proc/mounts; then
	umount /sys/kernel/debug && remount=1
fi
! grep -q ' debugfs ' /proc/mounts
st=$?; : > "$tmp/out"; : > "$tmp/err"
ok $st "debugfs is not mounted for this run"

fails load "$KO" bogus=1 && one_line && err_has "no parameter 'bogus'" &&
	err_has 'max_pinned_mb' && run status && [ "$(field state)" = not ]
ok $? "load with an unknown parameter: one line, nothing loaded"
run load "$KO"; ok $? "load $KO"
fails load "$KO" && err_has "already loaded"
ok $? "load again: already loaded"
run status && [ "$(field state)" = live ] && [ "$(field abi_version)" = 1 ] &&
	[ "$(field contexts)" = 0 ] && [ "$(field refcount)" = 0 ]
ok $? "status: live, ABI 1, no contexts, refcount 0"
run status --json && has '"version": 1' && has '"state": "live"' &&
	has '"abi_version": 1' && has '"name": "max_pinned_mb"' &&
	grep -q '"value": [0-9][0-9]*$' "$tmp/out"
ok $? "status --json: live, ABI, parameters as numbers"
as_nobody status && [ "$(field state)" = live ] && [ "$(field contexts)" = 0 ] &&
	[ "$(field pinned_bytes)" = 0 ] &&
	! "$RUNAS" "$NOBODY" "$HOLDER" 0 0 > /dev/null 2>&1
st=$?; show
ok $st "status as uid $NOBODY, who cannot open the device, without debugfs"

# A root process holding STREAMS streams and PIN_BYTES pinned bytes.
start_holder hpid "$tmp/holder" "$HOLDER" "$STREAMS" "$PIN_BYTES"
st=$?; cp "$tmp/holder" "$tmp/out"; : > "$tmp/err"
ok $st "root holder: $STREAMS streams, $PIN_BYTES bytes registered (pid $hpid)"
# The device's group, as the udev rule's accel group, for uid NOBODY.
chgrp "$NOBODY" /dev/accelstream
start_holder npid "$tmp/nholder" "$RUNAS" "$NOBODY" "$HOLDER" -n "$UNAME" 1 "$NOBODY_BYTES"
st=$?; cp "$tmp/nholder" "$tmp/out"; : > "$tmp/err"
ok $st "uid $NOBODY holder named $UNAME: 1 stream, $NOBODY_BYTES bytes (pid $npid)"

run status && [ "$(field contexts)" = 2 ] && [ "$(field streams)" = $((STREAMS + 1)) ] &&
	[ "$(field regions)" = 2 ] && [ "$(field pinned_bytes)" = $((PIN_BYTES + NOBODY_BYTES)) ] &&
	[ "$(field refcount)" -ge 2 ]
st=$?; show
ok $st "status: 2 contexts, $((STREAMS + 1)) streams, 2 regions, pinned bytes, refcount >= 2"
as_nobody status && [ "$(field contexts)" = 2 ] &&
	[ "$(field pinned_bytes)" = $((PIN_BYTES + NOBODY_BYTES)) ]
ok $? "status as uid $NOBODY: the same totals"

run devices -r -n -b -o device,contexts,streams,pinned &&
	[ "$(head -n1 "$tmp/out")" = "0 2 $((STREAMS + 1)) $((PIN_BYTES + NOBODY_BYTES))" ]
st=$?; show
ok $st "devices: device 0 holds both contexts, $((STREAMS + 1)) streams, their pinned bytes"
run devices --json && has '"devices": ' && has '"device": 0' && has '"limit": '
ok $? "devices --json: one object per device"
run ps; show
run ps -r -n -b -o pid,uid,command,streams,regions,pinned,executor,failed &&
	grep -qx "$hpid 0 holder $STREAMS 1 $PIN_BYTES soft 0" "$tmp/out" &&
	grep -q "^$npid $NOBODY " "$tmp/out" && [ "$(lines)" -eq 2 ]
ok $? "ps as root: both contexts (pid, uid, command, streams, regions, pinned, executor)"
as_nobody ps -r -n -o pid,uid,streams && [ "$(cat "$tmp/out")" = "$npid $NOBODY 1" ]
st=$?; show
ok $st "ps as uid $NOBODY: only its own process's context"
run ps --json && has "\"pid\": $hpid" && has "\"pinned\": $PIN_BYTES" &&
	has '"command": "holder"' && has "\"command\": \"$UNAME\"" && has '"version": 1'
ok $? "ps --json: pid, pinned bytes, command names (UTF-8)"
LC_ALL=C.UTF-8 run ps -o command,streams,pid && has "$UNAME" &&
	sed "s/$UNAME/$UPLAIN/" "$tmp/out" > "$tmp/plain" &&
	awk '!h && /STREAMS/ { h = 1; s = index($0, "STREAMS") + 6; p = index($0, "PID") + 2; next }
	     !h { next }
	     { rows++ }
	     substr($0, s, 1) !~ /[0-9]/ || substr($0, p, 1) !~ /[0-9]/ ||
	     substr($0, s + 1, 1) != " " || length($0) != p { bad = 1 }
	     END { exit bad || rows != 2 }' "$tmp/plain"
st=$?; show
ok $st "ps in C.UTF-8: the UTF-8 command name keeps STREAMS and PID aligned"
as_nobody ps -l 1 -c 2 -o pid && [ "$(grep -c '^ *PID$' "$tmp/out")" -eq 2 ]
ok $? "ps -l 1 -c 2 as uid $NOBODY: two refreshes"

"$A" ps -r -n -o ctx,pid > "$tmp/ids"
ctx=$(awk -v p="$hpid" '$2 == p { print $1 }' "$tmp/ids")
nctx=$(awk -v p="$npid" '$2 == p { print $1 }' "$tmp/ids")
if [ -n "$ctx" ] && [ -n "$nctx" ]; then
	run stats -r -n -o stream "$ctx" && [ "$(lines)" -eq "$STREAMS" ] &&
		run stats -r -n -b -o kind,size,state "$ctx" &&
		[ "$(cat "$tmp/out")" = "live
live
live

host $PIN_BYTES live" ]
	st=$?; show
	ok $st "stats $ctx: $STREAMS live streams, one host region of $PIN_BYTES bytes"
	run stats --json "$ctx" 1 && has '"stream": 1' && has '"submitted": 0' &&
		has '"error": 0' && ! has regions
	ok $? "stats $ctx 1 --json: one stream"
	fails stats "$ctx" 999 && err_has "no stream 999"
	ok $? "stats $ctx 999: no such stream"
	as_nobody stats "$ctx"; [ $? -eq 1 ] && err_has "no context $ctx" && one_line
	ok $? "stats $ctx (root's) as uid $NOBODY: no such context"
	as_nobody stats -r -n -b -o stream,kind,size "$nctx" && has '^host 65536$'
	ok $? "stats $nctx (its own) as uid $NOBODY"
else
	for t in 1 2 3 4 5; do skip "stats $t" "no context ids from ps"; done
fi

fails unload && err_has "in use" && err_has "pid $hpid (holder)" &&
	err_has "pid $npid ($UNAME)"
st=$?; show
ok $st "unload while open: refused, names both holders"
run status && [ "$(field state)" = live ]
ok $? "status: still live after the refused unload"

kill "$hpid" "$npid"; wait "$hpid" 2>/dev/null; wait "$npid" 2>/dev/null; hpid= npid=
chgrp 0 /dev/accelstream
run status && [ "$(field contexts)" = 0 ] && [ "$(field pinned_bytes)" = 0 ] &&
	[ "$(field refcount)" = 0 ]
ok $? "status after kill: no contexts, nothing pinned, refcount 0"
run ps -n && [ "$(lines)" -eq 0 ]
ok $? "ps: no contexts (accelctl's own is not listed)"
run unload && has "unloaded"
ok $? "unload after kill"
run status && [ "$(field state)" = "not" ] && has "not loaded"
ok $? "status: not loaded"
fails stats 1 && err_has "not loaded" && one_line
ok $? "stats 1 when not loaded: says not loaded"
fails ps && err_has "not loaded" && one_line
ok $? "ps when not loaded: says not loaded"
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
