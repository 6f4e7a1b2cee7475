# SPDX-License-Identifier: GPL-2.0
# mk/docs.mk - documentation targets (included by the top-level Makefile).
#
# Targets:
#   htmldocs          render Documentation/ with Sphinx into $(DOCS_OUT);
#                     any Sphinx or kernel-doc warning fails the build (-W)
#   kernel-doc-check  scripts/kernel-doc -none over the uapi header and the
#                     driver sources; any warning fails
#   docs-tools        extract the kernel's Sphinx extension and kernel-doc
#                     from the Debian linux-source tarball (cached)
#   docs-clean        remove $(DOCS_OUT) and the extracted tools
# Variables:
#   LINUX_SRC_TAR=/usr/src/linux-source-6.1.tar.xz   where the tools come from
#   DOCS_OUT=build/htmldocs   SPHINXOPTS=...   KDOC_FILES=...
#
# The extension (Documentation/sphinx/*.py) and scripts/kernel-doc are
# GPL-2.0 files of the kernel: they are taken at build time into
# build/docs-tools and never committed here.

# Including this file leaves the includer's default goal alone.
_docs_goal := $(.DEFAULT_GOAL)

DOCS_TOP      := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
LINUX_SRC_TAR ?= /usr/src/linux-source-6.1.tar.xz
DOCS_TOOLS    ?= $(DOCS_TOP)/build/docs-tools
DOCS_OUT      ?= $(DOCS_TOP)/build/htmldocs
SPHINXBUILD   ?= sphinx-build
SPHINXOPTS    ?=
KERNELDOC     := $(DOCS_TOOLS)/scripts/kernel-doc
KDOC_FILES    ?= uapi/accelstream.h libaccel/include/libaccel.h \
		 $(foreach t,error context memory stream copy event,libaccel/include/libaccel/$(t).h) $(sort $(wildcard $(DOCS_TOP)/core/*.c) \
		 $(wildcard $(DOCS_TOP)/core/*.h) $(wildcard $(DOCS_TOP)/driver/*.c) \
		 $(wildcard $(DOCS_TOP)/driver/*.h))
# Build products of Kbuild that are not sources.
KDOC_FILES    := $(filter-out %.mod.c,$(patsubst $(DOCS_TOP)/%,%,$(KDOC_FILES)))

.PHONY: htmldocs kernel-doc-check docs-tools docs-deps docs-clean

# Nothing here installs packages: python3-sphinx and linux-source-6.1 come
# from scripts/deps.sh (sets docs and vm), which make check, make run and
# make deps call.
docs-deps:
	@command -v '$(SPHINXBUILD)' > /dev/null || { echo "docs: $(SPHINXBUILD) missing: run 'make deps' (or scripts/deps.sh docs)" >&2; exit 1; }

docs-tools: $(DOCS_TOOLS)/.complete

# Only the members needed: the extension's modules and kernel-doc.
$(DOCS_TOOLS)/.complete:
	@test -r '$(LINUX_SRC_TAR)' || { echo "docs: $(LINUX_SRC_TAR) missing (scripts/deps.sh vm installs linux-source-6.1)" >&2; exit 1; }
	@set -e; top=$$(basename '$(LINUX_SRC_TAR)' .tar.xz); \
	rm -rf '$(DOCS_TOOLS)'; mkdir -p '$(DOCS_TOOLS).tmp'; \
	echo "docs: extracting Documentation/sphinx/*.py and scripts/kernel-doc from $(LINUX_SRC_TAR)" >&2; \
	tar -xJf '$(LINUX_SRC_TAR)' -C '$(DOCS_TOOLS).tmp' --wildcards \
		"$$top/Documentation/sphinx/*.py" "$$top/scripts/kernel-doc"; \
	mv '$(DOCS_TOOLS).tmp'/"$$top" '$(DOCS_TOOLS)'; rmdir '$(DOCS_TOOLS).tmp'; \
	test -x '$(KERNELDOC)'; touch $@

htmldocs: docs-deps docs-tools
	KDOC_WERROR=1 ACCELSTREAM_SRCTREE='$(DOCS_TOP)' ACCELSTREAM_DOCS_TOOLS='$(DOCS_TOOLS)' \
	$(SPHINXBUILD) -b html -E -W --keep-going -q $(SPHINXOPTS) \
		-d '$(DOCS_OUT)/.doctrees' '$(DOCS_TOP)/Documentation' '$(DOCS_OUT)'
	@echo "docs: $(DOCS_OUT)/index.html"

# kernel-doc of 6.3 and later has -Wall (missing Return:, short
# descriptions); the 6.1 script makes the same checks under -v, and prints
# "info:" lines there that are not warnings.
kernel-doc-check: docs-tools
	@cd '$(DOCS_TOP)' && mkdir -p build && \
	if grep -q -- '-Wall' '$(KERNELDOC)'; then w=-Wall; else w=-v; fi; \
	'$(KERNELDOC)' -none $$w $(KDOC_FILES) > build/kernel-doc.log 2>&1; \
	grep -v -e ' info: ' -e '^[0-9]* warnings*$$' build/kernel-doc.log > build/kernel-doc.warn || true; \
	if [ -s build/kernel-doc.warn ]; then \
		cat build/kernel-doc.warn; \
		echo "kernel-doc-check: $$(grep -c 'warning:' build/kernel-doc.warn) warning(s) in: $(KDOC_FILES)" >&2; \
		exit 1; \
	fi; \
	echo "kernel-doc-check: no warnings ($$w) in $(words $(KDOC_FILES)) files"

docs-clean:
	rm -rf '$(DOCS_OUT)' '$(DOCS_TOOLS)'

.DEFAULT_GOAL := $(_docs_goal)
