#!/usr/bin/env python3
"""Condenses `swift package benchmark --format markdown` output to one line per benchmark:
wall time p25/p50 and mallocs p50, or, for the interleaved ratio benchmarks, the p50 of
VaultKit ns/op, raw ns/op and their ratio. Usage: summarize.py FILE"""
import sys

benchmarks, name = [], None
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    if line.startswith("### "):
        name = line[4:].strip()
        benchmarks.append((name, {}))
    elif name and line.startswith("| ") and not line.startswith("| Metric") and not line.startswith("|:"):
        cells = [c.strip() for c in line.split("|")[1:-1]]
        benchmarks[-1][1][cells[0].replace(" *", "")] = cells[1:]

print("| benchmark | wall p25 | wall p50 | mallocs p50 |\n|---|---|---|---|")
ratios = []
for name, rows in benchmarks:
    if "ratio x1000" in rows:
        ratios.append((name, rows))
        continue
    wall = next(((k, v) for k, v in rows.items() if k.startswith("Time (wall clock)")), None)
    unit = wall[0].replace("Time (wall clock) ", "") if wall else ""
    extra = f" ({rows['items/s'][2]}k items/s)" if "items/s" in rows else ""
    print(f"| {name}{extra} | {wall[1][1] if wall else ''} {unit} | {wall[1][2] if wall else ''} {unit} | {rows.get('Malloc (total)', ['', '', ''])[2]} |")
if ratios:
    print("\n| interleaved, p50 | VaultKit ns/op | raw ns/op | ratio |\n|---|---|---|---|")
    for name, rows in ratios:
        print(f"| {name} | {rows['VaultKit ns/op'][2]} | {rows['raw ns/op'][2]} | {int(rows['ratio x1000'][2]) / 1000:.2f}x |")
