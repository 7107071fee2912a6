#!/usr/bin/env python3
"""Condenses `swift package benchmark --format markdown` output to one line per benchmark:
p25 and p50 wall time and p50 mallocs (and items/s where reported). Usage: summarize.py FILE"""
import re, sys

name, rows, out = None, {}, []
def flush():
    if name:
        out.append((name, rows.get("time"), rows.get("malloc"), rows.get("items")))
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    if line.startswith("### "):
        flush(); name, rows = line[4:].strip(), {}
    elif line.startswith("| Time (wall clock)"):
        cells = [c.strip() for c in line.split("|")[1:-1]]
        rows["time"] = (cells[0].replace("Time (wall clock) ", "").replace(" *", ""), cells[2], cells[3])
    elif line.startswith("| Malloc (total)"):
        rows["malloc"] = [c.strip() for c in line.split("|")[1:-1]][3]
    elif line.startswith("| items/s"):
        rows["items"] = [c.strip() for c in line.split("|")[1:-1]][3]
flush()
print("| benchmark | wall p25 | wall p50 | mallocs p50 | items/s p50 |\n|---|---|---|---|---|")
for n, t, m, i in out:
    unit = t[0] if t else ""
    print(f"| {n} | {t[1] if t else ''} {unit} | {t[2] if t else ''} {unit} | {m or ''} | {i or ''} |")
