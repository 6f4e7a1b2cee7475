#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make run [FILE=path] [ACCEL_TRANSPORT=inproc]: the whole stack on real
# input. Builds everything, starts the real module (on this host when it can
# load modules, otherwise inside the Debian-kernel VM the tests use), runs
# the seed examples, streams FILE through device memory and back
# (examples/stream_file: the file -> device and device -> host legs timed
# apart, every byte that came back compared with the file's) and checks
# the SHA-256 of what came back too, then shows that nothing stays pinned
# and unloads.
#
# The default FILE is the initramfs image of the Debian kernel the VM boots
# (/boot/initrd.img-<version>): on every machine that can run this, some
# tens of MB, and compressed, so every byte is effectively random.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
transport=${ACCEL_TRANSPORT:-kernel}
out=$ROOT/build/run

die() { echo "make run: $*" >&2; exit 1; }
say() { printf '==> %s\n' "$*"; }

if [ "$transport" = inproc ]; then
	# No module, no VM: a compiler is all it takes (also on machines that
	# are not Debian, such as a GPU host).
	command -v cc > /dev/null && command -v make > /dev/null ||
		scripts/deps.sh build || die "installing packages failed"
	KVER=$(uname -r)
	eval "$(scripts/vm/kernel.sh --no-image stock 2>/dev/null)"
else
	scripts/deps.sh vm build || die "installing packages failed"
	eval "$(scripts/vm/kernel.sh --no-image stock)" || die "no Debian kernel found"
fi

file=${1:-/boot/initrd.img-$KVER}
[ -n "${1:-}" ] || [ -e "$file" ] || file=/boot/initrd.img-$(uname -r)
[ -n "${1:-}" ] || [ -e "$file" ] || die "no default input here (no /boot/initrd.img-*): give one with FILE=path"
[ -e "$file" ] || die "$file: no such file"
[ -d "$file" ] && die "$file: is a directory, give a file"
[ -f "$file" ] || die "$file: not a regular file"
head -c 1 "$file" > /dev/null 2>&1 && [ -r "$file" ] || die "$file: cannot be read"
[ -s "$file" ] || die "$file: is empty, nothing to stream"
file=$(cd "$(dirname "$file")" && pwd)/$(basename "$file")
size=$(stat -c %s "$file")
say "input: $file ($size bytes)"
sha=$(sha256sum "$file" | cut -d' ' -f1)

build() {
	local what=$1
	shift
	"$@" > "$out/build-$what.log" 2>&1 ||
		{ tail -n 20 "$out/build-$what.log"; die "building $what failed (see $out/build-$what.log)"; }
}

rm -rf "$out"
mkdir -p "$out"
say "building libaccel and the examples"
build libaccel make -C libaccel
build examples make -C examples

if [ "$transport" = inproc ]; then
	say "transport: inproc (no module; ACCEL_BACKEND=${ACCEL_BACKEND:-auto})"
	export ACCEL_TRANSPORT=inproc
	# With a usable GPU, libaccel's CUDA executor; otherwise the CPU engine.
	export ACCEL_BACKEND=${ACCEL_BACKEND:-auto}
	failed=0
	for ex in stream_tutorial acl_one_thread_one_stream acl_one_thread_two_streams \
		  acl_two_threads acl_event_order; do
		say "$ex"
		examples/$ex || { echo "FAILED: $ex"; failed=1; }
	done
	# Its figures on stderr: "file -> device" is the loader's leg.
	say "stream_file: $file"
	got=$(examples/stream_file "$file" | sha256sum | cut -d' ' -f1)
	rc=${PIPESTATUS[0]}
	echo "sha256 of the file:  $sha"
	echo "sha256 came back:    $got"
	if [ "$rc" -ne 0 ] || [ "$got" != "$sha" ]; then
		echo "FAILED: stream_file exit $rc, checksum ${got:-none}"
		failed=1
	else
		echo "match: every byte came back"
	fi
	[ $failed -eq 0 ] && echo "make run: PASS" || echo "make run: FAIL"
	exit $failed
fi

# The real module: here when this kernel loads modules, else in the VM.
host_kdir=/lib/modules/$(uname -r)/build
if [ -e /proc/modules ] && [ -d "$host_kdir" ] && [ "$(id -u)" = 0 ]; then
	say "building the module for this host ($(uname -r))"
	build module make module KDIR="$host_kdir"
	build accelctl make -C tools/accelctl
	build static make -C examples static OUT="$out/bin"
	say "running on this host"
	ACCELCTL=$ROOT/build/accelctl/accelctl ACCEL_KO=$ROOT/driver/accelstream.ko \
		BIN=$out/bin scripts/run/job.sh "$file" "$size" "$sha" "$file"
	exit $?
fi

say "this kernel cannot load modules: running in a VM ($KVER, QEMU TCG)"
p=$out/payload
mkdir -p "$p/bin" "$p/modules"
build module make module KDIR="$KDIR"
cp driver/accelstream.ko "$p/modules/"
build accelctl make -C tools/accelctl bundle O="$ROOT/build/accelctl"
cp -r "$ROOT/build/accelctl/bundle/." "$p/"
build static make -C examples static OUT="$p/bin"
cp scripts/run/job.sh "$p/bin/"
printf 'virtio_pci\nvirtio_blk\n' > "$p/kmods.list"
# The file reaches the guest as a read-only virtio disk, /dev/vda: any size.
echo "job ACCELCTL=/payload/bin/accelctl ACCEL_KO=/payload/modules/accelstream.ko BIN=/payload/bin sh /payload/bin/job.sh /dev/vda $size $sha $(basename "$file" | tr -c "A-Za-z0-9._\n-" _)" > "$p/tests.list"

QEMU_EXTRA="-drive file=${file//,/,,},format=raw,if=virtio,readonly=on" \
	VM_OUT=$out/vm scripts/vm/run-vm.sh "$p" > "$out/vm.log" 2>&1
rc=$?
# What the job printed, as the guest saw it.
sed -n '/^# accelstream-begin job/,/^# accelstream-end job/p' "$out/vm/tap.txt" |
	sed '1d;$d'
grep -E '^not ok|verdict' "$out/vm/tap.txt"
if [ $rc -ne 0 ]; then
	tail -n 5 "$out/vm.log"
	echo "make run: FAIL (VM verdict; see $out/vm/tap.txt and $out/vm/console.txt)"
	exit 1
fi
grep -q '^make run: PASS' "$out/vm/tap.txt" || exit 1
