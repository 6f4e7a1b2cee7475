#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that a column of a table is aligned as a terminal shows it.

Usage: columns.py FILE HEADER

FILE holds a table whose header line contains HEADER, a right-aligned
column. In every later line the cell under HEADER must end in the same
display column as the header (East Asian wide characters count two),
with a digit there and a blank or the end of the line after it. Exits 1
and says which line is off otherwise.
"""
import sys
import unicodedata


def width(s):
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def cut(line, cols):
    """The prefix of line that fills cols display columns."""
    w = 0
    for i, c in enumerate(line):
        if w >= cols:
            return line[:i]
        w += width(c)
    return line


def main():
    path, header = sys.argv[1], sys.argv[2]
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    head = next((i for i, l in enumerate(lines) if header in l), None)
    if head is None:
        sys.exit(f"columns.py: no header {header} in {path}")
    end = width(lines[head][: lines[head].index(header) + len(header)])
    rows = 0
    for l in lines[head + 1:]:
        if not l.strip() or set(l.strip()) <= set("+-="):
            continue
        rows += 1
        p = cut(l, end)
        after = l[len(p):]
        if width(p) != end or not p[-1:].isdigit() or after[:1] not in ("", " ", "|"):
            sys.exit(f"columns.py: {header} is not aligned in: {l!r}")
    if not rows:
        sys.exit("columns.py: no rows")


main()
