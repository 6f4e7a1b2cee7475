#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make install-check: install into a temporary DESTDIR, check every file
# and its mode against the list below, build and run a program outside the
# tree against the installed libaccel (pkg-config: shared, libaccel.a in a
# PIE program, -static), then uninstall and check that nothing is left.
# Then libaccel's own install/uninstall (a stale libaccel.pc is not
# shipped) and install-user on a machine without kernel headers.
# TAP on stdout.
#
# Usage: tests/install/check.sh            (from anywhere)
# Environment: PREFIX (default /usr/local), KVER (default: what
#   mk/install.mk picks), KEEP=1 keeps the DESTDIR for a look.
# shellcheck disable=SC2001 # sed over multi-line diagnostics
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VERSION=$(cat "$ROOT/VERSION")
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
	0755 $PREFIX/lib/libaccel.so.$VERSION
	0644 $PREFIX/lib/libaccel.a
	0644 $PREFIX/lib/pkgconfig/libaccel.pc
	0644 $PREFIX/include/libaccel.h
	0644 $PREFIX/include/libaccel/accelstream.h
	0644 $PREFIX/include/libaccel/acl_compat.h
	0644 $PREFIX/include/libaccel/compat_default.h
	0644 $PREFIX/include/libaccel/context.h
	0644 $PREFIX/include/libaccel/copy.h
	0644 $PREFIX/include/libaccel/error.h
	0644 $PREFIX/include/libaccel/event.h
	0644 $PREFIX/include/libaccel/memory.h
	0644 $PREFIX/include/libaccel/stream.h
	0644 $PREFIX/include/libaccel/cuda_compat.h
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
links() {
	echo "$PREFIX/lib/libaccel.so.1 libaccel.so.$VERSION"
	echo "$PREFIX/lib/libaccel.so libaccel.so.1"
}

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
check "libaccel.so.$VERSION has SONAME libaccel.so.1" \
	sh -c "readelf -d '$dest$PREFIX/lib/libaccel.so.$VERSION' | grep -q 'SONAME.*\[libaccel.so.1\]'"
check "udev rule installed as in udev/60-accelstream.rules" \
	cmp -s "$ROOT/udev/60-accelstream.rules" "$dest/etc/udev/rules.d/60-accelstream.rules"
check "libaccel.pc says prefix=$PREFIX" \
	grep -qx "prefix=$PREFIX" "$dest$PREFIX/lib/pkgconfig/libaccel.pc"
check "man pages carry libaccel $VERSION in their footer" \
	sh -c "! grep -L '^\.TH .*\"libaccel $VERSION\"' \$(grep -l '^\.TH' '$dest$PREFIX'/share/man/man[37]/*) | grep -q ."
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
	check "consumer is a PIE (ELF type DYN, the compiler's default)" \
		sh -c "readelf -h '$cdir/consumer' | grep -q 'Type:.*DYN'"
	if out=$(ACCEL_TRANSPORT=inproc LD_LIBRARY_PATH=$dest$PREFIX/lib "$cdir/consumer" 2>&1); then
		ok "consumer runs (ACCEL_TRANSPORT=inproc): $out"
	else
		nok "consumer runs (ACCEL_TRANSPORT=inproc)"; echo "$out" | sed 's/^/#   /'
	fi
else
	nok "consumer runs # not built"
fi
# The archive in an ordinary (PIE) program: libaccel.a is built from
# position-independent objects. Without -fPIC objects this link fails with
# "relocation R_X86_64_32 ... recompile with -fPIE".
out=
# shellcheck disable=SC2086
if (cd "$cdir" && $cc -std=c11 -Wall -Werror -fPIE -pie -o consumer-pie-static consumer.c \
		$pc_cflags "$dest$PREFIX/lib/libaccel.a" -lpthread -ldl) > "$tmp/cc-pie.log" 2>&1 &&
		! ldd "$cdir/consumer-pie-static" | grep -q libaccel &&
		out=$(ACCEL_TRANSPORT=inproc "$cdir/consumer-pie-static" 2>&1); then
	ok "consumer linked as PIE with libaccel.a runs: $out"
else
	nok "consumer linked as PIE with libaccel.a runs"; diag "$tmp/cc-pie.log"; echo "$out" | sed 's/^/#   /'
fi
# A -static program, through pkg-config --static.
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

# libaccel on its own: a plain build (PREFIX=/usr/local), then an install
# for PREFIX=/usr must carry a libaccel.pc for /usr, not the stale one.
ldest=$tmp/libdest
if "$MAKE" --no-print-directory -C "$ROOT/libaccel" > "$tmp/lib-build.log" 2>&1 &&
		"$MAKE" --no-print-directory -C "$ROOT/libaccel" install PREFIX=/usr \
			DESTDIR="$ldest" > "$tmp/lib-install.log" 2>&1; then
	ok "make -C libaccel install PREFIX=/usr after a PREFIX=/usr/local build"
else
	nok "make -C libaccel install PREFIX=/usr after a PREFIX=/usr/local build"
	diag "$tmp/lib-build.log"; diag "$tmp/lib-install.log"
fi
check "its libaccel.pc says prefix=/usr and libdir=/usr/lib" \
	sh -c "grep -qx 'prefix=/usr' '$ldest/usr/lib/pkgconfig/libaccel.pc' &&
		grep -qx 'libdir=/usr/lib' '$ldest/usr/lib/pkgconfig/libaccel.pc'"
"$MAKE" --no-print-directory -C "$ROOT/libaccel" uninstall PREFIX=/usr DESTDIR="$ldest" > "$tmp/lib-uninstall.log" 2>&1
( cd "$ldest" 2>/dev/null && find . \( -type f -o -type l \) ) > "$tmp/lib-left"
if [ -s "$tmp/lib-left" ]; then
	nok "make -C libaccel uninstall leaves no file"; diag "$tmp/lib-left"
else
	ok "make -C libaccel uninstall leaves no file"
fi

# The library and the tools need no kernel headers: install-user for a
# kernel that is not there installs everything but the module.
udest=$tmp/userdest
if "${mk[@]}" install-user KVER=0.0.0-none DESTDIR="$udest" > "$tmp/user.log" 2>&1; then
	ok "make install-user without kernel headers (KVER=0.0.0-none)"
else
	nok "make install-user without kernel headers (KVER=0.0.0-none)"; diag "$tmp/user.log"
fi
check "install-user put libaccel and accelctl, and no module" \
	sh -c "[ -f '$udest$PREFIX/lib/libaccel.so.$VERSION' ] && [ -x '$udest$PREFIX/sbin/accelctl' ] &&
		[ ! -d '$udest/lib/modules' ]"

echo "1..$n"
echo "# Totals: pass:$pass fail:$failn xfail:0 xpass:0 skip:0 error:0"
[ "$failn" -eq 0 ]
