#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-vm: the CPU benchmarks (bench/latency, bench/bandwidth; static,
# ACCEL_BACKEND=cpu) over the kernel transport in the Debian VM, each row
# next to its baseline measured in the same guest. TCG: only ratios inside
# one guest mean anything.
#
# The module runs twice per round in the same boot, BENCH_RUNS rounds
# (default 3): "before" and "after". With BENCH_BEFORE=<git revision>,
# "before" is the module built from that revision and "after" the one of
# the working tree, each loaded for its half of the round (the benchmark
# programs are the working tree's in both); without it, "before" is the
# working tree's module with inline_copy_bytes=0 (every submission handed
# to the stream's worker, as before the inline path) and "after" the same
# module with its default.
#
# Environment: KERNEL (stock), BENCH_BEFORE (none), BENCH_RUNS (3), BENCH_ITERS (500),
# BENCH_MAX (bandwidth size cap, bytes; 268435456), BENCH_BYTES (per cell;
# 33554432), VM_MEM (MiB; 4096), BENCH_VM_OUT (build/bench-vm).
# Output: the rows on stdout, and in $BENCH_VM_OUT: run-<mode>-<n>.txt and
# one CSV per program and mode (bench/plot.sh draws the bandwidth ones).
#
# scripts/bench-vm.sh --summary DIR... prints the summary over the rounds of
# several runs (one boot each, BENCH_VM_OUT=DIR), without running anything.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
KERNEL=${KERNEL:-stock}
RUNS=${BENCH_RUNS:-3}
OUTD=${BENCH_VM_OUT:-$ROOT/build/bench-vm}
P=$OUTD/payload
die() { echo "bench-vm: $*" >&2; exit 1; }

# summarize DIR: one line per row of the CSVs there, the ratio's min-max
# over the rounds before and after, and the libaccel figure's median.
summarize() {
	awk -F, '
	function key() { return $1 "|" $2 "|" $3 "|" $4 "|" $9 }
	FNR == 1 { mode = FILENAME ~ /-before\.csv$/ ? "before" : "after"; next }
	{
		k = key(); if (!(k in seen)) { seen[k] = ++n; order[n] = k; unit[k] = $8; base[k] = $9 }
		r = $7 + 0; v = $5 + 0
		if (!((k, mode, "n") in c) || r < lo[k, mode]) lo[k, mode] = r
		if (!((k, mode, "n") in c) || r > hi[k, mode]) hi[k, mode] = r
		c[k, mode, "n"]++; vals[k, mode, c[k, mode, "n"]] = v
	}
	function med(k, m,   i, j, t, a, cnt) {
		cnt = c[k, m, "n"]; if (!cnt) return "-"
		for (i = 1; i <= cnt; i++) a[i] = vals[k, m, i]
		for (i = 1; i <= cnt; i++) for (j = i + 1; j <= cnt; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return sprintf("%.2f", a[int((cnt + 1) / 2)])
	}
	function rng(k, m) { return c[k, m, "n"] ? sprintf("%.2f-%.2f", lo[k, m], hi[k, m]) : "-" }
	END {
		printf "%-10s %-38s %10s %3s %12s %12s %10s %10s  %s\n", "program", "row", "bytes", "str", "ratio before", "ratio after", "lib before", "lib after", "unit, baseline"
		for (i = 1; i <= n; i++) {
			k = order[i]; split(k, f, "|"); gsub(/"/, "", f[2])
			printf "%-10s %-38s %10s %3s %12s %12s %10s %10s  %s, %s\n", f[1], f[2], f[3], f[4], rng(k, "before"), rng(k, "after"), med(k, "before"), med(k, "after"), unit[k], base[k]
		}
	}' "$1"/latency-before.csv "$1"/latency-after.csv "$1"/bandwidth-before.csv "$1"/bandwidth-after.csv
}

if [ "${1:-}" = --summary ]; then
	shift
	[ $# -gt 0 ] || die "--summary needs the output directories of the runs"
	all=$(mktemp -d)
	trap 'rm -rf "$all"' EXIT
	for f in latency-before latency-after bandwidth-before bandwidth-after; do
		for d in "$@"; do
			[ -f "$d/$f.csv" ] || die "no $d/$f.csv"
			awk 'FNR > 1 || !h++' "$d/$f.csv"
		done | awk 'NR == 1 || !/^program,/' > "$all/$f.csv"
	done
	echo "=== summary over the rounds of $#: ratio libaccel / baseline, min-max (before -> after)"
	summarize "$all"
	exit 0
fi

scripts/deps.sh vm build || die "installing packages failed"
kdir=$(scripts/vm/kernel.sh --no-image "$KERNEL" | sed -n 's/^KDIR=//p')
[ -n "$kdir" ] || die "no kernel headers for $KERNEL"
rm -rf "$P"
mkdir -p "$P/bin" "$P/modules"
make module KDIR="$kdir" > "$OUTD/build.log" 2>&1 || die "module build failed (see $OUTD/build.log)"
cp driver/accelstream.ko "$P/modules/"
BEFORE=${BENCH_BEFORE:-}
if [ -n "$BEFORE" ]; then
	rev=$(git rev-parse --verify -q "$BEFORE^{commit}") || die "BENCH_BEFORE: no revision '$BEFORE'"
	bsrc=$OUTD/before-src
	rm -rf "$bsrc"
	mkdir -p "$bsrc"
	git archive "$rev" Kbuild driver core uapi | tar -x -C "$bsrc" ||
		die "BENCH_BEFORE: cannot export $rev"
	make -C "$kdir" M="$bsrc" modules >> "$OUTD/build.log" 2>&1 ||
		die "BENCH_BEFORE: the module of $rev does not build (see $OUTD/build.log)"
	# Not in modules/: run-vm.sh installs those; this one is loaded by path.
	mkdir -p "$P/before"
	cp "$bsrc/driver/accelstream.ko" "$P/before/accelstream.ko"
	echo "$rev" > "$P/before/revision"
fi
make -C bench vm OUT="$P/bin" >> "$OUTD/build.log" 2>&1 ||
	die "bench build failed (see $OUTD/build.log)"

# One round in the guest: MODE (before: inline_copy_bytes=0, or with
# /payload/before the module built from BENCH_BEFORE; after: the working
# tree's module with its defaults), N; each CSV line is echoed as
# "csv <file> <line>".
cat > "$P/bin/bench-round.sh" <<'EOS'
#!/bin/sh
mode=$1 n=$2
param=/sys/module/accelstream/parameters/inline_copy_bytes
if [ -r /payload/before/accelstream.ko ]; then
	ko=/payload/modules/accelstream.ko what="this tree's module"
	[ "$mode" = before ] && ko=/payload/before/accelstream.ko what="the module of $(cat /payload/before/revision)"
	insmod "$ko" || exit 1
	trap 'rmmod accelstream' EXIT
else
	[ -w "$param" ] || { echo "no $param"; exit 1; }
	[ -n "${DEFAULT_INLINE:-}" ] || DEFAULT_INLINE=$(cat /tmp/inline.default)
	if [ "$mode" = before ]; then echo 0 > $param; else echo "$DEFAULT_INLINE" > $param; fi
	what="inline_copy_bytes=$(cat $param)"
fi
echo "# round $n, $mode: $what, $(nproc) CPUs, $(awk '/MemTotal/ { print $2 / 1024 " MiB" }' /proc/meminfo)"
export ACCEL_TRANSPORT=kernel ACCEL_BACKEND=cpu
rm -f /tmp/lat.csv /tmp/bw.csv
bench-latency --csv /tmp/lat.csv || exit 1
bench-bandwidth --csv /tmp/bw.csv || exit 1
sed "s|^|csv latency-$mode |" /tmp/lat.csv
sed "s|^|csv bandwidth-$mode |" /tmp/bw.csv
EOS
chmod +x "$P/bin/bench-round.sh"
{
	[ -n "$BEFORE" ] ||
		echo "load insmod /payload/modules/accelstream.ko devices=2 && cat /sys/module/accelstream/parameters/inline_copy_bytes > /tmp/inline.default"
	for n in $(seq 1 "$RUNS"); do
		for mode in before after; do
			echo "$mode-$n BENCH_ITERS=${BENCH_ITERS:-500} BENCH_MAX=${BENCH_MAX:-268435456} BENCH_BYTES=${BENCH_BYTES:-33554432} BENCH_REG_MAX=${BENCH_MAX:-268435456} bench-round.sh $mode $n"
		done
	done
	[ -n "$BEFORE" ] || echo "unload rmmod accelstream"
} > "$P/tests.list"

# The TSC as clocksource, as on real machines: with QEMU's default HPET
# every clock read (the benchmarks' own, the kernel's) is a device access.
KERNEL=$KERNEL VM_OUT="$OUTD/vm" VM_MEM=${VM_MEM:-4096} \
	EXTRA_CMDLINE="clocksource=tsc tsc=reliable${EXTRA_CMDLINE:+ $EXTRA_CMDLINE}" \
	VM_TIMEOUT=${VM_TIMEOUT:-3000} TEST_TIMEOUT=${TEST_TIMEOUT:-1200} \
	scripts/vm/run-vm.sh "$P" > "$OUTD/vm.log" 2>&1
rc=$?
tap=$OUTD/vm/tap.txt
[ -f "$tap" ] || die "no output from the VM (see $OUTD/vm.log)"

# Split the guest's output per round, the CSV lines per program and mode.
rm -f "$OUTD"/*.csv "$OUTD"/run-*.txt
awk -v d="$OUTD" '
	/^# accelstream-begin (before|after)-/ { f = d "/run-" $3 ".txt"; next }
	/^# accelstream-end / { f = ""; next }
	f && /^csv / { c = d "/" $2 ".csv"; line = $0; sub(/^csv [^ ]* /, "", line)
		if (line ~ /^program,/) { if (!hdr[c]++) print line > c } else print line > c; next }
	f { print > f }
' "$tap"
grep -h '^# accelstream-vm ' "$tap"
for f in "$OUTD"/run-*.txt; do
	[ -e "$f" ] || continue
	echo
	echo "=== ${f##*/run-}"
	cat "$f"
done
echo
echo "=== summary over the rounds: ratio libaccel / baseline, min-max (before -> after)"
summarize "$OUTD"
echo
if [ $rc -ne 0 ]; then
	echo "bench-vm: the VM run was judged FAIL (see $OUTD/vm.log, $tap):"
	grep -E '^not ok|rc=[1-9]' "$tap" | sed 's/^/bench-vm:   /'
	exit 1
fi
echo "bench-vm: VM run PASS; CSV in $OUTD"
