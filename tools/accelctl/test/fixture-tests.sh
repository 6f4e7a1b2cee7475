#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# accelctl against the fixture trees (fake sysfs, debugfs-layout files and
# procfs): the commands' output, exit status, JSON validity, option and
# operand errors, and tables with UTF-8 command names. Prints TAP.
#
# Usage: ACCELCTL=path/to/accelctl fixture-tests.sh FIXTURE_DIR

fx=${1:?usage: fixture-tests.sh FIXTURE_DIR}
here=$(dirname "$0")
A=${ACCELCTL:-accelctl}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0 pass=0 fail=0 skip=0

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		pass=$((pass + 1)); echo "ok $n $2"
	else
		fail=$((fail + 1)); echo "not ok $n $2"
		sed 's/^/#   /' "$tmp/out" "$tmp/err" 2>/dev/null | head -n 20
	fi
}
skip() { n=$((n + 1)); skip=$((skip + 1)); echo "ok $n $1 # SKIP $2"; }

# tree NAME: point accelctl at a fixture tree
tree() {
	export ACCELCTL_SYSFS_ROOT=$fx/$1/sys
	export ACCELCTL_DEBUGFS_ROOT=$fx/$1/debug
	export ACCELCTL_PROC_ROOT=$fx/$1/proc
}
run() { "$A" "$@" > "$tmp/out" 2> "$tmp/err"; }
fails() { run "$@"; [ $? -eq 1 ]; }
has() { grep -q -- "$1" "$tmp/out"; }
err_has() { grep -q -- "$1" "$tmp/err"; }
# one_line: exactly one line on stderr, and no getopt or usage noise
one_line() {
	[ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -q '^accelctl: error: ' "$tmp/err" &&
		! grep -q -e 'invalid option' -e '^Usage' "$tmp/err"
}
if command -v python3 > /dev/null; then
	py=python3
else
	py=
fi
json_ok() {
	[ -z "$py" ] && { head -c 1 "$tmp/out" | grep -q '{'; return; }
	$py -c 'import json, sys; json.load(open(sys.argv[1], encoding="utf-8", errors="strict"))' "$tmp/out"
}
# jq_is EXPR VALUE: a Python expression over the document d is VALUE
jq_is() {
	[ -z "$py" ] && return 0
	$py -c 'import json, sys; d = json.load(open(sys.argv[1], encoding="utf-8"));
v = eval(sys.argv[2]); sys.exit(0 if repr(v) == sys.argv[3] else 1)' "$tmp/out" "$1" "$2"
}

echo "TAP version 13"
tree live
run status; ok $? "status: exit 0"
has '^state  *live$' && has '^refcount  *2$' && has '^abi_version  *1$' &&
	has '^pinned_bytes  *1114112 (1.1 MiB)$' && has 'max_pinned_mb=64'
ok $? "status: state, refcount, ABI, pinned (from sysfs), parameters"
run status --json && json_ok && jq_is 'd["version"]' 1 &&
	jq_is 'd["status"][0]["pinned_bytes"]' 1114112 &&
	jq_is 'd["status"][0]["loaded"]' True &&
	jq_is '{p["name"]: p["value"] for p in d["parameters"]}' "{'max_device_mb': 256, 'max_pinned_mb': 64}"
ok $? "status --json: version, numbers as numbers, parameters as numbers"
run --json status && has '"state": "live"' && run -J status && has '"state": "live"'
ok $? "--json and -J before the command"
run ps -o ctx,pid,command,streams && grep -q '^ *1 *1234 holder *3$' "$tmp/out"
ok $? "ps -o: context 1 row"
run ps && has 'my "odd" prog' && has '64.0 KiB' && has 'contexts: 2'
ok $? "ps: comm with spaces, pinned, summary line"
run ps --json && json_ok && jq_is 'd["contexts"][1]["command"]' "'my \"odd\" prog'" &&
	jq_is 'd["contexts"][1]["failed"]' 1 && jq_is 'd["contexts"][0]["pinned"]' 1048576
ok $? "ps --json: valid, comm escaped, numbers"
run ps -n -r -o ctx,pid && [ "$(cat "$tmp/out")" = "1 1234
2 1300" ]
ok $? "ps -n -r -o ctx,pid: raw, no header"
run ps -b -o ctx,pinned -n && grep -q '^ *1 *1048576$' "$tmp/out"
ok $? "ps -b: bytes"
run ps -o CTX,Command -J && jq_is 'sorted(d["contexts"][0])' "['command', 'ctx']"
ok $? "ps -o: column names in either case, JSON keys lower case"
run ps -l 1 -c 2 -o ctx && [ "$(grep -c '^CTX' "$tmp/out")" -eq 2 ]
ok $? "ps -l 1 -c 2: refreshed twice"
fails ps -o ctx,bogus && one_line && err_has "unknown column 'bogus'"
ok $? "ps -o bogus: one line"
fails ps -l 0 && one_line && fails ps --watch extra && one_line
ok $? "ps -l 0, ps extra: one line each"
run stats 2 && has 'EIO (-5)' && has 'host_alloc' && has 'released'
ok $? "stats 2: streams and regions"
run stats ctx-2 1 --json && json_ok && jq_is 'd["streams"][0]["error"]' -5 && ! has regions
ok $? "stats ctx-2 1 --json: one stream"
run stats 2 -o stream,kind,size -b && has '^ *1$' && grep -q '^host_alloc *65536$' "$tmp/out" &&
	! has REGION
ok $? "stats -o: columns of both tables"
fails stats 9 && one_line && err_has 'no context 9'
ok $? "stats 9: no such context"
fails stats 1 7 && err_has 'no stream 7'
ok $? "stats 1 7: no such stream"
fails stats x && one_line
ok $? "stats x: not an id"
fails stats -1 && one_line && err_has "unknown option '-1'"
ok $? "stats -1: one line, no getopt noise"
fails stats && one_line && fails stats 1 2 3 && one_line
ok $? "stats without or with too many operands: one line"
fails status extra && one_line && err_has "'extra'"
ok $? "status extra: one line naming the argument"
fails status -o ctx && one_line && fails --bogus status && one_line
ok $? "status -o, --bogus: one line"
fails unload && err_has 'in use (refcount 2)' &&
	err_has 'pid 1234 (holder): 1 open file' && err_has 'pid 1300 .*mapped'
ok $? "unload: refused, names the holders"

tree utf8
if [ -n "$py" ] && LC_ALL=C.UTF-8 "$A" ps > /dev/null 2>&1; then
	LC_ALL=C.UTF-8 run ps -o ctx,command,streams,pid && has 'héllö-✓' && has '東京-job' &&
		$py "$here/columns.py" "$tmp/out" STREAMS && $py "$here/columns.py" "$tmp/out" PID
	ok $? "ps in a UTF-8 locale: UTF-8 and wide command names keep the columns aligned"
	LC_ALL=C.UTF-8 run ps && $py "$here/columns.py" "$tmp/out" STREAMS &&
		$py "$here/columns.py" "$tmp/out" FAILED
	ok $? "ps, default columns: aligned after UTF-8 names"
	LC_ALL=C run ps -o command,streams && has 'h\\xc3\\xa9ll' &&
		$py "$here/columns.py" "$tmp/out" STREAMS
	ok $? "ps in the C locale: names escaped, columns aligned"
	run ps -J && json_ok && jq_is 'd["contexts"][0]["command"]' "'héllö-✓'" &&
		jq_is 'd["contexts"][3]["command"] == "bad\ufffdbyte"' True
	ok $? "ps --json: UTF-8 kept, an invalid byte becomes U+FFFD, valid JSON"
else
	for t in 1 2 3 4; do skip "UTF-8 table $t" "no python3 or no C.UTF-8 locale"; done
fi

tree unloaded
run status && has '^state  *not loaded$'
ok $? "status: not loaded"
run status --json && json_ok && jq_is 'd["status"][0]["loaded"]' False &&
	jq_is 'd["status"][0]["contexts"]' None && jq_is 'd["parameters"]' '[]'
ok $? "status --json: not loaded"
fails unload && err_has 'not loaded'
ok $? "unload: not loaded"
fails ps && one_line && err_has 'not loaded'
ok $? "ps: not loaded"
fails stats 1 && one_line && err_has 'accelstream is not loaded'
ok $? "stats 1: not loaded, not 'no context 1'"

tree live
run --help && has 'Usage: accelctl'
ok $? "--help"
run --version && has "ABI 1"
ok $? "--version"
fails frobnicate && err_has "unknown command"
ok $? "unknown command"
run ps --help && has 'Usage: accelctl ps' && has 'PINNED'
ok $? "ps --help lists the columns"

echo "1..$n"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ "$fail" -eq 0 ]
