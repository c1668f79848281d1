"""Run configuration: a TOML file, checked completely before any MPI work.

Every error names the offending key and what was expected; the defaults are
those of ``configs/simdol2d.toml`` (the SimDol2D benchmark).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

#: The state of a cell: transported aqueous variables, then immobile minerals.
AQUEOUS = ("C", "Ca", "Cl", "Mg", "pH", "pe")
MINERALS = ("calcite", "dolomite")
VARIABLES = AQUEOUS + MINERALS

DEFAULT_CONFIG = Path(__file__).parent / "configs" / "simdol2d.toml"


class ConfigError(ValueError):
    """A configuration that cannot run; the message says which key and why."""


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
    restore: Optional[Path] = None  # a saved DHT to start from
    dump: bool = False              # save the DHT with the fields


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
    initial: dict[str, float]
    injected: dict[str, float]
    dht: DhtConfig
    package_size: int
    output_dir: Path
    save_every: int
    source: Path = field(default=DEFAULT_CONFIG)


def _section(data: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise ConfigError(f"[{name}] must be a table")
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
        raise ConfigError(f"{where} must be a whole number, got {value!r}")
    if not math.isfinite(value):
        raise ConfigError(f"{where} must be finite, got {value!r}")
    if positive and value <= 0:
        raise ConfigError(f"{where} must be positive, got {value!r}")
    if minimum is not None and value < minimum:
        raise ConfigError(f"{where} must be at least {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise ConfigError(f"{where} must be at most {maximum}, got {value!r}")
    return value


def _known(table: Mapping[str, Any], section: str, allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise ConfigError(f"unknown key(s) in [{section}]: {', '.join(unknown)}; "
                          f"expected some of {', '.join(allowed)}")


def _water(table: Mapping[str, Any], section: str, names: tuple[str, ...],
           defaults: Mapping[str, Any]) -> dict[str, float]:
    _known(table, section, names)
    water = {}
    for name in names:
        low = None if name in ("pH", "pe") else 0.0
        water[name] = float(_number(table, section, name, defaults.get(name), minimum=low))
    return water


def _dht(table: Mapping[str, Any], defaults: Mapping[str, Any]) -> DhtConfig:
    keys = ("enabled", "protocol", "memory_per_worker", "digits", "log", "floor",
            "restore", "dump")
    _known(table, "dht", keys)
    merged = {**defaults, **table}
    enabled, log, dump = merged.get("enabled"), merged.get("log"), merged.get("dump", False)
    for key, value in (("enabled", enabled), ("log", log), ("dump", dump)):
        if not isinstance(value, bool):
            raise ConfigError(f"dht.{key} must be true or false, got {value!r}")
    protocol = merged.get("protocol")
    if protocol not in ("coarse", "fine", "lockfree"):
        raise ConfigError(f"dht.protocol must be coarse, fine or lockfree, got {protocol!r}")
    memory = _number(merged, "dht", "memory_per_worker", integer=True, minimum=4096)
    digits_table = merged.get("digits")
    if not isinstance(digits_table, dict):
        raise ConfigError("dht.digits must be a table of variable = significant digits")
    unknown = sorted(set(digits_table) - set(VARIABLES))
    if unknown:
        raise ConfigError(f"dht.digits: unknown variable(s) {', '.join(unknown)}; "
                          f"the variables are {', '.join(VARIABLES)}")
    digits = {}
    for name in VARIABLES:
        if name not in digits_table:
            raise ConfigError(f"dht.digits.{name} is required")
        # A float64 carries at most 15 significant decimal digits.
        digits[name] = int(_number(digits_table, "dht.digits", name, integer=True,
                                   minimum=1, maximum=15))
    floor = float(_number(merged, "dht", "floor", minimum=0.0))
    restore = merged.get("restore", "")
    if not isinstance(restore, (str, Path)):
        raise ConfigError(f"dht.restore must be a file name (or \"\" for none), got {restore!r}")
    return DhtConfig(bool(enabled), str(protocol), int(memory), digits, bool(log), floor,
                     Path(restore) if str(restore) else None, bool(dump))


def load(path: Path | str | None = None, overrides: Mapping[str, Any] | None = None) -> Config:
    """Reads and checks a configuration; values missing from it come from the
    default SimDol2D file. ``overrides`` maps "section.key" to a value."""
    defaults = tomllib.loads(DEFAULT_CONFIG.read_text())
    data: dict[str, Any] = {}
    source = Path(path) if path is not None else DEFAULT_CONFIG
    try:
        data = tomllib.loads(source.read_text())
    except FileNotFoundError:
        raise ConfigError(f"config file {source} not found") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{source}: not valid TOML: {e}") from None
    sections = ("grid", "flow", "time", "chemistry", "initial", "injected", "dht", "run")
    _known(data, "top level", sections)
    merged = {name: {**defaults[name], **_section(data, name)} for name in sections}
    for dotted, value in (overrides or {}).items():
        section, _, key = dotted.partition(".")
        if section not in merged or not key:
            raise ConfigError(f"cannot override {dotted!r}: no such section.key")
        merged[section][key] = value
    cfg = _build(merged, source)
    from .checkpoint import check_restore  # it needs Config itself
    if cfg.dht.enabled:
        check_restore(cfg)
    return cfg


def _build(m: Mapping[str, Mapping[str, Any]], source: Path) -> Config:
    g, f, t, c, r = m["grid"], m["flow"], m["time"], m["chemistry"], m["run"]
    _known(g, "grid", ("nx", "ny", "cell_size", "porosity", "permeability"))
    _known(f, "flow", ("viscosity", "fixed_pressure"))
    _known(t, "time", ("iterations", "time_step"))
    _known(c, "chemistry", ("database", "calcite_parm", "dolomite_parm"))
    _known(r, "run", ("package_size", "output_dir", "save_every"))
    nx = _number(g, "grid", "nx", integer=True, minimum=1, maximum=100_000)
    ny = _number(g, "grid", "ny", integer=True, minimum=1, maximum=100_000)
    if nx * ny < 2:
        raise ConfigError("the grid needs at least 2 cells")
    fixed = _fixed(f.get("fixed_pressure"), nx, ny)
    return Config(
        nx=nx, ny=ny,
        cell_size=float(_number(g, "grid", "cell_size", positive=True)),
        porosity=float(_number(g, "grid", "porosity", positive=True, maximum=1.0)),
        permeability=float(_number(g, "grid", "permeability", positive=True)),
        viscosity=float(_number(f, "flow", "viscosity", positive=True)),
        fixed=fixed,
        iterations=int(_number(t, "time", "iterations", integer=True, minimum=1)),
        time_step=float(_number(t, "time", "time_step", positive=True)),
        database=str(c.get("database", "phreeqc.dat")),
        calcite_parm=float(_number(c, "chemistry", "calcite_parm", minimum=0.0)),
        dolomite_parm=float(_number(c, "chemistry", "dolomite_parm", minimum=0.0)),
        initial=_water(m["initial"], "initial", VARIABLES, {}),
        injected=_water(m["injected"], "injected", AQUEOUS, {}),
        dht=_dht(m["dht"], {}),
        package_size=int(_number(r, "run", "package_size", integer=True, minimum=1)),
        output_dir=Path(str(r.get("output_dir", "sim-output"))),
        save_every=int(_number(r, "run", "save_every", integer=True, minimum=1)),
        source=source,
    )


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
    return tuple(out)
