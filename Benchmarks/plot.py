#!/usr/bin/env python3
"""Draws the latest results as PNG charts next to Benchmarks/README.md, so that nobody has
to compare long tables by eye. Reads results/latest.md (the suites, `run.sh`),
results/callgrind-seal.csv (`callgrind-seal.sh`), results/peers.csv (`peers.sh`) and
results/postgres-load.csv (`postgres-load.sh`);
a chart whose input is missing is left as it is.

Run through plot.sh, which keeps matplotlib in a virtualenv (Benchmarks/.venv)."""
import csv
import os
import re

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
SIZES = {"32 B": 32, "256 B": 256, "1 KiB": 1024, "64 KiB": 65536, "1 MiB": 1048576}
UNITS = {"ns": 1e-9, "μs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def suite_p50s(path):
    """{benchmark name: p50 wall time in seconds} from package-benchmark's markdown."""
    p50s, name = {}, None
    for line in open(path, encoding="utf-8", errors="replace"):
        if line.startswith("### "):
            name = line[4:].strip()
        elif name and line.startswith("| Time (wall clock)"):
            unit = re.search(r"\((\w+)\)", line.replace("μ", "u")).group(1)
            cells = [c.strip() for c in line.split("|")[1:-1]]
            p50s[name] = float(cells[3]) * UNITS[unit]
    return p50s


def save(figure, name):
    figure.tight_layout()
    figure.savefig(os.path.join(HERE, name), dpi=110)
    plt.close(figure)
    print(f"wrote Benchmarks/{name}")


def sealing_chart(p50s, counts):
    figure, (wall, instructions) = plt.subplots(1, 2, figsize=(11, 4.2))
    for op, style in (("seal", "-"), ("open", "--")):
        sizes = [SIZES[s] for s in SIZES if f"{op} VaultKit {s}" in p50s]
        for who, colour in (("VaultKit", "tab:blue"), ("raw libsodium", "tab:gray")):
            mbps = [SIZES[s] / p50s[f"{op} {who} {s}"] / 1e6 for s in SIZES if f"{op} {who} {s}" in p50s]
            wall.plot(sizes, mbps, style, marker="o", color=colour, label=f"{op}, {who}")
    wall.set(xscale="log", yscale="log", xlabel="secret size (bytes)", ylabel="MB/s of secret (wall p50)",
             title="Throughput vs size")
    wall.legend(fontsize=8)
    if counts:
        for op, colour in (("seal", "tab:blue"), ("open", "tab:orange")):
            rows = [r for r in counts if r["operation"] == op]
            sizes = [int(r["size"]) for r in rows]
            instructions.plot(sizes, [int(r["vaultkit"]) / int(r["raw"]) for r in rows], "-", marker="o", color=colour,
                              label=f"{op} / raw (bare secret)")
            instructions.plot(sizes, [int(r["vaultkit"]) / int(r["raw_record"]) for r in rows], ":", marker="s", color=colour,
                              label=f"{op} / raw (record's bytes)")
            instructions.plot(sizes, [int(r["vaultkit_nomem"]) / int(r["raw_record_nomem"]) for r in rows], "--", marker="^",
                              color=colour, label=f"{op} / raw (record's bytes, w/o mem*)")
        for target, label in ((1.25, "target 32 B"), (1.10, "target ≥ 64 KiB")):
            instructions.axhline(target, color="tab:red", linewidth=0.8, linestyle="-.")
            instructions.text(32, target + 0.02, label, fontsize=7, color="tab:red")
        instructions.set(xscale="log", xlabel="secret size (bytes)", ylabel="VaultKit / raw libsodium",
                         title="Instruction-count ratio (callgrind)")
        instructions.legend(fontsize=7)
    save(figure, "seal-open.png")


def items_chart(p50s):
    figure, axis = plt.subplots(figsize=(7, 4.2))
    for label, prefix, colour in (("get", "get @", "tab:blue"), ("durable set", "set durable @", "tab:orange"),
                                  ("open with raw key", "open with raw key @", "tab:green")):
        points = sorted((int(k[len(prefix):-1]) * 1000, v * 1e6) for k, v in p50s.items() if k.startswith(prefix) and k.endswith("k"))
        if points:
            axis.plot(*zip(*points), marker="o", color=colour, label=label)
    for name, style in (("fdatasync floor: pwrite 4 KiB + fdatasync", ":"), ("fsync floor: pwrite 4 KiB + fsync", "--")):
        if name in p50s:
            axis.axhline(p50s[name] * 1e6, color="tab:gray", linestyle=style, label=name.split(":")[0])
    axis.set(xscale="log", yscale="log", xlabel="items in the vault", ylabel="µs per operation (wall p50)",
             title="In-process get / set / open vs item count")
    axis.legend(fontsize=8)
    save(figure, "items.png")


def peers_chart(rows):
    rows = sorted(rows, key=lambda r: float(r["p50_ms"]))
    figure, axis = plt.subplots(figsize=(9, 0.32 * len(rows) + 1.4))
    labels = [r["operation"] for r in rows]
    p50 = [float(r["p50_ms"]) for r in rows]
    low = [p - float(r["p25_ms"]) for p, r in zip(p50, rows)]
    high = [float(r["p75_ms"]) - p for p, r in zip(p50, rows)]
    colours = ["tab:blue" if l.startswith("vault") else "tab:gray" if l == "C floor" else "tab:orange" for l in labels]
    axis.barh(labels, p50, xerr=[low, high], color=colours)
    axis.invert_yaxis()
    axis.set(xscale="log", xlabel="ms per process (p50, bars p25-p75)",
             title=f"One CLI process per operation, {rows[0]['items']} items in every store, {rows[0]['rounds']} interleaved rounds, "
                   f"load {float(rows[0]['load_min']):.1f}-{float(rows[0]['load_max']):.1f}")
    axis.title.set_fontsize(9)
    save(figure, "peers.png")


def postgres_load_chart(rows):
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    figure, axes = plt.subplots(1, len(workloads), figsize=(3.4 * len(workloads), 3.6), squeeze=False)
    for axis, workload in zip(axes[0], workloads):
        points = [r for r in rows if r["workload"] == workload]
        ks = [int(r["k"]) for r in points]
        axis.plot(ks, [int(r["vaultkit_ops"]) for r in points], "-", marker="o", color="tab:blue", label="VaultKit")
        axis.plot(ks, [int(r["bare_ops"]) for r in points], "--", marker="s", color="tab:gray", label="bare (pgbench)")
        axis.set(xscale="log", xticks=ks, xticklabels=[str(k) for k in ks], xlabel="client processes (K)",
                 ylabel="ops/s", title=workload)
        axis.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        axis.title.set_fontsize(9)
        axis.set_ylim(bottom=0)
        axis.legend(fontsize=7)
    save(figure, "postgres-load.png")


latest = os.path.join(RESULTS, "latest.md")
p50s = suite_p50s(latest) if os.path.exists(latest) else {}
counts_path = os.path.join(RESULTS, "callgrind-seal.csv")
counts = list(csv.DictReader(open(counts_path))) if os.path.exists(counts_path) else []
if p50s:
    sealing_chart(p50s, counts)
    items_chart(p50s)
peers_path = os.path.join(RESULTS, "peers.csv")
if os.path.exists(peers_path):
    peers_chart(list(csv.DictReader(open(peers_path))))
load_path = os.path.join(RESULTS, "postgres-load.csv")
if os.path.exists(load_path):
    postgres_load_chart(list(csv.DictReader(open(load_path))))
