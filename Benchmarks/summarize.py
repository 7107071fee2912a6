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
    if any(k.startswith("ratio x1000") for k in rows):
        ratios.append((name, rows))
        continue
    wall = next(((k, v) for k, v in rows.items() if k.startswith("Time (wall clock)")), None)
    unit = wall[0].replace("Time (wall clock) ", "") if wall else ""
    def row(prefix):
        return next(((k, v) for k, v in rows.items() if k.startswith(prefix)), None)
    items, mallocs = row("items/s"), row("Malloc (total)")
    extra = f" ({items[1][2]} {items[0].replace('items/s', '').strip()} items/s)" if items else ""
    malloc_text = f"{mallocs[1][2]} {mallocs[0].replace('Malloc (total)', '').strip()}".strip() if mallocs else ""
    print(f"| {name}{extra} | {wall[1][1] if wall else ''} {unit} | {wall[1][2] if wall else ''} {unit} | {malloc_text} |")
if ratios:
    print("\n| interleaved, p50 | VaultKit ns/op | raw ns/op | ratio |\n|---|---|---|---|")
    def value(rows, prefix):  # p50, with the unit suffix package-benchmark adds for large values
        key = next(k for k in rows if k.startswith(prefix))
        scale = {"(K)": 1_000, "(M)": 1_000_000}.get(key[len(prefix):].strip(), 1)
        return float(rows[key][2]) * scale
    for name, rows in ratios:
        print(f"| {name} | {value(rows, 'VaultKit ns/op'):.0f} | {value(rows, 'raw ns/op'):.0f} | {value(rows, 'ratio x1000') / 1000:.2f}x |")
