# mk/vm.mk - VM test targets (included by the top-level Makefile).
#
# Targets:
#   vm-deps            install missing Debian packages (vm + build sets;
#                      + rt when KERNEL=rt)
#   vm-kernel          locate the kernel, extract/cache its PVH vmlinux;
#                      writes $(VM_BUILD)/kernel-$(KERNEL).env
#   kselftest-headers  kselftest_harness.h + kselftest.h -> $(KSELFTEST_DIR)
#   vm-test            boot the VM with PAYLOAD=dir, then summarise the TAP
#   vm-summary         re-print the summary of the last vm-test
#   vm-clean           remove $(VM_BUILD)
# Variables (override on the command line):
#   KERNEL=stock|rt  PAYLOAD=dir  TESTS="a b"  TEST_TIMEOUT=300
#   VM_TIMEOUT=3000  VM_MEM=2048  VM_SMP=2  EXTRA_CMDLINE=...  VM_OUT=dir
# For module builds:  $(VM_KDIR) = /lib/modules/<kver>/build of $(KERNEL),
#   $(VM_KVER); cheap (no extraction), evaluated when used.

VM_TOP        := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
VM_SCRIPTS    := $(VM_TOP)/scripts/vm
VM_BUILD      ?= $(VM_TOP)/build/vm
KSELFTEST_DIR ?= $(VM_TOP)/build/kselftest
KERNEL        ?= stock
VM_OUT        ?= $(VM_BUILD)/out-$(KERNEL)
PAYLOAD       ?=
TESTS         ?=
TEST_TIMEOUT  ?= 300
VM_TIMEOUT    ?= 3000
VM_MEM        ?= 2048
VM_SMP        ?= 2
EXTRA_CMDLINE ?=

VM_KINFO = $(shell $(VM_SCRIPTS)/kernel.sh --no-image $(KERNEL) 2>/dev/null)
VM_KVER  = $(patsubst KVER=%,%,$(filter KVER=%,$(VM_KINFO)))
VM_KDIR  = $(patsubst KDIR=%,%,$(filter KDIR=%,$(VM_KINFO)))

VM_ENV = VM_BUILD='$(VM_BUILD)' KERNEL='$(KERNEL)' VM_OUT='$(VM_OUT)' \
	TESTS='$(TESTS)' TEST_TIMEOUT='$(TEST_TIMEOUT)' VM_TIMEOUT='$(VM_TIMEOUT)' \
	VM_MEM='$(VM_MEM)' VM_SMP='$(VM_SMP)' EXTRA_CMDLINE='$(EXTRA_CMDLINE)'

.PHONY: vm-deps vm-kernel kselftest-headers vm-test vm-summary vm-clean

vm-deps:
	$(VM_TOP)/scripts/deps.sh vm build $(if $(filter rt,$(KERNEL)),rt)

vm-kernel: vm-deps
	@mkdir -p $(VM_BUILD)
	$(VM_ENV) $(VM_SCRIPTS)/kernel.sh $(KERNEL) > $(VM_BUILD)/kernel-$(KERNEL).env
	@cat $(VM_BUILD)/kernel-$(KERNEL).env

kselftest-headers: $(KSELFTEST_DIR)/.complete
$(KSELFTEST_DIR)/.complete:
	VM_BUILD='$(VM_BUILD)' $(VM_SCRIPTS)/kselftest-headers.sh $(KSELFTEST_DIR)

vm-test: vm-kernel
	@test -n "$(PAYLOAD)" || { echo "vm-test: set PAYLOAD=dir (tests.list, bin/, modules/)" >&2; exit 2; }
	@rc=0; $(VM_ENV) $(VM_SCRIPTS)/run-vm.sh '$(PAYLOAD)' || rc=1; \
	echo "== $(KERNEL): $(VM_OUT)/tap.txt"; \
	$(VM_SCRIPTS)/tap-summary.sh $(VM_OUT)/tap.txt || rc=1; \
	exit $$rc

vm-summary:
	$(VM_SCRIPTS)/tap-summary.sh $(VM_OUT)/tap.txt

vm-clean:
	rm -rf $(VM_BUILD)
