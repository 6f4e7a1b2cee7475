#!/bin/sh
# SPDX-License-Identifier: MIT
# Bandwidth against size, libaccel and its baseline, one panel per
# direction (one stream), from a CSV the bandwidth program wrote with
# --csv. Needs gnuplot (Debian: gnuplot-nox, which `make deps` installs);
# installs nothing itself.
#
#   sh bench/plot.sh CSV PNG
set -eu
csv=${1:?usage: plot.sh CSV PNG}
png=${2:?usage: plot.sh CSV PNG}
if ! command -v gnuplot > /dev/null 2>&1; then
	echo "plot: gnuplot is missing (Debian package gnuplot-nox; make deps installs it)" >&2
	exit 1
fi
[ -r "$csv" ] || { echo "plot: no $csv (run bandwidth --csv $csv first)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One data file per direction: size_bytes libaccel baseline (one stream),
# the mean of the rows of that size when the file holds several runs.
dirs=$(awk -F, 'NR > 1 && $1 == "bandwidth" && $4 == 1 && $8 == "GB/s" {
	gsub(/"/, "", $2); if ($2 != "register" && !seen[$2]++) print $2 }' "$csv")
[ -n "$dirs" ] || { echo "plot: no one-stream bandwidth rows in $csv" >&2; exit 1; }
base=$(awk -F, 'NR == 2 { gsub(/"/, "", $9); print $9 }' "$csv")
n=0
for d in $dirs; do
	awk -F, -v d="$d" 'NR > 1 && $1 == "bandwidth" && $4 == 1 {
		r = $2; gsub(/"/, "", r)
		if (r == d) { n[$3]++; l[$3] += $5; b[$3] += $6 } }
		END { for (s in n) print s, l[s] / n[s], b[s] / n[s] }' "$csv" |
		sort -n > "$tmp/$d.dat"
	n=$((n + 1))
done

{
	echo "set terminal pngcairo size 1400,$((300 * ((n + 1) / 2))) noenhanced"
	echo "set output '$png'"
	echo "set multiplot layout $(((n + 1) / 2)),2 title 'accelstream: bandwidth against size ($(basename "$csv"))'"
	echo "set logscale x 2"
	echo "set xtics ('4 KiB' 4096, '64 KiB' 65536, '1 MiB' 1048576, '16 MiB' 16777216, '256 MiB' 268435456, '1 GiB' 1073741824)"
	echo "set xlabel 'copy size'"
	echo "set ylabel 'GB/s'"
	echo "set grid"
	echo "set offsets graph 0.03, graph 0.03, 0, 0"
	echo "set key top left"
	for d in $dirs; do
		echo "set title '$d, one stream'"
		echo "plot '$tmp/$d.dat' using 1:2 with linespoints title 'libaccel', '' using 1:3 with linespoints title '$base'"
	done
	echo "unset multiplot"
} > "$tmp/plot.gp"
gnuplot "$tmp/plot.gp"
echo "plot: wrote $png"
