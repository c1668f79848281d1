"""Run configuration: a TOML file, checked completely before any MPI work.

Every error names the offending key and what was expected; the defaults are
those of ``configs/simdol2d.toml`` (the SimDol2D benchmark). Loading also
computes the initial and injected waters with PHREEQC (``waters``), checks
that the database loads and reacts the initial water once, so that a
chemistry that cannot run is refused here, not after MPI has started.

Overrides are ``"section.key"`` (replaces the key's value, a table
included) or ``"section.key.sub"`` (sets one entry of a table, e.g.
``dht.digits.C``). A water section ([initial], [injected]) given a
``solution`` or ``state`` of its own drops the default's definition.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

import numpy as np

from . import checkpoint, waters
from .chemistry import Chemistry
from .errors import ChemistryError, ConfigError, check_path
from .measure import CELL_BOUND, RMS_BOUND
from .variables import AQUEOUS, MINERALS, VARIABLES
from .waters import Water

__all__ = ["AQUEOUS", "MINERALS", "VARIABLES", "Config", "ConfigError", "DhtConfig",
           "DEFAULT_CONFIG", "FixedPressure", "InterpConfig", "METHODS", "ROUNDINGS", "load"]

DEFAULT_CONFIG = Path(__file__).parent / "configs" / "simdol2d.toml"
SECTIONS = ("grid", "flow", "time", "chemistry", "initial", "injected", "dht", "interp",
            "run")
#: How a variable is reduced to a key element: to significant digits, or to
#: decimal places by truncation (POET's rounding).
ROUNDINGS = ("significant", "decimal")
#: Variables dht.reset may name: not amounts, whose changes are conserved.
RESETTABLE = ("pH", "pe")
#: How the interpolating surrogate predicts (mpidht.interp.Method).
METHODS = ("idw", "linear")
ESTIMATES = ("leave-one-out", "standard-error")
#: The most cells a grid may have: rank 0 holds the whole grid, and its
#: flow solve (SciPy's direct sparse solver) took 2.3 GB and 29 s at
#: 1000 x 1000, growing faster than the cell count (1.8 kB a cell at
#: 300 x 300); PHREEQC takes about 10 CPU minutes per iteration there.
MAX_CELLS = 1_000_000
#: The shortest time step (s). PHREEQC's kinetics never returned for steps
#: of 1e-322 s and below (subnormal numbers); a microsecond is far below
#: any step of reactive transport and far above those.
MIN_TIME_STEP = 1e-6
#: The largest rate factor of a mineral (chemistry.calcite_parm,
#: dolomite_parm). PHREEQC's explicit integrator takes steps in proportion
#: to rate x time step: dolomite at 1e4 fails ("Bad RK steps") after 2.4 s
#: on one cell at the front, at 1e8 after 4 s, at 1e10 after 124 s.
MAX_RATE_PARM = 1e6
_WATER_KEYS = ("solution", "state", "charge_balance", "equilibrium")


@dataclass(frozen=True)
class FixedPressure:
    x: int
    y: int
    pressure: float
    injects: bool  # the cell holds the injected water


@dataclass(frozen=True)
class DhtConfig:
    enabled: bool
    protocol: str
    memory_per_worker: int
    digits: dict[str, int]
    log: bool
    floor: float
    rounding: str = "significant"
    restore: Optional[Path] = None  # a saved DHT to start from
    dump: bool = False              # save the DHT with the fields
    #: Variables the reaction sets whatever their input (pe, under the
    #: fixed O2(g) of every cell): out of the keys, their result stored.
    reset: tuple[str, ...] = ()


@dataclass(frozen=True)
class InterpConfig:
    """The interpolating surrogate ([interp]; used only with the DHT on)."""

    enabled: bool = False
    method: str = "linear"
    memory_per_worker: int = 64 << 20
    digits: dict[str, int] = field(default_factory=dict)
    slots: int = 192
    min_neighbours: int = 10
    neighbours: int = 12
    radius: float = 0.5
    extrapolation: float = 0.25
    estimate: str = "standard-error"
    interval: float = 3.0
    tolerance: float = 2e-5
    budget: float = 5e-5
    conservation_rtol: float = 1e-5
    verify: float = 0.02


@dataclass(frozen=True)
class Config:
    nx: int
    ny: int
    cell_size: float
    porosity: float
    permeability: float
    viscosity: float
    fixed: tuple[FixedPressure, ...]
    iterations: int
    time_step: float
    database: str
    calcite_parm: float
    dolomite_parm: float
    charge_tolerance: float
    #: The computed waters, "initial" and "injected".
    waters: dict[str, Water]
    #: The initial state of a cell: the initial water and the minerals.
    initial: dict[str, float]
    #: The state the injecting cells hold (aqueous variables).
    injected: dict[str, float]
    dht: DhtConfig
    interp: InterpConfig
    package_size: int
    output_dir: Path
    save_every: int
    overwrite: bool = False
    #: Whether the run draws maps.png and iterations.png (matplotlib).
    plots: bool = True
    reference: Optional[Path] = None  # a reference run's output folder
    #: The bounds a run with a reference is held to: its worst cell and its
    #: worst RMS term, each over its variable's maximum (measure).
    cell_bound: float = CELL_BOUND
    rms_bound: float = RMS_BOUND
    #: Seconds from the first step after which the run stops rather than
    #: begin an iteration that may end later (0: no limit).
    stop_after: float = 0.0
    source: Path = field(default=DEFAULT_CONFIG)

    def to_dict(self) -> dict[str, Any]:
        """The whole effective configuration, JSON-ready."""
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if hasattr(value, "to_dict"):
            return value.to_dict()
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def _number(table: Mapping[str, Any], section: str, key: str, default: Any = None, *,
            minimum: float | None = None, positive: bool = False,
            integer: bool = False, maximum: float | None = None) -> Any:
    value = table.get(key, default)
    where = f"{section}.{key}"
    if value is None:
        raise ConfigError(f"{where} is required")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{where} must be a number, got {value!r}")
    if integer and not isinstance(value, int):
        raise ConfigError(f"{where} must be an integer, written without a decimal point or "
                          f"exponent, got {value!r}")
    if isinstance(value, int) and abs(value).bit_length() > 1023:  # float() overflows
        raise ConfigError(f"{where} must be below 1.8e308, as any number here, got one of "
                          f"{len(str(abs(value)))} digits")
    if not math.isfinite(value):
        raise ConfigError(f"{where} must be finite, got {value!r}")
    if positive and value <= 0:
        raise ConfigError(f"{where} must be positive, got {value!r}")
    if minimum is not None and value < minimum:
        raise ConfigError(f"{where} must be at least {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise ConfigError(f"{where} must be at most {maximum}, got {value!r}")
    return value


def _flag(table: Mapping[str, Any], where: str, key: str) -> bool:
    value = table.get(key)
    if not isinstance(value, bool):
        raise ConfigError(f"{where}.{key} must be true or false, got {value!r}")
    return value


def _path(table: Mapping[str, Any], where: str, key: str) -> Optional[Path]:
    """A path, or None for an empty string."""
    if table.get(key, "") == "":
        return None
    return _required_path(table, where, key, " (or \"\" for none)")


def _required_path(table: Mapping[str, Any], where: str, key: str,
                   alternative: str = "") -> Path:
    value = table.get(key)
    if not isinstance(value, (str, Path)) or value == "":
        raise ConfigError(f"{where}.{key} must be a path{alternative}, got {value!r}")
    check_path(Path(value), f"{where}.{key}")
    return Path(value)


def _physical_memory() -> Optional[int]:
    """This machine's physical memory in bytes (None where unknown)."""
    try:
        pages, page = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None
    return pages * page if pages > 0 and page > 0 else None


def _memory(table: Mapping[str, Any], section: str) -> int:
    """A table's memory_per_worker, at most this machine's physical memory:
    the library refuses budgets that, summed over a node's processes,
    exceed it, but only after MPI has started."""
    memory = int(_number(table, section, "memory_per_worker", integer=True, minimum=4096))
    physical = _physical_memory()
    if physical is not None and memory > physical:
        raise ConfigError(f"{section}.memory_per_worker must be at most the machine's "
                          f"physical memory, {physical} bytes, got {memory}")
    return memory


def _known(table: Mapping[str, Any], section: str, allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise ConfigError(f"unknown key(s) in [{section}]: {', '.join(unknown)}; "
                          f"expected some of {', '.join(allowed)}")


def _dht(table: Mapping[str, Any]) -> DhtConfig:
    keys = ("enabled", "protocol", "memory_per_worker", "digits", "log", "floor",
            "rounding", "restore", "dump", "reset")
    _known(table, "dht", keys)
    enabled, log, dump = (_flag(table, "dht", k) for k in ("enabled", "log", "dump"))
    protocol = table.get("protocol")
    if protocol not in ("coarse", "fine", "lockfree"):
        raise ConfigError(f"dht.protocol must be coarse, fine or lockfree, got {protocol!r}")
    memory = _memory(table, "dht")
    rounding = table.get("rounding", "significant")
    if rounding not in ROUNDINGS:
        raise ConfigError(f"dht.rounding must be {' or '.join(ROUNDINGS)}, got {rounding!r}")
    digits = _digits(table, "dht", 1 if rounding == "significant" else 0)
    floor = float(_number(table, "dht", "floor", minimum=0.0))
    reset = table.get("reset", [])
    if not isinstance(reset, list) or not all(isinstance(v, str) for v in reset):
        raise ConfigError(f"dht.reset must be a list of variable names, got {reset!r}")
    for name in reset:
        if name not in RESETTABLE:
            raise ConfigError(f"dht.reset: {name!r} cannot be reset; only "
                              f"{' and '.join(RESETTABLE)} can (the amounts are conserved: "
                              "their changes are stored)")
    restore = _path(table, "dht", "restore")
    unused = [name for name, given in (("dht.restore (--warm-start)", restore is not None),
                                       ("dht.dump (--save-dht)", dump)) if given]
    if unused and not enabled:
        raise ConfigError(f"dht.enabled = false (--no-dht) cannot go with "
                          f"{' or '.join(unused)}: without the DHT there is nothing to "
                          "load or save")
    return DhtConfig(enabled, str(protocol), memory, digits, log, floor, str(rounding),
                     restore, dump, tuple(sorted(set(reset))))


def _digits(table: Mapping[str, Any], section: str, minimum: int) -> dict[str, int]:
    """The per-variable digits table of a section."""
    digits_table = table.get("digits")
    if not isinstance(digits_table, dict):
        raise ConfigError(f"{section}.digits must be a table of variable = digits")
    unknown = sorted(set(digits_table) - set(VARIABLES))
    if unknown:
        raise ConfigError(f"{section}.digits: unknown variable(s) {', '.join(unknown)}; "
                          f"the variables are {', '.join(VARIABLES)}")
    digits = {}
    for name in VARIABLES:
        if name not in digits_table:
            raise ConfigError(f"{section}.digits.{name} is required")
        # A float64 carries at most 15 significant decimal digits; decimal
        # places may be 0 (whole numbers), significant digits not.
        digits[name] = int(_number(digits_table, f"{section}.digits", name, integer=True,
                                   minimum=minimum, maximum=15))
    return digits


def _interp(table: Mapping[str, Any]) -> InterpConfig:
    keys = ("enabled", "method", "memory_per_worker", "digits", "slots", "min_neighbours",
            "neighbours", "radius", "extrapolation", "estimate", "interval", "tolerance",
            "budget", "conservation_rtol", "verify")
    _known(table, "interp", keys)
    method = table.get("method")
    if method not in METHODS:
        raise ConfigError(f"interp.method must be {' or '.join(METHODS)}, got {method!r}")
    estimate = table.get("estimate")
    if estimate not in ESTIMATES:
        raise ConfigError(f"interp.estimate must be {' or '.join(ESTIMATES)}, "
                          f"got {estimate!r}")
    if estimate == "standard-error" and method != "linear":
        raise ConfigError(f"interp.estimate = 'standard-error' needs interp.method = "
                          f"'linear', got {method!r} (with it, set interp.estimate = "
                          f"'leave-one-out')")
    slots = int(_number(table, "interp", "slots", integer=True, minimum=1, maximum=4096))
    min_neighbours = int(_number(table, "interp", "min_neighbours", integer=True, minimum=1,
                                 maximum=slots))
    neighbours = int(_number(table, "interp", "neighbours", integer=True, minimum=0,
                             maximum=slots))
    if 0 < neighbours < min_neighbours:
        raise ConfigError(f"interp.neighbours must be 0 (all) or at least interp."
                          f"min_neighbours ({min_neighbours}), got {neighbours}")
    interp = InterpConfig(
        enabled=_flag(table, "interp", "enabled"),
        method=str(method),
        memory_per_worker=_memory(table, "interp"),
        digits=_digits(table, "interp", 1),
        slots=slots,
        min_neighbours=min_neighbours,
        neighbours=neighbours,
        radius=float(_number(table, "interp", "radius", positive=True)),
        extrapolation=float(_number(table, "interp", "extrapolation", minimum=0.0)),
        estimate=str(estimate),
        interval=float(_number(table, "interp", "interval", positive=True)),
        tolerance=float(_number(table, "interp", "tolerance", minimum=0.0)),
        budget=float(_number(table, "interp", "budget", minimum=0.0)),
        conservation_rtol=float(_number(table, "interp", "conservation_rtol", minimum=0.0)),
        verify=float(_number(table, "interp", "verify", minimum=0.0, maximum=1.0)),
    )
    return interp


def _set_deep(merged: dict[str, Any], dotted: str, value: Any) -> None:
    section, *path = dotted.split(".")
    if section not in merged or not path or not all(path):
        raise ConfigError(f"cannot override {dotted!r}: no such section.key")
    table = merged[section]
    for i, part in enumerate(path[:-1]):
        if not isinstance(table.get(part), dict):
            where = ".".join([section, *path[:i + 1]])
            raise ConfigError(f"cannot override {dotted!r}: {where} is not a table")
        table = table[part]
    table[path[-1]] = value


def _merge(defaults: Mapping[str, Any], user: Mapping[str, Any],
           overrides: Mapping[str, Any]) -> dict[str, Any]:
    """defaults < file < overrides. A water the user defines replaces the
    default's definition as a whole."""
    layer: dict[str, Any] = {name: dict(user.get(name, {})) for name in SECTIONS}
    deep = {}
    for dotted, value in overrides.items():
        section, _, key = dotted.partition(".")
        if section not in layer or not key:
            raise ConfigError(f"cannot override {dotted!r}: no such section.key")
        if "." in key:
            deep[dotted] = value
        else:
            layer[section][key] = value
    merged = {}
    for name in SECTIONS:
        base = copy.deepcopy(defaults[name])
        if name in ("initial", "injected") and ("solution" in layer[name]
                                                or "state" in layer[name]):
            base = {k: v for k, v in base.items() if k not in _WATER_KEYS}
        merged[name] = {**base, **layer[name]}
    for dotted, value in deep.items():
        _set_deep(merged, dotted, value)
    return merged


def load(path: Path | str | None = None, overrides: Mapping[str, Any] | None = None) -> Config:
    """Reads and checks a configuration and computes its waters; values
    missing from it come from the default SimDol2D file. ``overrides`` maps
    "section.key" or "section.key.entry" to a value."""
    defaults = tomllib.loads(DEFAULT_CONFIG.read_text())
    source = Path(path) if path is not None else DEFAULT_CONFIG
    data: dict[str, Any] = {}
    try:
        if path is not None:
            if source.exists() and not source.is_file():
                kind = "a directory" if source.is_dir() else "not a regular file"
                raise ConfigError(f"config file {source} is {kind}")
            data = tomllib.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file {source} not found") from None
    except OSError as e:
        raise ConfigError(f"config file {source} cannot be read: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{source}: not UTF-8 text, as TOML must be ({e.reason} at "
                          f"byte {e.start})") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{source}: not valid TOML: {e}") from None
    except RecursionError:
        raise ConfigError(f"{source}: nested too deeply to be read") from None
    _known(data, "top level", SECTIONS)
    for name in SECTIONS:
        if not isinstance(data.get(name, {}), dict):
            raise ConfigError(f"[{name}] must be a table")
    cfg = _build(_merge(defaults, data, overrides or {}), source)
    if cfg.dht.enabled:
        checkpoint.check_restore(cfg)
    return cfg


def _build(m: Mapping[str, Mapping[str, Any]], source: Path) -> Config:
    g, f, t, c, r = m["grid"], m["flow"], m["time"], m["chemistry"], m["run"]
    _known(g, "grid", ("nx", "ny", "cell_size", "porosity", "permeability"))
    _known(f, "flow", ("viscosity", "fixed_pressure"))
    _known(t, "time", ("iterations", "time_step"))
    _known(c, "chemistry", ("database", "calcite_parm", "dolomite_parm", "charge_tolerance"))
    _known(r, "run", ("package_size", "output_dir", "save_every", "overwrite", "plots",
                      "reference", "cell_bound", "rms_bound", "stop_after"))
    _known(m["initial"], "initial", _WATER_KEYS + MINERALS)
    _known(m["injected"], "injected", _WATER_KEYS)
    # Any shape, a 1 x n column included: only the cells are bounded.
    nx = _number(g, "grid", "nx", integer=True, minimum=1)
    ny = _number(g, "grid", "ny", integer=True, minimum=1)
    if nx * ny < 2:
        raise ConfigError("the grid needs at least 2 cells")
    if nx * ny > MAX_CELLS:
        raise ConfigError(f"grid.nx * grid.ny must be at most {MAX_CELLS} cells, "
                          f"got {nx} x {ny} = {nx * ny}")
    fixed = _fixed(f.get("fixed_pressure"), nx, ny)
    if len(fixed) >= nx * ny:
        raise ConfigError(f"flow.fixed_pressure holds every cell of the {nx} x {ny} grid "
                          "(grid.nx, grid.ny): no cell is left to react; the grid needs at "
                          f"least one cell more than the {len(fixed)} held at a fixed pressure")
    database = c.get("database", "phreeqc.dat")
    if not isinstance(database, str) or not database:
        raise ConfigError(f"chemistry.database must be a database name, got {database!r}")
    tolerance = float(_number(c, "chemistry", "charge_tolerance", minimum=0.0))
    minerals = {v: float(_number(m["initial"], "initial", v, minimum=0.0)) for v in MINERALS}
    definitions = {
        "initial": waters.check_definition(
            "initial", {k: v for k, v in m["initial"].items() if k not in MINERALS}),
        "injected": waters.check_definition("injected", dict(m["injected"])),
    }
    engine = waters.open_database(database)
    computed = {name: waters.compute(d, engine, tolerance) for name, d in definitions.items()}
    cfg = Config(
        nx=nx, ny=ny,
        cell_size=float(_number(g, "grid", "cell_size", positive=True)),
        porosity=float(_number(g, "grid", "porosity", positive=True, maximum=1.0)),
        permeability=float(_number(g, "grid", "permeability", positive=True)),
        viscosity=float(_number(f, "flow", "viscosity", positive=True)),
        fixed=fixed,
        iterations=int(_number(t, "time", "iterations", integer=True, minimum=1)),
        time_step=float(_number(t, "time", "time_step", minimum=MIN_TIME_STEP)),
        database=database,
        calcite_parm=float(_number(c, "chemistry", "calcite_parm", minimum=0.0,
                                   maximum=MAX_RATE_PARM)),
        dolomite_parm=float(_number(c, "chemistry", "dolomite_parm", minimum=0.0,
                                    maximum=MAX_RATE_PARM)),
        charge_tolerance=tolerance,
        waters=computed,
        initial={**computed["initial"].state, **minerals},
        injected=dict(computed["injected"].state),
        dht=_dht(m["dht"]),
        interp=_interp(m["interp"]),
        package_size=int(_number(r, "run", "package_size", integer=True, minimum=0)),
        output_dir=_required_path(r, "run", "output_dir"),
        save_every=int(_number(r, "run", "save_every", integer=True, minimum=1)),
        overwrite=_flag(r, "run", "overwrite"),
        plots=_flag(r, "run", "plots"),
        reference=_path(r, "run", "reference"),
        cell_bound=float(_number(r, "run", "cell_bound", CELL_BOUND, positive=True)),
        rms_bound=float(_number(r, "run", "rms_bound", RMS_BOUND, positive=True)),
        stop_after=float(_number(r, "run", "stop_after", 0.0, minimum=0.0)),
        source=source,
    )
    _react_once(cfg)
    return cfg


def _react_once(cfg: Config) -> None:
    """Reacts for one time step the initial water and, as the first step at
    a front makes it, its even mix with each other water, all with the
    initial minerals: a database that lacks the phases or kinetics PHREEQC
    cannot integrate (rates too fast for the step) fail here, before MPI."""
    initial = np.array([cfg.initial[v] for v in VARIABLES])
    states = [initial]
    for name, water in cfg.waters.items():
        if name != "initial":
            other = np.array([water.state.get(v, cfg.initial[v]) for v in VARIABLES])
            states.append((initial + other) / 2)
    try:
        chemistry = Chemistry(cfg.database, cfg.calcite_parm, cfg.dolomite_parm)
        chemistry.react(np.array(states), cfg.time_step)
    except ChemistryError as e:
        raise ConfigError(f"chemistry: PHREEQC cannot react the initial water, or its even "
                          f"mix with the injected one, for time.time_step "
                          f"{cfg.time_step:g} s with {cfg.database}, calcite_parm "
                          f"{cfg.calcite_parm:g}, dolomite_parm {cfg.dolomite_parm:g}: "
                          f"{e}") from None


def _fixed(entries: Any, nx: int, ny: int) -> tuple[FixedPressure, ...]:
    if not isinstance(entries, list) or len(entries) < 2:
        raise ConfigError("flow.fixed_pressure must list at least two cells "
                          "(an inflow and an outflow)")
    out, seen = [], set()
    for i, e in enumerate(entries):
        where = f"flow.fixed_pressure[{i}]"
        if not isinstance(e, dict):
            raise ConfigError(f"{where} must be a table {{ cell = [x, y], pressure = Pa }}")
        _known(e, where, ("cell", "pressure", "water"))
        cell = e.get("cell")
        if (not isinstance(cell, list) or len(cell) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in cell)):
            raise ConfigError(f"{where}.cell must be [x, y] whole numbers, got {cell!r}")
        x, y = cell
        if not (-nx <= x < nx and -ny <= y < ny):
            raise ConfigError(f"{where}.cell {cell} lies outside the {nx} x {ny} grid")
        x, y = x % nx, y % ny  # negative: counted from the far edge
        if (x, y) in seen:
            raise ConfigError(f"{where}.cell {cell} is listed twice")
        seen.add((x, y))
        water = e.get("water", "resident")
        if water not in ("injected", "resident"):
            raise ConfigError(f"{where}.water must be \"injected\" or \"resident\", "
                              f"got {water!r}")
        pressure = float(_number(e, where, "pressure"))
        out.append(FixedPressure(x, y, pressure, water == "injected"))
    if len({p.pressure for p in out}) < 2:
        raise ConfigError("flow.fixed_pressure: all pressures are equal, nothing flows")
    if not any(p.injects for p in out):
        raise ConfigError("flow.fixed_pressure: no cell has water = \"injected\", so only "
                          "the initial water would flow and nothing would react")
    return tuple(out)
