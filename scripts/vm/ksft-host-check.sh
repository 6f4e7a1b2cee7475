#!/usr/bin/env bash
# The kselftest suite built and run the kernel's way, on the host (no
# module here: every program must skip), as TAP.
#
# Usage: scripts/vm/ksft-host-check.sh [WORKDIR]   (default build/ksft-tree)
#
# Leaves WORKDIR/drivers-6.1 and WORKDIR/drivers-6.12: linux-source-6.1's
# tools/testing/selftests with the suite in drivers/accelstream, built with
# 6.1's and 6.12's kselftest_harness.h and installed (kselftest_install/
# under tools/testing/selftests), for the VM run.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

work=${1:-$ROOT/build/ksft-tree}
mkdir -p "$work"
work=$(cd "$work" && pwd)
sel=tools/testing/selftests
suite=$ROOT/selftests/accelstream
progs=$(sed -n 's/^TEST_GEN_PROGS := //p' "$suite/Makefile")
n=0 failed=0
result() { # OK|FAIL DESCRIPTION [DETAIL FILE]
	n=$((n + 1))
	if [ "$1" = OK ]; then
		echo "ok $n $2"
	else
		failed=$((failed + 1))
		echo "not ok $n $2"
		[ -n "${3:-}" ] && [ -r "$3" ] && tail -n 20 "$3" | sed 's/^/#   /'
	fi
}

echo "TAP version 13"
if [ -e /dev/accelstream ]; then
	echo "1..0 # SKIP /dev/accelstream exists here: the no-module checks need a host without it"
	exit 4
fi

# 1. The developer's commands, in both placements and with both harnesses.
for b in drivers/accelstream:6.1 drivers/accelstream:6.12 accelstream:6.1; do
	placement=${b%%:*} harness=${b##*:}
	name=${placement%%/*}-$harness
	[ "$placement" = accelstream ] && name=top-$harness
	log=$work/$name.log
	if inst=$("$ROOT/scripts/vm/ksft-tree.sh" "$work/$name" "$placement" "$harness" 2> "$log"); then
		want=$(for p in $progs; do echo "$placement:$p"; done)
		if [ "$(cat "$inst/kselftest-list.txt")" = "$want" ]; then
			result OK "kselftest install: $placement, $harness harness: run_kselftest.sh and kselftest-list.txt"
		else
			echo "# kselftest-list.txt: $(tr '\n' ' ' < "$inst/kselftest-list.txt")"
			result FAIL "kselftest install: $placement, $harness harness: kselftest-list.txt is not the programs"
		fi
		if grep -q 'warning:' "$log"; then
			result FAIL "kselftest build: $placement, $harness harness: compiler warnings" "$log"
		fi
	else
		result FAIL "kselftest install: $placement, $harness harness" "$log"
		continue
	fi
	[ "$placement" = drivers/accelstream ] || continue

	# 2. Without the module every program skips: exit 4, with the reason.
	for p in $progs; do
		out=$work/$name.$p.out
		( cd "$inst/$placement" && "./$p" ) > "$out" 2>&1
		rc=$?
		if [ $rc -eq 4 ] && grep -q "SKIP.*/dev/accelstream not present" "$out"; then
			result OK "$p ($harness harness) without the module: skipped, exit 4"
		else
			result FAIL "$p ($harness harness) without the module: exit $rc, expected 4 and a SKIP reason" "$out"
		fi
	done
	# ...and the kernel's runner reports each as skipped.
	out=$work/$name.runner.out
	"$inst/run_kselftest.sh" > "$out" 2>&1
	if [ "$(grep -c "^ok [0-9]* selftests: $placement: .* # SKIP$" "$out")" -eq "$(echo $progs | wc -w)" ] &&
		! grep -q '^not ok' "$out"; then
		result OK "run_kselftest.sh ($harness harness) without the module: every program skipped"
	else
		result FAIL "run_kselftest.sh ($harness harness) without the module" "$out"
	fi
done

# 3. A SKIP() in FIXTURE_SETUP stops the test, with either harness.
for harness in 6.1 6.12; do
	d=$ROOT/build/kselftest
	[ "$harness" = 6.1 ] || d=$ROOT/build/kselftest-$harness
	out=$work/setup_skip-$harness.out
	if ${CC:-gcc} -O2 -Wall -Wextra -Werror -isystem "$d" -iquote "$ROOT/uapi" -I"$suite" \
		"$ROOT/scripts/vm/ksft-check/setup_skip.c" -o "$work/setup_skip-$harness" > "$out" 2>&1 &&
		"$work/setup_skip-$harness" > "$out" 2>&1 &&
		[ "$(grep -c '^ok [0-9]* .*# SKIP' "$out")" -eq 2 ] && ! grep -q '^not ok' "$out"; then
		result OK "SKIP() in FIXTURE_SETUP stops the test ($harness harness)"
	else
		result FAIL "SKIP() in FIXTURE_SETUP stops the test ($harness harness)" "$out"
	fi
done

# 4. Standalone in a fresh tree: the harness is fetched from linux-source-6.1;
# without that package, one line says what is missing.
fresh=$work/fresh
rm -rf "$fresh"
mkdir -p "$fresh/scripts"
cp -r "$ROOT/selftests" "$ROOT/uapi" "$fresh/"
cp -r "$ROOT/scripts/vm" "$fresh/scripts/"
rm -f "$fresh/selftests/accelstream/"{info,mem,stream,submit,copy,event,lifetime,threads,executor}
out=$work/fresh.out
if make -C "$fresh/selftests/accelstream" OUTPUT="$fresh/out" "$fresh/out/info" > "$out" 2>&1 &&
	[ -x "$fresh/out/info" ] && grep -q 'linux-source-6.1' "$out"; then
	result OK "standalone build in a fresh tree fetches the harness of linux-source-6.1"
else
	result FAIL "standalone build in a fresh tree" "$out"
fi
rm -rf "$fresh/build"
out=$work/fresh-nosrc.out
LINUX_SRC_TAR=/nonexistent/linux-source-6.1.tar.xz \
	make -s -C "$fresh/selftests/accelstream" OUTPUT="$fresh/out" > "$out" 2>&1
rc=$?
if [ $rc -ne 0 ] && [ "$(wc -l < "$out")" -le 2 ] && grep -q 'apt-get install linux-source-6.1' "$out"; then
	result OK "standalone build without linux-source-6.1 says so in one line"
else
	result FAIL "standalone build without linux-source-6.1: exit $rc" "$out"
fi
# A copy that lost the header link says what to do.
rm -rf "$work/nolink"
cp -r "$work/drivers-6.1/linux" "$work/nolink" 2>/dev/null
rm -rf "$work/nolink/$sel/drivers/accelstream"
cp -r "$suite" "$work/nolink/$sel/drivers/accelstream"
out=$work/nolink.out
make -s -C "$work/nolink/$sel/drivers/accelstream" > "$out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q '^accelstream.h not found' "$out"; then
	result OK "a copy without the uapi header says where to put it"
else
	result FAIL "a copy without the uapi header: exit $rc" "$out"
fi
# The header where "make headers" puts it, with the driver in the tree:
# found through KHDR_INCLUDES, the copy needs no link then.
mkdir -p "$work/nolink/usr/include/linux"
cp "$ROOT/uapi/accelstream.h" "$work/nolink/usr/include/linux/"
out=$work/khdr.out
if make -C "$work/nolink/$sel" TARGETS=drivers/accelstream > "$out" 2>&1 &&
	grep -q "iquote $work/nolink/usr/include/linux" "$out"; then
	result OK "the uapi header among the kernel's installed headers (KHDR_INCLUDES)"
else
	result FAIL "the uapi header among the kernel's installed headers (KHDR_INCLUDES)" "$out"
fi
rm -rf "$work/nolink" "$fresh"

echo "1..$n"
[ $failed -eq 0 ]
