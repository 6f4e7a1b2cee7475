#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# make version-check: every version string of the project agrees with the
# one VERSION file at the top of the tree (MAJOR.MINOR.PATCH). TAP on
# stdout. Builds libaccel's .pc and man pages, accelctl and accelctl(8)
# when they are not built yet; needs no kernel headers.
#
# Checked: libaccel.h's LIBACCEL_VERSION_MAJOR/MINOR, libaccel.map's newest
# node, libaccel.so's real name and the version nodes it exports,
# libaccel.pc (and pkg-config --atleast-version), every man page footer,
# accelctl --version, dkms.conf, MODULE_VERSION in driver/as_drv.c (and
# modinfo of a built accelstream.ko), Sphinx's conf.py, debian/changelog,
# CHANGELOG.md's newest entry.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
MAKE=${MAKE:-make}
cd "$ROOT" || exit 1

n=0 failn=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); failn=$((failn + 1)); echo "not ok $n - $*"; }
# same WHAT GOT: GOT must be $VERSION (or what $3 says).
same() {
	local want=${3:-$VERSION}
	if [ "$2" = "$want" ]; then ok "$1: $2"; else nok "$1: '$2', VERSION says '$want'"; fi
}

echo "TAP version 13"
VERSION=$(cat VERSION)
if [[ $VERSION =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)$ ]]; then
	ok "VERSION is MAJOR.MINOR.PATCH: $VERSION"
else
	nok "VERSION is MAJOR.MINOR.PATCH: '$VERSION'"
fi
MAJOR=${BASH_REMATCH[1]:-x} MINOR=${BASH_REMATCH[2]:-x}

# The library's interface version: the header's macros and the map's
# newest node are MAJOR.MINOR.
hdr=libaccel/include/libaccel.h
same "$hdr LIBACCEL_VERSION_MAJOR.MINOR" \
	"$(sed -n 's/^#define LIBACCEL_VERSION_MAJOR[[:space:]]*//p' $hdr).$(sed -n 's/^#define LIBACCEL_VERSION_MINOR[[:space:]]*//p' $hdr)" \
	"$MAJOR.$MINOR"
same "libaccel/libaccel.map newest node" \
	"$(sed -n 's/^LIBACCEL_\([0-9.]*\) {.*/\1/p' libaccel/libaccel.map | sort -V | tail -n 1)" "$MAJOR.$MINOR"

if ! "$MAKE" --no-print-directory -C libaccel > build-versions.log 2>&1 ||
   ! "$MAKE" --no-print-directory user >> build-versions.log 2>&1; then
	nok "make user"; sed 's/^/#   /' build-versions.log | tail -n 20
fi
rm -f build-versions.log
so=libaccel/libaccel.so.$VERSION
if [ -f "$so" ] && [ ! -L "$so" ]; then ok "libaccel's real file is $so"; else nok "libaccel's real file $so missing"; fi
same "newest version node $so exports" \
	"$(readelf --dyn-syms -W "$so" 2>/dev/null | sed -n 's/.*@@\?LIBACCEL_\([0-9.]*\).*/\1/p' | sort -uV | tail -n 1)" \
	"$MAJOR.$MINOR"

same "libaccel/libaccel.pc Version" "$(sed -n 's/^Version: *//p' libaccel/libaccel.pc)"
if PKG_CONFIG_PATH=$ROOT/libaccel pkg-config --atleast-version="$MAJOR.$MINOR" libaccel &&
   PKG_CONFIG_PATH=$ROOT/libaccel pkg-config --exact-version="$VERSION" libaccel; then
	ok "pkg-config --atleast-version=$MAJOR.$MINOR and --exact-version=$VERSION libaccel"
else
	nok "pkg-config --atleast-version=$MAJOR.$MINOR / --exact-version=$VERSION libaccel"
fi

# Man pages (the .so redirections have no footer of their own).
bad=
for m in libaccel/build/man/*.[37]; do
	grep -q '^\.TH' "$m" || continue
	grep -q "^\.TH .*\"libaccel $VERSION\"" "$m" || bad="$bad ${m##*/}"
done
if [ -z "$bad" ] && [ -n "$(ls libaccel/build/man/ 2>/dev/null)" ]; then
	ok "every libaccel man page footer says libaccel $VERSION ($(ls libaccel/build/man | wc -l) pages)"
else
	nok "libaccel man page footers without 'libaccel $VERSION':${bad:- none built}"
fi
same "accelctl(8) footer" \
	"$(sed -n 's/^\.TH .*"accelstream \([^"]*\)".*/\1/p' build/install/man/accelctl.8 2>/dev/null)"
same "accelctl --version" \
	"$(build/accelctl/accelctl --version 2>/dev/null | sed -n 's/^accelctl \([^ ]*\).*/\1/p')"

# The module.
same "dkms.conf PACKAGE_VERSION" "$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)"
same "driver/as_drv.c MODULE_VERSION" "$(sed -n 's/^MODULE_VERSION("\(.*\)");/\1/p' driver/as_drv.c)"
if [ -f driver/accelstream.ko ]; then
	same "modinfo -F version driver/accelstream.ko" "$(modinfo -F version driver/accelstream.ko)"
fi

# Sphinx: conf.py evaluated by sphinx-build's own interpreter (the
# kernel-doc extension need only exist).
py=$(sed -n '1s/^#! *//p' "$(command -v sphinx-build)" 2>/dev/null)
tools=$(mktemp -d)
mkdir -p "$tools/Documentation/sphinx" && : > "$tools/Documentation/sphinx/kerneldoc.py"
same "Documentation/conf.py release" \
	"$(ACCELSTREAM_DOCS_TOOLS=$tools ${py:-python3} -c "import runpy; print(runpy.run_path('Documentation/conf.py')['release'])" 2>&1)"
rm -rf "$tools"

# Changelogs.
same "debian/changelog upstream version" \
	"$(dpkg-parsechangelog -l debian/changelog -S Version 2>/dev/null | sed 's/-[^-]*$//')"
same "CHANGELOG.md newest entry" "$(sed -n 's/^## \([0-9][0-9.]*\).*/\1/p' CHANGELOG.md 2>/dev/null | head -n 1)"

echo "1..$n"
echo "# Totals: pass:$((n - failn)) fail:$failn xfail:0 xpass:0 skip:0 error:0"
[ "$failn" -eq 0 ]
