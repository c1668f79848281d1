"""What a run leaves behind in its output folder: the computed waters
(``waters.json``, written before the first step), fields per saved
iteration as VTK (meshio; opens in ParaView) and NumPy .npz, plots (maps of
Ca, Mg, calcite and dolomite; hit rate and runtime per iteration) and
``summary.json``: the whole effective configuration, the versions of
everything that computed the run, hits and timings, and, with
``run.reference``, the errors against the reference run (``measure``).

A folder that holds an earlier run's outputs is refused unless
``run.overwrite`` is set; then those outputs are removed first, so that no
stale field can be mistaken for this run's."""

from __future__ import annotations

import json
import platform
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

import numpy as np

from . import __version__, engine
from .checkpoint import DHT_FILE, settings_path
from .config import Config
from .driver import CHECKS, RunResult, run_package_size
from .errors import ConfigError, check_path
from .measure import (USED_DHT, compare, coverage, field_file, field_files, first_not_finite,
                      iteration_list, load_fields, saved_config, settings_differ, used_dht)
from .surrogate import variable_scales
from .variables import AMOUNTS, VARIABLES


#: The files of an earlier run in an output folder, besides its fields
#: (``measure.field_file``).
OUTPUTS = ("summary.json", "waters.json", "maps.png", "iterations.png", "fields.pvd",
           DHT_FILE, DHT_FILE + ".json")
#: The kinds of field files a run saves.
FIELD_KINDS = ("npz", "vtu")


def earlier_outputs(folder: Path) -> list[Path]:
    """The outputs of an earlier run in folder, sorted: only names a run
    writes (fields_NNNNN.npz, not fields_mine.npz)."""
    if not folder.is_dir():
        return []
    named = [folder / name for name in OUTPUTS]
    named += [p for kind in FIELD_KINDS for p in field_files(folder, kind).values()]
    return sorted(p for p in named if p.is_file())


def not_files(paths: Iterable[Path]) -> list[Path]:
    """Those of paths where something other than a regular file stands (a
    folder, a FIFO), sorted: nothing can write a file there."""
    return sorted(p for p in paths if p.exists() and not p.is_file())


def blocked_outputs(folder: Path) -> list[Path]:
    """What stands in folder where a run writes a file of its own (a
    folder named summary.json or fields_00010.npz, a FIFO): no run can
    write there, and --overwrite removes files only. Sorted."""
    if not folder.is_dir():
        return []
    named = [folder / name for name in OUTPUTS]
    named += [p for kind in FIELD_KINDS for p in field_files(folder, kind).values()]
    return not_files(named)


def check_writable(out: Path, name: str) -> None:
    """Raises ConfigError, naming the setting (name), unless out, or the
    nearest folder above it that exists (where it would be made), is a
    folder this process may write in. Leaves nothing behind."""
    check_path(out, name)
    try:
        nearest = next((p for p in (out, *out.parents) if p.exists()), out)
    except OSError as e:
        raise ConfigError(f"{name}: {out} cannot be made: {e}") from None
    where = f"{name}: {out}" + ("" if nearest == out else f" cannot be made: {nearest}")
    if not nearest.is_dir():
        raise ConfigError(f"{where} is not a folder")
    # Tried, not asked: os.access says yes to root on a read-only file
    # system or in /proc.
    try:
        tempfile.TemporaryDirectory(dir=nearest, prefix=".mpidht-sim-probe-").cleanup()
    except OSError as e:
        raise ConfigError(f"{where} is a folder this process may not write in "
                          f"({e.strerror or e})") from None


def check_folders(cfg: Config) -> None:
    """Raises ConfigError if the output folder cannot be made or written
    in (a file on its path, no permission), if something other than a
    file stands where the run writes one (``blocked_outputs``), if it
    holds an earlier run's outputs and run.overwrite is not set, or if
    run.reference is not a run's output folder (no saved fields, one that
    cannot be read or is of another grid) or is the output folder itself.
    Writes nothing it leaves (a folder made and removed again shows that
    one can be made); one process calls it and shares the verdict, since
    that process then writes there (``start``)."""
    out, ref = cfg.output_dir, cfg.reference
    # The run replaces the fields there (only a run's own files are
    # removed, none in a subfolder): it would be compared with itself.
    if ref is not None and ref.resolve() == out.resolve():
        raise ConfigError(f"run.reference: {ref} is the output folder (run.output_dir: {out}), "
                          "whose fields this run replaces; choose another output folder")
    check_writable(out, "run.output_dir")
    blocked = blocked_outputs(out)
    if blocked:
        first = blocked[0]
        kind = "a folder" if first.is_dir() else "not a regular file"
        more = f" (and {len(blocked) - 1} more such)" if len(blocked) > 1 else ""
        raise ConfigError(f"run.output_dir: {first} is {kind}{more}, where the run writes a "
                          "file of that name; remove it or choose another folder "
                          "(--overwrite replaces files only)")
    stale = earlier_outputs(out)
    if stale and not cfg.overwrite:
        names = ", ".join(p.name for p in stale[:4]) + (", ..." if len(stale) > 4 else "")
        raise ConfigError(f"run.output_dir: {out} holds an earlier run's outputs ({names}); "
                          "choose another folder, or pass --overwrite (run.overwrite = true) "
                          "to replace them")
    if ref is None:
        return
    try:
        config = saved_config(ref)
    except ValueError as e:
        raise ConfigError(f"run.reference: {e}") from None
    if config is not None:
        why = settings_differ(cfg.to_dict(), config, iterations=False)
        if why is not None:
            raise ConfigError(f"run.reference: {ref} is not a reference for this run: {why}")
    try:
        # All of them, of this grid's shape: one that cannot be read, or
        # of another grid (whatever its summary.json says), is found now.
        saved = load_fields(ref, (cfg.ny, cfg.nx))
    except ValueError as e:
        raise ConfigError(f"run.reference: {e}") from None
    if not saved:
        raise ConfigError(f"run.reference: {ref} holds no saved fields (fields_NNNNN.npz) "
                          "of a run")
    its = saved_iterations(cfg)
    if not set(its) & set(saved):
        raise ConfigError(f"run.reference: {ref} saved none of the iterations this run saves "
                          f"({iteration_list(its)}); it saved "
                          f"{iteration_list(sorted(saved)) or 'none'}")


def saved_iterations(cfg: Config) -> list[int]:
    """The iterations (other than 0) whose fields the run saves."""
    return [it for it in range(1, cfg.iterations + 1)
            if it % cfg.save_every == 0 or it == cfg.iterations]


def start(cfg: Config) -> bool:
    """On one process, before the first step: removes an earlier run's
    outputs (run.overwrite; a DHT this run restores from is kept) and
    writes waters.json; returns whether it made the output folder."""
    out = cfg.output_dir
    made = not out.exists()
    keep = set()
    if cfg.dht.restore is not None:
        keep = {cfg.dht.restore.resolve(), settings_path(cfg.dht.restore).resolve()}
    for path in earlier_outputs(out):
        if path.resolve() not in keep:
            path.unlink()
    out.mkdir(parents=True, exist_ok=True)
    (out / "waters.json").write_text(json.dumps(
        {name: water.to_dict() for name, water in cfg.waters.items()}, indent=1))
    return made


def unstart(cfg: Config, made: bool) -> None:
    """Undoes ``start`` for a run refused before its first step: removes
    waters.json, and the output folder where start made it and it is
    empty again, so that the same command can run again."""
    (cfg.output_dir / "waters.json").unlink(missing_ok=True)
    if made and not any(cfg.output_dir.iterdir()):
        cfg.output_dir.rmdir()


MAPPED = ("Ca", "Mg", "calcite", "dolomite")
#: maps.png shows at most this many saved iterations (``mapped_iterations``).
MAPPED_AT_MOST = 7
#: Units of the variables, for axes and colour bars.
UNITS = {"C": "mol/kgw", "Ca": "mol/kgw", "Cl": "mol/kgw", "Mg": "mol/kgw", "pH": "-",
         "pe": "-", "calcite": "mol per cell", "dolomite": "mol per cell"}


def _mesh(cfg: Config) -> tuple[Any, Any]:
    """Corner points and quad cells of the grid, cell (x, y) at index y*nx+x."""
    xs = np.arange(cfg.nx + 1) * cfg.cell_size
    ys = -np.arange(cfg.ny + 1) * cfg.cell_size  # y = 0 is the top row
    px, py = np.meshgrid(xs, ys)
    points = np.column_stack([px.ravel(), py.ravel(), np.zeros(px.size)])
    corner = (np.arange(cfg.ny)[:, None] * (cfg.nx + 1) + np.arange(cfg.nx)[None, :]).ravel()
    quads = np.column_stack([corner, corner + 1, corner + cfg.nx + 2, corner + cfg.nx + 1])
    return points, quads


def write_field(cfg: Config, out_dir: Path, it: int, state: Any) -> None:
    """Writes one saved iteration (.npz and .vtu) and rewrites the ParaView
    time series ``fields.pvd`` over every .vtu written so far (time in
    seconds): called as each field is computed, so a run that is killed
    keeps what it saved."""
    import meshio

    points, quads = _mesh(cfg)
    fields: dict[str, Any] = {v: state[:, j].reshape(cfg.ny, cfg.nx)
                              for j, v in enumerate(VARIABLES)}
    np.savez_compressed(out_dir / field_file(it, "npz"), **fields)
    mesh = meshio.Mesh(points, [("quad", quads)],
                       cell_data={v: [state[:, j]] for j, v in enumerate(VARIABLES)})
    mesh.write(out_dir / field_file(it, "vtu"))
    datasets = "\n".join(
        f'    <DataSet timestep="{i * cfg.time_step!r}" part="0" file="{field_file(i, "vtu")}"/>'
        for i in sorted(field_files(out_dir, "vtu")))
    (out_dir / "fields.pvd").write_text(
        '<?xml version="1.0"?>\n<VTKFile type="Collection" version="0.1">\n'
        f"  <Collection>\n{datasets}\n  </Collection>\n</VTKFile>\n")


def write_fields(result: RunResult, cfg: Config, out_dir: Path) -> None:
    """Writes the saved iterations not written yet (``write_field``)."""
    for it, state in result.saved.items():
        if not (out_dir / field_file(it, "vtu")).is_file():
            write_field(cfg, out_dir, it, state)


def mapped_iterations(saved: Sequence[int], at_most: int = MAPPED_AT_MOST) -> list[int]:
    """The saved iterations maps.png shows: all of at most at_most, else
    at_most of them spread evenly from the first to the last (a run that
    saves every iteration would otherwise ask for a figure of one column
    per iteration: 301 columns, 78 000 pixels wide, minutes of layout)."""
    its = sorted(saved)
    if len(its) <= at_most:
        return its
    picks = np.linspace(0, len(its) - 1, at_most).round().astype(int)
    return [its[i] for i in sorted(set(picks.tolist()))]


def plot(result: RunResult, cfg: Config, out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    its = mapped_iterations(list(result.saved))
    extent = (0.0, cfg.nx * cfg.cell_size, cfg.ny * cfg.cell_size, 0.0)  # y = 0 on top
    # Every map has the same extent; ticks on the outer ones only (an
    # axis's ticks are most of the drawing's time).
    fig, axes = plt.subplots(len(MAPPED), len(its), squeeze=False,
                             figsize=(2.6 * len(its) + 1.6, 2.4 * len(MAPPED) + 0.4))
    for row, name in enumerate(MAPPED):
        j = VARIABLES.index(name)
        top = max(float(result.saved[it][:, j].max()) for it in its) or 1.0
        for col, it in enumerate(its):
            ax = axes[row][col]
            image = ax.imshow(result.saved[it][:, j].reshape(cfg.ny, cfg.nx), vmin=0, vmax=top,
                              cmap="viridis", interpolation="nearest", extent=extent)
            if row == 0:
                ax.set_title(f"{it * cfg.time_step / 86400:.3g} d (iteration {it})",
                             fontsize=9)
            if row == len(MAPPED) - 1:
                ax.set_xlabel("x (m)", fontsize=8)
            else:
                ax.set_xticks([])
            if col == 0:
                ax.set_ylabel(f"{name}\ny (m)", fontsize=9)
            else:
                ax.set_yticks([])
            ax.tick_params(labelsize=7)
        fig.colorbar(image, ax=axes[row].tolist(), shrink=0.8, label=UNITS[name])
    fig.suptitle("Fields at the saved times (injection at the top left)", fontsize=11)
    path = out_dir / "maps.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    paths.append(path)

    records = result.records
    x = [r.iteration for r in records]
    fig, (a1, a2) = plt.subplots(2, 1, sharex=True, figsize=(9, 5.5))
    cells = [max(r.hits + r.interpolated + r.misses, 1) for r in records]
    a1.plot(x, [r.hits / c for r, c in zip(records, cells)], label="exact-key hits")
    if any(r.interpolated for r in records):
        a1.plot(x, [(r.hits + r.interpolated) / c for r, c in zip(records, cells)],
                label="hits and interpolated")
    a1.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    a1.set_ylabel("share of cells")
    a1.set_title("What the surrogate answered, and where the time went", fontsize=10)
    a1.set_ylim(0, 1.02)
    a2.plot(x, [r.transport_s for r in records], label="transport")
    a2.plot(x, [r.chemistry_s for r in records], label="chemistry (PHREEQC)")
    a2.plot(x, [r.dht_s for r in records], label="surrogate (DHT, interpolation)")
    a2.plot(x, [r.wall_s for r in records], label="iteration (wall)", color="black")
    a2.set_ylabel("seconds per iteration")
    a2.set_xlabel(f"iteration ({cfg.time_step:g} s each)")
    a2.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    fig.tight_layout()
    path = out_dir / "iterations.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    paths.append(path)
    return paths


def mpi_library(text: str) -> str:
    """The first line of MPI's library version, without the NUL that ends
    Open MPI's (``MPI_Get_library_version`` counts it in)."""
    lines = text.replace("\0", "").strip().splitlines()
    return lines[0].strip() if lines else "unknown"


def job(cfg: Config, processes: int) -> dict[str, int]:
    """What summary.json records of the job beside the configuration: the
    process count and the work package size the run took (run.package_size
    = 0 chooses one from the process count; ``driver.run_package_size``)."""
    return {"processes": processes, "package_size": run_package_size(cfg, processes)}


def versions(cfg: Config) -> dict[str, str]:
    """What computed the run: mpidht, the simulator, PHREEQC, MPI."""
    import mpi4py
    from mpi4py import MPI

    import mpidht

    def package(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "unknown"

    return {
        "mpidht": mpidht.__version__, "mpidht_sim": __version__,
        "phreeqc_package": package("phreeqc"),
        "iphreeqc": engine.version(engine.open_engine(cfg.database)),
        "mpi": mpi_library(MPI.Get_library_version()),
        "mpi4py": mpi4py.__version__, "numpy": np.__version__,
        "python": platform.python_version(),
    }


def totals(result: RunResult) -> dict[str, Any]:
    """Hits and time summed over the run."""
    r = result.records
    hits, misses = sum(x.hits for x in r), sum(x.misses for x in r)
    interpolated = sum(x.interpolated for x in r)
    cells = hits + interpolated + misses
    exact = sum(x.exact_hits for x in r)
    return {
        "cells": cells, "hits": hits, "exact_hits": exact,
        "approximate_hits": hits - exact, "misses": misses,
        "shared_hits": sum(x.shared for x in r),
        "rejected": sum(x.rejected for x in r),
        "hit_rate": hits / max(cells, 1),
        "interpolated": interpolated, "verified": sum(x.verified for x in r),
        "predictions": dict(zip(CHECKS, (sum(c) for c in zip(*(x.checks for x in r))))),
        "transport_s": sum(x.transport_s for x in r),
        "chemistry_s": sum(x.chemistry_s for x in r), "dht_s": sum(x.dht_s for x in r),
        "interp_s": sum(x.interp_s for x in r),
    }


def verified_errors(result: RunResult, cfg: Config) -> Optional[dict[str, Any]]:
    """The error of the verified predictions per variable, absolute and
    relative to the variable's scale (surrogate.variable_scales)."""
    v = result.verification
    if v is None:
        return None
    out: dict[str, Any] = {"count": v.count}
    if v.count:
        scales = variable_scales(cfg)
        out["max_abs"] = dict(zip(VARIABLES, v.max_abs.tolist()))
        out["rms"] = dict(zip(VARIABLES, v.rms().tolist()))
        out["max_relative"] = dict(zip(VARIABLES, (v.max_abs / scales).tolist()))
        out["rms_relative"] = dict(zip(VARIABLES, (v.rms() / scales).tolist()))
    return out


def spent_budget(result: RunResult, cfg: Config) -> Optional[dict[str, Any]]:
    """interp.budget and the most any cell spent of it (the error estimates
    of the predictions used there, summed; aqueous: as they flowed), per
    variable, relative to the variable's scale; None without prediction."""
    if result.verification is None or result.spent is None:
        return None
    spent = result.spent.max(axis=0) / variable_scales(cfg)
    return {"budget": cfg.interp.budget or None,
            "largest_spent": dict(zip(VARIABLES, spent.tolist()))}


def against_reference(result: RunResult, cfg: Config) -> Optional[dict[str, Any]]:
    """The errors against run.reference and the speedups over it; where
    they cannot be computed (no common iteration, other grids, a field that
    cannot be read), errors is None and problem says why. Speedups only
    where both ran the same iterations to their end (neither stopped
    early) and the reference without the DHT; otherwise no_speedup says
    why."""
    if cfg.reference is None:
        return None
    out: dict[str, Any] = {"folder": str(cfg.reference)}
    try:
        out["errors"] = compare(result.saved, load_fields(
            cfg.reference, (cfg.ny, cfg.nx))).to_dict(
            cfg.cell_bound, cfg.rms_bound)
    except ValueError as e:
        out["errors"] = None
        out["problem"] = str(e)
    # check_folders compared the settings its summary.json records.
    out["settings_checked"] = (cfg.reference / "summary.json").is_file()
    try:
        ref = json.loads((cfg.reference / "summary.json").read_text())
        if used_dht(ref["config"]):
            # Its fields carry its own surrogate's errors, its times its
            # savings: neither is PHREEQC's alone.
            out["reference_used_dht"] = True
            out["no_speedup"] = "it used the DHT itself (a reference is a run with --no-dht)"
            return out
        if ref["config"]["iterations"] != cfg.iterations:
            out["no_speedup"] = (f"it ran {ref['config']['iterations']} iterations, this run "
                                 f"{cfg.iterations}")
            return out
        # Times compare only where both ran all their iterations.
        stopped = [f"{who} stopped after iteration {where['iteration']} of "
                   f"{where['iterations']}"
                   for who, where in (("this run", result.stopped), ("it", ref.get("stopped")))
                   if where is not None]
        if stopped:
            out["no_speedup"] = " and ".join(stopped)
            return out
        ref_chem = sum(x["chemistry_s"] for x in ref["records"])
        out["chemistry_speedup"] = ref_chem / max(totals(result)["chemistry_s"], 1e-12)
        out["wall_speedup"] = float(ref["wall_s"]) / max(result.wall_s, 1e-12)
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        pass  # a reference without a summary still gives its errors
    return out


@dataclass(frozen=True)
class Finished:
    """What finish reports: the lines to print, why the run's results
    cannot be trusted (values that are not finite in its fields or in the
    comparison with its reference), or None, the bounds (run.cell_bound,
    run.rms_bound) its comparison with its reference exceeds, or None, and
    why a comparison with run.reference could not be made at all, or
    None."""
    lines: list[str]
    failure: Optional[str] = None
    exceeded: Optional[str] = None
    not_compared: Optional[str] = None


def finish(result: RunResult, cfg: Config, extra: dict[str, Any],
           plots: bool = True) -> Finished:
    """Writes everything a run leaves behind, even where its fields hold
    values that are not finite (the fields show where); returns the lines
    to print and the failure to report."""
    out = cfg.output_dir
    out.mkdir(parents=True, exist_ok=True)
    write_fields(result, cfg, out)
    if plots:
        plot(result, cfg, out)
    sums = totals(result)
    verified = verified_errors(result, cfg)
    budget = spent_budget(result, cfg)
    reference = against_reference(result, cfg)
    summary = {
        "config": cfg.to_dict(), "versions": versions(cfg), **extra,
        "wall_s": result.wall_s, "evictions": result.evictions,
        "restored_entries": result.restored,
        "dht_dump": str(result.dht_dump) if result.dht_dump else None,
        "totals": sums, "verified": verified, "budget": budget, "reference": reference,
        "stopped": result.stopped,
        "records": [r.__dict__ for r in result.records],
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    lines = [
        f"runtime {result.wall_s:.1f} s: transport {sums['transport_s']:.1f} s, chemistry "
        f"{sums['chemistry_s']:.1f} s (summed over workers), DHT {sums['dht_s']:.1f} s",
        f"hit rate {sums['hit_rate']:.1%} ({sums['hits']} of {sums['cells']} cell reactions: "
        f"{sums['exact_hits']} exact, {sums['approximate_hits']} approximate; "
        f"{sums['shared_hits']} of them shared within a package); "
        f"{sums['rejected']} hits rejected (negative amount) and computed; "
        f"evictions {result.evictions}",
    ]
    failures = []
    exceeded: list[str] = []
    not_compared = None
    own = first_not_finite(result.saved)
    if own is not None:
        failures.append(f"NaN or inf in the saved fields, first in {own[1]} at iteration "
                        f"{own[0]} ({own[2]} cells)")
        lines.append(f"NOT FINITE: {failures[-1]}")
    amounts = [VARIABLES.index(v) for v in AMOUNTS]
    finite = [field[:, amounts][np.isfinite(field[:, amounts])] for field in result.saved.values()]
    lowest = min((float(f.min()) for f in finite if f.size), default=float("nan"))
    lines.append(f"smallest finite amount (a total or a mineral) in the saved fields: "
                 f"{lowest:.3g}" + (" (negative!)" if lowest < 0 else ""))
    if (sums["hits"] or sums["interpolated"]) and sums["misses"]:
        lines.append(f"PHREEQC computed {sums['misses']} of {sums['cells']} cell reactions: "
                     f"{sums['cells'] / sums['misses']:.1f}x fewer than without the "
                     "surrogate")
    elif sums["hits"] or sums["interpolated"]:  # a warm start that knew every one
        lines.append(f"PHREEQC computed none of the {sums['cells']} cell reactions: the "
                     "surrogate answered every one")
    if verified is not None:
        p = sums["predictions"]
        made = sum(p.values())
        lines.append(
            f"interpolation: {sums['interpolated']} cells "
            f"({sums['interpolated'] / max(sums['cells'], 1):.1%}) "
            f"from {made} predictions of misses, {p['accepted']} accepted "
            f"({sums['verified']} of them verified by PHREEQC); rejected: "
            + ", ".join(f"{name.replace('_', ' ')} {p[name]}" for name in CHECKS[1:])
            + f"; {sums['misses']} cells computed; {sums['interp_s']:.1f} s predicting")
        if verified["count"]:
            worst = max(VARIABLES, key=lambda name: verified["max_relative"][name])
            lines.append(
                f"verified error of {verified['count']} accepted predictions: worst "
                f"{verified['max_relative'][worst]:.2e} of {worst}'s scale; per variable "
                "(max, RMS): " + ", ".join(
                    f"{name} {verified['max_relative'][name]:.1e}/"
                    f"{verified['rms_relative'][name]:.1e}" for name in VARIABLES))
    if budget is not None:
        most = budget["largest_spent"]
        worst = max(VARIABLES, key=lambda name: most[name])
        limit = (f"interp.budget {budget['budget']:g}" if budget["budget"]
                 else "interp.budget 0: no limit")
        lines.append(f"error estimates of the predictions used, summed in a cell: at most "
                     f"{most[worst]:.2e} of {worst}'s scale ({limit})")
    if result.restored:
        lines.append(f"warm start: {result.restored} DHT entries loaded from {cfg.dht.restore}")
    if result.dht_dump is not None:
        lines.append(f"DHT saved to {result.dht_dump} ({result.dump_s:.1f} s)")
    if reference is not None:
        errors = reference.get("errors")
        if reference.get("reference_used_dht"):
            lines.append(f"against {cfg.reference}: {USED_DHT}")
        if errors is None:
            not_compared = f"against {cfg.reference}: {reference.get('problem')}"
            lines.append(f"against {cfg.reference}: not compared: {reference.get('problem')}")
        else:
            w, m, e = errors["worst_rms_term"], errors["worst_max_term"], errors["eq2_max"]
            bad = errors["not_finite"]
            if bad is not None:
                what = (f"NaN or inf in the fields, first in {bad['variable']} at "
                        f"iteration {bad['iteration']} ({bad['run_cells']} cells of this run, "
                        f"{bad['reference_cells']} of the reference)")
                failures.append(f"against {cfg.reference}: {what}")
                lines.append(f"against {cfg.reference}: NOT FINITE: {what}")
            lines.append(
                f"against {cfg.reference}: worst cell {m['value']:.2e} of its variable's "
                f"maximum ({m['variable']}, iteration {m['iteration']}), worst RMS term "
                f"{w['value']:.2e} ({w['variable']}, iteration {w['iteration']}), Eq. (2) at "
                f"most {e['value']:.2e}; "
                + coverage(len(errors["compared"]), errors["not_compared"]))
            compared = errors["compared"]
            judged = (f"over the {len(compared)} iterations compared: "
                      f"{iteration_list(compared)}")
            if errors["exceeded"]:
                exceeded += errors["exceeded"]
                lines.append(f"against {cfg.reference}: FAILED: "
                             + "; ".join(errors["exceeded"]) + f" ({judged})")
            else:
                lines.append(f"against {cfg.reference}: PASSED: worst cell within "
                             f"{cfg.cell_bound:g}, worst RMS term within {cfg.rms_bound:g} "
                             f"({judged})")
        if not reference["settings_checked"]:
            lines.append(f"settings not checked (grid, flow, time, chemistry, waters): "
                         f"{cfg.reference} has no summary.json")
        if "no_speedup" in reference:
            lines.append(f"no speedup over it: {reference['no_speedup']}")
        if "chemistry_speedup" in reference:
            lines.append(f"speedup over it: chemistry {reference['chemistry_speedup']:.1f}x, "
                         f"whole run {reference['wall_speedup']:.1f}x")
    if result.stopped is not None:
        lines.append(f"STOPPED after iteration {result.stopped['iteration']} of "
                     f"{result.stopped['iterations']} ({result.stopped['reason']}); its fields "
                     "are saved" + (", and the DHT" if result.dht_dump is not None else ""))
    lines.append(f"outputs: {out}")
    return Finished(lines, "; ".join(failures) or None,
                    f"against {cfg.reference}: " + "; ".join(exceeded) if exceeded else None,
                    not_compared)
