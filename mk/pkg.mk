# SPDX-License-Identifier: GPL-2.0
# mk/pkg.mk - release and packaging targets (included by the top-level
# Makefile).
#
# Targets:
#   dist           $(DIST_OUT)/accelstream-<VERSION>.tar.gz: git archive of
#                  HEAD (committed files only) under accelstream-<VERSION>/
#   deb            the Debian packages (debian/, dpkg-buildpackage -b) built
#                  in a copy of the tree under $(DEB_OUT); the .debs, the
#                  .changes and build.log land in $(DEB_OUT)
#   lintian        lintian over what deb built; any error or warning fails
#   version-check  tests/install/versions.sh: every version string of the
#                  project agrees with VERSION (TAP)
#   deb-check      tests/install/deb.sh: build the packages, lintian,
#                  install libaccel1, libaccel-dev and accelctl with dpkg -i,
#                  build a consumer with pkg-config (shared and static, as
#                  PIE), run it, dkms build of the packaged module source,
#                  remove the packages (TAP; root)
# Nothing here installs build dependencies: scripts/deps.sh pkg does (make
# deps, make check); dpkg-buildpackage refuses to build without them.

_pkg_goal := $(.DEFAULT_GOAL)

PKG_TOP   := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
PKG_VERSION := $(shell cat $(PKG_TOP)/VERSION)
DIST_OUT  ?= $(PKG_TOP)/build
DEB_OUT   ?= $(PKG_TOP)/build/deb
DEB_SRC   := $(DEB_OUT)/src/accelstream-$(PKG_VERSION)

.PHONY: dist deb lintian version-check deb-check

dist:
	@set -e; cd '$(PKG_TOP)'; \
	v=$$(git show HEAD:VERSION); \
	test "$$v" = '$(PKG_VERSION)' || echo "dist: note: VERSION is $(PKG_VERSION) in the work tree, $$v in HEAD (the tarball is HEAD's)" >&2; \
	mkdir -p '$(DIST_OUT)'; \
	git archive --format=tar.gz --prefix="accelstream-$$v/" \
		-o '$(DIST_OUT)'/"accelstream-$$v.tar.gz" HEAD; \
	echo "dist: $(DIST_OUT)/accelstream-$$v.tar.gz"

# The copy holds what git would commit (tracked and untracked files that
# are not ignored; no build products), or, outside git, the tree less
# build/. Its build directory is the copy's, so the tree stays clean.
deb:
	@command -v dpkg-buildpackage > /dev/null && command -v dh > /dev/null || \
		{ echo "deb: dpkg-buildpackage or debhelper missing: run 'make deps' (or scripts/deps.sh pkg)" >&2; exit 1; }
	@set -e; rm -rf '$(DEB_OUT)'; mkdir -p '$(DEB_SRC)'; cd '$(PKG_TOP)'; \
	if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then \
		git ls-files -z --cached --others --exclude-standard | \
		xargs -0 sh -c 'for f; do [ -e "$$f" ] && printf "%s\0" "$$f"; done; exit 0' sh | \
		tar --null -T - -cf - | tar -xf - -C '$(DEB_SRC)'; \
	else \
		tar --exclude=./build -cf - . | tar -xf - -C '$(DEB_SRC)'; \
	fi
	@echo "deb: dpkg-buildpackage -b in $(DEB_SRC) (log: $(DEB_OUT)/build.log)"
	@cd '$(DEB_SRC)' && env -u WERROR dpkg-buildpackage -b -us -uc > '$(DEB_OUT)/build.log' 2>&1 || \
		{ tail -n 40 '$(DEB_OUT)/build.log'; echo "deb: dpkg-buildpackage failed" >&2; exit 1; }
	@mv '$(DEB_OUT)'/src/*.deb '$(DEB_OUT)'/src/*.changes '$(DEB_OUT)'/src/*.buildinfo '$(DEB_OUT)/'
	@mv '$(DEB_OUT)'/src/*.ddeb '$(DEB_OUT)/' 2> /dev/null || true
	@ls '$(DEB_OUT)'/*.deb

lintian:
	@command -v lintian > /dev/null || { echo "lintian: missing: run 'make deps'" >&2; exit 1; }
	lintian --fail-on error,warning --display-info '$(DEB_OUT)'/accelstream_*.changes

version-check:
	$(PKG_TOP)/tests/install/versions.sh

deb-check:
	$(PKG_TOP)/tests/install/deb.sh

.DEFAULT_GOAL := $(_pkg_goal)
