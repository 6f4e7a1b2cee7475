#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: every test of accelstream, from the fastest to the real one.
#   1. unit tests of the pure core (userspace, ASan+UBSan), libFuzzer on the
#      core and on libaccel's API (call sequences, replayed in the VM too)
#   2. libaccel's suite over the in-process transport (plain, ASan+UBSan, TSan),
#      and its man pages against the errnos the suite provokes
#   3. accelctl's parser and fixture tests
#   4. the documentation (Sphinx, kernel-doc), make install, every version
#      string, the Debian packages (build, lintian, dpkg -i, a consumer,
#      dkms build of the packaged source) and DKMS
#   5. the kselftests built and installed in a kernel tree the kernel's way
#      (6.1 and 6.12 harness), and a planted failing kselftest that must
#      fail a VM run; then per kernel in $KERNELS (stock, rt, debug): the
#      module built with W=1 and no warnings, then one VM boot running the
#      kselftest suites (directly and through the kernel's
#      run_kselftest.sh), the libaccel suite over the kernel transport and
#      accelctl's own tests
# Every step's TAP lands in build/results/; the last line printed is the
# "N passed, N failed" total over all of them. Exit 0 only when nothing
# failed.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
KERNELS=${KERNELS:-stock rt debug}
# Compiler warnings are errors in every build here (never in a package's).
export WERROR=${WERROR:-1}
RES=$ROOT/build/results
KSFT=$ROOT/build/kselftest
rm -rf "$RES"
mkdir -p "$RES"

say() { printf '==> %s\n' "$*"; }

# step NAME CMD...: run CMD, keep its output as NAME.tap; a failing command
# that printed no failing TAP line of its own becomes one.
step() {
	local name=$1 rc
	shift
	say "$name"
	"$@" > "$RES/$name.log" 2>&1
	rc=$?
	grep -E '^(not )?ok |^# Totals|^1\.\.|^TAP version' "$RES/$name.log" > "$RES/$name.tap"
	# A check that prints no TAP of its own is one test case.
	if [ ! -s "$RES/$name.tap" ] && [ $rc -eq 0 ]; then
		printf 'TAP version 13\n1..1\nok 1 %s\n' "$name" > "$RES/$name.tap"
	fi
	# Exit status 4 is a skip (kselftest), reported by the TAP itself.
	if [ $rc -ne 0 ] && [ $rc -ne 4 ]; then
		tail -n 30 "$RES/$name.log"
		grep -q '^not ok' "$RES/$name.tap" ||
			echo "not ok - $name: exit status $rc (see build/results/$name.log)" >> "$RES/$name.tap"
	fi
	[ $rc -eq 4 ] && return 0
	return $rc
}

# build NAME CMD...: like step, for a build that has no tests of its own.
build() {
	local name=$1 rc
	shift
	say "build $name"
	"$@" > "$RES/build-$name.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		tail -n 30 "$RES/build-$name.log"
		echo "not ok - build $name: exit status $rc (see build/results/build-$name.log)" > "$RES/build-$name.tap"
	fi
	return $rc
}

sets="vm build docs pkg"
case " $KERNELS " in *" rt "*) sets="$sets rt" ;; esac
case " $KERNELS " in *" debug "*) sets="$sets debug" ;; esac
say "packages: $sets"
scripts/deps.sh $sets || { echo "check: installing packages failed" >&2; exit 1; }

build kselftest-headers scripts/vm/kselftest-headers.sh "$KSFT"
build kselftest-6.12-headers scripts/vm/kselftest-headers.sh "" 6.12

# 1. The pure core, compiled from the file the module builds.
core_test() {
	mkdir -p build/core
	${CC:-gcc} -std=gnu11 -O1 -g -Wall -Wextra -Wno-sign-compare \
		-Wno-unused-parameter -fsanitize=address,undefined \
		-fno-sanitize-recover=all -isystem "$KSFT" -Icore -Iuapi \
		tests/core/test_core.c core/*.c -o build/core/test_core &&
		build/core/test_core
}
step core core_test
# libFuzzer on the core's validation and ABI parsing, bounded.
step core-fuzz make -C fuzz core-fuzz-run SECONDS="${CORE_FUZZ_SECONDS:-30}"
# libaccel's public API: libFuzzer on call sequences (inproc), then the
# committed corpus, the regression inputs and seeded sequences replayed.
step api-fuzz make -C fuzz api-fuzz-run SECONDS="${API_FUZZ_SECONDS:-30}"
step api-replay make -C fuzz api-replay-run API_SEED="${API_SEED:-20261201}"
step api-pins make -C fuzz api-pins-run API_SEED="${API_SEED:-20261201}"

# 2. libaccel over the in-process transport: each test program's TAP kept.
libaccel_tests() { (cd libaccel/test && ls ./*.c | sed 's|^\./||; s|\.c$||'); }
libaccel_suite() {
	local mode=$1 dir=$2 t targets=
	for t in $(libaccel_tests); do targets="$targets build/$dir/$t"; done
	# shellcheck disable=SC2086
	build "libaccel-$mode" make -C libaccel $targets || return 0
	for t in $(libaccel_tests); do
		step "libaccel-$mode-$t" env ACCEL_TRANSPORT=inproc \
			ASAN_OPTIONS=detect_leaks=1 \
			UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
			TSAN_OPTIONS=halt_on_error=1 TEST_TIMEOUT=300 \
			libaccel/test/runtests.sh "libaccel/build/$dir" "$t"
	done
}
if [ -f libaccel/Makefile ]; then
	libaccel_suite inproc test
	libaccel_suite asan test-asan
	libaccel_suite tsan test-tsan
	# The cuda backend over the stand-in libcudart, plain and under TSan
	# (its lock order): built where the CUDA toolkit's headers are.
	if [ -f "${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}/include/cuda_runtime_api.h" ]; then
		step libaccel-fakecuda make -C libaccel test-fakecuda
	else
		printf 'TAP version 13\n1..1\nok 1 libaccel-fakecuda # SKIP no CUDA toolkit headers\n' \
			> "$RES/libaccel-fakecuda.tap"
	fi
	# Every errno the tests provoke from a call is on its man page.
	step libaccel-man-errnos libaccel/test/man-errnos.sh
fi

# The seed programs, built through the compatibility headers, over inproc.
if [ -f examples/seeds/Makefile ]; then
	build seeds make -C examples/seeds && step seeds make -C examples/seeds check
fi

# 3. accelctl on fixtures.
if [ -f tools/accelctl/Makefile ]; then
	step accelctl-host make -C tools/accelctl test
fi

# 4. Documentation, kernel-doc and installing.
step htmldocs make htmldocs
step kernel-doc make kernel-doc-check
step install make install-check
step versions make version-check
step deb make deb-check
step dkms make dkms-check

# The kselftests the kernel's way: copied into linux-source-6.1's
# tools/testing/selftests (drivers/accelstream and accelstream), built and
# installed by its Makefile with 6.1's and 6.12's harness, run on this
# host (no module: all skip); the installs go into every VM run below.
# Then the runner's own test: a planted failing kselftest fails a VM run.
KSFT_TREE=$ROOT/build/ksft-tree
step kselftest-tree scripts/vm/ksft-host-check.sh "$KSFT_TREE"
step vm-runner-check scripts/vm/ksft-runner-check.sh "$ROOT/build/ksft-runner-check"

# 5. The real module, per kernel.
vm_payload() {
	local kernel=$1 p=$2 kdir
	kdir=$(scripts/vm/kernel.sh --no-image "$kernel" | sed -n 's/^KDIR=//p')
	rm -rf "$p"
	mkdir -p "$p/bin" "$p/modules"
	make module KDIR="$kdir" || return 1
	cp driver/accelstream.ko "$p/modules/"
	make -C selftests/accelstream OUTPUT="$p/bin" || return 1
	cp scripts/vm/ksft-check/nodebugfs.sh "$p/bin/ksft-nodebugfs.sh"
	for h in 6.1 6.12; do
		cp -a "$KSFT_TREE/drivers-$h/linux/tools/testing/selftests/kselftest_install" \
			"$p/kselftest-$h" || return 1
	done
	if [ -f libaccel/Makefile ]; then
		make -C libaccel vm-tests OUT="$p/bin" || return 1
	fi
	if [ -f examples/seeds/Makefile ]; then
		make -C examples/seeds static OUT="$p/bin" || return 1
	fi
	if [ -f tools/accelctl/Makefile ]; then
		make -C tools/accelctl bundle O="$ROOT/build/accelctl" || return 1
		cp -r "$ROOT/build/accelctl/bundle/." "$p/"
	fi
	make install-vm-payload VM_UDEV_OUT="$p" || return 1
	make -C fuzz vm-payload OUT="$p/bin" || return 1
	make -C tests/fault vm-payload OUT="$p/bin" || return 1
	{
		# Three soft devices: every suite runs on several (device 0 by
		# default), and the multi-device tests have peers to use.
		echo "load accelctl load /payload/modules/accelstream.ko devices=3"
		for t in $(sed -n 's/^TEST_GEN_PROGS := //p' selftests/accelstream/Makefile); do
			echo "ksft-$t $t"
		done
		# The debug kernel (KASAN, lockdep, kmemleak) forks several
		# times slower: fewer forks keep the fork test inside its limit.
		forks=
		[ "$kernel" = debug ] && forks=ACCEL_TEST_FORKS=40
		# libaccel's programs through its one runner, which marks the
		# kernel log and fails a program on a report logged since.
		# ACCEL_TEST_VM=1 lets a test change a system setting of the
		# guest (fs.file-max for -ENFILE), never of the host.
		for t in "$p"/bin/libaccel-*; do
			t=${t##*/}
			case $t in *.sh) continue ;; esac
			echo "$t ACCEL_TRANSPORT=kernel ACCEL_TEST_VM=1 RUNTESTS_KLOG=1 TEST_TIMEOUT=280 $forks sh /payload/bin/libaccel-runtests.sh /payload/bin $t"
		done
		for t in "$p"/bin/seed-*; do
			t=${t##*/}
			case $t in *.sh|*.out) continue ;; esac
			echo "$t ACCEL_TRANSPORT=kernel sh /payload/bin/seed-check.sh /payload/bin/$t"
		done
		# The API call sequences of make check's api-replay step.
		echo "api_replay ACCEL_TRANSPORT=kernel ACCEL_FUZZ_POOL_BYTES=16777216 api_replay --timeout 120 /payload/bin/api-corpus /payload/bin/api-regress --seed ${API_SEED:-20261201} --count ${API_VM_COUNT:-20}"
		# The same suite under the kernel's runner, as installed by
		# make -C tools/testing/selftests TARGETS=drivers/accelstream install.
		echo "kselftest-6.1 /payload/kselftest-6.1/run_kselftest.sh"
		echo "kselftest-6.12 /payload/kselftest-6.12/run_kselftest.sh"
		echo "ksft-nodebugfs ksft-nodebugfs.sh"
		echo "unload accelctl unload"
		# The fuzzer and the fault tests, under tighter limits so that
		# random sizes fail with -ENOMEM instead of exhausting the guest.
		echo "fuzz-load insmod /payload/modules/accelstream.ko max_pinned_mb=64 max_device_mb=64 devices=2"
		echo "ioctl_fuzz ioctl_fuzz --seconds ${FUZZ_SECONDS:-20} --seed ${FUZZ_SEED:-20261201} --threads 4"
		echo "fault_stress fault_stress"
		echo "fault_inject fault_inject"
		echo "fuzz-unload rmmod accelstream"
		if [ -x "$p/bin/vm-accelctl.sh" ]; then
			echo "accelctl ACCELCTL=/payload/bin/accelctl ACCEL_KO=/payload/modules/accelstream.ko sh /payload/bin/vm-accelctl.sh"
		fi
		echo "install-udev ACCEL_KO=/payload/modules/accelstream.ko sh /payload/bin/vm-udev.sh"
	} > "$p/tests.list"
}

for kernel in $KERNELS; do
	p=$ROOT/build/payload-$kernel
	if build "payload-$kernel" vm_payload "$kernel" "$p"; then
		say "VM run on the $kernel kernel"
		KERNEL=$kernel VM_OUT="$ROOT/build/vm/out-$kernel" VM_TIMEOUT="${VM_TIMEOUT:-2400}" \
			scripts/vm/run-vm.sh "$p" > "$RES/vm-$kernel.log" 2>&1
		rc=$?
		cp "$ROOT/build/vm/out-$kernel/tap.txt" "$RES/vm-$kernel.tap" 2>/dev/null ||
			echo "not ok - vm-$kernel: no TAP output" > "$RES/vm-$kernel.tap"
		if [ $rc -ne 0 ]; then
			tail -n 40 "$RES/vm-$kernel.log"
			grep -q '^not ok' "$RES/vm-$kernel.tap" ||
				echo "not ok - vm-$kernel: the VM run failed (see build/results/vm-$kernel.log)" >> "$RES/vm-$kernel.tap"
		fi
	fi
done

say "summary"
if [ -f "$RES/vm-debug.tap" ]; then
	ioctls=$(sed -n 's/^# fuzz: ioctls=\([0-9]*\).*/\1/p' "$RES/vm-debug.tap" | tail -n1)
	faults=$(sed -n 's/^# fault: injected faults taken=\([0-9]*\).*/\1/p' "$RES/vm-debug.tap" | tail -n1)
	reports=$(grep -c '^not ok - kernel-report' "$RES/vm-debug.tap")
	summary_debug="debug kernel: fuzz ioctls ${ioctls:-none}, injected faults taken ${faults:-none}, kernel reports $reports"
fi
scripts/vm/tap-summary.sh "$RES"/*.tap > "$RES/summary.txt"
rc=$?
head -n -1 "$RES/summary.txt"
[ -n "${summary_debug:-}" ] && echo "$summary_debug"
tail -n 1 "$RES/summary.txt"
exit $rc
