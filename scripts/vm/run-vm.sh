#!/usr/bin/env bash
# Boot a Debian kernel under QEMU (TCG) with a test payload and judge the run.
#
# Usage: scripts/vm/run-vm.sh [PAYLOAD_DIR]
#
# Environment (all optional):
#   PAYLOAD        payload dir (if no argument); layout:
#                    tests.list    one test per line: "<name> <command line>"
#                                  (sh -c, cwd /payload, PATH has /payload/bin;
#                                  blank lines and lines starting with # ignored;
#                                  names: no spaces)
#                    bin/*         static test executables and scripts
#                    modules/*.ko  out-of-tree modules (also installed as
#                                  /lib/modules/$KVER/extra, depmod'ed, so
#                                  `modprobe name` works in the guest)
#                    kmods.list    optional: kernel's own modules to modprobe
#                                  before the tests (one name per line;
#                                  dependencies resolved from $MODDIR)
#                    dmesg.ignore  optional: extra EREs of harmless dmesg lines
#                    anything else is copied too (whole dir -> /payload)
#   KERNEL         stock (default) | rt
#   TESTS          space/comma separated test names to run (default: all)
#   TEST_TIMEOUT   per-test limit in the guest, seconds (default 300)
#   VM_TIMEOUT     wall-clock limit for the whole VM, seconds (default 3000)
#   VM_MEM         guest memory in MiB (default 2048)
#   VM_SMP         guest CPUs (default 2)
#   EXTRA_CMDLINE  appended to the kernel command line
#   VM_OUT         output dir (default build/vm/out-$KERNEL)
#   VM_IMAGE       override the kernel image to boot (default: kernel.sh)
#   QEMU_EXTRA     extra QEMU arguments (word-split)
#
# Outputs in $VM_OUT: console.txt (ttyS0: kernel console + full dmesg dump),
# tap.txt (ttyS1: test output, CR stripped, plus host checks appended),
# initramfs.cpio.gz, qemu.log.  Exit status 0 = PASS, 1 = FAIL, 2 = usage.
# PASS needs all of: the guest's "# accelstream-verdict: PASS" line in
# tap.txt, no "not ok" line in it (whatever the exit statuses), QEMU exit
# status 1 (isa-debug-exit value 0), and no panic/Oops/BUG/WARNING in
# console.txt.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

KERNEL=${KERNEL:-stock}
payload=${1:-${PAYLOAD:-}}
[ -n "$payload" ] || { echo "usage: $0 PAYLOAD_DIR (or PAYLOAD=dir)" >&2; exit 2; }
[ -d "$payload" ] || { echo "$0: payload dir '$payload' not found" >&2; exit 2; }
payload=$(cd "$payload" && pwd)
[ -f "$payload/tests.list" ] || vm_log "warning: $payload/tests.list missing: no tests will run"

TEST_TIMEOUT=${TEST_TIMEOUT:-300}
VM_TIMEOUT=${VM_TIMEOUT:-3000}
VM_MEM=${VM_MEM:-2048}
VM_SMP=${VM_SMP:-2}
VM_OUT=${VM_OUT:-$VM_BUILD/out-$KERNEL}

kinfo=$("$ROOT/scripts/vm/kernel.sh" "$KERNEL") || exit 1
eval "$kinfo"
image=${VM_IMAGE:-$VMLINUX}

mkdir -p "$VM_OUT"
VM_OUT=$(cd "$VM_OUT" && pwd)
stage=$VM_OUT/initramfs
rm -rf "$stage"
mkdir -p "$stage"/{bin,dev,proc,sys,tmp,etc,payload,lib/modules/"$KVER"}
ln -s bin "$stage/sbin"
mkdir -p "$stage/usr"
ln -s ../bin "$stage/usr/bin"
ln -s ../bin "$stage/usr/sbin"

# --- busybox userland
bb=$(command -v busybox || true)
[ -n "$bb" ] || vm_die "busybox not found (scripts/deps.sh vm)"
if LC_ALL=C readelf -l "$bb" 2>/dev/null | grep -q INTERP; then
	vm_die "$bb is dynamically linked; install busybox-static"
fi
cp "$bb" "$stage/bin/busybox"
for a in $("$bb" --list); do
	[ "$a" = busybox ] || ln -sf busybox "$stage/bin/$a"
done
install -m 0755 "$ROOT/scripts/vm/init.sh" "$stage/init"

# --- coreutils' timeout in place of busybox's: the kernel's kselftest
# runner calls /usr/bin/timeout --foreground, an option busybox's lacks.
# The host's binary, with the loader and libraries ldd names for it.
to=$(command -v timeout || true)
[ -n "$to" ] && "$to" --version 2>/dev/null | grep -q coreutils ||
	vm_die "coreutils' timeout not found (scripts/deps.sh vm)"
rm -f "$stage/bin/timeout"
cp "$to" "$stage/bin/timeout"
for lib in $(ldd "$to" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
	mkdir -p "$stage$(dirname "$lib")"
	cp -L "$lib" "$stage$lib"
done

# --- payload
cp -rL "$payload/." "$stage/payload/"
[ -d "$stage/payload/bin" ] && chmod -R a+rx "$stage/payload/bin"
if [ -n "${TESTS:-}" ] && [ -f "$payload/tests.list" ]; then
	want=" $(echo "$TESTS" | tr ',' ' ') "
	awk -v want="$want" '/^[ \t]*(#|$)/ { next } index(want, " " $1 " ") { print }' \
		"$payload/tests.list" > "$stage/payload/tests.list"
	for t in $want; do
		awk -v t="$t" '$1 == t { f = 1 } END { exit !f }' "$stage/payload/tests.list" ||
			{ echo "$0: TESTS: no test '$t' in $payload/tests.list" >&2; exit 2; }
	done
fi

# --- modules: payload *.ko -> extra/, kmods.list resolved from $MODDIR
mdst=$stage/lib/modules/$KVER
for f in modules.builtin modules.builtin.modinfo modules.order; do
	[ -f "$MODDIR/$f" ] && cp "$MODDIR/$f" "$mdst/"
done
copy_ko() { # SRC DSTDIR
	local src=$1 dst=$2 base
	base=$(basename "$src")
	mkdir -p "$dst"
	case "$src" in
	*.ko.xz)  xz -dc "$src" > "$dst/${base%.xz}" ;;
	*.ko.gz)  gzip -dc "$src" > "$dst/${base%.gz}" ;;
	*.ko.zst) zstd -qdc "$src" > "$dst/${base%.zst}" ;;
	*)        cp "$src" "$dst/" ;;
	esac
}
if [ -d "$payload/modules" ]; then
	for ko in "$payload"/modules/*.ko; do
		[ -e "$ko" ] || continue
		copy_ko "$ko" "$mdst/extra"
	done
fi
: > "$stage/etc/vmtest.kmods"
if [ -f "$payload/kmods.list" ]; then
	while read -r m _; do
		case "$m" in ''|'#'*) continue ;; esac
		deps=$(modprobe -S "$KVER" --show-depends "$m" 2>&1) ||
			vm_die "kmods.list: cannot resolve '$m' for $KVER: $deps"
		while read -r kind path _; do
			[ "$kind" = insmod ] || continue
			path=$(echo "$path" | tr -s /)
			rel=${path#*/lib/modules/"$KVER"/}
			copy_ko "$path" "$mdst/$(dirname "$rel")"
		done <<< "$deps"
		echo "$m" >> "$stage/etc/vmtest.kmods"
	done < "$payload/kmods.list"
fi
if command -v depmod >/dev/null; then
	depmod -b "$stage" "$KVER" 2>"$VM_OUT/depmod.log" ||
		vm_log "warning: depmod failed: $(cat "$VM_OUT/depmod.log")"
else
	vm_log "warning: depmod not found (kmod); modprobe will not work in the guest"
fi

cat > "$stage/etc/vmtest.conf" <<EOC
TEST_TIMEOUT=$TEST_TIMEOUT
KVER=$KVER
EOC

initrd=$VM_OUT/initramfs.cpio.gz
( cd "$stage" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc -R 0:0 --quiet ) | gzip -1 > "$initrd" ||
	vm_die "building $initrd failed"

# --- boot
console=$VM_OUT/console.txt
tapf=$VM_OUT/tap.txt
rm -f "$console" "$tapf"
cmdline="console=ttyS0 oops=panic panic=-1 panic_on_warn=0 quiet loglevel=4 nokaslr${EXTRA_CMDLINE:+ $EXTRA_CMDLINE}"
# -nodefaults: no VGA/NIC/default serial; then exactly two UARTs in order:
# ttyS0 = console file, ttyS1 = TAP file.  (-nographic would add its own
# stdio serial/monitor, so it is not used.)
# shellcheck disable=SC2054  # commas are QEMU option syntax
# One socket per CPU: a kernel without ACPI (the debug kernel) only finds
# the CPUs of separate sockets, through the MP table.
smp=$VM_SMP
case $smp in *[!0-9]*) ;; *) smp="$smp,sockets=$smp,cores=1" ;; esac
qemu=(qemu-system-x86_64 -accel tcg -m "$VM_MEM" -smp "$smp" -nodefaults
	-display none -monitor none -no-reboot
	-kernel "$image" -initrd "$initrd" -append "$cmdline"
	-serial "file:$console" -serial "file:$tapf"
	-device isa-debug-exit,iobase=0xf4,iosize=0x04)
# shellcheck disable=SC2206
[ -n "${QEMU_EXTRA:-}" ] && qemu+=($QEMU_EXTRA)

vm_log "booting $KVER ($(basename "$image")) with $(du -k "$initrd" | cut -f1) KiB initramfs, limit ${VM_TIMEOUT}s"
t0=$(date +%s.%N)
timeout -k 10 "$VM_TIMEOUT" "${qemu[@]}" > "$VM_OUT/qemu.log" 2>&1 </dev/null
qrc=$?
t1=$(date +%s.%N)
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')

[ -f "$tapf" ] || : > "$tapf"
[ -f "$console" ] || : > "$console"
tr -d '\r' < "$tapf" > "$tapf.tmp" && mv "$tapf.tmp" "$tapf"
tr -d '\r' < "$console" > "$console.tmp" && mv "$console.tmp" "$console"

# --- host-side judgement (appended to tap.txt as TAP-ish lines)
problems=0
host() { echo "$*" >> "$tapf"; }
hostfail() { problems=$((problems + 1)); host "not ok - host $*"; }
host "# accelstream-host kernel=$KVER image=$(basename "$image") qemu-rc=$qrc time=${secs}s"

if ! grep -q '^# accelstream-verdict: ' "$tapf"; then
	hostfail "no-verdict # guest never printed its verdict (crash, panic or hang)"
elif ! grep -q '^# accelstream-verdict: PASS' "$tapf"; then
	problems=$((problems + 1))
	host "# accelstream-host guest verdict: $(grep '^# accelstream-verdict: ' "$tapf" | tail -n1 | cut -d' ' -f3-)"
fi
# Any failing TAP line fails the run, whatever the exit status of the
# program that printed it (the kernel's run_kselftest.sh exits 0 with
# failures in it).
notok=$(grep -c '^not ok' "$tapf")
if [ "$notok" -gt 0 ]; then
	problems=$((problems + 1))
	host "# accelstream-host not-ok lines: $notok"
fi
case "$qrc" in
1)   ;;
124|137) hostfail "timeout # VM killed after ${VM_TIMEOUT}s" ;;
0)   hostfail "qemu-exit # QEMU exited 0: guest panicked/rebooted/powered off instead of isa-debug-exit" ;;
3)   problems=$((problems + 1)) ;; # guest-reported failure, already in tap
*)   hostfail "qemu-exit # QEMU exit status $qrc (expected 1); see $VM_OUT/qemu.log" ;;
esac
CONSOLE_RE='Kernel panic|Oops|BUG:|kernel BUG at|WARNING:|general protection fault|Call Trace'
hits=$(grep -E "$CONSOLE_RE" "$console" | grep -v 'accelstream-test: ' | head -n 5)
if [ -n "$hits" ]; then
	hostfail "console # $(echo "$hits" | head -n1 | sed 's/^\[[ 0-9.]*\] //; s/#/ /g')"
	echo "$hits" | sed 's/^/#   console: /' >> "$tapf"
fi

if [ "$problems" -eq 0 ]; then
	host "# accelstream-host verdict: PASS"
	vm_log "PASS ($KVER, ${secs}s) - $tapf"
	exit 0
fi
host "# accelstream-host verdict: FAIL"
vm_log "FAIL ($KVER, ${secs}s, qemu rc=$qrc) - tap: $tapf console: $console"
echo "----- last 60 lines of $console -----" >&2
tail -n 60 "$console" >&2
echo "----- end of console -----" >&2
exit 1
