"""Validation against PHREEQC's own TRANSPORT: the same 1-D column run by
the simulator and by PHREEQC, compared cell by cell. Usage (MPI optional;
under mpiexec the simulator runs with its workers):

    python -m mpidht_sim.column [--cells 50] [--steps 100] [--time-step 1000]
                                [--config FILE] [--set SECTION.KEY=VALUE] [--out DIR]
                                [--tolerance 1e-3] [--dht]

The column has ``cells`` reacting cells at Courant number 1: the flow is
set so that one time step moves exactly one pore volume, and the DHT is
off; with ``--dht`` the simulator runs with its surrogate (the DHT and
the interpolation as configured, from an empty table, saving nothing),
which checks the surrogate's results against PHREEQC's. Both sides take
the waters, the kinetics and the database from the configuration
(default: SimDol2D's). ``--set`` may change those, not what the column
sets itself or does without (time.time_step, time.iterations, and the
sections grid, flow, run, dht and interp: its flow is set for Courant
number 1, whatever the cell size, porosity, permeability and viscosity;
with --dht the sections dht and interp may be set, but for dht.enabled,
dht.restore and dht.dump): such a key is refused. An --out where no
folder can be made or written in, or where column.md, column.json or
column.png is a folder or another file that is no regular file, is
refused too, before anything runs (a regular file of those names, or a
link, is replaced; what a link points to is left alone).

How the ends match:

- **Inlet.** The simulator's first cell is a fixed cell that holds the
  injected water and never reacts. PHREEQC's inflow is SOLUTION 0 (the
  injected water, defined and equilibrated the same way), and its column
  gets one cell more in front, with no reactants, that plays the fixed
  cell: TRANSPORT reacts the first cell behind a flux inlet for less than
  a full shift (measured: that cell's calcite dissolves at half the rate
  of a batch reaction over the same time), so no reacting cell may sit
  there. A first TRANSPORT of one shift, before any cell has reactants,
  fills that cell with the injected water and moves the initial water
  one cell on, reacting nothing (a first shift with the reactants in
  place reacted every cell once more than the simulator, which showed
  wherever the initial water is not in equilibrium with the minerals:
  initial dolomite, another pore water); then the reacting cells get
  their reactants, and every shift of a second TRANSPORT moves every
  water one cell downstream and reacts every reacting cell for one full
  time step, as a step of the simulator does. So PHREEQC's cell k + 1
  after the second TRANSPORT's shift s is the simulator's reacting cell k
  after step s. (PHREEQC's ADVECTION keyword, without the extra cell,
  gives the same numbers, also with such waters.)
- **Outlet.** The simulator's last cell is a fixed cell that receives what
  leaves; PHREEQC's "flux" boundary at the column's end does the same.

The two are compared after every step; reported per variable, as the worst over the
steps: max |difference| / max |PHREEQC| (the headline is the worst
variable and step) and the RMS difference over the same maximum. Exits 1
if the worst exceeds ``--tolerance`` or a value of either is not finite
(NaN or inf), 2 on bad settings. column.json records that verdict and
bound (``passed``, ``tolerance``; ``bounds``: the cell bound is the
tolerance, the RMS bound null, as no RMS term is judged).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np
import numpy.typing as npt

from . import engine as phreeqc
from .chemistry import RATES, reactants
from .cli import (Parser, add_config_arguments, checked_on_one, ending_job_on_failure,
                  launcher_rank, parse_overrides)
from .config import MAX_CELLS, Config, load
from .errors import ConfigError
from .measure import Comparison, compare
from .variables import VARIABLES
from .waters import phreeqc_input

Array = npt.NDArray[np.float64]

#: PHREEQC's selected-output columns, in the order of VARIABLES.
_COLUMNS = ("C(mol/kgw)", "Ca(mol/kgw)", "Cl(mol/kgw)", "Mg(mol/kgw)", "pH", "pe",
            "k_Calcite", "k_Dolomite")
#: The settings the column sets itself, and why: a --set of one (or of an
#: entry of one) is refused, not dropped.
_SETS = {"grid.nx": "it is one cell wide",
         "grid.ny": "set by --cells (and the two fixed cells)",
         "time.time_step": "set by --time-step",
         "time.iterations": "set by --steps",
         "run": "it saves nothing (--out writes its report) and sets its packages "
                "from --cells",
         "flow.fixed_pressure": "its ends are set for Courant number 1",
         "dht": "it runs without the DHT (--dht runs it with)",
         "interp": "it runs without the DHT (--dht runs it with)",
         # Whatever these are, the flow is set for Courant number 1: they
         # would change nothing compared.
         "grid": "its flow is set for Courant number 1 whatever the cell size, porosity "
                 "and permeability",
         "flow": "its flow is set for Courant number 1 whatever the viscosity"}
#: What the column sets itself with --dht, where dht and interp may be set.
_SETS_WITH_DHT = {
    **{k: why for k, why in _SETS.items() if k not in ("dht", "interp")},
    "dht.enabled": "set by --dht",
    "dht.restore": "it starts from an empty table",
    "dht.dump": "it saves nothing (--out writes its report)"}


@dataclass(frozen=True)
class ColumnResult:
    cells: int
    steps: int
    time_step: float
    simulator: dict[int, Array]   # step -> cells x variables
    phreeqc: dict[int, Array]     # the same from PHREEQC's TRANSPORT
    comparison: Comparison        # max and RMS terms per variable and step
    #: With the DHT (--dht): the simulator's cell reactions and how many of
    #: them PHREEQC computed; None without it.
    surrogate: Optional[dict[str, int]] = None


def column_config(cells: int, steps: int, time_step: float, path: Optional[Path] = None,
                  overrides: Optional[dict[str, Any]] = None, dht: bool = False) -> Config:
    """A 1 x (cells + 2) column at Courant number 1: an injecting fixed cell,
    ``cells`` reacting cells, an outlet fixed cell; DHT off, or with dht on
    as configured, from an empty table, saving nothing."""
    for key in overrides or {}:
        for own, why in (_SETS_WITH_DHT if dht else _SETS).items():
            if key == own or key.startswith(own + "."):
                raise ConfigError(f"cannot override {key!r} for the column: {why}")
    base = load(path, overrides)
    faces = cells + 1  # between the two fixed cells, all in series
    pore_volume = base.cell_size ** 2 * base.porosity
    # Each face carries q = permeability / viscosity * dp (unit thickness,
    # square cells: area / distance = 1); one pore volume per time step.
    dp = faces * pore_volume / time_step * base.viscosity / base.permeability
    outlet = 1.0e5
    if not (math.isfinite(outlet + dp) and outlet + dp > outlet):
        raise ConfigError(f"--time-step {time_step:g} s: Courant number 1 needs a pressure "
                          f"difference of {dp:g} Pa over the column, which cannot be held "
                          f"above its outlet's {outlet:g} Pa (from grid.cell_size, "
                          "grid.porosity, grid.permeability and flow.viscosity); choose "
                          "another time step")
    cfg = load(path, {
        **(overrides or {}),
        "grid.nx": 1, "grid.ny": cells + 2, "time.time_step": time_step,
        "time.iterations": steps, "run.save_every": 1, "dht.enabled": dht,
        "dht.restore": "", "dht.dump": False,
        "run.package_size": max(1, min(cells, 64)),
        "flow.fixed_pressure": [{"cell": [0, 0], "pressure": outlet + dp, "water": "injected"},
                                {"cell": [0, -1], "pressure": outlet}],
    })
    from .flow import solve_flow  # SciPy: not for --help

    courant = time_step / solve_flow(cfg).cfl_time_step(cfg.nx * cfg.ny)
    if abs(courant - 1) > 1e-9:
        raise ConfigError(f"the column's Courant number is {courant!r}, not 1")
    return cfg


def transport_input(cfg: Config, cells: int, steps: int) -> str:
    """PHREEQC input of the same column: SOLUTION 0 injected; cells
    1..cells+1 the initial water (defined outside the column, its
    equilibrium phases not the cells', and copied in); TRANSPORT by pure
    advection (no dispersion, no diffusion), first one shift with no
    reactants anywhere (the injected water into cell 1, the initial water
    one cell on, nothing reacting), then O2(g) and the kinetics in cells
    2..cells+1 and `steps` shifts, each punched."""
    last = cells + 1
    spare = last + 1
    return "".join([
        RATES,
        phreeqc_input(cfg.waters["injected"].definition, 0),
        phreeqc_input(cfg.waters["initial"].definition, spare),
        f"COPY solution {spare} 1-{last}\nEND\n",
        f"TRANSPORT\n -cells {last}\n -shifts 1\n -time_step {cfg.time_step!r}\n"
        " -flow_direction forward\n -boundary_conditions flux flux\n"
        f" -dispersivities {last}*0\n -diffusion_coefficient 0\n"
        " -print_frequency 0\n -punch_frequency 0\nEND\n",
        reactants(f"2-{last}", cfg.initial["calcite"], cfg.initial["dolomite"],
                  cfg.calcite_parm, cfg.dolomite_parm),
        "USE solution none\nEND\n",  # defined here, reacted only by TRANSPORT
        "SELECTED_OUTPUT 1\n -reset false\n -state true\n -solution true\n -step true\n"
        " -pH true\n -pe true\n -totals C Ca Cl Mg\n -kinetic_reactants Calcite Dolomite\n",
        f"TRANSPORT\n -shifts {steps}\n -punch_cells 2-{last}\n -punch_frequency 1\nEND\n",
    ])


def run_phreeqc(cfg: Config, cells: int, steps: int) -> dict[int, Array]:
    """PHREEQC's column as the simulator's steps see it: step -> cells x
    variables (the second TRANSPORT's shift s, which counts from 1; cells
    2..cells + 1)."""
    engine = phreeqc.open_engine(cfg.database)
    out = phreeqc.run(engine, transport_input(cfg, cells, steps))
    rows: dict[int, dict[int, int]] = {}
    for i, state in enumerate(out["state"]):
        if state == "transp":
            rows.setdefault(int(out["step"][i]), {})[int(out["soln"][i]) - 1] = i
    fields = {}
    for step in range(1, steps + 1):
        found = rows.get(step, {})
        if sorted(found) != list(range(1, cells + 1)):
            raise RuntimeError(f"PHREEQC's TRANSPORT reported cells {sorted(found)} "
                               f"at step {step}")
        fields[step] = np.array([[float(out[c][found[k]]) for c in _COLUMNS]
                                 for k in range(1, cells + 1)])
    return fields


def validate_column(cells: int, steps: int, time_step: float, comm: Any,
                    path: Optional[Path] = None, overrides: Optional[dict[str, Any]] = None,
                    dht: bool = False) -> Optional[ColumnResult]:
    """Collective over comm: runs both (the simulator with its DHT where
    dht); rank 0 returns the result."""
    from .driver import run
    from .output import totals

    cfg = column_config(cells, steps, time_step, path, overrides, dht)
    result = run(cfg, comm)
    if comm.Get_rank() != 0:
        return None
    simulated = {it: field[1:-1] for it, field in result.saved.items() if it > 0}
    reference = run_phreeqc(cfg, cells, steps)
    sums = totals(result)
    surrogate = ({**{k: sums[k] for k in ("cells", "misses", "exact_hits", "approximate_hits",
                                          "interpolated")},
                  "over_budget": sums["predictions"]["budget"]} if dht else None)
    return ColumnResult(cells, steps, time_step, simulated, reference,
                        compare(simulated, reference), surrogate)


def passed(comparison: Comparison, tolerance: float) -> bool:
    """Whether the worst max term is within tolerance and every value
    compared is finite."""
    return comparison.not_finite is None and comparison.worst_max[0] <= tolerance


def report(r: ColumnResult, tolerance: float) -> str:
    worst, name, step = r.comparison.worst_max
    lines = ["# 1-D column against PHREEQC's TRANSPORT", "",
             f"{r.cells} cells, {r.steps} steps of {r.time_step:g} s at Courant number 1, "
             f"advection only, {_surrogate(r)}; the worst over all steps.", "",
             "| variable | max abs. difference / max | RMS difference / max |",
             "| --- | --- | --- |"]
    for v, worst_terms in r.comparison.per_variable().items():
        big, rms = worst_terms["max"], worst_terms["rms"]
        lines.append(f"| {v} | {'-' if big is None else f'{big:.2e}'} | "
                     f"{'-' if rms is None else f'{rms:.2e}'} |")
    lines += ["", f"Worst: {worst:.2e} ({name}, step {step})."]
    bad = r.comparison.not_finite
    if bad is not None:
        lines.append(f"NOT FINITE: NaN or inf first in {bad[0]} at step {bad[1]} ({bad[2]} "
                     f"cells of the simulator, {bad[3]} of PHREEQC).")
    lines.append(f"Passed: within --tolerance {tolerance:g}." if passed(r.comparison, tolerance)
                 else f"FAILED: not within --tolerance {tolerance:g}.")
    return "\n".join(lines)


def _surrogate(r: ColumnResult) -> str:
    s = r.surrogate
    if s is None:
        return "DHT off"
    return (f"DHT on: PHREEQC computed {s['misses']} of {s['cells']} cell reactions "
            f"(hits: {s['exact_hits']} exact, {s['approximate_hits']} approximate; "
            f"{s['interpolated']} interpolated, {s['over_budget']} predictions computed "
            "for their cell's interp.budget)")


def plot(r: ColumnResult, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 4, figsize=(13, 5.5), sharex=True)
    x = np.arange(1, r.cells + 1)
    simulator, reference = r.simulator[r.steps], r.phreeqc[r.steps]
    units = ("mol/kgw",) * 4 + ("-", "-", "mol", "mol")
    for j, (ax, name) in enumerate(zip(axes.ravel(), VARIABLES)):
        ax.plot(x, reference[:, j], color="black", lw=1.5, label="PHREEQC TRANSPORT")
        ax.plot(x, simulator[:, j], "o", ms=3, color="tab:orange", label="mpidht_sim")
        ax.set_title(f"{name} ({units[j]})", fontsize=9)
        if j >= 4:
            ax.set_xlabel("cell")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"{r.cells}-cell column after {r.steps} steps of {r.time_step:g} s")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = Parser(
        prog="python -m mpidht_sim.column", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cells", type=int, default=50, help="reacting cells (default 50)")
    parser.add_argument("--steps", type=int, default=100, help="time steps (default 100)")
    parser.add_argument("--time-step", type=float, default=1000.0,
                        help="seconds per step (default 1000)")
    add_config_arguments(parser)
    parser.add_argument("--out", "--output", type=Path, default=Path("column-validation"),
                        help="folder for column.md, column.json, column.png")
    parser.add_argument("--tolerance", type=float, default=1e-3,
                        help="exit 1 if the worst max difference exceeds this (default 1e-3)")
    parser.add_argument("--dht", action="store_true",
                        help="run the simulator with its surrogate (the DHT and the "
                             "interpolation as configured), to check its results")
    args = parser.parse_args(argv)
    problem = None
    if args.cells < 1 or args.steps < 1 or not args.time_step > 0:
        problem = "--cells and --steps must be at least 1 and --time-step positive"
    elif args.cells > MAX_CELLS - 2:
        problem = (f"--cells must be at most {MAX_CELLS - 2} (the column has two fixed "
                   f"cells more, and a grid at most {MAX_CELLS} cells), got {args.cells}")
    elif not (args.tolerance > 0 and math.isfinite(args.tolerance)):
        problem = f"--tolerance must be positive and finite, got {args.tolerance!r}"
    if problem is not None:
        if launcher_rank() == 0:  # every rank found it; one says so
            print(f"mpidht_sim.column: {problem}", file=sys.stderr)
        return 2
    try:
        overrides = parse_overrides(args.set)
        column_config(args.cells, args.steps, args.time_step, args.config, overrides,
                      args.dht)
    except ConfigError as e:
        if launcher_rank() == 0:  # every rank found it; one says so
            print(f"mpidht_sim.column: configuration error: {e}", file=sys.stderr)
        return 2
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    return ending_job_on_failure("mpidht_sim.column", comm,
                                 partial(_column, args, overrides, comm))


def _column(args: argparse.Namespace, overrides: dict[str, Any], comm: Any) -> int:
    """main's run of checked settings, collective over comm; its exit
    status (main ends the whole job on an exception in one process)."""
    # Checked by the process that writes there, before anything runs.
    problem = checked_on_one(comm, partial(_check_out, args.out))
    if problem is not None:
        if comm.Get_rank() == 0:
            print(f"mpidht_sim.column: {problem}", file=sys.stderr)
        return 2
    result = validate_column(args.cells, args.steps, args.time_step, comm, args.config,
                             overrides, args.dht)
    ok = passed(result.comparison, args.tolerance) if result is not None else None
    if result is not None:
        _write(result, args.out, args.tolerance)
    # Every process exits alike.
    from .waiting import bcast

    return 0 if bcast(comm, ok) else 1


#: What the command writes into --out.
_OUTPUTS = ("column.md", "column.json", "column.png")


def _check_out(out: Path) -> None:
    """Raises ConfigError unless out is (or can be made) a folder this
    process may write in, where none of _OUTPUTS is anything but a file
    (a folder or a FIFO there failed the run after its report was
    written); a file of that name, or a link, is replaced."""
    from .output import check_writable, not_files

    check_writable(out, "--out")
    blocked = not_files(out / name for name in _OUTPUTS)
    if blocked:
        raise ConfigError(f"--out: {blocked[0]} is not a file, and the report would be "
                          "written there")


def _write(result: ColumnResult, out: Path, tolerance: float) -> None:
    """The report, JSON and figure into out (rank 0), and the report on
    stdout."""
    text = report(result, tolerance)
    out.mkdir(parents=True, exist_ok=True)
    for name in _OUTPUTS:  # a link there is replaced, not written through
        (out / name).unlink(missing_ok=True)
    (out / "column.md").write_text(text + "\n")
    # The command's own verdict and bound: the worst cell within
    # --tolerance; it judges no RMS term (null).
    (out / "column.json").write_text(json.dumps({
        "cells": result.cells, "steps": result.steps, "time_step": result.time_step,
        "tolerance": tolerance, "surrogate": result.surrogate,
        **result.comparison.to_dict(tolerance, None),
        "passed": passed(result.comparison, tolerance),
        "last_step": {"simulator": result.simulator[result.steps].tolist(),
                      "phreeqc": result.phreeqc[result.steps].tolist()}}, indent=1))
    plot(result, out / "column.png")
    print(text)
    print(f"written: {out}/column.md, column.json, column.png")


if __name__ == "__main__":
    raise SystemExit(main())
