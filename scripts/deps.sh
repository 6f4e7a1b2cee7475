#!/usr/bin/env bash
# Install the Debian packages a package set needs, only if missing.
#
# Usage: scripts/deps.sh [SET...]     SET: vm (default) | rt | build | debug
#   vm    - kernel image/headers/source, qemu, busybox-static, kmod, cpio, xz
#   rt    - PREEMPT_RT kernel image and headers
#   build - compiler toolchain for userspace + libkmod, clang for libFuzzer,
#           gnuplot for make -C bench plot
#   debug - linux-source-6.12 and what building the debug kernel needs
#
# Fast no-op when everything is installed (one dpkg-query call).
# Runs `apt-get update` at most once, and only when something is missing.
# Needs root (or sudo) only when something has to be installed.
set -euo pipefail

pkgs_for() {
	case "$1" in
	vm)    echo linux-image-amd64 linux-headers-amd64 linux-source-6.1 \
	            qemu-system-x86 busybox-static kmod libkmod-dev cpio xz-utils ;;
	rt)    echo linux-image-rt-amd64 linux-headers-rt-amd64 ;;
	build) echo gcc make pkg-config libkmod-dev binutils clang libclang-rt-14-dev \
	            gnuplot-nox ;;
	debug) echo linux-source-6.12 flex bison bc libelf-dev libssl-dev ;;
	*)     echo "deps.sh: unknown package set '$1' (vm|rt|build|debug)" >&2; return 1 ;;
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
