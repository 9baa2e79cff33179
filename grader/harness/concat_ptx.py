#!/usr/bin/env python3
"""Joins the PTX of a lab's source files into the one PTX file its evidence reads.

Usage: concat_ptx.py OUTPUT INPUT.ptx...
Each module is kept whole (its .version/.target header included), after a comment naming it.
"""
import os
import sys

with open(sys.argv[1], "w", encoding="utf-8") as out:
    for path in sys.argv[2:]:
        with open(path, encoding="utf-8") as f:
            out.write(f"// ---- labkit: PTX of {os.path.basename(path)}\n")
            out.write(f.read())
            out.write("\n")
