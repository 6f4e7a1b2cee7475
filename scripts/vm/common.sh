# shellcheck shell=bash
# Shared helpers for scripts/vm/*.sh (sourced, not executed).
#   ROOT      repository root
#   VM_BUILD  cache/output dir for VM artefacts (default: $ROOT/build/vm)
#   LINUX_SRC_TAR  Debian kernel source tarball (default:
#                  /usr/src/linux-source-$LINUX_SRC_VERSION.tar.xz)
#   LINUX_SRC_VERSION  6.1 (default: the stock kernel's series) or 6.12

ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
VM_BUILD=${VM_BUILD:-$ROOT/build/vm}
LINUX_SRC_VERSION=${LINUX_SRC_VERSION:-6.1}

vm_die() { echo "${0##*/}: $*" >&2; exit 1; }
vm_log() { echo "${0##*/}: $*" >&2; }

linux_src_tar() {
	local t=${LINUX_SRC_TAR:-/usr/src/linux-source-$LINUX_SRC_VERSION.tar.xz}
	[ -f "$t" ] || vm_die "$t missing: apt-get install linux-source-$LINUX_SRC_VERSION (or scripts/deps.sh vm)"
	echo "$t"
}

# Files pulled out of the source tarball.  Extracting is dominated by
# decompressing the whole tarball (~10-25 s), so every caller asks for the
# same union of paths and the result is cached in one place per version:
# extract-vmlinux, and the kselftest framework (tools/testing/selftests
# with its lib.mk, runner and harness, and the one file its top-level
# Makefile includes from outside it).
LSRC_FILES="scripts/extract-vmlinux
scripts/subarch.include
tools/testing/selftests"

# lsrc_extract [EXTRA_RELPATH...]: make sure LSRC_FILES (+ extras) exist
# under $(lsrc_dir); echoes that dir.
lsrc_dir() { echo "$VM_BUILD/linux-source-$LINUX_SRC_VERSION"; }
lsrc_extract() {
	local dir tar top need=() f tmp
	dir=$(lsrc_dir)
	for f in $LSRC_FILES "$@"; do
		[ -e "$dir/$f" ] || need+=("$f")
	done
	[ ${#need[@]} -eq 0 ] && { echo "$dir"; return 0; }
	tar=$(linux_src_tar) || exit 1
	top=$(basename "$tar" .tar.xz)
	mkdir -p "$VM_BUILD"
	tmp=$(mktemp -d "$VM_BUILD/.lsrc.XXXXXX")
	vm_log "extracting ${need[*]} from $tar"
	# --wildcards off: exact member names
	if ! tar -xJf "$tar" -C "$tmp" "${need[@]/#/$top/}"; then
		rm -rf "$tmp"; vm_die "could not extract ${need[*]} from $tar"
	fi
	mkdir -p "$dir"
	# merged into what is there; symlinks of the tree kept as they are
	( cd "$tmp/$top" && tar -cf - . ) | ( cd "$dir" && tar -xf - ) ||
		{ rm -rf "$tmp"; vm_die "could not copy the extracted files into $dir"; }
	rm -rf "$tmp"
	echo "$dir"
}
