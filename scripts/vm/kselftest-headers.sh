#!/usr/bin/env bash
# The kselftest framework of a Debian linux-source tarball.
#
# Usage: scripts/vm/kselftest-headers.sh [OUTDIR [VERSION]]
#   OUTDIR   default build/kselftest (VERSION 6.1) or build/kselftest-VERSION
#   VERSION  6.1 (default: the series of the stock kernel and of
#            linux-source-6.1) or 6.12 (linux-source-6.12)
#
# Writes
#   OUTDIR/kselftest_harness.h, OUTDIR/kselftest.h   build with -I OUTDIR
#   OUTDIR/tree/   a kernel tree reduced to what kselftests are built with:
#                  tools/testing/selftests (Makefile, lib.mk, the runner,
#                  every suite) and scripts/subarch.include
# Cached: a no-op when OUTDIR is complete.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

LINUX_SRC_VERSION=${2:-$LINUX_SRC_VERSION}
case $LINUX_SRC_VERSION in
6.1) def=$ROOT/build/kselftest ;;
*)   def=$ROOT/build/kselftest-$LINUX_SRC_VERSION ;;
esac
out=${1:-$def}
sel=tools/testing/selftests
stamp=$out/.complete
[ -f "$stamp" ] && [ -f "$out/tree/$sel/lib.mk" ] && exit 0

src=$(lsrc_extract)
rm -rf "$out"
mkdir -p "$out/tree/scripts" "$out/tree/tools/testing"
cp -a "$src/$sel" "$out/tree/tools/testing/"
cp "$src/scripts/subarch.include" "$out/tree/scripts/"
# The harness includes nothing but kselftest.h (6.1 and 6.12 alike).
for h in kselftest_harness.h kselftest.h; do
	cp "$src/$sel/$h" "$out/$h"
done
if grep -v '"kselftest.h"' "$out/kselftest_harness.h" |
	grep -q '^[[:space:]]*#[[:space:]]*include[[:space:]]*"'; then
	vm_die "$LINUX_SRC_VERSION's kselftest_harness.h includes more than kselftest.h"
fi
touch "$stamp"
vm_log "kselftest $LINUX_SRC_VERSION in $out"
