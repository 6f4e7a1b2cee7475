#!/usr/bin/env bash
# A test of the VM runner itself: a kselftest install with a planted failing
# program (scripts/vm/ksft-check/planted), run by the kernel's
# run_kselftest.sh in the stock kernel's VM, must make the verdict FAIL even
# though run_kselftest.sh exits 0; its passing program must pass there.
#
# Usage: scripts/vm/ksft-runner-check.sh [WORKDIR]   (default build/ksft-runner-check)
# TAP on stdout; exit 0 when the runner judged the planted run right.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

work=${1:-$ROOT/build/ksft-runner-check}
mkdir -p "$work"
work=$(cd "$work" && pwd)
echo "TAP version 13"
echo "1..3"
if ! inst=$("$ROOT/scripts/vm/ksft-tree.sh" "$work/tree" planted 6.1 \
	"$ROOT/scripts/vm/ksft-check/planted" 2> "$work/tree.log"); then
	tail -n 20 "$work/tree.log" | sed 's/^/#   /'
	echo "not ok 1 planted kselftest suite built and installed"
	exit 1
fi
p=$work/payload
rm -rf "$p"
mkdir -p "$p"
cp -a "$inst" "$p/kselftest"
echo "planted sh /payload/kselftest/run_kselftest.sh" > "$p/tests.list"

KERNEL=stock VM_OUT=$work/vm VM_TIMEOUT=${VM_TIMEOUT:-600} VM_MEM=512 \
	"$ROOT/scripts/vm/run-vm.sh" "$p" > "$work/run-vm.log" 2>&1
rc=$?
tap=$work/vm/tap.txt
sed 's/^/# vm: /' "$tap" 2>/dev/null
fail=0
if grep -q '^ok [0-9]* selftests: planted: planted_pass.sh$' "$tap"; then
	echo "ok 1 a passing kselftest passes under the kernel's runner in the guest"
else
	echo "not ok 1 a passing kselftest passes under the kernel's runner in the guest"
	fail=1
fi
if grep -q '^not ok [0-9]* selftests: planted: planted_fail.sh' "$tap" &&
	grep -q '^# accelstream-end planted rc=0 ' "$tap"; then
	echo "ok 2 the planted failure shows as a not ok line while run_kselftest.sh exits 0"
else
	echo "not ok 2 the planted failure shows as a not ok line while run_kselftest.sh exits 0"
	fail=1
fi
if [ $rc -eq 1 ] && grep -q '^# accelstream-host verdict: FAIL' "$tap"; then
	echo "ok 3 the VM verdict of a run with a failing kselftest is FAIL"
else
	echo "not ok 3 the VM verdict of a run with a failing kselftest is FAIL (run-vm.sh exit $rc)"
	fail=1
fi
exit $fail
