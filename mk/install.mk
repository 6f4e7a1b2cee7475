# SPDX-License-Identifier: GPL-2.0
# mk/install.mk - install, uninstall and DKMS (included by the top-level
# Makefile).
#
# Targets:
#   install        install-user, then install-module; on the running
#                  system (no DESTDIR) also depmod, ldconfig, the accel
#                  group and a udev reload
#   install-user   libaccel (make -C libaccel install), accelctl, the man
#                  pages, the udev rule and the examples: no kernel headers
#                  needed (what the Debian packages use)
#   install-module the module for $(KVER) (needs its headers)
#   uninstall      remove exactly the files install puts
#   install-list   print "MODE PATH" for every file install puts (no build)
#   install-check  tests/install/check.sh: a DESTDIR install checked file by
#                  file, a program built against it, then uninstall (TAP)
#   dkms-install   copy the module's sources to /usr/src/accelstream-<ver>
#                  and "dkms install" them (root)
#   dkms-uninstall "dkms remove --all" and remove /usr/src/accelstream-<ver>
#   dkms-check     dkms add/build/remove in a throwaway source and DKMS tree
#                  against the Debian kernel headers; nothing left behind.
#                  DKMS_SRCDIR=dir checks that source instead of the tree's
#                  (the packaged /usr/src/accelstream-<ver>)
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
# administrator's, so its rule goes where the administrator's rules go
# (a package puts it in /lib/udev/rules.d).
UDEVRULESDIR ?= /etc/udev/rules.d

# The kernel the module is built and installed for (only install-module
# and install need one).
ifeq ($(origin KVER),undefined)
KVER := $(shell if [ -d /lib/modules/$$(uname -r)/build ]; then uname -r; else \
	ls /boot/ 2>/dev/null | sed -n 's/^vmlinuz-\(.*-amd64\)$$/\1/p' | grep -v -- '-rt-amd64$$' | \
	sort -V | tail -n 1; fi)
endif
INSTALL_KDIR ?= /lib/modules/$(KVER)/build
MODULEDIR    ?= /lib/modules/$(KVER)/updates
DEPMOD       ?= depmod

ACCEL_VERSION := $(shell cat $(INST_TOP)/VERSION)
ACCELCTL_BIN  ?= $(INST_TOP)/build/accelctl/accelctl
INST_BUILD    := $(INST_TOP)/build/install
MAN8_OUT      := $(INST_BUILD)/man/accelctl.8

# The variables libaccel's install takes.
LIB_MAKE = $(MAKE) --no-print-directory -C '$(INST_TOP)/libaccel' PREFIX='$(PREFIX)' \
	LIBDIR='$(LIBDIR)' INCDIR='$(INCDIR)' MANDIR='$(MANDIR)' PKGCONFIGDIR='$(PKGCONFIGDIR)'

# What install-user puts besides libaccel (mk/files.mk's format).
USER_FILES = \
	0755:$(ACCELCTL_BIN):$(SBINDIR)/accelctl \
	0644:$(MAN8_OUT):$(MANDIR)/man8/accelctl.8 \
	0644:$(INST_TOP)/udev/60-accelstream.rules:$(UDEVRULESDIR)/60-accelstream.rules \
	0644:$(INST_TOP)/etc/modules-load.d/accelstream.conf:$(DOCDIR)/examples/modules-load.d/accelstream.conf \
	0644:$(INST_TOP)/etc/modprobe.d/accelstream.conf:$(DOCDIR)/examples/modprobe.d/accelstream.conf
USER_LINKS =
MODULE_FILES = 0644:$(INST_TOP)/driver/accelstream.ko:$(MODULEDIR)/accelstream.ko
MODULE_LINKS =
# Directories that are ours alone, removed by uninstall when empty.
INST_OWNDIRS = $(DOCDIR)/examples/modules-load.d $(DOCDIR)/examples/modprobe.d \
	$(DOCDIR)/examples $(DOCDIR)

include $(INST_TOP)/mk/files.mk

.PHONY: install install-user install-module install-build user-build \
	install-list uninstall install-check dkms-source dkms-install dkms-uninstall dkms-check

install: install-user install-module
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

# libaccel and accelctl, built for this PREFIX/LIBDIR.
user-build:
	+$(LIB_MAKE)
	$(MAKE) -C '$(INST_TOP)/tools/accelctl'

# accelctl(8) with the project's version in its footer.
$(MAN8_OUT): $(INST_TOP)/tools/accelctl/accelctl.8 $(INST_TOP)/VERSION
	@mkdir -p $(@D)
	sed -e '/^\.TH /s/"accelstream[^"]*"/"accelstream $(ACCEL_VERSION)"/' $< > $@

install-user: user-build $(MAN8_OUT)
	+$(LIB_MAKE) install
	@$(call files_install,USER)

install-build:
	@test -n '$(KVER)' || { echo "install: no kernel found; set KVER=<release>" >&2; exit 1; }
	@test -d '$(INSTALL_KDIR)' || { echo "install: $(INSTALL_KDIR) missing: install linux-headers-$(KVER), or set KVER" >&2; exit 1; }
	$(MAKE) -C '$(INSTALL_KDIR)' M='$(INST_TOP)' modules

install-module: install-build
	@$(call files_install,MODULE)

install-list:
	+@$(LIB_MAKE) install-list
	@$(call files_list,USER)
	@$(call files_list,MODULE)

uninstall:
	+@$(LIB_MAKE) uninstall
	@$(call files_uninstall,USER)
	@$(call files_uninstall,MODULE)
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
# The DKMS source to check: empty for the tree's own files.
DKMS_SRCDIR  ?=
# dkms-check builds for the newest Debian amd64 kernel with headers.
DKMS_KVER    ?= $(shell for v in $$(ls /boot/ | sed -n 's/^vmlinuz-\(.*-amd64\)$$/\1/p' | \
	grep -v -- '-rt-amd64$$'); do [ -d /lib/modules/$$v/build ] && echo $$v; done | \
	sort -V | tail -n 1)

# dkms_copy DIR: the DKMS sources under DIR/$(DKMS_NAME)-$(DKMS_VERSION).
dkms_copy = set -e; d="$(1)/$(DKMS_NAME)-$(DKMS_VERSION)"; mkdir -p "$$d"; \
	cd '$(INST_TOP)' && for f in $(DKMS_SOURCES); do \
		install -D -m 0644 "$$f" "$$d/$$f"; done

# dkms comes from scripts/deps.sh (set pkg); nothing here installs it.
dkms-deps:
	@command -v dkms > /dev/null || { echo "dkms: dkms missing: run 'make deps' (or scripts/deps.sh pkg)" >&2; exit 1; }

# The module's DKMS source in $(DESTDIR)/usr/src/$(DKMS_NAME)-$(DKMS_VERSION)
# (what the accelstream-dkms package ships).
dkms-source:
	@( $(call dkms_copy,$(DESTDIR)/usr/src) )

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
	if [ -n '$(DKMS_SRCDIR)' ]; then \
		mkdir -p "$$src"; cp -a '$(DKMS_SRCDIR)' "$$src/$(DKMS_NAME)-$(DKMS_VERSION)"; \
		echo "dkms-check: source $(DKMS_SRCDIR)"; \
	else ( $(call dkms_copy,$$src) ); fi; \
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
	$(CC) -static -O2 -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror) -I'$(INST_TOP)/uapi' \
		-o '$(VM_UDEV_OUT)/bin/runas-open' '$(INST_TOP)/tests/install/runas.c'
	install -m 0755 '$(INST_TOP)/tests/install/vm-udev.sh' '$(VM_UDEV_OUT)/bin/vm-udev.sh'
	install -m 0644 '$(INST_TOP)/udev/60-accelstream.rules' '$(VM_UDEV_OUT)/udev/60-accelstream.rules'

.DEFAULT_GOAL := $(_install_goal)
