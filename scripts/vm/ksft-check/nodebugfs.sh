#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# In the VM, with the module loaded: the tests that read the debugfs summary
# skip, with the reason, when debugfs is not mounted (they do not fail, nor
# pass without having checked). debugfs is mounted again afterwards.
#
# Usage: nodebugfs.sh   (lifetime and mem on PATH)
dbg=/sys/kernel/debug
echo "TAP version 13"
echo "1..2"
umount "$dbg" 2>/dev/null || umount -l "$dbg"
if grep -q " $dbg debugfs " /proc/mounts; then
	echo "not ok 1 debugfs could not be unmounted"
	echo "not ok 2 debugfs could not be unmounted"
	exit 1
fi
fail=0
n=0
# PROGRAM EXPECTED: how many of its tests need the summary (all: every one)
for t in "lifetime all" "mem 1"; do
	n=$((n + 1))
	prog=${t% *} want=${t#* }
	"$prog" > /tmp/.nodebugfs 2>&1
	rc=$?
	sed 's/^/# /' /tmp/.nodebugfs
	cases=$(grep -c '^ok [0-9]* ' /tmp/.nodebugfs)
	skipped=$(grep -c '^ok [0-9]* .*# SKIP .*summary not readable (debugfs not mounted' /tmp/.nodebugfs)
	[ "$want" = all ] && want=$cases
	if [ "$rc" -eq 0 ] && [ "$cases" -gt 0 ] && [ "$skipped" -eq "$want" ] &&
		! grep -q '^not ok' /tmp/.nodebugfs; then
		echo "ok $n $prog without debugfs: $skipped of $cases tests skipped with the reason, the rest passed"
	else
		echo "not ok $n $prog without debugfs: rc=$rc, $skipped of $cases skipped with the reason, $want expected"
		fail=1
	fi
done
mount -t debugfs debugfs "$dbg" || { echo "# could not mount debugfs again"; fail=1; }
exit $fail
