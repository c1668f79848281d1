#!/usr/bin/env python3
"""Plots and tabulates the JSON written by bench/run-hosts.sh.

Reads the mpidht_bench rows in RAW_DIR (one rank per emulated host, so a
row's ``ranks`` is its host count) and the mpidht_progress_bench rows in
RAW_DIR/progress/, and writes into OUT_DIR ``throughput.png`` and
``latency.png`` (drawn by plot_results.py's functions), ``progress.png``
and ``RESULTS.md``: the machine, the targets as ratios measured in this
run, the progress table and every row.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import plot_results as pr  # noqa: E402  (sets matplotlib's backend first)
import matplotlib.pyplot as plt  # noqa: E402
Row = dict[str, Any]
#: The progress runs' operations, in the order drawn.
OPS = ("read", "write", "update")


def plot_throughput(rows: list[Row], out: Path, cores: int) -> None:
    """Operations/s against hosts, every protocol, phase and distribution."""
    fig, axes = plt.subplots(len(pr.DISTS), len(pr.PHASES), figsize=(13, 7), sharex=True)
    for i, dist in enumerate(pr.DISTS):
        for j, phase in enumerate(pr.PHASES):
            pr.plot_rates(axes[i][j], rows, pr.PROTOCOLS, phase, dist,
                          f"{phase}, {dist} keys", "emulated hosts (one rank each)", cores)
    pr.legend_below(fig, axes[0][0])
    runs = max((r.get("repeats", 1) for r in rows), default=1)
    fig.suptitle("mpidht across emulated hosts over TCP (all ranks together" +
                 (f"; lines through the medians of {runs} runs, bars: their range)"
                  if runs > 1 else ")"))
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(out / "throughput.png", dpi=110)
    plt.close(fig)


def load_progress(folder: Path) -> list[Row]:
    rows: list[Row] = []
    for path in sorted(folder.glob("*.json")):
        rows.extend(pr.read_rows(path))
    return rows


def labels(rows: list[Row]) -> list[str]:
    """The MPI settings of the progress runs, in the order first met."""
    return list(dict.fromkeys(r["label"] for r in rows))


def progress_p50(rows: list[Row], label: str, target: str, protocol: str,
                 op: str) -> float | None:
    found = pr.pick(rows, label=label, target=target, protocol=protocol, op=op)
    return found[0]["p50_us"] if found else None


def plot_progress(rows: list[Row], out: Path) -> None:
    """Median time of each operation with the target busy, one panel per
    MPI setting; the idle target's median as a black tick."""
    settings = labels(rows)
    fig, axes = plt.subplots(1, len(settings), figsize=(4.2 * len(settings), 4.5),
                             sharey=True, squeeze=False)
    for ax, label in zip(axes[0], settings):
        names: list[str] = []
        busy: list[float] = []
        idle: list[float] = []
        colours: list[str | None] = []
        for protocol in pr.PROTOCOLS + ("-",):
            for op in OPS + ("raw-get", "raw-lock"):
                b = progress_p50(rows, label, "busy", protocol, op)
                i = progress_p50(rows, label, "idle", protocol, op)
                if b is None or i is None:
                    continue
                names.append(op if protocol == "-" else f"{protocol}\n{op}")
                busy.append(b)
                idle.append(i)
                colours.append(pr.colour(protocol) or "tab:grey")
        xs = range(len(names))
        ax.bar(xs, busy, color=colours, alpha=0.8, label="target computing (5 ms slices)")
        ax.scatter(xs, idle, marker="_", s=200, color="black", zorder=3,
                   label="target waiting in MPI")
        ax.axhline(100, color="tab:red", linewidth=0.8, linestyle=":")
        ax.set_xticks(list(xs), names, fontsize=6, rotation=90)
        ax.set_yscale("log")
        ax.set_title(label, fontsize=9)
        ax.grid(True, axis="y", which="both", alpha=0.3)
    axes[0][0].set_ylabel("µs per call (median)")
    pr.legend_below(fig, axes[0][0], columns=2)
    fig.suptitle("A call whose target computes, 2 emulated hosts (dotted: 100 µs)")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(out / "progress.png", dpi=110)
    plt.close(fig)


def progress_table(rows: list[Row]) -> list[str]:
    out = ["µs per call, median (mean; largest) over the calls of each setting; the "
           "target waits in MPI (idle) or computes in 5 ms slices with one MPI_Test "
           "between them (busy); under a setting named …-progress-Nus it also calls "
           "mpidht_progress after every N µs of computing (the library's fix). The row "
           "`progress` is what one mpidht_progress call costs.", "",
           "| MPI settings | protocol | operation | idle p50 | busy p50 | busy mean | busy max |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for label in labels(rows):
        for protocol in pr.PROTOCOLS + ("-",):
            for op in OPS + ("raw-get", "raw-lock"):
                idle = pr.pick(rows, label=label, target="idle", protocol=protocol, op=op)
                busy = pr.pick(rows, label=label, target="busy", protocol=protocol, op=op)
                if idle and busy:
                    b = busy[0]
                    out.append(f"| {label} | {protocol} | {op} | {idle[0]['p50_us']:.1f} | "
                               f"{b['p50_us']:.1f} | {b['mean_us']:.1f} | {b['max_us']:.1f} |")
        cost = pr.pick(rows, label=label, target="idle", protocol="-", op="progress")
        if cost:
            out.append(f"| {label} | - | progress | {cost[0]['p50_us']:.1f} | – | – | – |")
    return out


def quotient(num: float | None, den: float | None) -> str:
    """num over den as a ratio of throughputs; n/a where either is missing."""
    return pr.ratio(num / den) if num and den else "n/a"


def targets(rows: list[Row], progress: list[Row], hosts: list[int]) -> list[str]:
    top = max(hosts)

    def r(protocol: str, phase: str, dist: str = "uniform") -> float | None:
        return pr.rate(rows, protocol=protocol, phase=phase, distribution=dist, ranks=top)

    def latency(n: int) -> str:
        get = pr.pick(rows, protocol="-", phase="raw-get", distribution="uniform", ranks=n)
        lf = pr.pick(rows, protocol="lockfree", phase="read", distribution="uniform", ranks=n)
        if not (get and lf):
            return "n/a"
        return (f"{lf[0]['p50_us'] / get[0]['p50_us']:.2f}× (p50 {lf[0]['p50_us']:.1f} µs "
                f"against {get[0]['p50_us']:.1f} µs)")

    out = [f"Measured in this run; ratios of throughput at {top} hosts unless stated:", "",
           "| target | wanted | measured |", "| --- | --- | --- |"]
    out += [f"| lock-free read latency / raw MPI_Get + flush, {n} hosts | ≤ 1.5× | "
            f"{latency(n)} |" for n in hosts]
    out += [
        f"| lock-free reads / coarse reads (uniform) | ≥ 3× | "
        f"{quotient(r('lockfree', 'read'), r('coarse', 'read'))} |",
        f"| lock-free writes / coarse writes (uniform) | ≥ 10× | "
        f"{quotient(r('lockfree', 'write'), r('coarse', 'write'))} |",
        f"| lock-free writes / coarse writes (zipf) | ≥ 50× | "
        f"{quotient(r('lockfree', 'write', 'zipf'), r('coarse', 'write', 'zipf'))} |",
    ]
    for label in labels(progress):
        busy = progress_p50(progress, label, "busy", "lockfree", "read")
        idle = progress_p50(progress, label, "idle", "lockfree", "read")
        if busy is not None and idle is not None:
            out.append(f"| lock-free read whose target computes 5 ms slices ({label}) | "
                       f"≤ 100 µs | {busy:.1f} µs median (target in MPI: {idle:.1f} µs) |")
    return out


def main() -> None:
    parser = pr.results_parser(__doc__)
    parser.add_argument("--delay", type=float, default=None,
                        help="the netem delay the hosts had, in ms (default: none)")
    args = pr.parse_results(parser)
    rows = pr.aggregate(pr.load(args.raw_dir))
    if not rows:
        parser.error(f"no results in {args.raw_dir}")
    progress = (load_progress(args.raw_dir / "progress")
                if (args.raw_dir / "progress").is_dir() else [])
    args.out_dir.mkdir(parents=True, exist_ok=True)
    hosts = sorted({r["ranks"] for r in rows})
    plot_throughput(rows, args.out_dir, args.cores)
    pr.plot_latency(rows, args.out_dir, max(hosts), args.cores)
    if progress:
        plot_progress(progress, args.out_dir)
    network = ("the hosts' interfaces delay every packet by "
               f"{args.delay:g} ms (tc netem)" if args.delay else "no added delay")
    text = ["# Benchmark results across emulated hosts", "",
            "Written by `bash bench/run-hosts.sh`; the plots are `throughput.png`, "
            "`latency.png`" + (" and `progress.png`" if progress else "") +
            " beside this file, the raw rows in `raw/`.", "",
            "## Machine", "", *pr.machine()[:3],
            f"- Hosts: network namespaces of this machine (scripts/emulated-hosts.sh), one "
            f"rank each, TCP over veth pairs and a bridge; {network}. Open MPI's one-sided "
            "component between them: osc pt2pt (over the TCP BTL); ranks wait by yielding "
            "(`mpi_yield_when_idle`).",
            *([f"- Oversubscribed: the runs on more than {args.cores} hosts share the "
               f"{args.cores} cores; there an operation also waits for its target to be "
               "scheduled."] if max(hosts) > args.cores else []),
            "", "## Targets", "", *targets(rows, progress, hosts), "",
            *(["## Progress while the target computes", "", *progress_table(progress), ""]
              if progress else []),
            "## All rows", "", *pr.table(rows), ""]
    (args.out_dir / "RESULTS.md").write_text("\n".join(text))


if __name__ == "__main__":
    main()
