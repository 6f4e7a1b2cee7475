#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Build accelstream.ko for a kernel, assemble a VM payload with the ioctl
# fuzzer and the fault tests, boot it with scripts/vm/run-vm.sh and print
# the TAP summary.
#
# Usage: fuzz/run-vm.sh [stock|rt|debug]      (default: $KERNEL or stock)
# Environment:
#   SECONDS   fuzzing time in the guest (default 30)
#   SEED      fuzzer seed (default: derived from the time, printed)
#   THREADS   fuzzer threads (default 4)
#   FUZZ_ARGS extra ioctl_fuzz arguments (e.g. --no-huge)
#   TESTS     subset of: load ioctl_fuzz fault_stress fault_inject unload
#   VM_OUT    output dir (default build/fuzz/out-$KERNEL)
#   and the variables of scripts/vm/run-vm.sh (VM_MEM, VM_SMP, ...).
# Exit status: 0 when the VM run passed and the summary has no failure.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
kernel=${1:-${KERNEL:-stock}}
# bash's own $SECONDS counts up from shell start: take the caller's value.
fuzz_seconds=${FUZZ_SECONDS:-}
[ -n "$fuzz_seconds" ] || fuzz_seconds=$(printenv SECONDS 2>/dev/null || true)
[ -n "$fuzz_seconds" ] || fuzz_seconds=30
seed=${SEED:-$(( $(date +%s) ^ $$ ))}
threads=${THREADS:-4}
build=$root/build/fuzz
out=${VM_OUT:-$build/out-$kernel}

log() { echo "fuzz/run-vm: $*" >&2; }
die() { log "$*"; exit 1; }

case "$kernel" in stock|rt|debug) ;; *) die "unknown kernel '$kernel' (stock|rt|debug)" ;; esac
case "$fuzz_seconds" in ''|*[!0-9]*) die "SECONDS must be a number" ;; esac

# --- the kernel: KDIR to build against
kinfo=$(KERNEL=$kernel "$root/scripts/vm/kernel.sh" --no-image "$kernel") ||
	die "cannot locate the $kernel kernel"
KDIR=$(echo "$kinfo" | sed -n 's/^KDIR=//p')
KVER=$(echo "$kinfo" | sed -n 's/^KVER=//p')
[ -d "$KDIR" ] || die "no kernel build dir '$KDIR' for $kernel"

# --- the module, built from a copy so that nothing lands in driver/
mod=$build/mod-$kernel
rm -rf "$mod"
mkdir -p "$mod"
cp -r "$root/driver" "$root/uapi" "$mod/"
cp "$root/Kbuild" "$mod/"
find "$mod" \( -name '*.o' -o -name '*.ko' -o -name '*.mod*' -o -name '.*.cmd' \
	-o -name modules.order -o -name Module.symvers \) -delete
if ! make -s -C "$KDIR" M="$mod" modules > "$build/module-$kernel.log" 2>&1; then
	cat "$build/module-$kernel.log" >&2
	die "module build for $KVER failed"
fi
ko=$mod/driver/accelstream.ko
[ -f "$ko" ] || die "no $ko"

# --- the test programs
make -s -C "$here" B="$build" >&2 || die "building the fuzzer failed"
make -s -C "$root/tests/fault" B="$build" >&2 || die "building the fault tests failed"

# --- the payload
payload=$build/payload-$kernel
rm -rf "$payload"
mkdir -p "$payload/bin" "$payload/modules"
cp "$ko" "$payload/modules/"
make -s -C "$here" B="$build" vm-payload OUT="$payload/bin" >&2 || die "vm-payload failed"
make -s -C "$root/tests/fault" B="$build" vm-payload OUT="$payload/bin" >&2 || die "fault vm-payload failed"
# shellcheck disable=SC2086
cat > "$payload/tests.list" <<EOF
load insmod /payload/modules/accelstream.ko max_pinned_mb=${MAX_PINNED_MB:-64} max_device_mb=${MAX_DEVICE_MB:-64}
ioctl_fuzz ioctl_fuzz --seconds $fuzz_seconds --seed $seed --threads $threads ${FUZZ_ARGS:-}
fault_stress fault_stress
fault_inject fault_inject
unload rmmod accelstream
EOF
cp "$root/tests/fault/dmesg.ignore" "$payload/dmesg.ignore"

log "kernel=$kernel ($KVER) seconds=$fuzz_seconds seed=$seed threads=$threads out=$out"
rc=0
TEST_TIMEOUT=${TEST_TIMEOUT:-$((fuzz_seconds + 240))} VM_OUT=$out KERNEL=$kernel \
	"$root/scripts/vm/run-vm.sh" "$payload" || rc=1
grep -E '^# (fuzz|fault):' "$out/tap.txt" 2>/dev/null
echo "== $kernel: $out/tap.txt (seed $seed)"
"$root/scripts/vm/tap-summary.sh" "$out/tap.txt" || rc=1
exit $rc
