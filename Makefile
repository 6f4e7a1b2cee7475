# SPDX-License-Identifier: GPL-2.0
#
# accelstream: the two commands are
#	make run	build, start the real module, run the main job
#	make check	every test (unit, libaccel, VM kselftests, accelctl,
#			docs, install, the Debian packages); warnings are errors
# Both install the Debian packages they need (scripts/deps.sh), once, when
# missing; so does make deps. No other target installs anything.
#
#	make user	libaccel and accelctl only (no kernel headers needed)
#	make deb	the Debian packages, into build/deb (dpkg-buildpackage)
#	make dist	accelstream-$(VERSION).tar.gz from git (git archive HEAD)
#	make version-check	every version string agrees with VERSION
# Kernel builds use Kbuild (./Kbuild -> driver/Kbuild):
#	make module [KERNEL=stock|rt] [KDIR=...]
# CPPFLAGS, CFLAGS and LDFLAGS are honoured; WERROR=1 (make check sets it)
# turns compiler warnings into errors, never set for a packager's build.

TOP := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))

# The default goal, before the fragments below define targets of their own.
all:

include mk/vm.mk
include mk/docs.mk
include mk/install.mk
include mk/pkg.mk

KDIR ?= $(VM_KDIR)
KERNELS ?= $(if $(filter command line,$(origin KERNEL)),$(KERNEL),stock rt debug)

.PHONY: all user module unit check run clean help deps fuzz fuzz-api bench-vm

all: module user

# libaccel (its .pc for PREFIX/LIBDIR, its man pages), accelctl and
# accelctl(8): what install-user installs (mk/install.mk).
user: user-build $(MAN8_OUT)

help:
	@sed -n '3,20p' Makefile

deps:
	scripts/deps.sh vm build docs pkg

# W=1 and no warnings: a warning fails the build.
module:
	@test -n "$(KDIR)" || { echo "module: no kernel headers found; run 'make deps'" >&2; exit 1; }
	@$(MAKE) -C $(KDIR) M=$(TOP) W=1 modules 2>&1 | tee $(TOP)/build/module.log; \
	test $${PIPESTATUS[0]} -eq 0 || exit 1; \
	if grep -q 'warning:' $(TOP)/build/module.log; then \
		echo "module: the build printed warnings" >&2; exit 1; fi
module: SHELL := /bin/bash
module: | build-dir

build-dir:
	@mkdir -p $(TOP)/build

check:
	WERROR=1 KERNELS='$(KERNELS)' scripts/check.sh

# The CPU benchmarks over the module in the VM (KERNEL=stock by default).
bench-vm:
	KERNEL='$(KERNEL)' scripts/bench-vm.sh

run:
	scripts/run.sh $(if $(FILE),'$(FILE)')

# make fuzz [SECONDS=N] [SEED=S] [KERNEL=debug|stock|rt]: a longer ioctl
# fuzzing run plus the fault tests in the VM (the debug kernel by default).
fuzz:
	SECONDS='$(or $(SECONDS),300)' $(if $(SEED),SEED='$(SEED)') \
		fuzz/run-vm.sh $(if $(filter command line,$(origin KERNEL)),$(KERNEL),debug)

# make fuzz-api [SECONDS=N] [API_SEED=S API_COUNT=N]: libFuzzer on
# libaccel's API (inproc) for N seconds, then the corpus and N seeded
# sequences replayed. Crash inputs land in build/fuzz/api-artifacts.
fuzz-api:
	$(MAKE) -C fuzz api-fuzz-run SECONDS='$(or $(SECONDS),300)'
	$(MAKE) -C fuzz api-replay-run $(if $(API_SEED),API_SEED='$(API_SEED)') \
		$(if $(API_COUNT),API_COUNT='$(API_COUNT)')

clean:
	$(if $(KDIR),-$(MAKE) -C $(KDIR) M=$(TOP) clean)
	-$(MAKE) -C libaccel clean
	-$(MAKE) -C tools/accelctl clean
	rm -rf build
