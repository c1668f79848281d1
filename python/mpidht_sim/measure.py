"""How far a run is from a reference run, per variable, and its command
line: comparing the fields two runs saved, e.g. a DHT run against a
reference run without the DHT. No MPI. Usage:

    python -m mpidht_sim.measure RUN_DIR REFERENCE_DIR [--json FILE]
                                 [--cell-bound 1e-3] [--rms-bound 1e-4]

Where both folders hold a run's summary.json, the runs' grid, flow, time
step, chemistry and waters must be the same (the number of iterations may
differ: the iterations both saved are compared, and those of the run that
the reference did not save are named); a reference that used the DHT is
compared, and said to be one. Exits with 0 where the run is
within both bounds (below), 1 where it exceeds one or a value is not
finite, and 2 on settings that differ, on a folder that is missing or
holds no fields that can be read, on runs of different grids (as their
summary.json records them, else as their fields are shaped), on no
iteration in both, and on a --json FILE that cannot be written or is a
file of either run (it would replace it; checked before anything is
compared).

For each saved iteration and each variable i, with n cells:

- the RMS term: sqrt(sum_j (run_ij - ref_ij)**2 / n) / max_j |ref_ij|, the
  terms of Eq. (2) of the POET paper;
- the max term: max_j |run_ij - ref_ij| / max_j |ref_ij|;

where for an amount max_j |ref_ij| is taken as at least ``ROUND_OFF``
(1e-9) of its largest value in the reference over every iteration
compared: at an iteration where it has all but vanished, a difference
fails where it exceeds 1e-12 of that largest value (at the default
bound), not wherever it exceeds the round-off of the arithmetic on it.
Applying the DHT's stored changes leaves such round-off along the flow
path (2e-18 mol/kgw of Ca after 24 cells, where PHREEQC has 0 and Ca
reaches 1.2e-4 elsewhere): it counted as an infinite term.

The headline is the **worst max term** over variables and iterations:
the worst single cell, over its variable's maximum, named with its
variable and iteration. The worst RMS term is reported beside it: an RMS
over n cells divides one bad cell's error by sqrt(n) (on 2 500 cells a
cell off by 4.9e-3 of dolomite's maximum gave an RMS term of 9.8e-5), so
it cannot be the headline. Eq. (2) itself, the geometric mean of the RMS
terms, is reported beside both exactly as the paper defines it: it is 0
as soon as one variable is reproduced exactly (Cl under the DHT, whose
stored change is zero), whatever the others' errors. A variable that is
zero everywhere in the reference is left out if the run is zero there
too, and counts as an infinite term if not. Zero here means below
``TRACE`` (1e-18 mol/kgw or mol) for the amounts (totals and minerals):
PHREEQC reports a total it has flushed out as 0 where advection's
arithmetic leaves 6e-21 (a 13-cell column without the DHT failed as
infinite on C); pH and pe are compared as they are.

The verdict: the run passes where the worst cell is within --cell-bound
(default 1e-3, the column check's bound) and the worst RMS term within
--rms-bound (default 1e-4), over every variable and every iteration
compared; the last line says PASSED or FAILED, naming each bound
exceeded with its value, variable and iteration, and the command exits
with 1 where one is. Only the iterations compared are judged: a run that
saved every 50th iteration is judged on those.

The terms are amounts relative to the variable's maximum, nothing else:
a mineral present in the reference and absent in the run (or the
reverse) counts only through its amount: on 2 500 cells, dolomite
missing from 20 cells that hold 5e-4 of its maximum in the reference
gives a worst cell of 5e-4 and a worst RMS term of 4.5e-5, and passes.
No figure here counts the cells whose minerals differ.

A value that is not finite (NaN or inf) in either field makes its
variable's terms NaN, the worst possible: the headline, the per-variable
row and the per-iteration line name it, the headline says where it first
appears (the earliest iteration, then the first variable), it exceeds
every bound, and the command exits with 1. So does one in a field of
the run that is not compared: iteration 0 (the initial state both runs
start from, never compared) or one the reference did not save. Ties go to the earliest
iteration and the first variable, whatever the order of the fields.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np
import numpy.typing as npt

from . import __version__
from .errors import check_path
from .variables import AMOUNTS, VARIABLES

Array = npt.NDArray[np.float64]

#: The bounds a result is held to: its worst cell (the worst max term)
#: and its worst RMS term, each over its variable's maximum.
CELL_BOUND = 1e-3
RMS_BOUND = 1e-4
#: An amount (a total in mol/kgw, a mineral in mol) whose reference and
#: run are both below this everywhere is absent from both: left out.
TRACE = 1e-18
#: The least scale of an amount at an iteration, as a fraction of its
#: largest value in the reference over the iterations compared.
ROUND_OFF = 1e-9

#: What of a run's configuration (its summary.json's "config") decides its
#: fields: grid, flow, time, chemistry and waters.
PHYSICS = ("nx", "ny", "cell_size", "porosity", "permeability", "viscosity", "fixed",
           "iterations", "time_step", "database", "calcite_parm", "dolomite_parm",
           "initial", "injected")


#: Said of a reference that used the DHT (``used_dht``).
USED_DHT = ("a run that used the DHT itself: the figures are differences between two "
            "surrogate runs, not errors against PHREEQC")


def used_dht(config: Optional[dict[str, Any]]) -> bool:
    """Whether a run's recorded configuration (its summary.json's
    "config") had the DHT on."""
    dht = (config or {}).get("dht")
    return isinstance(dht, dict) and dht.get("enabled") is True


def physics(config: dict[str, Any]) -> dict[str, Any]:
    """The settings of a configuration (``Config.to_dict()``) in PHYSICS."""
    return {k: config[k] for k in PHYSICS}


def same_json(a: Any, b: Any) -> bool:
    """Whether a and b are the same as JSON."""
    return bool(json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True))


def settings_differ(config: dict[str, Any], reference: dict[str, Any],
                    iterations: bool = True) -> Optional[str]:
    """Why a run of configuration reference (``Config.to_dict()``, as its
    summary.json records it) cannot be config's reference: the settings
    in PHYSICS that differ (the number of iterations only if iterations),
    or that it lacks; None if none."""
    keys = [k for k in PHYSICS if iterations or k != "iterations"]
    lacks = [k for k in keys if k not in reference]
    if lacks:
        return f"its summary.json lacks {', '.join(lacks)}"
    differ = [k for k in keys if not same_json(config.get(k), reference[k])]
    if differ:
        return (f"its {', '.join(differ)} differ{'s' if len(differ) == 1 else ''} from the "
                "run's (grid, flow, time, chemistry and waters must be the same)")
    return None


def saved_config(folder: Path) -> Optional[dict[str, Any]]:
    """The configuration a run in folder recorded in its summary.json; None
    if there is no summary.json; raises ValueError if it cannot be read or
    records none."""
    path = folder / "summary.json"
    if not path.is_file():
        return None
    try:
        config = json.loads(path.read_text()).get("config")
    except (OSError, ValueError, AttributeError, RecursionError) as e:
        raise ValueError(f"{path} cannot be read: {e}") from None
    if not isinstance(config, dict):
        raise ValueError(f"{path} records no configuration")
    return config


def coverage(compared: int, not_compared: Sequence[int]) -> str:
    """How many of a run's saved iterations were compared, and which of
    them were not."""
    if not not_compared:
        return f"{compared} iterations compared"
    return (f"{compared} of {compared + len(not_compared)} saved iterations compared; not "
            f"compared (the reference did not save them): {iteration_list(not_compared)}")


def iteration_list(its: Sequence[int]) -> str:
    """Iterations in words: all of a few, else the first, the second and
    the last."""
    if len(its) <= 6:
        return ", ".join(str(it) for it in its)
    return f"{its[0]}, {its[1]}, ..., {its[-1]}"


@dataclass(frozen=True)
class Terms:
    """One field against its reference: the RMS and max terms per variable
    (None where both are zero everywhere)."""

    variables: tuple[str, ...]
    rms: tuple[Optional[float], ...]
    max: tuple[Optional[float], ...]
    #: Per variable: the cells whose value is not finite (NaN or inf), in
    #: the run and in the reference.
    not_finite: tuple[tuple[int, int], ...] = ()

    @property
    def eq2(self) -> float:
        """Eq. (2): the geometric mean of the RMS terms of the variables
        compared (NaN if any is NaN, else 0 if any is exactly 0, inf if
        any is infinite)."""
        terms = [t for t in self.rms if t is not None]
        if not terms:
            return 0.0
        if any(math.isnan(t) for t in terms):
            return math.nan
        if any(t == 0 for t in terms):
            return 0.0
        if any(math.isinf(t) for t in terms):
            return math.inf
        return math.exp(sum(math.log(t) for t in terms) / len(terms))

    @property
    def worst(self) -> tuple[str, float]:
        """The largest RMS term and its variable."""
        return _largest(self.variables, self.rms)

    @property
    def worst_max(self) -> tuple[str, float]:
        """The largest max term and its variable."""
        return _largest(self.variables, self.max)


def rank(value: float) -> tuple[bool, float]:
    """A sort key under which NaN is larger than any number, inf included
    (plain comparisons with NaN are all false, so max() over values with
    a NaN depends on their order)."""
    return (True, 0.0) if math.isnan(value) else (False, value)


def _largest(names: Sequence[str], values: Sequence[Optional[float]]) -> tuple[str, float]:
    """The largest value (NaN the largest of all) and its name; the first
    of equal ones."""
    pairs = [(n, v) for n, v in zip(names, values) if v is not None]
    if not pairs:
        return ("-", 0.0)
    return max(pairs, key=lambda p: rank(p[1]))  # max keeps the first of equals


def _worst(values: Sequence[tuple[float, str, int]],
           order: Sequence[str]) -> tuple[float, str, int]:
    """The largest (value, variable, iteration), NaN the largest of all;
    of equal values the earliest iteration, then the first variable in
    order: the same whatever the order of values."""
    return max(values, key=lambda v: (*rank(v[0]), -v[2],
                                      -order.index(v[1]) if v[1] in order else 0))


def terms(run: Array, reference: Array, variables: Sequence[str] = VARIABLES,
          least: Optional[Sequence[float]] = None) -> Terms:
    """The RMS and max terms of run against reference (cells x variables),
    each variable's scale at least its ``least`` (``least_scales``)."""
    if run.shape != reference.shape or run.shape[1] != len(variables):
        raise ValueError(f"fields of shape {run.shape} and {reference.shape} cannot be "
                         f"compared over {len(variables)} variables")
    rms: list[Optional[float]] = []
    big: list[Optional[float]] = []
    bad: list[tuple[int, int]] = []
    for j in range(reference.shape[1]):
        counts = (int(np.count_nonzero(~np.isfinite(run[:, j]))),
                  int(np.count_nonzero(~np.isfinite(reference[:, j]))))
        bad.append(counts)
        if any(counts):
            rms.append(math.nan)
            big.append(math.nan)
            continue
        diff = np.abs(run[:, j] - reference[:, j])
        scale = max(float(np.abs(reference[:, j]).max()), least[j] if least else 0.0)
        top = float(diff.max())
        root = float(np.sqrt(np.mean(diff ** 2)))
        zero = TRACE if variables[j] in AMOUNTS else 0.0
        if scale <= zero:
            absent = float(np.abs(run[:, j]).max()) <= zero
            rms.append(None if absent else math.inf)
            big.append(None if absent else math.inf)
        else:
            rms.append(root / scale)
            big.append(top / scale)
    return Terms(tuple(variables), tuple(rms), tuple(big), tuple(bad))


@dataclass(frozen=True)
class Comparison:
    """A run against a reference at every iteration both saved."""

    by_iteration: dict[int, Terms]
    #: The run's saved iterations (other than 0) that the reference did
    #: not save, which are not compared.
    not_compared: tuple[int, ...] = ()
    #: Where the run's fields that are not compared (iteration 0 and
    #: not_compared) first hold NaN or inf (``first_not_finite``).
    not_finite_elsewhere: Optional[tuple[int, str, int]] = None

    @property
    def coverage(self) -> str:
        """How many of the run's saved iterations were compared, and which
        were not."""
        return coverage(len(self.by_iteration), self.not_compared)

    @property
    def _variables(self) -> tuple[str, ...]:
        return next(iter(self.by_iteration.values())).variables

    @property
    def worst(self) -> tuple[float, str, int]:
        """The worst RMS term, its variable and iteration."""
        return _worst([(t.worst[1], t.worst[0], it) for it, t in self.by_iteration.items()],
                      self._variables)

    @property
    def worst_max(self) -> tuple[float, str, int]:
        """The headline: the worst max term (the worst cell), its variable
        and iteration."""
        return _worst([(t.worst_max[1], t.worst_max[0], it)
                       for it, t in self.by_iteration.items()], self._variables)

    @property
    def eq2(self) -> tuple[float, int]:
        """The largest Eq. (2) over iterations (NaN the largest), and its
        iteration (the earliest of equals)."""
        value, _, it = _worst([(t.eq2, "", it) for it, t in self.by_iteration.items()], ())
        return value, it

    @property
    def not_finite(self) -> Optional[tuple[str, int, int, int]]:
        """Where a value that is not finite (NaN or inf) first appears in
        the fields compared or the run's others: its variable, iteration
        and the cells that hold one there in the run and in the reference
        (0 where not compared); None if none."""
        found = next(((name, it, run, ref) for it, t in sorted(self.by_iteration.items())
                      for name, (run, ref) in zip(t.variables, t.not_finite) if run or ref),
                     None)
        elsewhere = self.not_finite_elsewhere
        if elsewhere is not None and (found is None or elsewhere[0] < found[1]):
            return elsewhere[1], elsewhere[0], elsewhere[2], 0
        return found

    def per_variable(self) -> dict[str, dict[str, Optional[float]]]:
        """Each variable's worst RMS and max terms over iterations (NaN
        if a value of it is not finite at any)."""
        out: dict[str, dict[str, Optional[float]]] = {}
        for j, name in enumerate(self._variables):
            worst: dict[str, Optional[float]] = {}
            for kind in ("rms", "max"):
                values = [v for t in self.by_iteration.values()
                          if (v := getattr(t, kind)[j]) is not None]
                worst[kind] = max(values, key=rank) if values else None
            out[name] = worst
        return out

    def headline(self) -> str:
        value, name, it = self.worst
        top, top_name, top_it = self.worst_max
        eq2, eq2_it = self.eq2
        bad = self.not_finite
        warning = "" if bad is None else (
            f"NOT FINITE: NaN or inf in the fields, first in {bad[0]} at iteration "
            f"{bad[1]} ({bad[2]} cells of the run, {bad[3]} of the reference); ")
        return (f"{warning}worst cell {top:.2e} of its variable's maximum ({top_name}, "
                f"iteration {top_it}); worst RMS term {value:.2e} ({name}, iteration {it}); "
                f"Eq. (2) at most {eq2:.2e} (iteration {eq2_it}); {self.coverage}")

    def exceeded(self, cell_bound: float = CELL_BOUND,
                 rms_bound: Optional[float] = RMS_BOUND) -> list[str]:
        """The bounds the comparison exceeds, each in words with its value,
        variable and iteration: the worst cell over cell_bound, the worst
        RMS term over rms_bound (a NaN term exceeds any bound; None: the
        RMS term is not judged); empty if it is within both."""
        out = []
        for what, (value, name, it), bound in (("worst cell", self.worst_max, cell_bound),
                                               ("worst RMS term", self.worst, rms_bound)):
            if bound is not None and not value <= bound:  # NaN too
                out.append(f"{what} {value:.2e} ({name}, iteration {it}) exceeds {bound:g}")
        if self.not_finite_elsewhere is not None:
            it, name, cells = self.not_finite_elsewhere
            out.append(f"NaN or inf in the run at iteration {it}, which is not compared "
                       f"({name}, {cells} cells)")
        return out

    def verdict(self, cell_bound: float = CELL_BOUND, rms_bound: float = RMS_BOUND) -> str:
        """PASSED or FAILED against the bounds, in one line: the worst cell
        and the worst RMS term against each, over the iterations
        compared."""
        over = self.exceeded(cell_bound, rms_bound)
        if over:
            return "FAILED: " + "; ".join(over) + f" (over {self.coverage_short})"
        return (f"PASSED: worst cell {self.worst_max[0]:.2e} within {cell_bound:g}, worst RMS "
                f"term {self.worst[0]:.2e} within {rms_bound:g} (over {self.coverage_short})")

    @property
    def coverage_short(self) -> str:
        """The iterations judged, in a few words."""
        its = sorted(self.by_iteration)
        return (f"the {len(its)} iterations compared: {iteration_list(its)}"
                if len(its) > 1 else f"iteration {its[0]}, the only one compared")

    def to_dict(self, cell_bound: float = CELL_BOUND,
                rms_bound: Optional[float] = RMS_BOUND) -> dict[str, Any]:
        """Every term, and the verdict against the bounds (``exceeded``;
        rms_bound None: the RMS term is not judged, recorded as null)."""
        value, name, it = self.worst
        top, top_name, top_it = self.worst_max
        eq2, eq2_it = self.eq2
        return {
            "bounds": {"cell": cell_bound, "rms": rms_bound},
            "passed": not self.exceeded(cell_bound, rms_bound),
            "exceeded": self.exceeded(cell_bound, rms_bound),
            "worst_rms_term": {"value": value, "variable": name, "iteration": it},
            "worst_max_term": {"value": top, "variable": top_name, "iteration": top_it},
            "eq2_max": {"value": eq2, "iteration": eq2_it},
            "not_finite": None if (bad := self.not_finite) is None else {
                "variable": bad[0], "iteration": bad[1], "run_cells": bad[2],
                "reference_cells": bad[3]},
            "compared": sorted(self.by_iteration),
            "not_compared": list(self.not_compared),
            "per_variable": self.per_variable(),
            "iterations": {str(it): {"rms": dict(zip(t.variables, t.rms)),
                                     "max": dict(zip(t.variables, t.max)), "eq2": t.eq2}
                           for it, t in sorted(self.by_iteration.items())},
        }


def compare(run: dict[int, Array], reference: dict[int, Array]) -> Comparison:
    """The comparison at every iteration but 0 that both saved, and the
    run's other fields checked to be finite; raises ValueError if there is
    none or the grids differ."""
    common = sorted(set(run) & set(reference) - {0})
    missing = sorted(set(run) - set(reference) - {0})
    if not common:
        raise ValueError("no saved iteration (other than 0) in both runs"
                         + (f"; the run saved {iteration_list(missing)}" if missing else ""))
    others = {it: field for it, field in run.items() if it not in common}
    least = least_scales([reference[it] for it in common])
    return Comparison({it: terms(run[it], reference[it], least=least) for it in common},
                      tuple(missing), first_not_finite(others))


def least_scales(reference: Sequence[Array]) -> list[float]:
    """Per variable, the least scale of its terms: ROUND_OFF of an amount's
    largest finite value in the reference fields; 0 for pH and pe."""
    out = []
    for j, name in enumerate(VARIABLES):
        values = np.concatenate([np.abs(field[:, j]) for field in reference])
        finite = values[np.isfinite(values)]
        largest = float(finite.max()) if finite.size else 0.0
        out.append(ROUND_OFF * largest if name in AMOUNTS else 0.0)
    return out


def first_not_finite(saved: dict[int, Array]) -> Optional[tuple[int, str, int]]:
    """Where saved fields (by iteration, cells x variables) first hold NaN
    or inf: (iteration, variable, cells there), the earliest iteration and
    then the first variable; None if nowhere."""
    for it in sorted(saved):
        bad = np.count_nonzero(~np.isfinite(saved[it]), axis=0)
        for j, name in enumerate(VARIABLES):
            if bad[j]:
                return it, name, int(bad[j])
    return None


def field_file(iteration: int, kind: str) -> str:
    """The name of the file a run saves its fields of an iteration in:
    fields_NNNNN.npz (kind "npz") or .vtu (kind "vtu")."""
    return f"fields_{iteration:05d}.{kind}"


def field_files(folder: Path, kind: str) -> dict[int, Path]:
    """The files in folder named as a run names its saved fields of kind
    (``field_file``, exactly: fields_mine.npz or fields_1.npz is not one),
    by iteration."""
    found = {}
    for path in folder.glob(f"fields_*.{kind}"):
        match = re.fullmatch(rf"fields_([0-9]+)\.{re.escape(kind)}", path.name)
        if match and path.name == field_file(int(match.group(1)), kind):
            found[int(match.group(1))] = path
    return found


def load_fields(folder: Path, grid: Optional[tuple[int, int]] = None) -> dict[int, Array]:
    """The fields_NNNNN.npz a run saved, by iteration, as (cells, variables);
    raises ValueError naming a file that cannot be read as such (not an
    .npz, truncated, a variable missing or not numbers, variables of
    different sizes), or folder if it is not a folder. With grid, (ny, nx)
    as a run saves its variables, also one whose variables are of another
    shape."""
    if not folder.is_dir():
        raise ValueError(f"{folder} " + ("is not a folder" if folder.exists()
                                         else "does not exist"))
    fields = {}
    for it, path in field_files(folder, "npz").items():
        shapes: dict[str, tuple[int, ...]] = {}
        try:
            with open(path, "rb") as f:
                head = f.read(6)
            # Without a zip's or NumPy's header, np.load would try pickle.
            if not head.startswith((b"PK\x03\x04", b"PK\x05\x06", b"\x93NUMPY")):
                raise ValueError("not an .npz archive (no zip header)")
            data = np.load(path)
            if not isinstance(data, np.lib.npyio.NpzFile):
                raise ValueError("one array, not an .npz archive of variables")
            with data:
                missing = [v for v in VARIABLES if v not in data.files]
                if missing:
                    raise ValueError(f"it lacks {', '.join(missing)}")
                arrays = [np.asarray(data[v], dtype=np.float64) for v in VARIABLES]
                shapes = {v: a.shape for v, a in zip(VARIABLES, arrays)}
                fields[it] = np.column_stack([a.ravel() for a in arrays])
        except ValueError as e:
            # NumPy's advice for a pickled object (allow_pickle) is not ours:
            # a run saves arrays of numbers only.
            why = ("it holds pickled objects, not arrays of numbers" if "allow_pickle" in str(e)
                   else str(e))
            raise ValueError(f"{path} cannot be read as a run's saved fields: {why}") from None
        except (OSError, EOFError, zipfile.BadZipFile, zlib.error) as e:
            raise ValueError(f"{path} cannot be read as a run's saved fields: {e}") from None
        except NotImplementedError as e:  # zipfile's, for a compression it does not read
            raise ValueError(f"{path} cannot be read as a run's saved fields: {e} (a zip "
                             "compression method Python's zipfile does not read)") from None
        other = [(name, shape) for name, shape in shapes.items() if shape != grid]
        if grid is not None and other:
            name, shape = other[0]
            raise ValueError(f"{path} holds the fields of another grid: its {name} is "
                             f"{' x '.join(map(str, shape)) or 'one number'} cells "
                             f"(ny x nx), where this grid is {grid[0]} x {grid[1]}")
    return fields


def table(comparison: Comparison) -> str:
    """Per iteration: the worst max term and its variable, the worst RMS
    term and its variable, and Eq. (2); then per variable: the worst max
    and RMS terms over iterations."""
    lines = ["iteration  worst max term  variable  worst RMS term  variable  Eq. (2)"]
    for it, t in sorted(comparison.by_iteration.items()):
        top_name, top = t.worst_max
        name, value = t.worst
        lines.append(f"{it:9d}  {top:14.2e}  {top_name:8s}  {value:14.2e}  {name:8s}  "
                     f"{t.eq2:.2e}")
    lines += ["", "variable  worst max term  worst RMS term"]
    for name, worst in comparison.per_variable().items():
        rms, big = worst["rms"], worst["max"]
        lines.append(f"{name:8s}  {'-' if big is None else f'{big:.2e}':>14s}  "
                     f"{'-' if rms is None else f'{rms:.2e}':>14s}")
    return "\n".join(lines)


def _grid(config: Optional[dict[str, Any]]) -> Optional[tuple[int, int]]:
    """(ny, nx) as a configuration records it; None where it does not."""
    try:
        return (int(config["ny"]), int(config["nx"])) if config is not None else None
    except (KeyError, TypeError, ValueError):
        return None


def _first_grid(folder: Path) -> Optional[tuple[int, int]]:
    """The (ny, nx) of C in the first saved fields in folder; None where
    there are none, or it is not 2-D (load_fields then says what is
    wrong)."""
    files = field_files(folder, "npz") if folder.is_dir() else {}
    if not files:
        return None
    try:
        data = np.load(files[min(files)])
        if not isinstance(data, np.lib.npyio.NpzFile):
            return None
        with data:
            shape = np.shape(data["C"])
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile,
            zlib.error, NotImplementedError):
        return None
    return (int(shape[0]), int(shape[1])) if len(shape) == 2 else None


def _check_json_target(path: Path, folders: Sequence[Path]) -> None:
    """Raises ValueError where --json FILE would replace a file of the runs
    compared (their summary.json, a saved field) or cannot be a file."""
    if path.is_dir():  # '' too, which is '.'
        raise ValueError(f"--json {str(path)!r} is a folder, not a file to write")
    if not path.exists():
        return
    for folder in folders:
        if folder.is_dir() and path.resolve().parent == folder.resolve():
            raise ValueError(f"--json {path} is a file of {folder}, one of the runs compared: "
                             "it would be replaced; write the terms elsewhere")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mpidht_sim.measure", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path, help="output folder of the run to judge")
    parser.add_argument("reference", type=Path, help="output folder of the reference run")
    parser.add_argument("--json", type=Path, metavar="FILE",
                        help="also write every term as JSON to FILE")
    parser.add_argument("--cell-bound", type=float, default=CELL_BOUND, metavar="BOUND",
                        help="fail (exit 1) where the worst cell, over its variable's "
                             f"maximum, exceeds BOUND (default {CELL_BOUND:g}; inf: none)")
    parser.add_argument("--rms-bound", type=float, default=RMS_BOUND, metavar="BOUND",
                        help="fail (exit 1) where the worst RMS term exceeds BOUND "
                             f"(default {RMS_BOUND:g}; inf: none)")
    parser.add_argument("--version", action="version",
                        version=f"%(prog)s (mpidht_sim) {__version__}")
    args = parser.parse_args(argv)
    for option, bound in (("--cell-bound", args.cell_bound), ("--rms-bound", args.rms_bound)):
        if not bound > 0:  # NaN too
            parser.error(f"{option} must be positive (inf: no bound), got {bound!r}")
    unchecked = []
    try:
        folders = (args.run, args.reference)
        for what, path in (("RUN_DIR", args.run), ("REFERENCE_DIR", args.reference),
                           ("--json", args.json)):
            if path is not None:
                check_path(path, what)
        if args.json is not None:
            _check_json_target(args.json, folders)
        configs = [saved_config(args.run), saved_config(args.reference)]
        unchecked = [f for f, c in zip((args.run, args.reference), configs) if c is None]
        if configs[0] is not None and configs[1] is not None:
            why = settings_differ(configs[0], configs[1], iterations=False)
            if why is not None:
                raise ValueError(f"the reference does not match the run: {why}")
        # Every file of a folder of the grid its summary.json records (else
        # of its first file's), and the two grids alike: fields of 16 cells
        # were compared as 8 x 2 against 4 x 4.
        grids = [_grid(c) or _first_grid(f) for c, f in zip(configs, folders)]
        saved = [load_fields(f, g) for f, g in zip(folders, grids)]
        for folder, fields in zip(folders, saved):
            if not fields:
                raise ValueError(f"{folder} holds no saved fields (fields_NNNNN.npz) of a run")
        if grids[0] != grids[1]:
            raise ValueError("the two runs are of different grids: "
                             + " against ".join(" x ".join(map(str, g)) if g else "unknown"
                                                for g in grids) + " cells (ny x nx)")
        comparison = compare(*saved)
    except ValueError as e:
        print(f"mpidht_sim.measure: {args.run} against {args.reference}: {e}", file=sys.stderr)
        return 2
    print(table(comparison))
    print()
    print(comparison.headline())
    if used_dht(configs[1]):
        print(f"the reference, {args.reference}, is {USED_DHT}")
    if unchecked:
        print("settings not checked (grid, flow, time, chemistry, waters): "
              f"{' and '.join(map(str, unchecked))} without summary.json")
    print(comparison.verdict(args.cell_bound, args.rms_bound))
    if args.json is not None:
        try:
            args.json.write_text(json.dumps(
                comparison.to_dict(args.cell_bound, args.rms_bound), indent=1))
        except OSError as e:
            print(f"mpidht_sim.measure: --json {args.json} cannot be written: "
                  f"{e.strerror or e}", file=sys.stderr)
            return 2
    if comparison.not_finite is not None:
        name, it, _, _ = comparison.not_finite
        print(f"mpidht_sim.measure: {args.run} against {args.reference}: values that are "
              f"not finite, first in {name} at iteration {it}", file=sys.stderr)
        return 1
    if comparison.exceeded(args.cell_bound, args.rms_bound):
        print(f"mpidht_sim.measure: {args.run} against {args.reference}: "
              + "; ".join(comparison.exceeded(args.cell_bound, args.rms_bound)),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
