#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb-check: the Debian packages, built and used the way a Debian 12
# machine would. TAP on stdout.
#   - make deb (dpkg-buildpackage -b in a copy of the tree): the build used
#     dpkg-buildflags' hardening (_FORTIFY_SOURCE, -z now) and no -Werror
#   - lintian: no error, no warning
#   - each package holds what it should (multiarch libdir, the full-version
#     real file and the soname link, headers, .pc, archive, man pages, the
#     DKMS source, the udev rule, sysusers.d)
#   - the packaged binaries have BIND_NOW and fortified calls
#   - libaccel1, libaccel-dev and accelctl installed on this machine with
#     dpkg -i; a consumer built with pkg-config against them, shared and
#     with libaccel.a, both PIE, run over ACCEL_TRANSPORT=inproc; the
#     packages removed again (dpkg --purge) and nothing of them left
#   - dkms build of the packaged module source against the Debian kernel
#     headers (make dkms-check DKMS_SRCDIR=<the package's /usr/src/...>)
# Needs root (dpkg -i) and the build dependencies (scripts/deps.sh pkg).
# (grep -q never ends a pipeline here: under pipefail, its early exit
# would fail the writer with SIGPIPE.)
# Refuses to touch packages of these names that are already installed.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
MAKE=${MAKE:-make}
VERSION=$(cat "$ROOT/VERSION")
DEB_OUT=${DEB_OUT:-$ROOT/build/deb}
ARCH=$(dpkg --print-architecture)
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
LIBDIR=/usr/lib/$MA
INSTALL_PKGS="libaccel1 libaccel-dev accelctl"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/accelstream-deb.XXXXXX")
installed_by_us=
cleanup() {
	if [ -n "$installed_by_us" ]; then
		# shellcheck disable=SC2086
		dpkg_retry --purge $INSTALL_PKGS > /dev/null 2>&1
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

n=0 failn=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); failn=$((failn + 1)); echo "not ok $n - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else nok "$what"; fi; }
diag() { sed 's/^/#   /' "$1" | tail -n "${2:-20}"; }
finish() {
	echo "1..$n"
	echo "# Totals: pass:$((n - failn)) fail:$failn xfail:0 xpass:0 skip:0 error:0"
	[ "$failn" -eq 0 ]
	exit
}

# dpkg, waiting while another dpkg or apt holds the lock (this machine
# is shared): up to 10 minutes.
dpkg_retry() {
	local i out rc
	for i in $(seq 120); do
		out=$(dpkg "$@" 2>&1); rc=$?
		if [ $rc -ne 0 ] && grep -q 'lock' <<< "$out"; then sleep 5; continue; fi
		printf '%s\n' "$out"
		return $rc
	done
	printf '%s\n' "$out"
	return 1
}

echo "TAP version 13"
echo "# accelstream $VERSION, $ARCH ($MA)"

# ------------------------------------------------------------ build
if "$MAKE" --no-print-directory -C "$ROOT" deb DEB_OUT="$DEB_OUT" > "$tmp/deb.log" 2>&1; then
	ok "make deb"
else
	nok "make deb"; diag "$tmp/deb.log" 30; finish
fi
blog=$DEB_OUT/build.log
deb() { echo "$DEB_OUT/${1}_${VERSION}-1_${2:-$ARCH}.deb"; }
for p in accelstream-dkms:all libaccel1 libaccel-dev accelctl; do
	check "built $(basename "$(deb "${p%%:*}" "$(sed -n 's/.*:\(.*\)/\1/p' <<< "$p")")")" \
		[ -f "$(deb "${p%%:*}" "$(sed -n 's/.*:\(.*\)/\1/p' <<< "$p")")" ]
done
# The compiler lines of the package build: hardening flags in, -Werror out
# (-Werror=format-security is dpkg-buildflags' own and stays).
grep -E '^(cc|gcc|[a-z0-9_-]*-gcc) ' "$blog" > "$tmp/cc-lines"
fortify_all() {
	local all without
	all=$(grep -c -e ' -c -o [^ ]*\.o ' "$tmp/cc-lines")
	without=$(grep -e ' -c -o [^ ]*\.o ' "$tmp/cc-lines" | grep -c -v -e '-D_FORTIFY_SOURCE=2')
	echo "# $all objects compiled, $without without -D_FORTIFY_SOURCE=2"
	[ "$all" -gt 0 ] && [ "$without" -eq 0 ]
}
now_links() {
	grep -e '-shared -Wl,-soname,libaccel' "$tmp/cc-lines" | grep -e '-Wl,-z,now' > /dev/null &&
		grep -e '-o ../../build/accelctl/accelctl ' "$tmp/cc-lines" | grep -e '-Wl,-z,now' > /dev/null
}
no_werror() { ! grep -E -q -e '-Werror( |$)' "$tmp/cc-lines"; }
check "package build compiles every object with -D_FORTIFY_SOURCE=2 (dpkg-buildflags CPPFLAGS)" fortify_all
check "package build links libaccel and accelctl with -Wl,-z,now (LDFLAGS)" now_links
check "package build has no -Werror" no_werror
# dpkg-gensymbols compares what libaccel.so exports with
# debian/libaccel1.symbols and warns about any difference (a symbol added
# without a line there, or one gone).
symbols_match() { ! grep -q 'dpkg-gensymbols: warning' "$blog"; }
check "libaccel's exports match debian/libaccel1.symbols (no dpkg-gensymbols warning)" symbols_match
grep -A12 'dpkg-gensymbols: warning' "$blog" | sed 's/^/#   /'

# ------------------------------------------------------------ lintian
if lintian --fail-on error,warning "$DEB_OUT"/accelstream_"$VERSION"-1_"$ARCH".changes > "$tmp/lintian.log" 2>&1; then
	ok "lintian: no error or warning ($(grep -c '^[EWIPX]: ' "$tmp/lintian.log") other tags)"
else
	nok "lintian: errors or warnings"
fi
grep '^[EWIPX]: ' "$tmp/lintian.log" | sed 's/^/#   /'

# ------------------------------------------------------------ contents
has() { # has PKG ARCH PATH...: every PATH is in PKG
	local p=$1 a=$2 f; shift 2
	dpkg-deb -c "$(deb "$p" "$a")" | awk '{ print $6 }' | sed 's|^\./|/|' > "$tmp/c-$p"
	for f in "$@"; do grep -qx -- "$f" "$tmp/c-$p" || { echo "# $p lacks $f"; return 1; }; done
}
linkto() { # linkto PKG PATH TARGET
	dpkg-deb -c "$(deb "$1")" | grep -- " \./${2#/} -> $3\$" > /dev/null
}
c_lib1() { has libaccel1 "$ARCH" "$LIBDIR/libaccel.so.$VERSION" && linkto libaccel1 "$LIBDIR/libaccel.so.1" "libaccel.so.$VERSION"; }
c_symbols() { dpkg-deb -e "$(deb libaccel1)" "$tmp/ctl1" && grep -q '^ accel_memcpy_batch_async@LIBACCEL_1.2 ' "$tmp/ctl1/symbols"; }
c_dev() {
	has libaccel-dev "$ARCH" /usr/include/libaccel.h /usr/include/libaccel/accelstream.h \
		/usr/include/libaccel/stream.h /usr/include/libaccel/event.h \
		"$LIBDIR/libaccel.a" "$LIBDIR/pkgconfig/libaccel.pc" \
		/usr/share/man/man3/accel_memcpy_async.3.gz /usr/share/man/man7/libaccel.7.gz &&
		linkto libaccel-dev "$LIBDIR/libaccel.so" libaccel.so.1
}
c_ctl() { has accelctl "$ARCH" /usr/sbin/accelctl /usr/share/man/man8/accelctl.8.gz; }
src=/usr/src/accelstream-$VERSION
c_dkms() {
	has accelstream-dkms all "$src/dkms.conf" "$src/Kbuild" "$src/driver/Kbuild" \
		"$src/driver/as_drv.c" "$src/uapi/accelstream.h" \
		/lib/udev/rules.d/60-accelstream.rules /usr/lib/sysusers.d/accelstream-dkms.conf
}
c_dkms_scripts() {
	dpkg-deb -e "$(deb accelstream-dkms all)" "$tmp/ctl" &&
		grep -q /usr/lib/dkms/common.postinst "$tmp/ctl/postinst" &&
		grep -q systemd-sysusers "$tmp/ctl/postinst" &&
		dpkg-deb -f "$(deb accelstream-dkms all)" Depends | grep dkms > /dev/null
}
check "libaccel1: $LIBDIR/libaccel.so.$VERSION, libaccel.so.1 -> it" c_lib1
check "libaccel1 has a symbols file (accel_memcpy_batch_async@LIBACCEL_1.2)" c_symbols
check "libaccel-dev: headers, .pc, libaccel.a, libaccel.so link, section 3 and 7 man pages" c_dev
check "accelctl: /usr/sbin/accelctl and accelctl(8)" c_ctl
check "accelstream-dkms: $src (dkms.conf, Kbuild, driver, uapi), udev rule, sysusers.d" c_dkms
check "accelstream-dkms: postinst runs DKMS and systemd-sysusers; depends on dkms" c_dkms_scripts

# ------------------------------------------------------------ hardening
bind_now() { readelf -d "$1" | grep -E 'BIND_NOW|FLAGS_1.*NOW' > /dev/null && readelf -lW "$1" | grep GNU_RELRO > /dev/null; }
fortified() { readelf --dyn-syms -W "$1" | grep '__[a-z_]*_chk' > /dev/null; }
x=$tmp/x
dpkg-deb -x "$(deb libaccel1)" "$x" && dpkg-deb -x "$(deb accelctl)" "$x"
for b in "$LIBDIR/libaccel.so.$VERSION" /usr/sbin/accelctl; do
	check "$b: BIND_NOW and RELRO" bind_now "$x$b"
	check "$b: fortified calls (__*_chk)" fortified "$x$b"
done

# ------------------------------------------------------------ install
if [ "$(id -u)" -ne 0 ]; then
	nok "installing the packages needs root"; finish
fi
pre=
for p in $INSTALL_PKGS; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ -n "$st" ] && [ "$st" != not-installed ] && pre="$pre $p($st)"
done
if [ -n "$pre" ]; then
	nok "packages already on this machine, left alone:$pre"; finish
fi
# shellcheck disable=SC2046
if dpkg_retry -i $(for p in $INSTALL_PKGS; do deb "$p"; done) > "$tmp/dpkg-i.log" 2>&1; then
	installed_by_us=1
	ok "dpkg -i $INSTALL_PKGS"
else
	installed_by_us=1
	nok "dpkg -i $INSTALL_PKGS"; diag "$tmp/dpkg-i.log"
fi

check "pkg-config --modversion libaccel is $VERSION" [ "$(pkg-config --modversion libaccel 2>/dev/null)" = "$VERSION" ]
check "pkg-config --atleast-version=${VERSION%.*} libaccel" pkg-config --atleast-version="${VERSION%.*}" libaccel
# The same file whether the loader names it by /lib or /usr/lib (merged /usr).
same_file() { [ -n "$1" ] && [ "$(readlink -f "$1")" = "$(readlink -f "$2")" ]; }
ld_cache() { same_file "$(ldconfig -p | awk '$1 == "libaccel.so.1" { print $NF; exit }')" "$LIBDIR/libaccel.so.$VERSION"; }
man_found() { man -w 3 accel_memcpy_async | grep /usr/share/man/man3/ > /dev/null; }
ctl_version() { /usr/sbin/accelctl --version | grep "^accelctl $VERSION " > /dev/null; }
check "ldconfig knows libaccel.so.1 (-> libaccel.so.$VERSION)" ld_cache
check "man 3 accel_memcpy_async is found" man_found
check "/usr/sbin/accelctl --version says $VERSION" ctl_version

cdir=$tmp/consumer
mkdir -p "$cdir"
cp "$ROOT/tests/install/consumer.c" "$cdir/"
cc=${CC:-cc}
cflags=$(pkg-config --cflags libaccel)
# Dynamic, PIE.
out=
# shellcheck disable=SC2046,SC2086
if (cd "$cdir" && $cc -std=c11 -Wall -Wextra -fPIE -pie -o consumer consumer.c \
		$cflags $(pkg-config --libs libaccel)) > "$tmp/cc.log" 2>&1; then
	ok "consumer: cc -fPIE -pie consumer.c \$(pkg-config --cflags --libs libaccel)"
else
	nok "consumer: cc -fPIE -pie consumer.c \$(pkg-config --cflags --libs libaccel)"; diag "$tmp/cc.log"
fi
pie_shared() {
	readelf -h "$cdir/consumer" | grep 'Type:.*DYN' > /dev/null &&
		same_file "$(ldd "$cdir/consumer" | awk '$1 == "libaccel.so.1" { print $3 }')" "$LIBDIR/libaccel.so.$VERSION"
}
check "consumer is PIE and loads the packaged libaccel.so.1" pie_shared
if out=$(ACCEL_TRANSPORT=inproc "$cdir/consumer" 2>&1); then
	ok "consumer runs (ACCEL_TRANSPORT=inproc): $out"
else
	nok "consumer runs (ACCEL_TRANSPORT=inproc)"; echo "$out" | sed 's/^/#   /'
fi
# libaccel.a in a PIE program: -Bstatic for libaccel only, the rest of
# pkg-config --static as usual.
out=
# shellcheck disable=SC2046,SC2086
if (cd "$cdir" && $cc -std=c11 -Wall -Wextra -fPIE -pie -o consumer-static consumer.c $cflags \
		-Wl,-Bstatic -laccel -Wl,-Bdynamic $(pkg-config --static --libs-only-other libaccel) \
		$(pkg-config --static --libs-only-l libaccel | sed 's/-laccel//')) > "$tmp/cc-static.log" 2>&1 &&
		readelf -h "$cdir/consumer-static" | grep 'Type:.*DYN' > /dev/null &&
		! ldd "$cdir/consumer-static" | grep libaccel > /dev/null &&
		out=$(ACCEL_TRANSPORT=inproc "$cdir/consumer-static" 2>&1); then
	ok "consumer with $LIBDIR/libaccel.a, PIE, no libaccel.so needed, runs: $out"
else
	nok "consumer with $LIBDIR/libaccel.a, PIE, runs"; diag "$tmp/cc-static.log"; echo "$out" | sed 's/^/#   /'
fi

# ------------------------------------------------------------ remove
# shellcheck disable=SC2086
if dpkg_retry --purge $INSTALL_PKGS > "$tmp/dpkg-r.log" 2>&1; then
	installed_by_us=
	ok "dpkg --purge $INSTALL_PKGS"
else
	nok "dpkg --purge $INSTALL_PKGS"; diag "$tmp/dpkg-r.log"
fi
left=
for f in "$LIBDIR/libaccel.so.$VERSION" "$LIBDIR/libaccel.so.1" "$LIBDIR/libaccel.so" "$LIBDIR/libaccel.a" \
	"$LIBDIR/pkgconfig/libaccel.pc" /usr/include/libaccel.h /usr/include/libaccel /usr/sbin/accelctl; do
	{ [ -e "$f" ] || [ -L "$f" ]; } && left="$left $f"
done
check "nothing of them left${left:+:$left}" [ -z "$left" ]

# ------------------------------------------------------------ DKMS
dx=$tmp/dkms-pkg
dpkg-deb -x "$(deb accelstream-dkms all)" "$dx"
if "$MAKE" --no-print-directory -C "$ROOT" dkms-check DKMS_SRCDIR="$dx$src" > "$tmp/dkms.log" 2>&1; then
	ok "dkms build of the packaged $src: $(grep '^ok - dkms build' "$tmp/dkms.log" | sed 's/^ok - //')"
else
	nok "dkms build of the packaged $src"; diag "$tmp/dkms.log" 30
fi

finish
