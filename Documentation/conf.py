# SPDX-License-Identifier: GPL-2.0
#
# Sphinx configuration of the accelstream documentation. Rendered by
# `make htmldocs` (mk/docs.mk), which takes the kernel's kernel-doc Sphinx
# extension and scripts/kernel-doc from the Debian linux-source tarball into
# build/docs-tools; nothing of them is kept in this tree.

import os
import sys

import sphinx

_here = os.path.dirname(os.path.abspath(__file__))
srctree = os.environ.get('ACCELSTREAM_SRCTREE', os.path.dirname(_here))
tools = os.environ.get('ACCELSTREAM_DOCS_TOOLS',
                       os.path.join(srctree, 'build', 'docs-tools'))

if not os.path.isfile(os.path.join(tools, 'Documentation', 'sphinx',
                                   'kerneldoc.py')):
    sys.exit('conf.py: the kernel-doc extension is missing under %s; '
             'run "make docs-tools" (or "make htmldocs")' % tools)
sys.path.insert(0, os.path.join(tools, 'Documentation', 'sphinx'))

project = 'accelstream'
copyright = '2026, The accelstream authors'
author = 'The accelstream authors'
# The project's one version (VERSION at the top of the tree).
with open(os.path.join(srctree, 'VERSION')) as _f:
    release = _f.read().strip()
version = '.'.join(release.split('.')[:2])

# kerneldoc: the .. kernel-doc:: directive; automarkup: function() and
# struct names become cross-references, as in the kernel's own manuals.
extensions = ['kerneldoc', 'automarkup']

kerneldoc_bin = os.path.join(tools, 'scripts', 'kernel-doc')
kerneldoc_srctree = srctree
# kernel-doc's warnings become Sphinx warnings, hence errors under -W.
kerneldoc_verbosity = 1

# The kernel's C domain settings (Documentation/conf.py of Linux, Sphinx 3+):
# these annotations may appear in prototypes kernel-doc emits.
primary_domain = 'c'
highlight_language = 'none'
c_id_attributes = [
    '__init', '__exit', '__user', '__iomem', '__must_check',
    '__always_inline', 'noinline', 'inline', 'static',
    # libaccel's libaccel.h: its inline wrappers are ACCELINLINE.
    'ACCELINLINE',
]

source_suffix = '.rst'
master_doc = 'index'
language = 'en'
exclude_patterns = ['_build']
pygments_style = 'sphinx'

html_theme = 'alabaster'
html_title = 'accelstream %s documentation' % release
html_static_path = []
html_show_sourcelink = False

# Duplicate C declarations are errors: libaccel's calls, which share names
# with the ioctl structures, are declared in a C namespace of their own
# (Documentation/libaccel/index.rst).
suppress_warnings = []

if sphinx.version_info < (3, 1):
    sys.exit('conf.py: Sphinx 3.1 or later is needed (Debian 12: 5.3)')
