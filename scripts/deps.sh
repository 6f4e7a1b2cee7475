#!/usr/bin/env bash
# Install the Debian packages a package set needs, only if missing.
#
# Usage: scripts/deps.sh [SET...]
#   SET: vm (default) | rt | build | docs | pkg | debug
#   vm    - kernel image/headers, linux-source-6.1 (extract-vmlinux, the
#           kselftest framework) and 6.12 (its newer kselftest harness), qemu,
#           busybox-static, coreutils (the guest's timeout), rsync (kselftest
#           install), kmod, cpio, xz
#   rt    - PREEMPT_RT kernel image and headers
#   build - compiler toolchain for userspace + libkmod and libsmartcols,
#           clang for libFuzzer, gnuplot for make -C bench plot
#   docs  - Sphinx for make htmldocs (the kernel-doc extension comes from
#           linux-source-6.1, in vm)
#   pkg   - what make deb, lintian and the DKMS checks need (debian/control's
#           Build-Depends and the tools that test the packages)
#   debug - linux-source-6.12 and what building the debug kernel needs
#
# The only place anything is installed: make run, make check and make deps
# call this script; no build target (htmldocs, deb, dkms-check) does.
#
# Fast no-op when everything is installed (one dpkg-query call).
# Runs `apt-get update` at most once, and only when something is missing.
# Needs root (or sudo) only when something has to be installed.
set -euo pipefail

pkgs_for() {
	case "$1" in
	vm)    echo linux-image-amd64 linux-headers-amd64 linux-source-6.1 linux-source-6.12 \
	            qemu-system-x86 busybox-static kmod libkmod-dev cpio xz-utils \
	            coreutils rsync ;;
	rt)    echo linux-image-rt-amd64 linux-headers-rt-amd64 ;;
	build) echo gcc make pkg-config libkmod-dev libsmartcols-dev binutils \
	            clang libclang-rt-14-dev gnuplot-nox ;;
	docs)  echo python3-sphinx ;;
	pkg)   echo debhelper dh-dkms dkms dpkg-dev lintian git xz-utils ;;
	debug) echo linux-source-6.12 flex bison bc libelf-dev libssl-dev ;;
	*)     echo "deps.sh: unknown package set '$1' (vm|rt|build|docs|pkg|debug)" >&2; return 1 ;;
	esac
}

[ $# -gt 0 ] || set -- vm
want=()
for set_name in "$@"; do
	# shellcheck disable=SC2207
	want+=($(pkgs_for "$set_name"))
done

missing=()
for p in "${want[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

echo "deps.sh: installing: ${missing[*]}" >&2
SUDO=
if [ "$(id -u)" -ne 0 ]; then
	SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
