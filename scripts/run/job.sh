#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The main job of `make run`, on a machine where accelstream.ko loads (the
# test VM, or the host): load the module with accelctl, run the seed
# examples, stream the input through device memory and back, compare the
# SHA-256 of what came back with the file's, interrupt a second run in the
# middle, show that nothing stays pinned, unload.
#
# Usage: job.sh INPUT SIZE SHA256 [NAME]
# Environment: ACCELCTL (accelctl), ACCEL_KO (the module), BIN (where the
# examples are), DEVICE_MB (the module's max_device_mb for this run).
set -u
input=$1 size=$2 want=$3 name=${4:-$1}
ACCELCTL=${ACCELCTL:-accelctl}
BIN=${BIN:-.}
DEVICE_MB=${DEVICE_MB:-16}
tmp=${TMPDIR:-/tmp}/accel-run.$$
failed=0

say() { echo "$*"; }
bad() { echo "FAILED: $*"; failed=1; }
summary() { awk -v k="$1" '$1 == k { print $2 }' /sys/kernel/debug/accelstream/summary; }

say "== accelctl load $ACCEL_KO max_device_mb=$DEVICE_MB"
"$ACCELCTL" load "$ACCEL_KO" "max_device_mb=$DEVICE_MB" || { bad "load"; exit 1; }

for ex in stream_tutorial acl_one_thread_one_stream acl_one_thread_two_streams \
	  acl_two_threads acl_event_order; do
	say "== $ex"
	"$BIN/$ex" || bad "$ex exited $?"
done

say "== stream_file: $name ($input), $size bytes, device memory $DEVICE_MB MiB"
mkdir -p "$tmp"
mkfifo "$tmp/back"
sha256sum < "$tmp/back" > "$tmp/sum" &
hasher=$!
"$BIN/stream_file" -n "$name" "$input" "$size" > "$tmp/back"
rc=$?
wait $hasher
got=$(cut -d' ' -f1 "$tmp/sum")
say "sha256 of the file:  $want"
say "sha256 came back:    $got"
if [ $rc -ne 0 ]; then
	bad "stream_file exited $rc"
elif [ "$got" = "$want" ]; then
	say "match: every byte came back"
else
	bad "checksum mismatch"
fi

# Small chunks, so that the run has a middle: stream_file says when it
# is there (-p: once the copy of the middle chunk to the device is queued,
# a line on fd 3) and waits for the signal with that copy in flight; the
# interruption happens on every machine, or the run fails.
c=65536
while [ $(( (size + c - 1) / c )) -lt 4 ] && [ $c -gt 1 ]; do c=$((c / 2)); done
half=$(( (size + c - 1) / c / 2 ))
if [ "$half" -lt 1 ]; then
	bad "the input ($size bytes) is too small to interrupt a run in its middle"
else
	say "== interrupting a second run in the middle ($c-byte chunks, SIGINT once chunk $half was queued)"
	mkfifo "$tmp/ready"
	"$BIN/stream_file" -c $c -p "$half:3" "$input" "$size" > /dev/null 3> "$tmp/ready" &
	job=$!
	read -r at < "$tmp/ready" || at=
	if [ "$at" = "$half" ]; then
		kill -INT $job
	else
		bad "stream_file ended before chunk $half, nothing to interrupt"
	fi
	wait $job
	rc=$?
	case $rc in
	130) [ "$at" = "$half" ] && say "stream_file stopped by SIGINT at chunk $half (exit 130)" ;;
	*) bad "interrupted stream_file exited $rc, not 130 (SIGINT)" ;;
	esac
fi
for k in contexts pinned_bytes device_bytes queued; do
	v=$(summary $k)
	[ "$v" = 0 ] || bad "$k is $v after the interrupt"
done
rm -rf "$tmp"

say "== accelctl status"
"$ACCELCTL" status || bad "status"
say "== accelctl unload"
"$ACCELCTL" unload || bad "unload"

if [ $failed -eq 0 ]; then say "make run: PASS"; else say "make run: FAIL"; fi
exit $failed
