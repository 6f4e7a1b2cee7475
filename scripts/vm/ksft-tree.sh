#!/usr/bin/env bash
# Build a kselftest suite the way a kernel developer does, in a copy of
# linux-source-6.1's tools/testing/selftests, and install it:
#   cp -rL SUITE  LINUX/tools/testing/selftests/PLACEMENT
#   make -C LINUX/tools/testing/selftests TARGETS=PLACEMENT install
# leaving LINUX/tools/testing/selftests/kselftest_install with
# run_kselftest.sh and kselftest-list.txt.
#
# Usage: scripts/vm/ksft-tree.sh WORKDIR PLACEMENT [HARNESS [SUITE]]
#   PLACEMENT  drivers/accelstream, accelstream, ... (under tools/testing/selftests)
#   HARNESS    6.1 (default) or 6.12: kselftest_harness.h and kselftest.h of
#              that linux-source in the 6.1 tree (the lib.mk and runner stay 6.1's)
#   SUITE      the directory copied (default: selftests/accelstream)
# Prints the install directory on stdout; the make output goes to stderr.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

[ $# -ge 2 ] || { echo "usage: $0 WORKDIR PLACEMENT [6.1|6.12 [SUITE]]" >&2; exit 2; }
work=$1 placement=$2 harness=${3:-6.1} suite=${4:-$ROOT/selftests/accelstream}
sel=tools/testing/selftests

"$ROOT/scripts/vm/kselftest-headers.sh" "$ROOT/build/kselftest" 6.1 >&2
rm -rf "$work"
mkdir -p "$work"
# Hard links: nothing in the tree is written in place by a build.
cp -al "$ROOT/build/kselftest/tree" "$work/linux"
tree=$work/linux
if [ "$harness" != 6.1 ]; then
	"$ROOT/scripts/vm/kselftest-headers.sh" "" "$harness" >&2
	for h in kselftest_harness.h kselftest.h; do
		rm -f "$tree/$sel/$h"
		cp "$ROOT/build/kselftest-$harness/$h" "$tree/$sel/$h"
	done
fi

rm -rf "${tree:?}/$sel/$placement"
mkdir -p "$(dirname "$tree/$sel/$placement")"
cp -rL "$suite" "$tree/$sel/$placement"
# Whatever a standalone build left in the suite does not travel.
make -s -C "$tree/$sel/$placement" clean >/dev/null 2>&1 || true
make -C "$tree/$sel" TARGETS="$placement" install >&2

inst=$tree/$sel/kselftest_install
for f in run_kselftest.sh kselftest-list.txt kselftest/runner.sh; do
	[ -s "$inst/$f" ] || vm_die "make install left no $inst/$f"
done
echo "$inst"
