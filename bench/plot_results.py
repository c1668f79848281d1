#!/usr/bin/env python3
"""Plots and tabulates the JSON written by bench/run-suite.sh.

Reads every ``*.json`` in RAW_DIR (rows of mpidht_bench and
mpidht_server_bench), writes ``throughput.png``, ``latency.png`` and
``comparison.png`` into OUT_DIR, and ``RESULTS.md``: the machine, the
results table, and the issue's targets as ratios measured in this run.
The rows in RAW_DIR/batch/ (mpidht_bench with --batch and --write-batch)
add ``batch.png`` and the batched-operations table: keys/s per protocol
and batch size, and the speedup over single calls. Read and fill rows
come from every file there, write rows only from files named
``write_*.json`` (the interleaved write phases; the read runs' own write
rows only fill the table and are left out). The rows in
RAW_DIR/persist/ (mpidht_bench_persist) add the dump and restore table and
the restore target. The rows in RAW_DIR/mpi/ (``openmpi_*.json`` and
``mpich_*.json``: mpidht_bench built with each MPI) add the table of
single-call latencies under both and the MPICH target.

Runs repeated with the same settings (run-suite.sh --repeats: files
``*_r<N>.json``) are one row in the tables and figures: the median of each
measured figure, and the range of operations/s over the repeats, drawn as
a bar in the throughput and comparison figures and given beside the
median in the tables. The targets are not medians: each ratio is taken
within one run (both figures from that run's file; a server, run once, is
set against every run of the library), and the worst run and rank count
is the headline, with the median over the runs and the other rank counts
beside it.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import platform
import subprocess
import sys
from pathlib import Path
from collections.abc import Callable
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rows import read_rows  # noqa: E402

Row = dict[str, Any]
PROTOCOLS = ("coarse", "fine", "lockfree")
#: One colour per protocol or store, the same in every figure.
COLOURS = {"coarse": "tab:blue", "fine": "tab:orange", "lockfree": "tab:green",
           "redis": "tab:red", "memcached": "tab:purple"}


def colour(name: str) -> str | None:
    """The colour of a protocol, or of a store by its name's prefix
    ("redis-pipe16" is redis's; its pipelined runs are dashed)."""
    return COLOURS.get(name) or next((c for k, c in COLOURS.items() if name.startswith(k)),
                                     None)


def legend_below(fig: Any, ax: Any, columns: int = 6) -> None:
    """One legend for the figure, below its panels, where it hides no line."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=min(columns, len(handles)),
                   fontsize=8, frameon=False)


PHASES = ("write", "read", "mixed")
DISTS = ("uniform", "zipf")


#: What a run measures; every other field of a row but its run is a setting.
MEASURED = ("ops_per_s", "p50_us", "p99_us", "mean_us", "misses", "checksum_mismatches",
            "lock_retries", "p50_slowest_us", "p99_slowest_us")


def run_of(path: Path) -> int:
    """The run a file holds: N of a name ending in ``_r<N>.json``, else 1."""
    found = re.search(r"_r([0-9]+)\.json$", path.name)
    return int(found.group(1)) if found else 1


def aggregate(rows: list[Row]) -> list[Row]:
    """One row per setting: the median of each measured figure over the
    runs with that setting, their number (``repeats``) and the lowest and
    highest operations/s and latencies (``ops_per_s_min``, ``_max``,
    ``p50_us_min``, ...)."""
    groups: dict[tuple[tuple[str, Any], ...], list[Row]] = {}
    for r in rows:
        key = tuple(sorted((k, v) for k, v in r.items() if k not in MEASURED and k != "run"))
        groups.setdefault(key, []).append(r)
    out: list[Row] = []
    for key, runs in groups.items():
        row: Row = dict(key)
        for field in MEASURED:
            values = [r[field] for r in runs if field in r]
            if values:
                row[field] = statistics.median(values)
        for field in ("ops_per_s", "p50_us", "p99_us"):
            values = [r[field] for r in runs if field in r]
            if values:
                row[f"{field}_min"], row[f"{field}_max"] = min(values), max(values)
        row["repeats"] = len(runs)
        out.append(row)
    return out


def load(raw_dir: Path) -> list[Row]:
    """The rows of every JSON file directly in raw_dir, each with its run
    (``run_of``)."""
    rows: list[Row] = []
    for path in sorted(raw_dir.glob("*.json")):
        rows.extend({**r, "run": run_of(path)} for r in read_rows(path))
    return rows


def load_mpi(mpi_dir: Path) -> list[Row]:
    """The rows of mpi_dir's files, each with the MPI that ran it
    (``mpi``: the file name's part before the first underscore) and its run."""
    rows: list[Row] = []
    for path in sorted(mpi_dir.glob("*.json")):
        mpi = path.name.split("_", 1)[0]
        rows.extend({**r, "mpi": mpi, "run": run_of(path)} for r in read_rows(path))
    return rows


def load_batches(batch_dir: Path) -> list[Row]:
    """Batch rows: reads from every file, writes from write_*.json only."""
    rows: list[Row] = []
    for path in sorted(batch_dir.glob("*.json")):
        rows.extend(r for r in read_rows(path)
                    if r["phase"] != "write" or path.name.startswith("write_"))
    return rows


def pick(rows: list[Row], **match: Any) -> list[Row]:
    return [r for r in rows if all(r.get(k) == v for k, v in match.items())]


def rate(rows: list[Row], **match: Any) -> float | None:
    found = pick(rows, **match)
    return found[0]["ops_per_s"] if found else None


def oversubscribed(ranks: int, cores: int) -> str:
    """A label suffix for runs with more ranks than cores."""
    return f" (oversubscribed: {cores} cores)" if ranks > cores else ""


def plot_rates(ax: Any, rows: list[Row], names: tuple[str, ...], phase: str, dist: str,
               title: str, xlabel: str, cores: int) -> None:
    """Draws operations/s against ranks, one line per protocol or store
    through the medians, with a bar from the lowest to the highest of
    repeated runs; rank counts above the core count are shaded
    (oversubscribed)."""
    for name in names:
        found = sorted(pick(rows, protocol=name, phase=phase, distribution=dist),
                       key=lambda r: r["ranks"])
        if found:
            ranks = [r["ranks"] for r in found]
            ax.plot(ranks, [r["ops_per_s"] for r in found], marker="o", label=name,
                    color=colour(name), linestyle="--" if "pipe" in name else "-")
            spread = [r for r in found if r.get("repeats", 1) > 1]
            ax.vlines([r["ranks"] for r in spread], [r["ops_per_s_min"] for r in spread],
                      [r["ops_per_s_max"] for r in spread], color=colour(name), linewidth=3,
                      alpha=0.45)
    ax.set_title(title)
    ranks = sorted({r["ranks"] for r in rows})
    ax.set_xticks(ranks)
    if ranks and ranks[-1] > cores:
        ax.axvspan(cores + 0.5, ranks[-1] + 0.5, color="grey", alpha=0.15, linewidth=0)
        ax.text(ranks[-1] + 0.4, 0.02, "oversubscribed", transform=ax.get_xaxis_transform(),
                ha="right", fontsize=7, color="dimgrey")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("operations/s")
    ax.grid(True, which="both", alpha=0.3)


def plot_throughput(rows: list[Row], out: Path, cores: int) -> None:
    fig, axes = plt.subplots(len(DISTS), len(PHASES), figsize=(13, 7), sharex=True)
    for i, dist in enumerate(DISTS):
        for j, phase in enumerate(PHASES):
            plot_rates(axes[i][j], rows, PROTOCOLS, phase, dist,
                       f"{phase}, {dist} keys", "MPI ranks", cores)
    legend_below(fig, axes[0][0])
    runs = max((r.get("repeats", 1) for r in rows), default=1)
    fig.suptitle("mpidht throughput (all ranks together" +
                 (f"; lines through the medians of {runs} runs, bars: their range)"
                  if runs > 1 else ")"))
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(out / "throughput.png", dpi=110)
    plt.close(fig)


def plot_latency(rows: list[Row], out: Path, ranks: int, cores: int) -> None:
    fig, axes = plt.subplots(1, len(DISTS), figsize=(13, 4.5), sharey=True)
    for ax, dist in zip(axes, DISTS):
        labels: list[str] = []
        found: list[Row] = []
        for protocol in PROTOCOLS + ("-",):
            for r in pick(rows, protocol=protocol, distribution=dist, ranks=ranks):
                if "p50_us" not in r:
                    continue
                labels.append(f"{protocol}\n{r['phase']}" if protocol != "-" else r["phase"])
                found.append(r)
        xs = range(len(labels))
        for shift, field in ((-0.2, "p50_us"), (0.2, "p99_us")):
            medians = [r[field] for r in found]
            # The range over repeated runs, as error bars from the median.
            spread = [[m - r.get(f"{field}_min", m) for m, r in zip(medians, found)],
                      [r.get(f"{field}_max", m) - m for m, r in zip(medians, found)]]
            ax.bar([x + shift for x in xs], medians, width=0.4, label=field[:3], yerr=spread,
                   error_kw={"elinewidth": 1, "capsize": 2, "ecolor": "black"})
        ax.set_xticks(list(xs), labels, fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel("µs per operation")
        runs = max((r.get("repeats", 1) for r in found), default=1)
        ax.set_title(f"{dist} keys, {ranks} ranks{oversubscribed(ranks, cores)}" +
                     (f"\nmedians of {runs} runs, bars: their range" if runs > 1 else ""))
        ax.grid(True, axis="y", which="both", alpha=0.3)
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(out / "latency.png", dpi=110)
    plt.close(fig)


def servers_oversubscribed(rows: list[Row], cores: int) -> list[int]:
    """The rank counts at which a server run had more processes than cores:
    the server is one more beside the clients."""
    return sorted({r["ranks"] for r in rows if r["protocol"].startswith(("redis", "memcached"))
                   and r["ranks"] + 1 > cores})


def server_note(rows: list[Row], cores: int) -> str:
    """A title's note of the server runs that are oversubscribed."""
    over = servers_oversubscribed(rows, cores)
    return (f"\n(servers: one process more; oversubscribed from {over[0]} ranks)"
            if over else "")


def plot_comparison(rows: list[Row], out: Path, cores: int) -> None:
    stores = sorted({r["protocol"] for r in rows
                     if r["protocol"].startswith(("redis", "memcached"))})
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5), sharey=True)
    for ax, phase in zip(axes, ("read", "write")):
        plot_rates(ax, rows, ("lockfree", "coarse") + tuple(stores), phase, "uniform",
                   f"{phase}, uniform keys: mpidht against servers on loopback"
                   + server_note(rows, cores),
                   "MPI ranks = client connections", cores)
    legend_below(fig, axes[0])
    fig.tight_layout(rect=(0, 0.09, 1, 1))
    fig.savefig(out / "comparison.png", dpi=110)
    plt.close(fig)


def combined_rate(rows: list[Row], **match: Any) -> float | None:
    """Keys/s over every matching row (a size measured twice counts both
    passes: all keys over all time)."""
    found = [r for r in pick(rows, **match) if r["ops_per_s"] > 0]
    if not found:
        return None
    return float(sum(r["ops"] for r in found) / sum(r["ops"] / r["ops_per_s"] for r in found))


def batch_speedups(rows: list[Row], phase: str, protocol: str,
                   ranks: int) -> list[tuple[int, float, float | None]]:
    """(batch size, keys/s, speedup over single calls) for every size measured."""
    single = combined_rate(rows, protocol=protocol, phase=phase, ranks=ranks, batch=1)
    out = []
    for size in sorted({r["batch"] for r in pick(rows, protocol=protocol, phase=phase,
                                                 ranks=ranks)}):
        keys = combined_rate(rows, protocol=protocol, phase=phase, ranks=ranks, batch=size)
        if keys:
            out.append((size, keys, keys / single if single else None))
    return out


def pass_range(rows: list[Row], phase: str, protocol: str, ranks: int,
               size: int) -> tuple[float, float] | None:
    """The lowest and highest keys/s of the passes of one size, relative
    to single calls (all their passes combined); None unless measured in
    more than one pass."""
    single = combined_rate(rows, protocol=protocol, phase=phase, ranks=ranks, batch=1)
    rates = [r["ops_per_s"] for r in pick(rows, protocol=protocol, phase=phase, ranks=ranks,
                                          batch=size)]
    if len(rates) < 2 or not single:
        return None
    return min(rates) / single, max(rates) / single


def windows(rows: list[Row]) -> list[str]:
    """The window kinds measured ("auto": the default, shared on one node)."""
    return sorted({str(r.get("window", "auto")) for r in rows}, key=lambda w: w != "auto")


def of_window(rows: list[Row], window: str) -> list[Row]:
    return [r for r in rows if r.get("window", "auto") == window]


def window_label(window: str) -> str:
    return "default window (shared)" if window == "auto" else f"{window} window"


def plot_batches(rows: list[Row], out: Path, cores: int) -> None:
    """Speedup over single calls against batch size: reads (per window
    kind), then writes if measured, one panel per rank count, one line per
    protocol."""
    panels = [(w, p) for w in windows(rows) for p in BATCH_PHASES
              if any(r["batch"] > 1 for r in pick(of_window(rows, w), phase=p))]
    ranks = sorted({r["ranks"] for r in rows})
    fig, axes = plt.subplots(len(panels), len(ranks), squeeze=False, sharey="row",
                             figsize=(4.4 * len(ranks), 3.8 * len(panels)))
    for i, (window, phase) in enumerate(panels):
        subset = of_window(rows, window)
        for j, np_ in enumerate(ranks):
            ax = axes[i][j]
            for protocol in PROTOCOLS:
                pts = [(size, speedup) for size, _, speedup in
                       batch_speedups(subset, phase, protocol, np_) if speedup]
                if pts:
                    ax.plot(*zip(*pts), marker="o", label=protocol, color=colour(protocol))
                spans = [(size, span) for size, _ in pts
                         if (span := pass_range(subset, phase, protocol, np_, size))]
                if spans:
                    ax.vlines([size for size, _ in spans], [lo for _, (lo, _) in spans],
                              [hi for _, (_, hi) in spans], color=colour(protocol),
                              linewidth=3, alpha=0.45)
            ax.axhline(1, color="grey", linewidth=0.8)
            ax.set_xscale("log", base=2)
            sizes = sorted({r["batch"] for r in pick(subset, phase=phase, ranks=np_)})
            ax.set_xticks(sizes, [str(s) for s in sizes])
            ax.set_title(f"{phase}s, {np_} rank{'s' if np_ > 1 else ''}, "
                         f"{window_label(window)}{oversubscribed(np_, cores)}", fontsize=8)
            ax.set_xlabel("keys per call (1 = single calls)")
            ax.set_ylabel("speedup over single calls")
            ax.grid(True, which="both", alpha=0.3)
    legend_below(fig, axes[0][0])
    fig.suptitle("mpidht batched operations (uniform keys), keys/s relative to single calls; "
                 "reads: lines through all passes of a size, bars: the range of its passes")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(out / "batch.png", dpi=110)
    plt.close(fig)


#: The batched phases, in the order of the table's columns and the figure's
#: rows: reads, writes, and fill (reads of keys never written, then their
#: writes; mpidht_bench --phases fill).
BATCH_PHASES = ("read", "write", "fill")


def batch_table(rows: list[Row]) -> list[str]:
    """keys/s and speedup over single calls per rank count, protocol and
    size, for reads and every other phase measured in batches."""
    phases = [p for p in BATCH_PHASES
              if p == "read" or any(r["batch"] > 1 for r in pick(rows, phase=p))]
    out = ["| ranks | protocol | batch |" + "".join(f" {p} keys/s | {p} speedup |"
                                                    for p in phases),
           "| --- | --- | --- |" + " --- | --- |" * len(phases)]

    def cells(entry: tuple[int, float, float | None] | None) -> str:
        if entry is None:
            return " – | – |"
        speedup = f"{entry[2]:.2f}×" if entry[2] else "n/a"
        return f" {entry[1]:.0f} | {speedup} |"

    for np_ in sorted({r["ranks"] for r in rows}):
        for protocol in PROTOCOLS:
            found = {p: {e[0]: e for e in batch_speedups(rows, p, protocol, np_)}
                     for p in phases}
            for size in sorted(set().union(*found.values())):
                out.append(f"| {np_} | {protocol} | {size} |"
                           + "".join(cells(found[p].get(size)) for p in phases))
    return out


def batch_section(all_rows: list[Row]) -> list[str]:
    ranks = sorted({r["ranks"] for r in all_rows})
    rows = of_window(all_rows, "auto")
    passes = max(len(pick(rows, protocol="lockfree", phase="read", ranks=ranks[-1], batch=1)), 1)
    return [
        "Uniform keys, 80-byte keys and 104-byte values, at "
        f"{', '.join(map(str, ranks))} ranks. Reads: each protocol's table is filled with "
        "single writes, then every rank reads its keys back with `mpidht_read_batch` of "
        "the given size (1 = `mpidht_read` one key at a time)"
        + (f", each size {passes} times in mirrored order, keys/s over all passes" if passes > 1
           else "") + ". Writes: one write phase per rank count measures every size "
        "(1 = `mpidht_write` one key at a time) on one table, interleaved: after a warm-up "
        "that touches every page of the table once, rounds in which every rank writes its "
        "next 4096 keys with each size in turn (drawn with replacement: some rewrite keys "
        "written before), all ranks starting each block together. "
        + ("Fill: every rank reads keys never written (all misses) with each size, then "
           "writes them with `mpidht_write_batch` of the same size; only the writes are "
           "timed (on one node a write after its miss "
           "reuses the miss's probe: read-for-insert, fine and lock-free). "
           if pick(rows, phase="fill") else "")
        + "Keys/s counts keys, so the speedup is "
        "the ratio to single calls measured in this run; see `batch.png`.",
        "",
        f"### {window_label('auto')}",
        "",
        *batch_table(rows),
    ] + [line for w in windows(all_rows) if w != "auto" for line in (
        "", f"### {window_label(w)} (reads only; the path across nodes)", "",
        *batch_table(of_window(all_rows, w)))]


def command_line(cmd: list[str]) -> str:
    try:
        text = subprocess.run(cmd, capture_output=True, text=True, check=False).stdout
    except OSError:
        return "not found"
    return text.strip().splitlines()[0] if text.strip() else "unknown"


def machine() -> list[str]:
    cpu = "unknown"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = "unknown"
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        kib = int(meminfo.read_text().split()[1])
        mem = f"{kib / 2**20:.1f} GiB"
    return [
        f"- CPU: {cpu}, {os.cpu_count()} logical cores; memory {mem}",
        f"- OS: {platform.platform()}",
        f"- MPI: {command_line(['mpirun.openmpi', '--version'])}",
        f"- Redis: {command_line(['redis-server', '--version'])}",
        f"- memcached: {command_line(['memcached', '-V'])}",
    ]


def batch_cases(batch_rows: list[Row], phase: str) -> list[tuple[float, str, int, int]]:
    """(speedup over single calls, protocol, ranks, batch size) of every
    batched size measured for phase."""
    return [(speedup, protocol, np_, size)
            for np_ in sorted({r["ranks"] for r in pick(batch_rows, phase=phase)})
            for protocol in PROTOCOLS
            for size, _, speedup in batch_speedups(batch_rows, phase, protocol, np_)
            if size > 1 and speedup]


def worst_batched_writes(batch_rows: list[Row]) -> list[str]:
    """The targets row for batched writes: the worst speedup over single
    writes of any protocol, size and rank count, named."""
    found = batch_cases(batch_rows, "write")
    if not found:
        return []
    speedup, protocol, np_, size = min(found)
    return [f"| batched writes / single writes, worst of every protocol, size and rank count "
            f"| ≥ 1× | {speedup:.2f}× ({protocol}, batches of {size}, {np_} ranks) |"]


def rank_count(ranks: int) -> str:
    return f"{ranks} rank{'s' if ranks > 1 else ''}"


def worst_of_ranks(values: dict[int, tuple[float, str]], higher_is_better: bool) -> str:
    """A target's ratio at every rank count: the worst first, named, with
    its detail; the others beside it."""
    if not values:
        return "n/a"
    pick_worst = min if higher_is_better else max
    worst = pick_worst(values, key=lambda np_: values[np_][0])
    value, detail = values[worst]
    head = f"{value:.2f}× ({rank_count(worst)}{': ' + detail if detail else ''})"
    rest = [f"{np_}: {values[np_][0]:.2f}×" for np_ in sorted(values) if np_ != worst]
    return head + (f"; ranks {', '.join(rest)}" if rest else "")


#: The MPI whose single calls are compared against Open MPI's.
OTHER_MPI = "mpich"


def within_runs(num_rows: list[Row], den_rows: list[Row],
                field: str) -> list[tuple[float, int, Row, Row]]:
    """(num[field] / den[field], run, num row, den row) for each num row
    and the den row of the same run; where den ran once (a server), every
    num row is set against that one."""
    by_run = {r.get("run", 1): r for r in den_rows}
    out = []
    for n in num_rows:
        run = n.get("run", 1)
        d = by_run.get(run, den_rows[0] if len(den_rows) == 1 else None)
        if d is not None and d[field] > 0:
            out.append((n[field] / d[field], run, n, d))
    return out


def of_runs(found: list[tuple[float, int, Row, Row]], lowest: bool,
            show: Callable[[Row, Row], str] = lambda n, d: "") -> tuple[float, str]:
    """The worst of ratios within runs (the lowest where lowest), and a
    detail naming its run (where there were several) with show's words,
    and the median over the runs."""
    value, run, n, d = (min if lowest else max)(found, key=lambda f: f[0])
    words = [w for w in (f"run {run}" if len(found) > 1 else "", show(n, d)) if w]
    if len(found) > 1:
        words.append(f"median of {len(found)} runs "
                     f"{statistics.median(f[0] for f in found):.2f}×")
    return value, "; ".join(words)


def p50_field(rows: list[Row]) -> str:
    """The latency a target compares: the slowest rank's p50 where every
    row has it (mpidht_bench since it reports it), else the p50 of all
    ranks' samples together."""
    return "p50_slowest_us" if rows and all("p50_slowest_us" in r for r in rows) else "p50_us"


def p50s(field: str) -> Callable[[Row, Row], str]:
    """Words for two rows' latencies in field."""
    name = "slowest rank's p50" if field == "p50_slowest_us" else "p50"
    return lambda n, d: f"{name} {n[field]:.2f} µs against {d[field]:.2f} µs"


def mpi_ratios(mpi_rows: list[Row], phase: str) -> dict[tuple[str, int], tuple[float, Row, Row]]:
    """(protocol, ranks) -> (MPICH p50 / Open MPI p50, Open MPI's row,
    MPICH's row) for the single calls of phase, from aggregated rows."""
    out = {}
    for r in pick(mpi_rows, mpi=OTHER_MPI, phase=phase):
        base = pick(mpi_rows, mpi="openmpi", phase=phase, protocol=r["protocol"],
                    ranks=r["ranks"])
        if base and base[0]["p50_us"] > 0:
            out[(r["protocol"], r["ranks"])] = (r["p50_us"] / base[0]["p50_us"], base[0], r)
    return out


def worst_by_protocol(found: dict[tuple[str, int], float], lowest: bool,
                      show: Callable[[float], str], others_word: str = "worst",
                      detail: Callable[[str, int], str] = lambda protocol, ranks: "") -> str:
    """found: (protocol, ranks) -> value. The worst value (the lowest where
    lowest, else the highest), named with its protocol and rank count (and
    detail of them), then every other protocol's worst beside it."""
    if not found:
        return "n/a"
    pick = min if lowest else max
    (protocol, np_), worst = pick(found.items(), key=lambda kv: kv[1])
    others = [f"{p} {show(pick(v for (q, _), v in found.items() if q == p))}"
              for p in PROTOCOLS if p != protocol and any(q == p for q, _ in found)]
    return (f"{show(worst)} ({protocol}, {rank_count(np_)}{detail(protocol, np_)})"
            + (f"; {others_word} of {', '.join(others)}" if others else ""))


def ratio(value: float) -> str:
    return f"{value:.2f}×"


def mpich_target(mpi_rows: list[Row]) -> str:
    """MPICH's read latency over Open MPI's, each pair of alternating runs
    on its own: the worst protocol, rank count and run, named, and every
    other protocol's worst beside it."""
    found: dict[tuple[str, int], tuple[float, str]] = {}
    for key in sorted({(r["protocol"], r["ranks"])
                       for r in pick(mpi_rows, mpi=OTHER_MPI, phase="read")}):
        match = {"phase": "read", "protocol": key[0], "ranks": key[1]}
        num, den = pick(mpi_rows, mpi=OTHER_MPI, **match), pick(mpi_rows, mpi="openmpi", **match)
        field = p50_field(num + den)
        pairs = within_runs(num, den, field)
        if pairs:
            found[key] = of_runs(pairs, lowest=False, show=p50s(field))
    return worst_by_protocol({k: v[0] for k, v in found.items()}, lowest=False, show=ratio,
                             detail=lambda protocol, ranks: ": " + found[(protocol, ranks)][1])


def restore_rates(persist_rows: list[Row]) -> dict[tuple[int, str], tuple[float, float]]:
    """(ranks, protocol) -> median dump and restore MB/s over the runs."""
    out = {}
    for key in sorted({(r["ranks"], r["protocol"]) for r in persist_rows}):
        runs = pick(persist_rows, ranks=key[0], protocol=key[1])
        mb = runs[0]["megabytes"]
        out[key] = (statistics.median(mb / r["dump_seconds"] for r in runs),
                    statistics.median(mb / r["restore_seconds"] for r in runs))
    return out


def restore_target(persist_rows: list[Row]) -> str:
    """The slowest restore of any protocol, rank count and round, named,
    and every other protocol's slowest beside it."""
    found: dict[tuple[str, int], tuple[float, str]] = {}
    for np_, protocol in sorted({(r["ranks"], r["protocol"]) for r in persist_rows}):
        rates = [(r["megabytes"] / r["restore_seconds"], r.get("round", 1))
                 for r in pick(persist_rows, ranks=np_, protocol=protocol)]
        slowest, at = min(rates)
        median = statistics.median(v for v, _ in rates)
        found[(protocol, np_)] = (slowest, f": round {at}; median of {len(rates)} rounds "
                                           f"{median:.0f} MB/s" if len(rates) > 1 else "")
    return worst_by_protocol({k: v[0] for k, v in found.items()}, lowest=True,
                             show=lambda mb: f"{mb:.0f} MB/s", others_word="slowest",
                             detail=lambda protocol, ranks: found[(protocol, ranks)][1])


def mpi_section(mpi_rows: list[Row]) -> list[str]:
    """Single-call p50 latencies under Open MPI and MPICH, and their ratio."""
    out = ["The same `mpidht_bench` built with each MPI (`--phases write,read`, single "
           "calls, uniform keys, the table on the node), the two runs alternating; p50 "
           "latency, the median over the runs and its range.", "",
           "| ranks | protocol | phase | Open MPI p50 µs | MPICH p50 µs | MPICH / Open MPI |",
           "| --- | --- | --- | --- | --- | --- |"]

    def cell(r: Row) -> str:
        if r.get("repeats", 1) < 2:
            return f"{r['p50_us']:.3f}"
        return f"{r['p50_us']:.3f} ({r['p50_us_min']:.3f}–{r['p50_us_max']:.3f})"

    found = {(np_, protocol, phase): v
             for phase in ("write", "read")
             for (protocol, np_), v in mpi_ratios(mpi_rows, phase).items()}
    for (np_, protocol, phase), (ratio, base, other) in sorted(found.items()):
        out.append(f"| {np_} | {protocol} | {phase} | {cell(base)} | {cell(other)} | "
                   f"{ratio:.2f}× |")
    return out


def targets(rows: list[Row], batch_rows: list[Row], mpi_rows: list[Row] | None = None,
            persist_rows: list[Row] | None = None) -> list[str]:
    ranks = sorted({r["ranks"] for r in rows})

    def throughput(num: tuple[str, str, str], den: tuple[str, str, str]) -> str:
        values = {}
        for np_ in ranks:
            found = within_runs(
                pick(rows, protocol=num[0], phase=num[1], distribution=num[2], ranks=np_),
                pick(rows, protocol=den[0], phase=den[1], distribution=den[2], ranks=np_),
                "ops_per_s")
            if found:
                values[np_] = of_runs(found, lowest=True)
        return worst_of_ranks(values, higher_is_better=True)

    latency = {}
    for np_ in ranks:
        num = pick(rows, protocol="lockfree", phase="read", distribution="uniform", ranks=np_)
        den = pick(rows, protocol="-", phase="raw-get", distribution="uniform", ranks=np_)
        field = p50_field(num + den)
        found = within_runs(num, den, field)
        if found:
            latency[np_] = of_runs(found, lowest=False, show=p50s(field))

    def reads_of_64(w: str) -> str:
        """Batches of 64 over single reads: the worst protocol and rank
        count, named, and every protocol's worst beside it."""
        found = {(protocol, np_): speedup
                 for speedup, protocol, np_, size in batch_cases(of_window(batch_rows, w), "read")
                 if size == 64}
        return worst_by_protocol(found, lowest=True, show=ratio)

    return [
        "Ratios of throughput unless stated, each taken within one run (both figures from "
        "that run's file; Redis ran once, and every run of the library is set against it): "
        "the worst run and rank count first, the median over the runs and the other rank "
        "counts' worst beside it:",
        "",
        "| target | wanted | measured |",
        "| --- | --- | --- |",
        "| lock-free reads / coarse reads (uniform) | ≥ 3× | "
        f"{throughput(('lockfree', 'read', 'uniform'), ('coarse', 'read', 'uniform'))} |",
        "| lock-free writes / coarse writes (uniform) | ≥ 20× | "
        f"{throughput(('lockfree', 'write', 'uniform'), ('coarse', 'write', 'uniform'))} |",
        "| lock-free writes / coarse writes (zipf) | ≥ 100× | "
        f"{throughput(('lockfree', 'write', 'zipf'), ('coarse', 'write', 'zipf'))} |",
        "| lock-free reads / Redis synchronous reads | ≥ 20× | "
        f"{throughput(('lockfree', 'read', 'uniform'), ('redis-sync1', 'read', 'uniform'))} |",
        "| lock-free read latency / raw MPI_Get + flush of a bucket | ≤ 1.0× | "
        f"{worst_of_ranks(latency, higher_is_better=False)} |",
    ] + worst_batched_writes(batch_rows) + [
        f"| reads in batches of 64 / single reads, worst of every protocol and rank count "
        f"({window_label(w)}) | ≥ 2× | {reads_of_64(w)} |"
        for w in windows(batch_rows)
        if pick(of_window(batch_rows, w), phase="read", batch=64)
    ] + ([f"| MPICH read latency / Open MPI read latency (p50 of single reads), worst of "
          f"every protocol and rank count | ≤ 1.5× | {mpich_target(mpi_rows)} |"]
         if mpi_rows else []) + (
        [f"| restore throughput, slowest of every protocol and rank count | ≥ 300 MB/s | "
         f"{restore_target(persist_rows)} |"] if persist_rows else [])


def spread(r: Row) -> str:
    """Operations/s of a row: the median, and the range over its repeats."""
    if r.get("repeats", 1) < 2:
        return f"{r['ops_per_s']:.0f}"
    return (f"{r['ops_per_s']:.0f} ({r['ops_per_s_min']:.0f}–{r['ops_per_s_max']:.0f}, "
            f"{r['repeats']} runs)")


def table(rows: list[Row]) -> list[str]:
    out = ["Operations/s: the median over the runs of a setting, and their range; "
           "latencies and counts: medians. Latencies over all ranks' samples, and the "
           "slowest rank's: the highest of the ranks' own p50 and p99 (– where the run "
           "did not give them).", "",
           "| protocol | phase | keys | ranks | ops/s | p50 µs | p99 µs | slowest rank's "
           "p50 µs | slowest rank's p99 µs | mean µs | misses | checksum retries |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in sorted(rows, key=lambda r: (r["distribution"], r["ranks"], r["protocol"], r["phase"])):
        def f(key: str) -> str:
            return f"{r[key]:.3f}" if key in r else "–"
        out.append(f"| {r['protocol']} | {r['phase']} | {r['distribution']} | {r['ranks']} | "
                   f"{spread(r)} | {f('p50_us')} | {f('p99_us')} | {f('p50_slowest_us')} | "
                   f"{f('p99_slowest_us')} | {f('mean_us')} | "
                   f"{r.get('misses', 0)} | {r.get('checksum_mismatches', '–')} |")
    return out


def persist_section(rows: list[Row]) -> list[str]:
    """Median dump and restore throughput per rank count and protocol."""
    out = ["`mpidht_bench_persist`: a table filled to half its buckets (80-byte keys, "
           "104-byte values) is dumped with `mpidht_dump` (MPI-IO, synced, renamed) and "
           "restored with `mpidht_restore` into an empty table of the same size; the "
           "slowest rank's time, median of the rounds. The restore reads a file the page "
           "cache still holds; each restored table is checked, and the entries it lost "
           "(evicted, most over the rounds) are given where the run reports them.", "",
           "| ranks | protocol | entries | file MB | dump MB/s | restore MB/s | evicted |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for (np_, protocol), (dump, restore) in restore_rates(rows).items():
        runs = pick(rows, ranks=np_, protocol=protocol)
        lost = [r["restore_evicted"] for r in runs if "restore_evicted" in r]
        out.append(f"| {np_} | {protocol} | {runs[0]['entries']} | {runs[0]['megabytes']:.1f} | "
                   f"{dump:.0f} | {restore:.0f} | {max(lost) if lost else '–'} |")
    return out


def results_parser(description: str | None) -> argparse.ArgumentParser:
    """The arguments of a results script: the folder of benchmark JSON
    files, the folder for plots and RESULTS.md, and --cores
    (``parse_results`` checks them)."""
    parser = argparse.ArgumentParser(description=description,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("raw_dir", type=Path, help="folder with the benchmark JSON files")
    parser.add_argument("out_dir", type=Path, help="folder for the plots and RESULTS.md")
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1,
                        help="cores of the machine the runs were made on; runs with more "
                             "ranks are marked oversubscribed (default: this machine's)")
    return parser


def parse_results(parser: argparse.ArgumentParser) -> argparse.Namespace:
    """The parsed arguments of a ``results_parser`` (--cores at least 1)."""
    args = parser.parse_args()
    if args.cores < 1:
        parser.error(f"--cores must be at least 1, got {args.cores}")
    return args


def main() -> None:
    parser = results_parser(__doc__)
    args = parse_results(parser)
    runs = load(args.raw_dir)
    rows = aggregate(runs)
    batch_rows = (load_batches(args.raw_dir / "batch") if (args.raw_dir / "batch").is_dir()
                  else [])
    if not rows:
        parser.error(f"no results in {args.raw_dir}")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    top = max(r["ranks"] for r in rows)
    plot_throughput(rows, args.out_dir, args.cores)
    plot_latency(rows, args.out_dir, top, args.cores)
    plot_comparison(rows, args.out_dir, args.cores)
    batches = ["## Batched operations", "", *batch_section(batch_rows), ""] if batch_rows else []
    persist_rows = (load(args.raw_dir / "persist") if (args.raw_dir / "persist").is_dir()
                    else [])
    persist = (["## Dump and restore", "", *persist_section(persist_rows), ""]
               if persist_rows else [])
    mpi_runs = load_mpi(args.raw_dir / "mpi") if (args.raw_dir / "mpi").is_dir() else []
    mpi_rows = aggregate(mpi_runs)
    mpis = ["## MPICH and Open MPI", "", *mpi_section(mpi_rows), ""] if mpi_rows else []
    if batch_rows:
        plot_batches(batch_rows, args.out_dir, args.cores)
    servers_over = servers_oversubscribed(rows, args.cores)
    text = ["# Benchmark results", "",
            "Written by `bash bench/run-suite.sh`; the plots are `throughput.png`, "
            "`latency.png`, `comparison.png`" + (" and `batch.png`" if batch_rows else "")
            + " beside this file, the raw rows in `raw/`.",
            "", "## Machine", "", *machine(),
            *([f"- Oversubscribed: the runs at more than {args.cores} ranks share the "
               f"{args.cores} cores (marked in the figures); they show the scheduler as much as "
               "the library."] if top > args.cores else []),
            *([f"- The server runs (Redis, memcached) at {', '.join(map(str, servers_over))} "
               "ranks are oversubscribed too: the server is a process of its own beside the "
               "ranks."] if servers_over else []),
            "", "## Targets", "",
            *targets(runs, batch_rows, mpi_runs, persist_rows), "", *batches, *persist,
            *mpis, "## All rows", "",
            *table(rows), ""]
    (args.out_dir / "RESULTS.md").write_text("\n".join(text))


if __name__ == "__main__":
    main()
