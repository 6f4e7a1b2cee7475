#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make install-check: install into a temporary DESTDIR, check every file
# and its mode against the list below, build and run a program outside the
# tree against the installed libaccel (pkg-config, shared and static), then
# uninstall and check that nothing is left. TAP on stdout.
#
# Usage: tests/install/check.sh            (from anywhere)
# Environment: PREFIX (default /usr/local), KVER (default: what
#   mk/install.mk picks), KEEP=1 keeps the DESTDIR for a look.
# shellcheck disable=SC2001 # sed over multi-line diagnostics
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PREFIX=${PREFIX:-/usr/local}
MAKE=${MAKE:-make}
mk=("$MAKE" --no-print-directory -f "$ROOT/mk/install.mk" PREFIX="$PREFIX")
[ -n "${KVER:-}" ] && mk+=(KVER="$KVER")
KVER=$("${mk[@]}" -s install-list DESTDIR=/ |
	sed -n 's|^0644 //lib/modules/\([^/]*\)/updates/accelstream.ko$|\1|p')

tmp=$(mktemp -d "${TMPDIR:-/tmp}/accelstream-install.XXXXXX")
dest=$tmp/dest
if [ "${KEEP:-0}" = 1 ]; then
	trap 'echo "# kept $tmp"' EXIT
else
	trap 'rm -rf "$tmp"' EXIT
fi

n=0 pass=0 failn=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); failn=$((failn + 1)); echo "not ok $n - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
# tail of a log as TAP diagnostics
diag() { sed 's/^/#   /' "$1" | tail -n "${2:-20}"; }

echo "TAP version 13"
echo "# install into $dest (PREFIX=$PREFIX, KVER=$KVER)"

# The expected files: "MODE PATH" relative to DESTDIR, then the symlinks.
expected() {
	local m
	cat <<-EOF
	0644 /lib/modules/$KVER/updates/accelstream.ko
	0755 $PREFIX/lib/libaccel.so.1
	0644 $PREFIX/lib/libaccel.a
	0644 $PREFIX/lib/pkgconfig/libaccel.pc
	0644 $PREFIX/include/accel.h
	0644 $PREFIX/include/accel/cuda_compat.h
	0644 $PREFIX/include/accel/acl_compat.h
	0644 $PREFIX/include/linux/accelstream.h
	0755 $PREFIX/sbin/accelctl
	0644 $PREFIX/share/man/man8/accelctl.8
	0644 /etc/udev/rules.d/60-accelstream.rules
	0644 $PREFIX/share/doc/accelstream/examples/modules-load.d/accelstream.conf
	0644 $PREFIX/share/doc/accelstream/examples/modprobe.d/accelstream.conf
	EOF
	for m in "$ROOT"/libaccel/man/*.3; do
		[ -f "$m" ] && echo "0644 $PREFIX/share/man/man3/${m##*/}"
	done
	for m in "$ROOT"/libaccel/man/*.7; do
		[ -f "$m" ] && echo "0644 $PREFIX/share/man/man7/${m##*/}"
	done
}
links() { echo "$PREFIX/lib/libaccel.so libaccel.so.1"; }

if "${mk[@]}" install DESTDIR="$dest" > "$tmp/install.log" 2>&1; then
	ok "make install DESTDIR=..."
else
	nok "make install DESTDIR=..."
	diag "$tmp/install.log" 30
fi

# Every expected file, with its mode.
while read -r mode path; do
	f=$dest$path
	if [ ! -f "$f" ] || [ -L "$f" ]; then
		nok "installed $path # missing"
	elif [ "$(stat -c %a "$f")" != "${mode#0}" ]; then
		nok "installed $path # mode $(stat -c %a "$f"), expected ${mode#0}"
	else
		ok "installed $path ($mode)"
	fi
done < <(expected)
while read -r path target; do
	got=$(readlink "$dest$path" 2>/dev/null)
	check "link $path -> $target" [ "$got" = "$target" ]
done < <(links)

# Nothing else.
{ expected | awk '{ print $2 }'; links | awk '{ print $1 }'; } | sort > "$tmp/want"
( cd "$dest" 2>/dev/null && find . \( -type f -o -type l \) | sed 's|^\.||' | sort ) > "$tmp/got"
comm -13 "$tmp/want" "$tmp/got" > "$tmp/extra"
if [ -s "$tmp/extra" ]; then
	nok "no unexpected files"; diag "$tmp/extra"
else
	ok "no unexpected files ($(wc -l < "$tmp/got") installed)"
fi

# What the files say.
ko=$dest/lib/modules/$KVER/updates/accelstream.ko
check "module built for $KVER" \
	sh -c "modinfo -F vermagic '$ko' 2>/dev/null | grep -q '^$KVER '"
check "libaccel.so.1 has SONAME libaccel.so.1" \
	sh -c "readelf -d '$dest$PREFIX/lib/libaccel.so.1' | grep -q 'SONAME.*\[libaccel.so.1\]'"
check "udev rule installed as in udev/60-accelstream.rules" \
	cmp -s "$ROOT/udev/60-accelstream.rules" "$dest/etc/udev/rules.d/60-accelstream.rules"
check "libaccel.pc says prefix=$PREFIX" \
	grep -qx "prefix=$PREFIX" "$dest$PREFIX/lib/pkgconfig/libaccel.pc"
check "accelctl --version runs" \
	sh -c "'$dest$PREFIX/sbin/accelctl' --version > /dev/null"

# A consumer outside the tree, built from the installed files only.
cdir=$tmp/consumer
mkdir -p "$cdir"
cp "$ROOT/tests/install/consumer.c" "$cdir/"
export PKG_CONFIG_SYSROOT_DIR=$dest
export PKG_CONFIG_PATH=$dest$PREFIX/lib/pkgconfig
export PKG_CONFIG_LIBDIR=$PKG_CONFIG_PATH
pc_cflags=$(pkg-config --cflags libaccel 2>"$tmp/pc.err" | xargs)
pc_libs=$(pkg-config --libs libaccel 2>>"$tmp/pc.err" | xargs)
pc_static=$(pkg-config --static --libs libaccel 2>>"$tmp/pc.err" | xargs)
if [ -n "$pc_libs" ] && [ "$pc_cflags" = "-I$dest$PREFIX/include" ]; then
	ok "pkg-config --cflags --libs libaccel: $pc_cflags $pc_libs"
else
	nok "pkg-config --cflags --libs libaccel: '$pc_cflags' '$pc_libs'"; diag "$tmp/pc.err"
fi
cc=${CC:-cc}
# shellcheck disable=SC2086
if (cd "$cdir" && $cc -std=c11 -Wall -Wextra -Werror -o consumer consumer.c \
		$pc_cflags $pc_libs) > "$tmp/cc.log" 2>&1; then
	ok "consumer builds against the installed libaccel (shared)"
else
	nok "consumer builds against the installed libaccel (shared)"; diag "$tmp/cc.log"
fi
if [ -x "$cdir/consumer" ]; then
	lib=$(LD_LIBRARY_PATH=$dest$PREFIX/lib ldd "$cdir/consumer" | awk '$1 == "libaccel.so.1" { print $3 }')
	check "consumer loads libaccel.so.1 from DESTDIR ($lib)" [ "$lib" = "$dest$PREFIX/lib/libaccel.so.1" ]
	if out=$(ACCEL_TRANSPORT=inproc LD_LIBRARY_PATH=$dest$PREFIX/lib "$cdir/consumer" 2>&1); then
		ok "consumer runs (ACCEL_TRANSPORT=inproc): $out"
	else
		nok "consumer runs (ACCEL_TRANSPORT=inproc)"; echo "$out" | sed 's/^/#   /'
	fi
else
	nok "consumer runs # not built"
fi
# The static library (position dependent, for static binaries), through
# pkg-config --static.
out=
# shellcheck disable=SC2086
if (cd "$cdir" && $cc -std=c11 -Wall -Werror -static -o consumer-static consumer.c \
		$pc_cflags $pc_static) > "$tmp/cc-static.log" 2>&1 &&
		out=$(ACCEL_TRANSPORT=inproc "$cdir/consumer-static" 2>&1); then
	ok "consumer linked -static with libaccel.a runs: $out"
else
	nok "consumer linked -static with libaccel.a runs"; diag "$tmp/cc-static.log"; echo "$out" | sed 's/^/#   /'
fi
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_PATH PKG_CONFIG_LIBDIR

# Uninstall: no file or link left.
if "${mk[@]}" uninstall DESTDIR="$dest" > "$tmp/uninstall.log" 2>&1; then
	ok "make uninstall DESTDIR=..."
else
	nok "make uninstall DESTDIR=..."; diag "$tmp/uninstall.log"
fi
( cd "$dest" 2>/dev/null && find . \( -type f -o -type l \) ) > "$tmp/left"
if [ -s "$tmp/left" ]; then
	nok "uninstall leaves no file"; diag "$tmp/left"
else
	ok "uninstall leaves no file"
fi
dirs=$(cd "$dest" 2>/dev/null && find . -mindepth 1 -type d | wc -l)
echo "# $dirs empty directories left under DESTDIR (shared ones such as lib/pkgconfig are never removed)"

echo "1..$n"
echo "# Totals: pass:$pass fail:$failn xfail:0 xpass:0 skip:0 error:0"
[ "$failn" -eq 0 ]
