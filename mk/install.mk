# SPDX-License-Identifier: GPL-2.0
# mk/install.mk - install, uninstall and DKMS (included by the top-level
# Makefile).
#
# Targets:
#   install        build, then install the module, libaccel, accelctl, the
#                  headers, libaccel.pc, the man pages, the udev rule and
#                  the examples; runs depmod (not with DESTDIR)
#   uninstall      remove exactly the files install puts
#   install-list   print "MODE PATH" for every file install puts (no build)
#   install-check  tests/install/check.sh: a DESTDIR install checked file by
#                  file, a program built against it, then uninstall (TAP)
#   dkms-install   copy the module's sources to /usr/src/accelstream-<ver>
#                  and "dkms install" them (root)
#   dkms-uninstall "dkms remove --all" and remove /usr/src/accelstream-<ver>
#   dkms-check     dkms add/build/remove in a throwaway source and DKMS tree
#                  against the Debian kernel headers; nothing left behind
# Variables:
#   PREFIX=/usr/local  DESTDIR=  BINDIR SBINDIR LIBDIR INCDIR MANDIR DOCDIR
#   KVER=<kernel release> (default: the running kernel if its headers are
#   installed, else the newest Debian amd64 kernel under /boot)
#   UDEVRULESDIR=/etc/udev/rules.d   MODULEDIR=/lib/modules/$(KVER)/updates

# Including this file leaves the includer's default goal alone.
_install_goal := $(.DEFAULT_GOAL)

INST_TOP     := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)

PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
SBINDIR      ?= $(PREFIX)/sbin
LIBDIR       ?= $(PREFIX)/lib
INCDIR       ?= $(PREFIX)/include
MANDIR       ?= $(PREFIX)/share/man
DOCDIR       ?= $(PREFIX)/share/doc/accelstream
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# udev reads no rules under /usr/local: a source install is the
# administrator's, so its rule goes where the administrator's rules go.
UDEVRULESDIR ?= /etc/udev/rules.d

# The kernel the module is built and installed for.
ifeq ($(origin KVER),undefined)
KVER := $(shell if [ -d /lib/modules/$$(uname -r)/build ]; then uname -r; else \
	ls /boot/ | sed -n 's/^vmlinuz-\(.*-amd64\)$$/\1/p' | grep -v -- '-rt-amd64$$' | \
	sort -V | tail -n 1; fi)
endif
INSTALL_KDIR ?= /lib/modules/$(KVER)/build
MODULEDIR    ?= /lib/modules/$(KVER)/updates
DEPMOD       ?= depmod

LIBACCEL_VERSION := $(shell sed -n 's/^VERSION *:= *//p' $(INST_TOP)/libaccel/Makefile)
LIBACCEL_SONAME  := $(shell sed -n 's/^SONAME *:= *//p' $(INST_TOP)/libaccel/Makefile)
ACCELCTL_BIN     ?= $(INST_TOP)/build/accelctl/accelctl
INST_BUILD       := $(INST_TOP)/build/install

# Man pages present in the tree (libaccel's are being written).
MAN3 = $(sort $(wildcard $(INST_TOP)/libaccel/man/*.3))
MAN7 = $(sort $(wildcard $(INST_TOP)/libaccel/man/*.7))
MAN8 = $(INST_TOP)/tools/accelctl/accelctl.8

INSTALL      ?= install

# "MODE SOURCE DEST" for every regular file, then the symlinks.
INST_FILES = \
	0644:$(INST_TOP)/driver/accelstream.ko:$(MODULEDIR)/accelstream.ko \
	0755:$(INST_TOP)/libaccel/$(LIBACCEL_SONAME):$(LIBDIR)/$(LIBACCEL_SONAME) \
	0644:$(INST_TOP)/libaccel/libaccel.a:$(LIBDIR)/libaccel.a \
	0644:$(INST_BUILD)/libaccel.pc:$(PKGCONFIGDIR)/libaccel.pc \
	0644:$(INST_TOP)/libaccel/include/accel.h:$(INCDIR)/accel.h \
	0644:$(INST_TOP)/libaccel/include/accel/cuda_compat.h:$(INCDIR)/accel/cuda_compat.h \
	0644:$(INST_TOP)/libaccel/include/accel/acl_compat.h:$(INCDIR)/accel/acl_compat.h \
	0644:$(INST_TOP)/uapi/accelstream.h:$(INCDIR)/linux/accelstream.h \
	0755:$(ACCELCTL_BIN):$(SBINDIR)/accelctl \
	$(foreach m,$(MAN3),0644:$(m):$(MANDIR)/man3/$(notdir $(m))) \
	$(foreach m,$(MAN7),0644:$(m):$(MANDIR)/man7/$(notdir $(m))) \
	0644:$(MAN8):$(MANDIR)/man8/accelctl.8 \
	0644:$(INST_TOP)/udev/60-accelstream.rules:$(UDEVRULESDIR)/60-accelstream.rules \
	0644:$(INST_TOP)/etc/modules-load.d/accelstream.conf:$(DOCDIR)/examples/modules-load.d/accelstream.conf \
	0644:$(INST_TOP)/etc/modprobe.d/accelstream.conf:$(DOCDIR)/examples/modprobe.d/accelstream.conf
INST_LINKS = $(LIBACCEL_SONAME):$(LIBDIR)/libaccel.so
# Directories that are ours alone, removed by uninstall when empty.
INST_OWNDIRS = $(DOCDIR)/examples/modules-load.d $(DOCDIR)/examples/modprobe.d \
	$(DOCDIR)/examples $(DOCDIR) $(INCDIR)/accel

.PHONY: install install-build install-files install-list uninstall \
	install-check dkms-install dkms-uninstall dkms-check

install: install-build
	@$(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) install-files

# What install copies: the module for $(KVER), libaccel, accelctl.
install-build:
	@test -n '$(KVER)' || { echo "install: no kernel found; set KVER=<release>" >&2; exit 1; }
	@test -d '$(INSTALL_KDIR)' || { echo "install: $(INSTALL_KDIR) missing: install linux-headers-$(KVER), or set KVER" >&2; exit 1; }
	$(MAKE) -C '$(INSTALL_KDIR)' M='$(INST_TOP)' modules
	$(MAKE) -C '$(INST_TOP)/libaccel'
	$(MAKE) -C '$(INST_TOP)/tools/accelctl'

# libaccel.pc for this PREFIX (the tree's copy has the build's PREFIX).
$(INST_BUILD)/libaccel.pc: FORCE
	@mkdir -p $(@D)
	@sed -e 's|@prefix@|$(PREFIX)|' -e 's|@libdir@|$(LIBDIR)|' \
	    -e 's|@includedir@|$(INCDIR)|' -e 's|@version@|$(LIBACCEL_VERSION)|' \
	    $(INST_TOP)/libaccel/libaccel.pc.in > $@
FORCE:

install-files: $(INST_BUILD)/libaccel.pc
	@set -e; for f in $(INST_FILES); do \
		mode=$${f%%:*}; rest=$${f#*:}; src=$${rest%%:*}; dst=$(DESTDIR)$${rest#*:}; \
		test -f "$$src" || { echo "install: $$src is missing (build it first)" >&2; exit 1; }; \
		echo "  INSTALL $$dst"; \
		$(INSTALL) -D -m "$$mode" "$$src" "$$dst"; \
	done
	@set -e; for l in $(INST_LINKS); do \
		target=$${l%%:*}; dst=$(DESTDIR)$${l#*:}; \
		echo "  LN      $$dst -> $$target"; ln -sfn "$$target" "$$dst"; \
	done
ifeq ($(DESTDIR),)
	$(DEPMOD) -a '$(KVER)'
	-@command -v ldconfig > /dev/null && ldconfig
	@if ! getent group accel > /dev/null; then \
		echo "  GROUP   accel (groupadd --system accel)"; groupadd --system accel; fi
	-@command -v udevadm > /dev/null && udevadm control --reload && \
		udevadm trigger --subsystem-match=misc --sysname-match=accelstream
	@echo "install: add users to the group accel (usermod -aG accel USER) to let them open /dev/accelstream"
else
	@echo "install: DESTDIR set: depmod, ldconfig, the accel group and udev reload are left to the target system"
endif

install-list:
	@for f in $(INST_FILES); do rest=$${f#*:}; echo "$${f%%:*} $(DESTDIR)$${rest#*:}"; done
	@for l in $(INST_LINKS); do echo "link $(DESTDIR)$${l#*:} -> $${l%%:*}"; done

uninstall:
	@for f in $(INST_FILES) $(INST_LINKS); do \
		dst=$(DESTDIR)$${f##*:}; \
		if [ -e "$$dst" ] || [ -L "$$dst" ]; then echo "  RM      $$dst"; rm -f "$$dst"; fi; \
	done
	@for d in $(INST_OWNDIRS); do rmdir "$(DESTDIR)$$d" 2> /dev/null || true; done
ifeq ($(DESTDIR),)
	$(DEPMOD) -a '$(KVER)'
	-@command -v ldconfig > /dev/null && ldconfig
	-@command -v udevadm > /dev/null && udevadm control --reload
	@echo "uninstall: the group accel is left in place (groupdel accel removes it)"
endif

install-check:
	$(INST_TOP)/tests/install/check.sh

# ---------------------------------------------------------------- DKMS

DKMS_NAME    := $(shell sed -n 's/^PACKAGE_NAME="\(.*\)"/\1/p' $(INST_TOP)/dkms.conf)
DKMS_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' $(INST_TOP)/dkms.conf)
# The files DKMS needs: Kbuild, the driver, the pure core and the uapi header.
DKMS_SOURCES  = dkms.conf Kbuild driver/Kbuild \
	$(filter-out %.mod.c,$(patsubst $(INST_TOP)/%,%,$(wildcard $(INST_TOP)/driver/*.c \
	$(INST_TOP)/driver/*.h $(INST_TOP)/core/*.c $(INST_TOP)/core/*.h \
	$(INST_TOP)/uapi/*.h)))
# dkms-check builds for the newest Debian amd64 kernel with headers.
DKMS_KVER    ?= $(shell for v in $$(ls /boot/ | sed -n 's/^vmlinuz-\(.*-amd64\)$$/\1/p' | \
	grep -v -- '-rt-amd64$$'); do [ -d /lib/modules/$$v/build ] && echo $$v; done | \
	sort -V | tail -n 1)

# dkms_copy DIR: the DKMS sources under DIR/$(DKMS_NAME)-$(DKMS_VERSION).
dkms_copy = set -e; d="$(1)/$(DKMS_NAME)-$(DKMS_VERSION)"; mkdir -p "$$d"; \
	cd '$(INST_TOP)' && for f in $(DKMS_SOURCES); do \
		install -D -m 0644 "$$f" "$$d/$$f"; done

dkms-deps:
	@st=$$(dpkg-query -W -f='$${db:Status-Status}' dkms 2>/dev/null || true); \
	if [ "$$st" != installed ]; then \
		echo "dkms: installing dkms" >&2; \
		SUDO=; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			--no-install-recommends dkms; \
	fi

dkms-install: dkms-deps
	@rm -rf '/usr/src/$(DKMS_NAME)-$(DKMS_VERSION)'
	@( $(call dkms_copy,/usr/src) )
	dkms install '$(DKMS_NAME)/$(DKMS_VERSION)' -k '$(KVER)'

dkms-uninstall:
	-dkms remove '$(DKMS_NAME)/$(DKMS_VERSION)' --all
	rm -rf '/usr/src/$(DKMS_NAME)-$(DKMS_VERSION)'

# Throwaway --sourcetree and --dkmstree: /usr/src and /var/lib/dkms are not
# touched, and the temporary directory goes whatever happens.
dkms-check: dkms-deps
	@test -n '$(DKMS_KVER)' || { echo "dkms-check: no Debian amd64 kernel with headers under /boot (scripts/deps.sh vm)" >&2; exit 1; }
	@tmp=$$(mktemp -d "$${TMPDIR:-/tmp}/accelstream-dkms.XXXXXX"); \
	trap 'rm -rf "$$tmp"' EXIT; \
	src="$$tmp/src"; tree="$$tmp/dkms"; mkdir -p "$$tree"; \
	( $(call dkms_copy,$$src) ); \
	opts="--sourcetree $$src --dkmstree $$tree"; \
	m='$(DKMS_NAME)/$(DKMS_VERSION)'; k='$(DKMS_KVER)'; \
	echo "dkms-check: dkms add/build $$m for $$k"; \
	dkms add $$opts "$$m" > "$$tmp/add.log" 2>&1 || { cat "$$tmp/add.log"; exit 1; }; \
	if ! dkms build $$opts "$$m" -k "$$k" > "$$tmp/build.log" 2>&1; then \
		cat "$$tmp/build.log"; \
		cat "$$tree/$(DKMS_NAME)/$(DKMS_VERSION)/build/make.log" 2>/dev/null; \
		dkms remove $$opts "$$m" --all > /dev/null 2>&1; exit 1; fi; \
	ko=$$(find "$$tree/$(DKMS_NAME)/$(DKMS_VERSION)/$$k" -name 'accelstream.ko*' | head -n 1); \
	rc=0; \
	if [ -n "$$ko" ] && modinfo -F vermagic "$$ko" | grep -q "^$$k "; then \
		echo "ok - dkms build $$m -k $$k: $${ko#$$tree/}"; \
	else echo "not ok - dkms build $$m -k $$k: no accelstream.ko for $$k"; rc=1; fi; \
	dkms remove $$opts "$$m" --all > "$$tmp/remove.log" 2>&1 || { cat "$$tmp/remove.log"; rc=1; }; \
	if [ -e "$$tree/$(DKMS_NAME)" ]; then echo "not ok - dkms remove left $$tree/$(DKMS_NAME)"; rc=1; \
	else echo "ok - dkms remove --all"; fi; \
	exit $$rc

# ------------------------------------------------------- VM udev test

# The payload part of the udev rule's VM test (tests/install/vm-udev.sh):
#   $(VM_UDEV_OUT)/bin/runas-open   static helper (tests/install/runas.c)
#   $(VM_UDEV_OUT)/bin/vm-udev.sh   the test
#   $(VM_UDEV_OUT)/udev/60-accelstream.rules   the rule it applies
# Copy both directories into a scripts/vm payload.
VM_UDEV_OUT ?= $(INST_TOP)/build/install-vm
CC ?= cc

.PHONY: install-vm-payload
install-vm-payload:
	@mkdir -p '$(VM_UDEV_OUT)/bin' '$(VM_UDEV_OUT)/udev'
	$(CC) -static -O2 -Wall -Wextra -Werror -I'$(INST_TOP)/uapi' \
		-o '$(VM_UDEV_OUT)/bin/runas-open' '$(INST_TOP)/tests/install/runas.c'
	install -m 0755 '$(INST_TOP)/tests/install/vm-udev.sh' '$(VM_UDEV_OUT)/bin/vm-udev.sh'
	install -m 0644 '$(INST_TOP)/udev/60-accelstream.rules' '$(VM_UDEV_OUT)/udev/60-accelstream.rules'

.DEFAULT_GOAL := $(_install_goal)
