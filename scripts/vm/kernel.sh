#!/usr/bin/env bash
# Locate an installed Debian kernel and prepare a bootable image for QEMU.
#
# Usage: scripts/vm/kernel.sh [--no-image] [stock|rt|debug]   (default: $KERNEL or stock)
#   debug: the debug kernel of scripts/debug-kernel/build.sh (built once, cached)
#   --no-image  only locate the kernel (KVER/KDIR/MODDIR/VMLINUZ/KFLAVOUR):
#               instant, never extracts or boots anything
#
# Prints shell assignments on stdout (eval them):
#   KVER=6.1.0-NN-amd64            newest /boot/vmlinuz-*-amd64 (or *-rt-amd64)
#   KDIR=/lib/modules/$KVER/build  headers for out-of-tree module builds
#   MODDIR=/lib/modules/$KVER      the kernel's own modules
#   VMLINUZ=/boot/vmlinuz-$KVER
#   VMLINUX=.../build/vm/$KVER/vmlinux   uncompressed PVH ELF (fast -kernel
#                                  boot under TCG); falls back to $VMLINUZ
#                                  when it has no PVH note or does not boot
#   KFLAVOUR=stock|rt
# The vmlinux is extracted once with the kernel's scripts/extract-vmlinux
# (from the linux-source tarball) and cached, together with a one-off boot
# probe result, under build/vm/$KVER/.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

noimage=0
if [ "${1:-}" = --no-image ]; then noimage=1; shift; fi
flavour=${1:-${KERNEL:-stock}}
# The debug kernel is built from linux-source-6.12 and cached outside the tree.
if [ "$flavour" = debug ]; then
	exec "$(dirname "${BASH_SOURCE[0]}")/../debug-kernel/build.sh"
fi
case "$flavour" in
stock|amd64) flavour=stock; pat='vmlinuz-*-amd64'; notpat='*-rt-amd64' ;;
rt|rt-amd64) flavour=rt; pat='vmlinuz-*-rt-amd64'; notpat='' ;;
*) vm_die "unknown KERNEL '$flavour' (stock|rt)" ;;
esac

kver=
for f in /boot/$pat; do
	[ -f "$f" ] || continue
	v=${f#/boot/vmlinuz-}
	# shellcheck disable=SC2254
	if [ -n "$notpat" ]; then case "$v" in $notpat) continue ;; esac; fi
	[ -d "/lib/modules/$v" ] || continue
	echo "$v"
done | sort -V | tail -n1 > "${TMPDIR:-/tmp}/kver.$$" || true
kver=$(cat "${TMPDIR:-/tmp}/kver.$$"); rm -f "${TMPDIR:-/tmp}/kver.$$"
[ -n "$kver" ] || vm_die "no installed $flavour kernel under /boot (run scripts/deps.sh $([ $flavour = rt ] && echo rt || echo vm))"

vmlinuz=/boot/vmlinuz-$kver
[ -r "$vmlinuz" ] || vm_die "$vmlinuz not readable"
if [ $noimage = 1 ]; then
	printf 'KVER=%s\nKFLAVOUR=%s\nKDIR=%s\nMODDIR=%s\nVMLINUZ=%s\n' \
		"$kver" "$flavour" "/lib/modules/$kver/build" "/lib/modules/$kver" "$vmlinuz"
	exit 0
fi
kout=$VM_BUILD/$kver
mkdir -p "$kout"
vmlinux=$kout/vmlinux

has_pvh_note() {
	# XEN_ELFNOTE_PHYS32_ENTRY (type 18) in a "Xen" note = PVH entry point
	LC_ALL=C readelf -n "$1" 2>/dev/null |
		awk '/^ *Xen/ && ($0 ~ /0x00000012/ || $0 ~ /PHYS32_ENTRY/) {f=1} END {exit !f}'
}

# Boot probe: boot the image with no initramfs; a working boot gets as far
# as the "VFS: Unable to mount root" panic (-no-reboot + panic=-1 exits).
boot_probe() {
	local img=$1 log=$kout/probe.log
	timeout "${PROBE_TIMEOUT:-180}" qemu-system-x86_64 -accel tcg -m 512 -smp 1 \
		-display none -monitor none -no-reboot -nodefaults \
		-serial "file:$log" -kernel "$img" \
		-append "console=ttyS0 panic=-1 loglevel=7 nokaslr" >/dev/null 2>&1 || true
	grep -q 'Linux version' "$log" && grep -qE 'Kernel panic|VFS: Unable to mount' "$log"
}

image=$vmlinuz
# cache is stale when the package replaced the vmlinuz (same ABI, new build)
if [ -s "$vmlinux" ] && [ "$vmlinuz" -nt "$vmlinux" ]; then
	rm -f "$vmlinux" "$kout/image"
fi
if [ -s "$kout/image" ] && [ -e "$(cat "$kout/image")" ]; then
	image=$(cat "$kout/image")
else
	if [ ! -s "$vmlinux" ]; then
		src=$(lsrc_extract)
		vm_log "extracting $vmlinux from $vmlinuz"
		sh "$src/scripts/extract-vmlinux" "$vmlinuz" > "$vmlinux.tmp" ||
			{ rm -f "$vmlinux.tmp"; vm_die "extract-vmlinux failed"; }
		mv "$vmlinux.tmp" "$vmlinux"
	fi
	if ! has_pvh_note "$vmlinux"; then
		vm_log "warning: $vmlinux has no PVH note; using $vmlinuz"
	elif [ "${VM_SKIP_PROBE:-0}" = 1 ] || boot_probe "$vmlinux"; then
		image=$vmlinux
	else
		vm_log "warning: PVH boot of $vmlinux failed (see $kout/probe.log); using $vmlinuz"
	fi
	echo "$image" > "$kout/image"
fi

cat <<EOT
KVER=$kver
KFLAVOUR=$flavour
KDIR=/lib/modules/$kver/build
MODDIR=/lib/modules/$kver
VMLINUZ=$vmlinuz
VMLINUX=$image
EOT
