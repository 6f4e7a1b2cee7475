#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# A bounded libFuzzer run of the pure core, as one TAP test program for
# libaccel/test/runtests.sh (the project's one runner).
# Environment: B (the build directory holding core_fuzz), SECONDS (default 30).
b=${B:?set B to the fuzz build directory}
secs=${SECONDS:-30}
here=$(cd "$(dirname "$0")" && pwd)

mkdir -p "$b/corpus" "$b/artifacts"
echo "TAP version 13"
echo "1..1"
if "$b/core_fuzz" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
	-artifact_prefix="$b/artifacts/" -print_final_stats=1 \
	"$b/corpus" "$here/corpus" > "$b/core-fuzz.log" 2>&1; then
	runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$b/core-fuzz.log" | grep -o '[0-9]*$')
	echo "ok 1 core_fuzz ${secs}s # $runs runs"
	exit 0
fi
echo "not ok 1 core_fuzz # see $b/core-fuzz.log; crash input in $b/artifacts"
grep -m3 -E 'ERROR|SUMMARY|assert|runtime error|check failed' "$b/core-fuzz.log" | sed 's/^/# /'
exit 1
