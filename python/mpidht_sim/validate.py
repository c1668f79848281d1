"""The POET paper's Table 1, reproduced: for every pair of digits (aqueous
5-8, minerals 4-7), with and without log10, for both roundings
(significant digits and POET's decimal places), a DHT run against the
reference run without the DHT. Usage, under mpiexec:

    python -m mpidht_sim.validate [--config FILE] [--set SECTION.KEY=VALUE ...]
                                  [--out DIR] [--reference RUN_DIR]
                                  [--roundings significant decimal] [--aqueous 5 6 7 8]
                                  [--minerals 4 5 6 7] [--no-log | --only-log]

Without --set, every variant is the full SimDol2D (50 x 50 cells, 300
iterations: about 2 minutes a run on 2 cores, some 2 hours for all 64). The table in
docs/simulator.md ran at a quarter of the side and of the iterations, where the front
crosses a third of the grid and most hits are approximate (about 30
minutes on 2 cores):

    mpiexec -n 2 python -m mpidht_sim.validate --set grid.nx=25 \\
        --set grid.ny=25 --set time.iterations=75

Every run saves every iteration; each variant reports the worst max term
over variables and iterations (the worst cell: the headline, with its
variable and iteration), the worst RMS term, Eq. (2) as the paper defines
it (its maximum over iterations, which is what Table 1 lists), the hit
rate and how much of it is
approximate (hits whose input differs from the one the stored change was
computed from), rejected hits, and the chemistry and whole-run speedups.

Writes DIR/validation.md (the table, Table 1's shape beside it, and
whether log beats raw at every pair, judged by the worst cell, the RMS
term's verdict beside it), DIR/validation.json and DIR/validation.png
(heat maps of the worst cell per pair, the worst RMS term and the hit
rate below it). Each finished
run is kept in DIR/variants/ with its effective configuration, process
count and package size, and reused when the command is run again with
the same settings on as many processes with packages of the same size
(the speedups and hit rates depend on them), so an interrupted sweep
resumes; one kept from another process count or package size runs again,
saying so; the reference run is kept in DIR/reference (or taken from
--reference, an output folder of a run with the DHT off, every iteration
saved and the same physics), and runs again too where it was kept from
another process count or package size (a --reference of another is
refused: the speedups are of its timings).

With --tradeoff the command runs, against the same reference, the
exact-key surrogate at each of --digits (of C, Ca, pH, pe and the
minerals) and the interpolating surrogate at each of --tolerances, and
writes DIR/tradeoff.md, tradeoff.json and tradeoff.png: the worst cell
(the worst RMS term beside it) in the table and plotted against the
chemistry speedup and against the share of cell reactions PHREEQC did
not have to compute (ISAT's error-against-speed curve).

Every table says of each run whether it is within the bounds a result
is held to (measure.CELL_BOUND for the worst cell, measure.RMS_BOUND
for the worst RMS term); a sweep explores settings that break them, so
that does not change the exit status.

With --rewrite DIR the command runs nothing and needs no MPI: it writes
DIR's validation.md and validation.png (or tradeoff.md and tradeoff.png)
again from DIR's validation.json (or tradeoff.json), taking the runs'
setting (grid, iterations, processes, ...) from the Markdown file there;
a JSON file without runs, or not as the command writes them, is refused
(exit status 2) before anything is written.

A run whose fields hold a NaN or inf has the worst term of all, shown as
NaN and named at the top of the report; the command then exits with 1,
after writing everything.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np

from .cli import (Parser, add_config_arguments, checked_on_one, ending_job_on_failure,
                  launcher_rank, parse_overrides)
from .config import ROUNDINGS, Config, ConfigError, load
from .errors import check_path
from .measure import (CELL_BOUND, RMS_BOUND, same_json, compare, field_files, load_fields,
                      physics, settings_differ)
from .surrogate import variable_scales
from .variables import AQUEOUS, MINERALS

if TYPE_CHECKING:
    from mpi4py import MPI

#: Table 1's digits: aqueous (class 1) and minerals (class 2).
AQUEOUS_DIGITS = (5, 6, 7, 8)
MINERAL_DIGITS = (4, 5, 6, 7)
#: Table 1 of the POET paper (De Lucia et al. 2021): the maximum of Eq. (2)
#: over 300 iterations of SimDol2D, (log10, raw), by (aqueous, minerals)
#: digits. Shown beside the measured table.
PAPER_TABLE1 = {
    (5, 4): (1.35e-5, 4.41e-2), (5, 5): (1.16e-5, 5.27e-3), (5, 6): (9.60e-6, 3.43e-4),
    (5, 7): (1.32e-5, 5.25e-5), (6, 4): (4.27e-6, 3.19e-2), (6, 5): (3.59e-6, 2.62e-3),
    (6, 6): (3.89e-6, 7.65e-5), (6, 7): (4.11e-6, 8.01e-6), (7, 4): (2.65e-6, 3.15e-2),
    (7, 5): (2.64e-6, 2.06e-3), (7, 6): (2.33e-6, 3.70e-6), (7, 7): (2.28e-6, 3.63e-6),
    (8, 4): (7.90e-7, 3.15e-2), (8, 5): (8.24e-7, 1.77e-3), (8, 6): (9.03e-7, 1.84e-6),
    (8, 7): (7.11e-7, 1.97e-6),
}


@dataclass(frozen=True)
class Variant:
    rounding: str
    log: bool
    aqueous: int
    minerals: int

    @property
    def name(self) -> str:
        return f"{self.rounding}_{'log' if self.log else 'raw'}_{self.aqueous}_{self.minerals}"

    def overrides(self) -> dict[str, Any]:
        # Table 1 is the paper's exact-key surrogate: no interpolation.
        return {"dht.enabled": True, "interp.enabled": False,
                "dht.log": self.log, "dht.rounding": self.rounding,
                "dht.digits": {**{v: self.aqueous for v in AQUEOUS},
                               **{v: self.minerals for v in MINERALS}}}


#: The trade-off sweep: digits of the exact-key surrogate (C, Ca, pH, pe and
#: the minerals; Cl and Mg as configured) and tolerances of interpolation.
TRADEOFF_DIGITS = (3, 4, 5, 6)
TRADEOFF_TOLERANCES = (5e-6, 1e-5, 2e-5, 5e-5)


@dataclass(frozen=True)
class Point:
    """One run of the trade-off sweep: exact keys at `digits`, or
    interpolation (the configured keys) at `tolerance`."""

    kind: str  # "exact" or "interp"
    value: float

    @property
    def name(self) -> str:
        return f"exact_{int(self.value)}" if self.kind == "exact" else f"interp_{self.value:g}"

    def overrides(self) -> dict[str, Any]:
        if self.kind == "exact":
            return {"dht.enabled": True, "interp.enabled": False,
                    **{f"dht.digits.{v}": int(self.value)
                       for v in ("C", "Ca", "pH", "pe", *MINERALS)}}
        return {"dht.enabled": True, "interp.enabled": True, "interp.tolerance": self.value}


def _without_source(config: Any) -> Any:
    if not isinstance(config, dict):
        return config
    return {k: v for k, v in config.items() if k != "source"}


def _number(value: Any) -> bool:
    """Whether a JSON value is a number (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_reference(folder: Path, cfg: Config) -> Optional[str]:
    """Why folder cannot serve as cfg's reference, or None if it can: its
    summary.json must be a run's (a configuration with the DHT off and the
    same physics, timings per iteration and in all; not stopped early),
    and its saved fields every iteration's, readable and of cfg's grid."""
    path = folder / "summary.json"
    try:
        summary = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError) as e:  # nested beyond Python's depth
        return f"no readable summary.json ({e})"
    if not isinstance(summary, dict):
        return f"{path} is not a run's summary: a JSON {type(summary).__name__}, not an object"
    saved = summary.get("config")
    if not isinstance(saved, dict):
        return f"{path} records no configuration (its \"config\" is no object)"
    dht = saved.get("dht")
    if not isinstance(dht, dict) or not isinstance(dht.get("enabled"), bool):
        return (f"{path} does not record whether the run used the DHT (its "
                "\"config\".\"dht\".\"enabled\" is no true or false)")
    if dht["enabled"]:
        return "it is not a run with the DHT off"
    why = settings_differ(cfg.to_dict(), saved)
    if why is not None:
        return why
    records = summary.get("records")
    if not (isinstance(records, list)
            and all(isinstance(r, dict) and _number(r.get("chemistry_s")) for r in records)
            and _number(summary.get("wall_s"))):
        return (f"{path} records no timings of a run (\"records\" with each iteration's "
                "\"chemistry_s\", and \"wall_s\"), which the speedups are of")
    if summary.get("stopped") is not None:
        return "it stopped before its last iteration"
    its = set(field_files(folder, "npz"))
    if not set(range(1, cfg.iterations + 1)) <= its:
        return "it did not save every iteration (run.save_every = 1)"
    try:
        load_fields(folder, (cfg.ny, cfg.nx))
    except ValueError as e:
        return str(e)
    return None


def measure_variant(result: Any, reference: dict[int, np.ndarray],
                    reference_summary: dict[str, Any], cfg: Config) -> dict[str, Any]:
    """The figures of one finished run (rank 0's result)."""
    comparison = compare(result.saved, reference)
    records = result.records
    hits, misses = sum(r.hits for r in records), sum(r.misses for r in records)
    interpolated = sum(r.interpolated for r in records)
    cells = hits + interpolated + misses
    exact = sum(r.exact_hits for r in records)
    chemistry = sum(r.chemistry_s for r in records)
    ref_chemistry = sum(r["chemistry_s"] for r in reference_summary["records"])
    worst, name, it = comparison.worst
    top, top_name, top_it = comparison.worst_max
    eq2, eq2_it = comparison.eq2
    return {
        "worst_rms_term": worst, "worst_variable": name, "worst_iteration": it,
        "worst_max_term": top, "worst_max_variable": top_name, "worst_max_iteration": top_it,
        "eq2_max": eq2, "eq2_iteration": eq2_it,
        "per_variable": comparison.per_variable(),
        "hit_rate": hits / max(cells, 1),
        "interpolated_share": interpolated / max(cells, 1),
        "computed": misses,
        "phreeqc_ratio": cells / max(misses, 1),
        "approximate_share": (hits - exact) / max(hits, 1),
        "rejected": sum(r.rejected for r in records),
        "verified_max_relative": _verified_worst(result, cfg),
        "chemistry_speedup": ref_chemistry / max(chemistry, 1e-12),
        "wall_speedup": float(reference_summary["wall_s"]) / max(result.wall_s, 1e-12),
    }


def _verified_worst(result: Any, cfg: Config) -> Optional[float]:
    """The worst verified error of accepted predictions, relative to its
    variable's scale (None without interpolation or verified cells)."""
    v = result.verification
    if v is None or v.count == 0:
        return None
    return float((v.max_abs / variable_scales(cfg)).max())


#: Worst terms within this factor of each other count as a tie.
TIE = 1.01


def log_over_raw(log: float, raw: float) -> float:
    """The worst term with log10 over the one without (1 where both are 0).
    A term that is NaN (values that are not finite) is worse than any
    number: 0 where only raw's is, inf where only log's is, 1 where both
    are."""
    if math.isnan(log) or math.isnan(raw):
        return 1.0 if math.isnan(log) and math.isnan(raw) else (
            math.inf if math.isnan(log) else 0.0)
    if raw > 0:
        return log / raw
    return 1.0 if log == 0 else math.inf


def cell_term(row: dict[str, Any]) -> float:
    """A run's worst cell (its worst max term), the figure its verdicts are
    on; NaN where either of its worst terms is NaN (values that are not
    finite)."""
    if math.isnan(row["worst_rms_term"]) or math.isnan(row["worst_max_term"]):
        return math.nan
    return float(row["worst_max_term"])


def within_bounds(row: dict[str, Any]) -> str:
    """Whether a run is within the bounds, in a few words: "yes", or the
    bounds it exceeds (NaN exceeds both)."""
    over = [what for what, value, bound in (
        ("cell", row["worst_max_term"], CELL_BOUND), ("RMS", row["worst_rms_term"], RMS_BOUND))
        if not value <= bound]
    return "yes" if not over else "no: " + " and ".join(over)


def not_finite(rows: dict[str, dict[str, Any]]) -> list[str]:
    """The runs among rows whose fields held values that are not finite
    (a worst term is NaN), each named with the variable and iteration
    where one first appears."""
    return [f"{name} ({r['worst_variable']}, iteration {r['worst_iteration']})"
            for name, r in rows.items() if math.isnan(cell_term(r))]


def _not_finite_lines(rows: dict[str, dict[str, Any]]) -> list[str]:
    bad = not_finite(rows)
    if not bad:
        return []
    return [f"**NOT FINITE**: NaN or inf in the fields of {len(bad)} run(s), the worst of "
            f"all terms (shown as NaN): {', '.join(bad)}.", ""]


def log_verdict(ratios: Sequence[float]) -> str:
    """Whether log10 beats raw over the pairs' log/raw ratios; ratios within
    TIE of 1 are ties."""
    n = len(ratios)
    log_wins = sum(r < 1 / TIE for r in ratios)
    raw_wins = sum(r > TIE for r in ratios)
    ties = n - log_wins - raw_wins
    if log_wins == n:
        return "log beats raw at every pair, as in Table 1"
    if raw_wins == n:
        return "raw beats log at every pair, unlike Table 1"
    if ties == n:
        return f"log and raw are equal (within {TIE - 1:.0%}) at every pair, unlike Table 1"
    return (f"log beats raw at {log_wins} of {n} pairs, raw beats log at {raw_wins}, "
            f"{ties} equal within {TIE - 1:.0%}")


def _fmt(x: Optional[float]) -> str:
    if x is None:
        return "-"
    return "NaN" if math.isnan(x) else ("inf" if math.isinf(x) else f"{x:.2e}")


#: The setting line of validation.md (its values from a Config, or read
#: back from a validation.md by --rewrite).
TABLE1_SETTING = re.compile(
    r"^(\d+) x (\d+) cells, (\d+) iterations, time step (\S+) s, (\d+) processes, "
    r"DHT protocol (\S+), floor (\S+); ", re.MULTILINE)
#: The setting of tradeoff.md, likewise.
TRADEOFF_SETTING = re.compile(
    r"^(\d+) x (\d+) cells, (\d+) iterations, (\d+) processes, packages of (\d+) cells; "
    r"(?:.*?)\(([\w-]+) error estimate\)", re.MULTILINE)


def table1_setting(cfg: Config, processes: int) -> tuple[str, ...]:
    """The setting validation.md states: grid, iterations, time step,
    processes, protocol and floor, as text."""
    return (str(cfg.nx), str(cfg.ny), str(cfg.iterations), f"{cfg.time_step:g}",
            str(processes), cfg.dht.protocol, f"{cfg.dht.floor:g}")


def tradeoff_setting(cfg: Config, processes: int) -> tuple[str, ...]:
    """The setting tradeoff.md states: grid, iterations, processes,
    package size and the interpolation's error estimate, as text."""
    from .driver import run_package_size

    return (str(cfg.nx), str(cfg.ny), str(cfg.iterations), str(processes),
            str(run_package_size(cfg, processes)), cfg.interp.estimate)


def _bounds_note() -> str:
    return (f"Within bounds: whether the worst cell is within {CELL_BOUND:g} and the worst "
            f"RMS term within {RMS_BOUND:g} (the bounds a result is held to; a sweep "
            "explores settings that break them).")


def report(rows: dict[str, dict[str, Any]], variants: list[Variant],
           setting: tuple[str, ...]) -> str:
    """validation.md, for the setting table1_setting gives."""
    nx, ny, iterations, step, processes, protocol, floor = setting
    text = [
        "# Table 1 of the POET paper, reproduced", "", *_not_finite_lines(rows),
        f"{nx} x {ny} cells, {iterations} iterations, time step {step} s, {processes} "
        f"processes, DHT protocol {protocol}, floor {floor}; every iteration compared with "
        "the run without the DHT.",
        "Worst cell: the largest difference in one cell over its variable's maximum, over "
        "all variables and iterations (the headline, and what the verdicts below judge). "
        "Worst RMS term: the largest RMS difference over a variable's maximum (beside it). "
        "Eq. (2): the paper's geometric mean of the RMS terms, its maximum over iterations "
        "(what Table 1 lists); it is 0 where one variable is reproduced exactly. "
        "Approximate: the share of hits whose input differed from the one the stored "
        "change was computed from. " + _bounds_note(), "",
        "| rounding | log10 | aqueous | minerals | worst cell (variable, iteration) | "
        "worst RMS term (variable, iteration) | within bounds | Eq. (2) | hit rate | "
        "approximate | rejected | chemistry speedup |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for v in variants:
        r = rows[v.name]
        text.append(
            f"| {v.rounding} | {'yes' if v.log else 'no'} | {v.aqueous} | {v.minerals} | "
            f"{_fmt(r['worst_max_term'])} ({r['worst_max_variable']}, "
            f"{r['worst_max_iteration']}) | "
            f"{_fmt(r['worst_rms_term'])} ({r['worst_variable']}, {r['worst_iteration']}) | "
            f"{within_bounds(r)} | {_fmt(r['eq2_max'])} | {r['hit_rate']:.1%} | "
            f"{r['approximate_share']:.0%} | {r['rejected']} | "
            f"{r['chemistry_speedup']:.1f}x |")
    for rounding in sorted({v.rounding for v in variants}):
        pairs = sorted({(v.aqueous, v.minerals) for v in variants if v.rounding == rounding})
        both = [p for p in pairs if all(Variant(rounding, log, *p).name in rows
                                        for log in (True, False))]
        if not both:
            continue
        text += ["", f"## {rounding}: Table 1's shape (worst cell; worst RMS term and "
                 "Eq. (2) in brackets)", "",
                 "The paper's columns are its Table 1 (the maximum of Eq. (2), SimDol2D at "
                 "50 x 50 and 300 iterations; the paper speaks of significant digits, "
                 "POET's code truncates decimal places), for the shape only.", "",
                 "| aqueous | minerals | log10 | raw | log / raw (worst cell) | "
                 "log / raw (RMS) | paper: log10 | paper: raw |",
                 "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        ratios, rms_ratios = [], []
        for a, m in both:
            lg, raw = (rows[Variant(rounding, log, a, m).name] for log in (True, False))
            ratio = log_over_raw(cell_term(lg), cell_term(raw))
            rms_ratio = log_over_raw(lg["worst_rms_term"], raw["worst_rms_term"])
            ratios.append(ratio)
            rms_ratios.append(rms_ratio)
            paper = PAPER_TABLE1.get((a, m), (None, None))
            text.append(
                f"| {a} | {m} | {_fmt(lg['worst_max_term'])} ({_fmt(lg['worst_rms_term'])}; "
                f"{_fmt(lg['eq2_max'])}) | {_fmt(raw['worst_max_term'])} "
                f"({_fmt(raw['worst_rms_term'])}; {_fmt(raw['eq2_max'])}) | {ratio:.3g} | "
                f"{rms_ratio:.3g} | {_fmt(paper[0])} | {_fmt(paper[1])} |")
        text += ["", f"**{rounding}: {log_verdict(ratios)}** (worst cell, log over raw: "
                 f"{min(ratios):.3g} to {max(ratios):.3g}). By the worst RMS term beside "
                 f"it: {log_verdict(rms_ratios)} ({min(rms_ratios):.3g} to "
                 f"{max(rms_ratios):.3g})."]
    return "\n".join(text) + "\n"


def heat_maps(rows: dict[str, dict[str, Any]], variants: list[Variant], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    panels = sorted({(v.rounding, v.log) for v in variants}, key=lambda p: (p[0], not p[1]))
    aq = sorted({v.aqueous for v in variants})
    mi = sorted({v.minerals for v in variants})
    values = [cell_term(rows[v.name]) for v in variants
              if v.name in rows and 0 < cell_term(rows[v.name]) < math.inf]
    vmax = max(values, default=1e-2)
    norm = LogNorm(vmin=min(values, default=1e-8), vmax=vmax)
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels) + 1.2, 3.9),
                             squeeze=False)
    image = None
    for ax, (rounding, log) in zip(axes[0], panels):
        grid = np.full((len(aq), len(mi)), np.nan)
        for i, a in enumerate(aq):
            for j, m in enumerate(mi):
                r = rows.get(Variant(rounding, log, a, m).name)
                if r is None:
                    continue
                worst = cell_term(r)
                grid[i, j] = worst if 0 < worst < math.inf else np.nan
                ax.text(j, i, f"{_fmt(worst)}\n({_fmt(r['worst_rms_term'])})\n"
                        f"{r['hit_rate']:.0%}", ha="center", va="center", fontsize=6.5,
                        color="white" if grid[i, j] < vmax / 100 else "black")
        image = ax.imshow(grid, norm=norm, cmap="viridis", origin="lower")
        ax.set_xticks(range(len(mi)), [str(m) for m in mi])
        ax.set_yticks(range(len(aq)), [str(a) for a in aq])
        ax.set_xlabel("mineral digits")
        ax.set_ylabel("aqueous digits")
        ax.set_title(f"{rounding}, {'log10' if log else 'raw'}", fontsize=10)
    if image is not None:
        fig.colorbar(image, ax=axes[0].tolist(),
                     label="worst cell (worst RMS term in brackets, hit rate below)")
    fig.suptitle("Worst cell against the run without the DHT, over its variable's maximum",
                 fontsize=11)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def tradeoff_report(rows: dict[str, dict[str, Any]], points: list[Point],
                    setting: tuple[str, ...]) -> str:
    """tradeoff.md: error against speed, for exact keys and interpolation,
    for the setting tradeoff_setting gives."""
    nx, ny, iterations, processes, package, estimate = setting
    text = [
        "# Error against chemistry speedup: exact keys and interpolation", "",
        *_not_finite_lines(rows),
        f"{nx} x {ny} cells, {iterations} iterations, {processes} processes, "
        f"packages of {package} cells; "
        "every iteration compared with the run without the DHT. Exact keys: the digits of "
        "C, Ca, pH, pe and the minerals (Cl and Mg as configured), no interpolation. "
        f"Interpolation: the configured keys and checks ({estimate} error "
        f"estimate), at each tolerance. "
        "PHREEQC cells: cell reactions over the ones PHREEQC computed (what the surrogate "
        "saves, independent of the machine's load); speedups are of time against the "
        "reference run's. Worst cell: the largest difference in one cell over its "
        "variable's maximum, over all variables and iterations (the headline); the worst "
        "RMS term beside it. Verified worst: the largest error of the accepted predictions "
        "PHREEQC also computed (a sample), over its variable's scale. " + _bounds_note(), "",
        "| surrogate | setting | worst cell (variable, iteration) | worst RMS term "
        "(variable, iteration) | within bounds | hits | interpolated | PHREEQC cells | "
        "chemistry speedup | whole run | verified worst |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for p in points:
        r = rows[p.name]
        setting_ = f"{int(p.value)} digits" if p.kind == "exact" else f"tolerance {p.value:g}"
        verified = r.get("verified_max_relative")
        text.append(
            f"| {'exact keys' if p.kind == 'exact' else 'interpolation'} | {setting_} | "
            f"{_fmt(r['worst_max_term'])} ({r['worst_max_variable']}, "
            f"{r['worst_max_iteration']}) | {_fmt(r['worst_rms_term'])} "
            f"({r['worst_variable']}, {r['worst_iteration']}) | {within_bounds(r)} | "
            f"{r['hit_rate']:.1%} | "
            f"{r['interpolated_share']:.1%} | {r['phreeqc_ratio']:.1f}x | "
            f"{r['chemistry_speedup']:.1f}x | {r['wall_speedup']:.1f}x | "
            f"{_fmt(verified)} |")
    return "\n".join(text) + "\n"


def tradeoff_figure(rows: dict[str, dict[str, Any]], points: list[Point], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plotted = False
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 4.2))
    for kind, label, colour, marker in (("exact", "exact keys (digits)", "tab:blue", "o"),
                                        ("interp", "interpolation (tolerance)", "tab:orange",
                                         "s")):
        # Runs that were not finite are named on the figure, not plotted.
        mine = [p for p in points if p.kind == kind and p.name in rows
                and not math.isnan(cell_term(rows[p.name]))]
        plotted = plotted or bool(mine)
        for ax, x_key in zip(axes, ("chemistry_speedup", "phreeqc_ratio")):
            xs = [rows[p.name][x_key] for p in mine]
            ys = [max(cell_term(rows[p.name]), 1e-12) for p in mine]
            rms = [max(rows[p.name]["worst_rms_term"], 1e-12) for p in mine]
            ax.plot(xs, ys, marker=marker, color=colour, label=f"{label}: worst cell")
            ax.plot(xs, rms, marker=marker, color=colour, linestyle=":", linewidth=0.9,
                    markerfacecolor="none", label=f"{label}: worst RMS term")
            for p, x, y in zip(mine, xs, ys):
                ax.annotate(f"{int(p.value)}" if kind == "exact" else f"{p.value:g}", (x, y),
                            textcoords="offset points", xytext=(4, 4), fontsize=7)
    for ax, xlabel in zip(axes, ("chemistry time: reference / run",
                                 "cell reactions / cells PHREEQC computed")):
        ax.axhline(CELL_BOUND, color="black", linestyle="--", linewidth=0.8)
        ax.axhline(RMS_BOUND, color="grey", linestyle=":", linewidth=0.8)
        if not plotted:  # every run not finite: log axes need limits of their own
            ax.set_xlim(1, 100)
            ax.set_ylim(1e-8, 1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("worst cell (solid), worst RMS term (dotted)")
        ax.grid(True, which="both", linewidth=0.3)
    axes[0].legend(loc="upper left", fontsize=7)
    axes[0].set_title("against chemistry time", fontsize=10)
    axes[1].set_title("against PHREEQC calls (load-independent)", fontsize=10)
    fig.suptitle(f"Error against speedup, over all variables and iterations: the bounds are "
                 f"{CELL_BOUND:g} for the worst cell (dashed), {RMS_BOUND:g} for the worst "
                 "RMS term (dotted)", fontsize=10)
    fig.tight_layout()
    bad = not_finite({p.name: rows[p.name] for p in points if p.name in rows})
    if bad:
        fig.subplots_adjust(bottom=0.2)
        fig.text(0.5, 0.02, f"NOT FINITE, not plotted: {', '.join(bad)}", ha="center",
                 color="red", fontsize=9, wrap=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = Parser(
        prog="python -m mpidht_sim.validate", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_config_arguments(parser)
    parser.add_argument("--out", "--output", type=Path, default=Path("sim-validation"),
                        help="output folder (default sim-validation)")
    parser.add_argument("--reference", type=Path, metavar="RUN_DIR",
                        help="a finished run with the DHT off, every iteration saved, to use "
                             "as the reference instead of running one")
    parser.add_argument("--roundings", nargs="+", choices=ROUNDINGS, default=list(ROUNDINGS))
    parser.add_argument("--aqueous", nargs="+", type=int, default=list(AQUEOUS_DIGITS),
                        help="aqueous digits (default 5 6 7 8)")
    parser.add_argument("--minerals", nargs="+", type=int, default=list(MINERAL_DIGITS),
                        help="mineral digits (default 4 5 6 7)")
    logs = parser.add_mutually_exclusive_group()
    logs.add_argument("--no-log", action="store_true", help="raw values only")
    logs.add_argument("--only-log", action="store_true", help="log10 only")
    parser.add_argument("--tradeoff", action="store_true",
                        help="instead of Table 1: error against speedup for exact keys "
                             "(--digits) and interpolation (--tolerances); writes "
                             "tradeoff.md, tradeoff.json and tradeoff.png")
    parser.add_argument("--digits", nargs="+", type=int, default=list(TRADEOFF_DIGITS),
                        help="--tradeoff: exact-key digits (default 3 4 5 6)")
    parser.add_argument("--tolerances", nargs="+", type=float,
                        default=list(TRADEOFF_TOLERANCES),
                        help="--tradeoff: interpolation tolerances (default "
                             + " ".join(f"{t:g}" for t in TRADEOFF_TOLERANCES) + ")")
    parser.add_argument("--rewrite", type=Path, metavar="DIR",
                        help="run nothing: write DIR's validation.md and .png (or "
                             "tradeoff.md and .png) again from its validation.json (or "
                             "tradeoff.json); no MPI")
    args = parser.parse_args(argv)
    if args.rewrite is not None:
        try:
            check_path(args.rewrite, "--rewrite")
        except ConfigError as e:
            print(f"mpidht_sim.validate: {e}", file=sys.stderr)
            return 2
        try:
            for line in rewrite(args.rewrite):
                print(line)
        except ValueError as e:
            print(f"mpidht_sim.validate: --rewrite {args.rewrite}: {e}", file=sys.stderr)
            return 2
        return 0
    log_choices = [False] if args.no_log else [True] if args.only_log else [True, False]
    variants = [Variant(r, lg, a, m) for r in args.roundings for lg in log_choices
                for a in args.aqueous for m in args.minerals]
    points = ([Point("exact", d) for d in args.digits]
              + [Point("interp", t) for t in args.tolerances])
    runs: Sequence[Variant | Point] = points if args.tradeoff else variants
    try:
        overrides = {**parse_overrides(args.set), "run.save_every": 1,
                     "dht.restore": "", "dht.dump": False}
        reference_cfg = load(args.config, {**overrides, "dht.enabled": False,
                                           "run.output_dir": str(args.out / "reference"),
                                           "run.overwrite": True})
        if reference_cfg.stop_after:
            # A variant stopped early would show the speedup of part of a run.
            raise ConfigError("run.stop_after must be 0: every run of a sweep goes to its last "
                              f"iteration, got {reference_cfg.stop_after:g}")
        configs = {v.name: load(args.config, {**overrides, **v.overrides()}) for v in runs}
        if args.reference is not None:
            why = check_reference(args.reference, reference_cfg)
            if why is not None:
                raise ConfigError(f"--reference {args.reference}: {why}")
    except ConfigError as e:
        if launcher_rank() == 0:  # every rank found it; one says so
            print(f"mpidht_sim.validate: configuration error: {e}", file=sys.stderr)
        return 2

    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    return ending_job_on_failure("mpidht_sim.validate", comm, partial(
        _validate, args, runs, points, variants, configs, reference_cfg, comm))


def _validate(args: argparse.Namespace, runs: Sequence[Variant | Point], points: list[Point],
              variants: list[Variant], configs: dict[str, Config], reference_cfg: Config,
              comm: MPI.Intracomm) -> int:
    """main's runs and reports from checked settings, collective over
    comm; its exit status."""
    from .driver import run
    from .waiting import barrier, bcast
    from .output import check_folders, finish, job, start

    rank = comm.Get_rank()
    # --out is checked as the simulator checks its output folder, by the
    # process that writes there, before anything is run.
    problem = checked_on_one(comm, partial(check_folders, reference_cfg))
    if problem is not None:
        if rank == 0:
            print(f"mpidht_sim.validate: configuration error: --out {args.out}: {problem}",
                  file=sys.stderr)
        return 2
    ref_dir = args.reference or args.out / "reference"
    # The speedups are of the reference's timings: it must have run as the
    # variants do, on as many processes with packages of the same size.
    conditions = job(reference_cfg, comm.Get_size())
    elsewhere = bcast(comm, reference_job_differs(ref_dir, conditions) if rank == 0 else None)
    if args.reference is not None and elsewhere is not None:
        if rank == 0:
            print(f"mpidht_sim.validate: configuration error: --reference {args.reference}: "
                  f"it is {elsewhere}, this one runs on {conditions['processes']} processes, "
                  f"packages of {conditions['package_size']} cells: its timings would not "
                  "compare (make the reference so, or pass no --reference)",
                  file=sys.stderr)
        return 2
    # One process decides (and then writes there): every process agrees.
    fresh = bcast(comm, args.reference is None and (
        elsewhere is not None or check_reference(ref_dir, reference_cfg) is not None))
    if fresh:
        if rank == 0:
            again = f" again: kept from {elsewhere}" if elsewhere else ""
            print(f"reference run (DHT off) into {ref_dir}{again}", flush=True)
            start(reference_cfg)
        result = run(reference_cfg, comm)
        if rank == 0:
            finish(result, reference_cfg, job(reference_cfg, comm.Get_size()), plots=False)
    barrier(comm)
    reference = load_fields(ref_dir) if rank == 0 else {}
    reference_summary = json.loads((ref_dir / "summary.json").read_text()) if rank == 0 else {}
    store = args.out / "variants"
    rows: dict[str, dict[str, Any]] = {}
    for v in runs:
        cfg = configs[v.name]
        effective = cfg.to_dict()
        # The figures depend on the process count and the package size too
        # (speedups, hit rates): a variant kept from other ones runs again.
        conditions = job(cfg, comm.Get_size())
        cached = store / f"{v.name}.json"
        reuse, why = False, ""
        if rank == 0 and cached.is_file():
            saved = json.loads(cached.read_text())
            # Where the config file lies does not change the run.
            reuse = same_json(_without_source(saved.get("config")),
                              _without_source(effective)) and same_json(
                saved.get("reference"), physics(reference_summary["config"]))
            if reuse and not same_json(saved.get("job"), conditions):
                reuse, why = False, f" again: kept from {_conditions(saved.get('job'))}"
            if reuse:
                rows[v.name] = saved["figures"]
        if bcast(comm, reuse):
            continue
        if rank == 0:
            print(f"{v.name}: running{why}", flush=True)
        result = run(cfg, comm)
        if rank != 0:
            continue
        rows[v.name] = measure_variant(result, reference, reference_summary, cfg)
        store.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps({"config": effective,
                                      "reference": physics(reference_summary["config"]),
                                      "job": conditions, "figures": rows[v.name]}, indent=1))
        r = rows[v.name]
        print(f"{v.name}: worst cell {_fmt(r['worst_max_term'])} ({r['worst_max_variable']}), "
              f"worst RMS term {_fmt(r['worst_rms_term'])} ({r['worst_variable']}), "
              f"Eq. (2) {_fmt(r['eq2_max'])}, hit rate {r['hit_rate']:.1%} "
              f"({r['approximate_share']:.0%} approximate), interpolated "
              f"{r['interpolated_share']:.1%}, PHREEQC cells {r['phreeqc_ratio']:.1f}x",
              flush=True)
    if rank == 0:
        _write_reports(args, rows, points, variants, configs, comm.Get_size())
    # Every process exits alike: 1 where a run's fields were not finite.
    bad = bcast(comm, not_finite(rows) if rank == 0 else None)
    if bad:
        if rank == 0:
            print(f"mpidht_sim.validate: values that are not finite in: {', '.join(bad)}",
                  file=sys.stderr)
        return 1
    return 0


def reference_job_differs(folder: Path, conditions: dict[str, int]) -> Optional[str]:
    """The process count and package size folder's run took, in words, where
    they are not ``conditions`` (``output.job``) or its summary.json does
    not record them; None where they are, or where it holds no readable
    summary (``check_reference`` says why)."""
    try:
        summary = json.loads((folder / "summary.json").read_text())
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(summary, dict):
        return None
    kept = {k: summary.get(k) for k in conditions}
    if same_json(kept, conditions):
        return None
    return _conditions(kept if all(isinstance(v, int) for v in kept.values()) else None)


def _conditions(kept: Any) -> str:
    """The process count and package size a kept run (a variant, the
    reference) ran with, in words (``output.job``)."""
    if not isinstance(kept, dict):
        return "a run that did not record its process count and package size"
    return (f"a run on {kept.get('processes')} processes, packages of "
            f"{kept.get('package_size')} cells")


def _write_reports(args: argparse.Namespace, rows: dict[str, dict[str, Any]],
                   points: list[Point], variants: list[Variant], configs: dict[str, Config],
                   processes: int) -> None:
    """The tables, JSON and figures of a finished sweep (rank 0)."""
    args.out.mkdir(parents=True, exist_ok=True)
    first = next(iter(configs.values()))
    if args.tradeoff:
        text = tradeoff_report(rows, points, tradeoff_setting(first, processes))
        (args.out / "tradeoff.md").write_text(text)
        (args.out / "tradeoff.json").write_text(json.dumps(
            {p.name: {"kind": p.kind, "value": p.value, **rows[p.name]} for p in points},
            indent=1))
        tradeoff_figure(rows, points, args.out / "tradeoff.png")
        print(text)
        print(f"written: {args.out / 'tradeoff.md'}, tradeoff.json, tradeoff.png")
        return
    text = report(rows, variants, table1_setting(first, processes))
    (args.out / "validation.md").write_text(text)
    (args.out / "validation.json").write_text(json.dumps(
        {v.name: {"rounding": v.rounding, "log": v.log, "aqueous": v.aqueous,
                  "minerals": v.minerals, **rows[v.name]} for v in variants}, indent=1))
    heat_maps(rows, variants, args.out / "validation.png")
    print(text)
    print(f"written: {args.out / 'validation.md'}, validation.json, validation.png")


def rewrite(folder: Path) -> list[str]:
    """Writes folder's validation.md and validation.png again from its
    validation.json, or its tradeoff.md and tradeoff.png from its
    tradeoff.json, the setting read from the Markdown file there; what it
    wrote, in words. Raises ValueError where there is neither, or a file
    cannot be read as the command writes it."""
    for kind, setting_re in (("validation", TABLE1_SETTING), ("tradeoff", TRADEOFF_SETTING)):
        data_path, md_path = folder / f"{kind}.json", folder / f"{kind}.md"
        if not data_path.is_file():
            continue
        try:
            data = json.loads(data_path.read_text())
            if not isinstance(data, dict) or not data:
                raise ValueError(f"{data_path} holds no runs (an object of runs by name, "
                                 f"as the command writes it), it holds {data!r:.40}")
            try:
                markdown = md_path.read_text()
            except OSError as e:
                raise ValueError(f"{md_path} cannot be read, which states the setting of "
                                 f"{data_path}: {e.strerror or e}") from None
            found = setting_re.search(markdown)
            if found is None:
                raise ValueError(f"{md_path} states no setting as the command writes it")
            setting = found.groups()
            # The report is made and the figure written before the
            # Markdown file is replaced: a JSON file that cannot be read
            # leaves validation.md (tradeoff.md) as it was.
            if kind == "validation":
                variants = [Variant(r["rounding"], bool(r["log"]), int(r["aqueous"]),
                                    int(r["minerals"])) for r in data.values()]
                rows = {v.name: data[v.name] for v in variants}
                text = report(rows, variants, setting)
                heat_maps(rows, variants, folder / "validation.png")
            else:
                points = [Point(r["kind"], float(r["value"])) for r in data.values()]
                rows = {p.name: data[p.name] for p in points}
                text = tradeoff_report(rows, points, setting)
                tradeoff_figure(rows, points, folder / "tradeoff.png")
            md_path.write_text(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"{data_path} cannot be read as the command writes it: not "
                             f"JSON: {e}") from None
        except (OSError, KeyError, TypeError, AttributeError, RecursionError) as e:
            raise ValueError(f"{data_path} cannot be read as the command writes it: "
                             f"{type(e).__name__}: {e}") from None
        return [f"written from {data_path}: {md_path}, {folder / (kind + '.png')}"]
    raise ValueError("holds neither validation.json nor tradeoff.json")


if __name__ == "__main__":
    raise SystemExit(main())
