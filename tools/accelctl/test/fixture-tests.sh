#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# accelctl against the fixture trees (fake sysfs, debugfs and procfs):
# the commands' output, exit status and JSON validity. Prints TAP.
#
# Usage: ACCELCTL=path/to/accelctl fixture-tests.sh FIXTURE_DIR

fx=${1:?usage: fixture-tests.sh FIXTURE_DIR}
A=${ACCELCTL:-accelctl}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0 pass=0 fail=0

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		pass=$((pass + 1)); echo "ok $n $2"
	else
		fail=$((fail + 1)); echo "not ok $n $2"
		sed 's/^/#   /' "$tmp/out" "$tmp/err" 2>/dev/null | head -n 20
	fi
}

# tree NAME: point accelctl at a fixture tree
tree() {
	export ACCELCTL_SYSFS_ROOT=$fx/$1/sys
	export ACCELCTL_DEBUGFS_ROOT=$fx/$1/debug
	export ACCELCTL_PROC_ROOT=$fx/$1/proc
}
run() { "$A" "$@" > "$tmp/out" 2> "$tmp/err"; }
has() { grep -q -- "$1" "$tmp/out"; }
err_has() { grep -q -- "$1" "$tmp/err"; }
json_ok() {
	if command -v python3 > /dev/null; then
		python3 -m json.tool < "$tmp/out" > /dev/null
	else
		head -c 1 "$tmp/out" | grep -q '{'
	fi
}

echo "TAP version 13"
tree live
run status; ok $? "status: exit 0"
has '^state  *live$' && has '^refcount  *2$' && has '^abi_version  *1$' &&
	has '^pinned_bytes  *1114112 (1.1 MiB)$' && has 'max_pinned_mb=64'
ok $? "status: state, refcount, ABI, pinned, parameters"
run status --json && json_ok && has '"pinned_bytes": 1114112' &&
	has '"max_device_mb": "256"' && has '"abi_version": 1'
ok $? "status --json: valid, figures"
run --json status && has '"state": "live"'
ok $? "--json before the command"
run ps && grep -q '^| *1 | *1234 | holder *| *3 |' "$tmp/out"
ok $? "ps: context 1 row"
has 'my "odd" prog' && has '1 failed' && has '64.0 KiB'
ok $? "ps: comm with spaces, failed streams, pinned"
run ps --json && json_ok && has '"comm": "my \\"odd\\" prog"' &&
	has '"failed_streams": 1'
ok $? "ps --json: valid, comm escaped"
run stats 2 && has 'EIO (-5)' && has 'host_alloc' && has 'released'
ok $? "stats 2: streams and regions"
run stats ctx-2 1 --json && json_ok && has '"error": -5' && ! has regions
ok $? "stats ctx-2 1 --json: one stream"
run stats 9; [ $? -eq 1 ] && err_has 'no context 9'
ok $? "stats 9: no such context"
run stats 1 7; [ $? -eq 1 ] && err_has 'no stream 7'
ok $? "stats 1 7: no such stream"
run stats x; [ $? -eq 1 ]
ok $? "stats x: not an id"
run unload; [ $? -eq 1 ] && err_has 'in use (refcount 2)' &&
	err_has 'pid 1234 (holder): 1 open file' && err_has 'pid 1300 .*mapped'
ok $? "unload: refused, names the holders"

tree unloaded
run status && has '^state  *not loaded$'
ok $? "status: not loaded"
run status --json && json_ok && has '"loaded": false' && has '"summary": null'
ok $? "status --json: not loaded"
run unload; [ $? -eq 1 ] && err_has 'not loaded'
ok $? "unload: not loaded"
run ps; [ $? -eq 1 ] && err_has 'does not exist'
ok $? "ps: no debugfs directory"

tree live
run --help && has 'Usage: accelctl'
ok $? "--help"
run --version && has "ABI 1"
ok $? "--version"
run frobnicate; [ $? -eq 1 ] && err_has "unknown command"
ok $? "unknown command"
run ps --help && has 'Usage: accelctl ps'
ok $? "ps --help"

echo "1..$n"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" -eq 0 ]
