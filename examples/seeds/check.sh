#!/bin/sh
# SPDX-License-Identifier: MIT
# check.sh PROG...: run each seed program and compare what it prints with
# PROG.out; TAP, exit status 1 if any differs or fails.
n=0 rc=0
echo "TAP version 13"
echo "1..$#"
for p; do
	n=$((n + 1))
	out=$("$p" 2>&1)
	st=$?
	echo "$out" | sed 's/^/# /'
	if [ $st -eq 0 ] && [ "$out" = "$(cat "$p.out")" ]; then
		echo "ok $n ${p##*/}"
	else
		echo "not ok $n ${p##*/} # exit status $st, expected output: $(cat "$p.out")"
		rc=1
	fi
done
exit $rc
