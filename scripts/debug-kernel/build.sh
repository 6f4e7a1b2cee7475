#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (once) the debug kernel the VM runs use to find what the stock kernel
# hides: KASAN, lockdep, DEBUG_OBJECTS, kmemleak, fault injection.
#
# Usage: scripts/debug-kernel/build.sh
# Prints shell assignments for the VM runner (as scripts/vm/kernel.sh does):
#   KVER KFLAVOUR KDIR MODDIR VMLINUZ VMLINUX
#
# The tree is built outside the repository, in
#   ${ACCEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/accelstream}/debug-kernel-<key>
# where <key> hashes the kernel source version and debug.config, so only the
# first run pays (about 7 minutes on 2 cores) and a config change rebuilds.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
"$ROOT/scripts/deps.sh" debug >&2

tarball=$(ls /usr/src/linux-source-6.12.tar.xz 2>/dev/null || true)
[ -n "$tarball" ] || { echo "debug-kernel: linux-source-6.12 is not installed" >&2; exit 1; }
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.12)
key=$( { echo "$srcver"; cat "$HERE/debug.config"; } | sha256sum | cut -c1-16)
cache=${ACCEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/accelstream}
tree=$cache/debug-kernel-$key
jobs=$(nproc)

log() { echo "debug-kernel: $*" >&2; }

# One build at a time: a second make check (another clone, another shell)
# waits here instead of deleting the tree the first is compiling.
mkdir -p "$cache"
exec 9> "$cache/debug-kernel.lock"
flock 9

if [ ! -f "$tree/.accel-built" ]; then
	log "building in $tree (source $srcver); first run only"
	rm -rf "$tree.tmp"
	mkdir -p "$tree.tmp"
	tar -xJf "$tarball" -C "$tree.tmp" --strip-components=1
	(
		cd "$tree.tmp"
		make -s tinyconfig >&2
		KCONFIG_CONFIG=.config scripts/kconfig/merge_config.sh -m .config \
			"$HERE/debug.config" >&2
		make -s olddefconfig >&2
		# Every line of debug.config that kconfig dropped is a config bug.
		bad=0
		while IFS= read -r line; do
			case "$line" in CONFIG_*=n)
				opt=${line%%=*}
				if grep -q "^$opt=y" .config; then
					log "$opt is still set"; bad=1; fi ;;
			CONFIG_*)
				if ! grep -qx "$line" .config; then
					log "not applied: $line"; bad=1; fi ;;
			esac
		done < "$HERE/debug.config"
		[ $bad -eq 0 ] || exit 1
		make -s -j"$jobs" vmlinux modules bzImage >&2
	)
	rm -rf "$tree"
	mv "$tree.tmp" "$tree"
	touch "$tree/.accel-built"
	log "built $tree/vmlinux"
fi

kver=$(make -s -C "$tree" kernelrelease)
# Booted as a bzImage, not through the PVH entry of the vmlinux: with KASAN,
# the PVH path runs instrumented C code (memcmp in the hypervisor probe)
# before the early shadow exists, and the guest triple-faults at once.
image=$tree/arch/x86/boot/bzImage
echo "KVER=$kver"
echo "KFLAVOUR=debug"
echo "KDIR=$tree"
echo "MODDIR=$tree"
echo "VMLINUZ=$image"
echo "VMLINUX=$image"
