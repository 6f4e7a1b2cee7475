# SPDX-License-Identifier: GPL-2.0
#
# accelstream: the two commands are
#	make run	build, start the real module, run the main job
#	make check	every test (unit, libaccel, VM kselftests, accelctl)
# Both install the Debian packages they need, once, when missing.
#
# Kernel builds use Kbuild (./Kbuild -> driver/Kbuild):
#	make module [KERNEL=stock|rt] [KDIR=...]

TOP := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))

# The default goal, before the fragments below define targets of their own.
all:

include mk/vm.mk
include mk/docs.mk
include mk/install.mk

KDIR ?= $(VM_KDIR)
KERNELS ?= $(if $(filter command line,$(origin KERNEL)),$(KERNEL),stock rt debug)

.PHONY: all module unit check run clean help deps fuzz bench-vm

all: module
	$(MAKE) -C libaccel
	$(MAKE) -C tools/accelctl

help:
	@sed -n '3,10p' Makefile

deps:
	scripts/deps.sh vm build

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
	KERNELS='$(KERNELS)' scripts/check.sh

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

clean:
	-$(MAKE) -C $(KDIR) M=$(TOP) clean
	-$(MAKE) -C libaccel clean
	-$(MAKE) -C tools/accelctl clean
	rm -rf build
