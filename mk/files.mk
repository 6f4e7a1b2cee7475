# SPDX-License-Identifier: MIT
# mk/files.mk - install, uninstall and list a file set (included by the
# top-level mk/install.mk and by libaccel/Makefile, so that a component's
# file list is written once and each of the three actions walks it).
#
# A file set is two variables:
#   NAME_FILES  "MODE:SOURCE:DEST" per regular file
#   NAME_LINKS  "TARGET:DEST" per symbolic link
# and the recipes below take NAME:
#   $(call files_install,NAME)    install -D every file, then the links
#   $(call files_uninstall,NAME)  remove exactly those files and links
#   $(call files_list,NAME)       print "MODE DEST" / "link DEST -> TARGET"
# DEST is prefixed with $(DESTDIR).

INSTALL ?= install

files_install = set -e; \
	for f in $($(1)_FILES); do \
		mode=$${f%%:*}; rest=$${f\#*:}; src=$${rest%%:*}; dst='$(DESTDIR)'$${rest\#*:}; \
		test -f "$$src" || { echo "install: $$src is missing (build it first)" >&2; exit 1; }; \
		echo "  INSTALL $$dst"; \
		$(INSTALL) -D -m "$$mode" "$$src" "$$dst"; \
	done; \
	for l in $($(1)_LINKS); do \
		target=$${l%%:*}; dst='$(DESTDIR)'$${l\#*:}; \
		echo "  LN      $$dst -> $$target"; \
		mkdir -p "$$(dirname "$$dst")"; ln -sfn "$$target" "$$dst"; \
	done

files_uninstall = for f in $($(1)_FILES) $($(1)_LINKS); do \
		dst='$(DESTDIR)'$${f\#\#*:}; \
		if [ -e "$$dst" ] || [ -L "$$dst" ]; then echo "  RM      $$dst"; rm -f "$$dst"; fi; \
	done

files_list = for f in $($(1)_FILES); do rest=$${f\#*:}; echo "$${f%%:*} $(DESTDIR)$${rest\#*:}"; done; \
	for l in $($(1)_LINKS); do echo "link $(DESTDIR)$${l\#*:} -> $${l%%:*}"; done
