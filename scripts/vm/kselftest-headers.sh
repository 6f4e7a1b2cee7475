#!/usr/bin/env bash
# Extract the kselftest headers from the Debian linux-source tarball.
#
# Usage: scripts/vm/kselftest-headers.sh [OUTDIR]   (default: build/kselftest)
#
# Writes OUTDIR/kselftest_harness.h, OUTDIR/kselftest.h and any header they
# pull in with #include "..." from tools/testing/selftests (none in 6.1).
# Build tests with -I OUTDIR.  Cached: a no-op when OUTDIR is complete.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

out=${1:-$ROOT/build/kselftest}
sel=tools/testing/selftests
stamp=$out/.complete
[ -f "$stamp" ] && [ -f "$out/kselftest_harness.h" ] && exit 0

src=$(lsrc_extract)
mkdir -p "$out"
todo="kselftest_harness.h kselftest.h"
done_list=" "
while [ -n "$todo" ]; do
	set -- $todo; h=$1; shift; todo="$*"
	case "$done_list" in *" $h "*) continue ;; esac
	done_list="$done_list$h "
	if [ ! -f "$src/$sel/$h" ]; then
		src=$(lsrc_extract "$sel/$h")
	fi
	mkdir -p "$out/$(dirname "$h")"
	cp "$src/$sel/$h" "$out/$h"
	# quoted includes, relative to the including header's directory
	d=$(dirname "$h")
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$out/$h"); do
		rel=$inc
		[ "$d" = . ] || rel=$d/$inc
		# normalise a/../b
		rel=$(echo "$rel" | awk -F/ '{n=0; for(i=1;i<=NF;i++){ if($i==".."&&n>0)n--; else if($i!="."&&$i!="") p[++n]=$i } s=p[1]; for(i=2;i<=n;i++) s=s"/"p[i]; print s}')
		case "$rel" in ../*|"") continue ;; esac
		todo="$todo $rel"
	done
done
touch "$stamp"
echo "kselftest headers in $out:$done_list" >&2
