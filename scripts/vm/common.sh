# shellcheck shell=bash
# Shared helpers for scripts/vm/*.sh (sourced, not executed).
#   ROOT      repository root
#   VM_BUILD  cache/output dir for VM artefacts (default: $ROOT/build/vm)
#   LINUX_SRC_TAR  Debian kernel source tarball (default: newest
#                  /usr/src/linux-source-*.tar.xz)

ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
VM_BUILD=${VM_BUILD:-$ROOT/build/vm}

vm_die() { echo "${0##*/}: $*" >&2; exit 1; }
vm_log() { echo "${0##*/}: $*" >&2; }

linux_src_tar() {
	if [ -n "${LINUX_SRC_TAR:-}" ]; then
		echo "$LINUX_SRC_TAR"; return
	fi
	local t
	t=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n1)
	[ -n "$t" ] || vm_die "no /usr/src/linux-source-*.tar.xz (run scripts/deps.sh vm)"
	echo "$t"
}

# Files pulled out of the source tarball.  Extracting is dominated by
# decompressing the whole tarball (~10-25 s), so every caller asks for the
# same union of paths and the result is cached in one place.
LSRC_FILES="scripts/extract-vmlinux
tools/testing/selftests/kselftest.h
tools/testing/selftests/kselftest_harness.h"

# lsrc_extract [EXTRA_RELPATH...]: make sure LSRC_FILES (+ extras) exist
# under $(lsrc_dir); echoes that dir.
lsrc_dir() { echo "$VM_BUILD/linux-source"; }
lsrc_extract() {
	local dir tar top need=() f tmp
	dir=$(lsrc_dir)
	for f in $LSRC_FILES "$@"; do
		[ -e "$dir/$f" ] || need+=("$f")
	done
	[ ${#need[@]} -eq 0 ] && { echo "$dir"; return 0; }
	tar=$(linux_src_tar)
	top=$(basename "$tar" .tar.xz)
	mkdir -p "$VM_BUILD"
	tmp=$(mktemp -d "$VM_BUILD/.lsrc.XXXXXX")
	vm_log "extracting ${need[*]} from $tar"
	# --wildcards off: exact member names
	if ! tar -xJf "$tar" -C "$tmp" "${need[@]/#/$top/}"; then
		rm -rf "$tmp"; vm_die "could not extract ${need[*]} from $tar"
	fi
	mkdir -p "$dir"
	( cd "$tmp/$top" && find . -type f -print ) | while read -r f; do
		mkdir -p "$dir/$(dirname "$f")"
		mv -f "$tmp/$top/$f" "$dir/$f"
	done
	rm -rf "$tmp"
	echo "$dir"
}
