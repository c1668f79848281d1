"""Simulator configuration: the defaults load, and every bad file or value
is rejected with a message naming it, before any MPI work."""

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mpidht_sim.config import ConfigError, load

from conftest import outside_job_env

# Configuration checks, and commands refused before MPI: no communicator.
pytestmark = pytest.mark.one_process


def test_default_is_simdol2d() -> None:
    cfg = load()
    assert (cfg.nx, cfg.ny, cfg.cell_size, cfg.porosity) == (50, 50, 1.0, 0.25)
    assert cfg.iterations == 300
    assert [(p.x, p.y, p.injects) for p in cfg.fixed] == [(0, 0, True), (49, 49, False)]
    assert cfg.dht.enabled and cfg.dht.protocol == "lockfree"
    assert cfg.interp.enabled and cfg.interp.method == "linear"


def test_overrides_and_relative_cells() -> None:
    cfg = load(None, {"grid.nx": 1, "grid.ny": 12, "dht.enabled": False})
    assert (cfg.nx, cfg.ny) == (1, 12)
    assert [(p.x, p.y) for p in cfg.fixed] == [(0, 0), (0, 11)]  # [-1, -1] follows the grid
    assert not cfg.dht.enabled


@pytest.mark.parametrize("overrides, message", [
    ({"grid.nx": 0}, "grid.nx must be at least 1"),
    ({"grid.nx": 2.5}, "grid.nx must be an integer, written without a decimal point"),
    ({"grid.nx": 1e3}, "grid.nx must be an integer, written without a decimal point or "
     "exponent, got 1000.0"),
    ({"grid.porosity": 1.5}, "grid.porosity must be at most 1.0"),
    ({"grid.permeability": -1.0}, "grid.permeability must be positive"),
    ({"grid.depth": 3}, "unknown key(s) in [grid]: depth"),
    ({"time.time_step": "soon"}, "time.time_step must be a number"),
    # PHREEQC never returned from the first reaction with such a step.
    ({"time.time_step": 5e-324}, "time.time_step must be at least 1e-06, got 5e-324"),
    ({"time.time_step": 0.0}, "time.time_step must be at least 1e-06"),
    # PHREEQC took 124 s on one cell at the front before it gave up.
    ({"chemistry.dolomite_parm": 1e10}, "chemistry.dolomite_parm must be at most 1000000.0"),
    ({"chemistry.calcite_parm": 1e7}, "chemistry.calcite_parm must be at most 1000000.0"),
    # The initial water reacts; its mix with the injected one does not.
    ({"chemistry.dolomite_parm": 1e4}, "PHREEQC cannot react the initial water, or its even "
     "mix with the injected one, for time.time_step 57600 s with phreeqc.dat, calcite_parm "
     "0.0032, dolomite_parm 10000: ERROR: Bad RK steps > 2000"),
    ({"dht.protocol": "optimistic"}, "dht.protocol must be coarse, fine or lockfree"),
    ({"dht.digits": {"C": 5}}, "dht.digits.Ca is required"),
    ({"dht.digits": {"Fe": 5}}, "unknown variable(s) Fe"),
    ({"dht.memory_per_worker": 10}, "dht.memory_per_worker must be at least 4096"),
    ({"dht.log": "yes"}, "dht.log must be true or false"),
    ({"initial.Ca": 1e-4}, "unknown key(s) in [initial]: Ca"),
    ({"initial.calcite": -1.0}, "initial.calcite must be at least 0.0"),
    ({"dht.rounding": "nearest"}, "dht.rounding must be significant or decimal"),
    ({"dht.digits.Fe": 3}, "dht.digits: unknown variable(s) Fe"),
    ({"grid.nx.y": 3}, "cannot override 'grid.nx.y': grid.nx is not a table"),
    ({"run.overwrite": "yes"}, "run.overwrite must be true or false"),
    ({"run.plots": 1}, "run.plots must be true or false"),
    ({"run.reference": 5}, "run.reference must be a path"),
    ({"run.output_dir": ["x", "y"]}, "run.output_dir must be a path, got ['x', 'y']"),
    ({"run.output_dir": True}, "run.output_dir must be a path, got True"),
    ({"run.output_dir": ""}, "run.output_dir must be a path, got ''"),
    ({"flow.fixed_pressure": [{"cell": [0, 0], "pressure": 1.0}]}, "at least two cells"),
    ({"flow.fixed_pressure": [{"cell": [0, 0], "pressure": 1.0},
                              {"cell": [60, 0], "pressure": 2.0}]}, "outside the 50 x 50 grid"),
    ({"flow.fixed_pressure": [{"cell": [0, 0], "pressure": 1.0},
                              {"cell": [0, 0], "pressure": 2.0}]}, "listed twice"),
    ({"flow.fixed_pressure": [{"cell": [0, 0], "pressure": 1.0},
                              {"cell": [1, 0], "pressure": 1.0}]}, "nothing flows"),
    # Both cells held at a fixed pressure: it ran "0 of 0 cell reactions".
    ({"grid.nx": 2, "grid.ny": 1}, "flow.fixed_pressure holds every cell of the 2 x 1 grid "
                                   "(grid.nx, grid.ny): no cell is left to react"),
    ({"grid.nx": 1, "grid.ny": 3, "flow.fixed_pressure": [
        {"cell": [0, 0], "pressure": 1.0, "water": "injected"},
        {"cell": [0, 1], "pressure": 2.0}, {"cell": [0, 2], "pressure": 3.0}]},
     "every cell of the 1 x 3 grid"),
    # It ran, the initial water flowing unchanged.
    ({"flow.fixed_pressure": [{"cell": [0, 0], "pressure": 2.0},
                              {"cell": [1, 0], "pressure": 1.0}]},
     'no cell has water = "injected"'),
    ({"run.colour": "red"}, "unknown key(s) in [run]: colour"),
    ({"run.stop_after": -1.0}, "run.stop_after must be at least 0.0, got -1.0"),
    ({"run.stop_after": "1h"}, "run.stop_after must be a number, got '1h'"),
    ({"run.stop_after": float("inf")}, "run.stop_after must be finite"),
    ({"interp.method": "kriging"}, "interp.method must be idw or linear"),
    ({"dht.reset": ["Ca"]}, "dht.reset: 'Ca' cannot be reset"),
    ({"dht.reset": "pe"}, "dht.reset must be a list of variable names"),
    ({"interp.min_neighbours": 200}, "interp.min_neighbours must be at most 192"),
    ({"interp.neighbours": 5}, "interp.neighbours must be 0 (all) or at least interp."
                               "min_neighbours (10), got 5"),
    ({"interp.neighbours": 193}, "interp.neighbours must be at most 192"),
    ({"interp.estimate": "bootstrap"},
     "interp.estimate must be leave-one-out or standard-error, got 'bootstrap'"),
    ({"interp.method": "idw"}, "interp.estimate = 'standard-error' needs interp.method = "
                               "'linear', got 'idw'"),
    ({"interp.interval": 0.0}, "interp.interval must be positive"),
    ({"interp.radius": 0.0}, "interp.radius must be positive"),
    ({"interp.verify": 1.5}, "interp.verify must be at most 1.0"),
    ({"interp.budget": -1e-4}, "interp.budget must be at least 0.0"),
    ({"interp.budget": float("nan")}, "interp.budget must be finite"),
    ({"interp.digits.pH": 0}, "interp.digits.pH must be at least 1"),
    ({"interp.neighbors": 3}, "unknown key(s) in [interp]: neighbors"),
    ({"nosuch.key": 1}, "no such section.key"),
])
def test_bad_values_rejected(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        load(None, overrides)
    assert message in str(e.value)


@pytest.mark.parametrize("digits", [0, 16])
def test_impossible_digits(digits: int) -> None:
    table = {v: 6 for v in ("C", "Ca", "Cl", "Mg", "pH", "pe", "calcite", "dolomite")}
    table["pH"] = digits
    with pytest.raises(ConfigError, match="dht.digits.pH"):
        load(None, {"dht.digits": table})


def test_grid_cells_bounded() -> None:
    """At most 10^6 cells, refused before MPI (100 000 x 100 000 passed and
    rank 0 ran out of memory while the other ranks waited), in any shape:
    a 1 x 10^6 column too (each axis was held to 10^5)."""
    assert load(None, {"grid.nx": 1000, "grid.ny": 1000}).nx == 1000
    assert load(None, {"grid.nx": 1, "grid.ny": 1_000_000}).ny == 1_000_000
    assert load(None, {"grid.nx": 1_000_000, "grid.ny": 1}).nx == 1_000_000
    for nx, ny in ((1001, 1000), (100_000, 100_000), (1, 1_000_001), (2_000_000, 1)):
        with pytest.raises(ConfigError, match=re.escape(
                f"grid.nx * grid.ny must be at most 1000000 cells, got {nx} x {ny}")):
            load(None, {"grid.nx": nx, "grid.ny": ny})


@pytest.mark.parametrize("key", ["grid.nx", "time.iterations", "dht.memory_per_worker"])
def test_whole_numbers_past_a_float_refused(key: str) -> None:
    """A whole number past a float's range is refused, naming its key (it
    raised OverflowError, with a traceback)."""
    with pytest.raises(ConfigError, match=re.escape(
            f"{key} must be below 1.8e308, as any number here, got one of 401 digits")):
        load(None, {key: 10**400})


@pytest.mark.parametrize("section", ["dht", "interp"])
def test_memory_at_most_physical(section: str) -> None:
    """A table's memory is at most the machine's physical memory, which the
    library would refuse only after MPI started; beyond 64 bits too."""
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    key = f"{section}.memory_per_worker"
    cfg = load(None, {key: physical})
    assert getattr(cfg, section).memory_per_worker == physical
    for memory in (physical + 1, 1 << 62, (1 << 64) + 5):
        with pytest.raises(ConfigError, match=f"{key} must be at most the machine's "
                                              f"physical memory, {physical} bytes"):
            load(None, {key: memory})


def test_nested_overrides_set_one_entry() -> None:
    """--set dht.digits.C=3 changes C alone; a whole table replaces the
    table; decimal places may be 0, significant digits not."""
    from mpidht_sim.cli import build_config, parse_args

    default = load().dht.digits
    cfg = build_config(parse_args(["--set", "dht.digits.C=3", "--set",
                                   "injected.solution.Mg=0.0015", "--set",
                                   "injected.solution.Cl=0.003"]))
    assert cfg.dht.digits == {**default, "C": 3}
    assert cfg.injected["Mg"] == pytest.approx(0.0015, rel=1e-9)
    assert cfg.injected["Cl"] == pytest.approx(0.003, rel=1e-9)
    assert load(None, {"dht.rounding": "decimal", "dht.digits.Cl": 0}).dht.digits["Cl"] == 0
    with pytest.raises(ConfigError, match="dht.digits.Cl must be at least 1"):
        load(None, {"dht.digits.Cl": 0})


def test_bad_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load(tmp_path / "missing.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("[grid\nnx = 3\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load(broken)
    unknown = tmp_path / "unknown.toml"
    unknown.write_text("[geometry]\nnx = 3\n")
    with pytest.raises(ConfigError, match="unknown key.*geometry"):
        load(unknown)


def test_config_not_a_text_file(tmp_path: Path) -> None:
    """A folder, or a file that is not UTF-8, is refused naming the file
    and why (not an IsADirectoryError or UnicodeDecodeError)."""
    with pytest.raises(ConfigError, match=f"config file {re.escape(str(tmp_path))} is a "
                                          "directory"):
        load(tmp_path)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\x00\xff\xfe")
    with pytest.raises(ConfigError, match="binary.toml: not UTF-8 text"):
        load(binary)


def test_cli_rejects_before_mpi(tmp_path: Path) -> None:
    """The command exits with status 2 and a message, without starting MPI
    (mpi4py is not even imported)."""
    code = ("import sys; from mpidht_sim.cli import main; "
            "rc = main(['--set', 'grid.nx=-3', '--quiet']); "
            "assert 'mpi4py.MPI' not in sys.modules; sys.exit(rc)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, env=outside_job_env(), check=False)
    assert done.returncode == 2, done.stderr
    assert "configuration error: grid.nx must be at least 1" in done.stderr


def test_restore_needs_matching_settings(tmp_path: Path) -> None:
    """A saved DHT is refused, before MPI, if it is missing, lacks its
    settings file, or was computed with other digits or time step."""
    from mpidht_sim.checkpoint import write_settings

    dump = tmp_path / "dht.mpidht"
    with pytest.raises(ConfigError, match="is not a file"):
        load(None, {"dht.restore": str(dump)})
    dump.write_bytes(b"MPIDHTDB")
    with pytest.raises(ConfigError, match="dht.mpidht.json is missing"):
        load(None, {"dht.restore": str(dump)})
    write_settings(dump, load())
    assert load(None, {"dht.restore": str(dump)}).dht.restore == dump
    with pytest.raises(ConfigError, match="time_step = 57600.0 there, 100.0 here"):
        load(None, {"dht.restore": str(dump), "time.time_step": 100.0})
    digits = dict(load().dht.digits, pH=3)
    with pytest.raises(ConfigError, match="other settings: digits"):
        load(None, {"dht.restore": str(dump), "dht.digits": digits})
    with pytest.raises(ConfigError, match="dht.dump must be true or false"):
        load(None, {"dht.dump": "often"})
    with pytest.raises(ConfigError, match="dht.restore must be a path"):
        load(None, {"dht.restore": 3})


def test_no_dht_refuses_warm_start_and_save(tmp_path: Path) -> None:
    """Without the DHT there is nothing to load or save: dht.restore and
    dht.dump are refused rather than ignored, from TOML and the command
    line alike."""
    from mpidht_sim.cli import build_config, parse_args

    off = "dht.enabled = false (--no-dht) cannot go with "
    with pytest.raises(ConfigError, match=re.escape(off + "dht.restore (--warm-start)")):
        load(None, {"dht.enabled": False, "dht.restore": str(tmp_path / "dht.mpidht")})
    with pytest.raises(ConfigError, match=re.escape(off + "dht.dump (--save-dht)")):
        load(None, {"dht.enabled": False, "dht.dump": True})
    with pytest.raises(ConfigError, match=re.escape(
            off + "dht.restore (--warm-start) or dht.dump (--save-dht)")):
        build_config(parse_args(["--no-dht", "--warm-start", "/nonexistent/dht.mpidht",
                                 "--save-dht"]))
    assert not load(None, {"dht.enabled": False, "dht.restore": ""}).dht.enabled


def test_cli_set_takes_toml_values() -> None:
    """--set accepts inline tables (per-variable digits), numbers, bools and
    bare words."""
    from mpidht_sim.cli import build_config, parse_args

    args = parse_args(["--set", "dht.digits={C = 3, Ca = 3, Cl = 2, Mg = 2, pH = 4, "
                       "pe = 4, calcite = 4, dolomite = 4}", "--set", "dht.floor=1e-8",
                       "--set", "dht.log=false", "--set", "dht.protocol=fine",
                       "--set", "grid.nx=7"])
    cfg = build_config(args)
    assert cfg.dht.digits["C"] == 3 and cfg.dht.digits["dolomite"] == 4
    assert cfg.dht.floor == 1e-8 and cfg.dht.log is False
    assert cfg.dht.protocol == "fine" and cfg.nx == 7


@pytest.mark.parametrize("flag, item", [
    (["--iterations", "5"], "time.iterations=7"),
    (["--no-plots"], "run.plots=yes"),
    (["--no-dht"], "dht.enabled=true"),
])
def test_flag_and_set_of_one_key_refused(flag: list[str], item: str) -> None:
    """A flag and a --set of the key it sets: the flag won silently (and
    hid a --set value that is refused on its own)."""
    from mpidht_sim.cli import build_config, parse_args

    key = item.split("=")[0]
    with pytest.raises(ConfigError, match=re.escape(
            f"{flag[0]} and --set {key} both set {key}: give one")):
        build_config(parse_args([*flag, "--set", item]))


def test_input_nested_beyond_pythons_depth(tmp_path: Path) -> None:
    """A configuration, or a --set value, nested deeper than Python's
    readers recurse is refused with a message (a RecursionError ended the
    command)."""
    from mpidht_sim.cli import parse_overrides

    deep = tmp_path / "deep.toml"
    deep.write_text("[grid]\nnx = " + "[" * 50000 + "]" * 50000 + "\n")
    with pytest.raises(ConfigError, match="deep.toml: nested too deeply to be read"):
        load(deep)
    nested = parse_overrides(["grid.nx=" + "[" * 5000 + "]" * 5000])
    with pytest.raises(ConfigError, match="grid.nx must be a number"):
        load(None, nested)


@pytest.mark.parametrize("value", ['"abc', "'abc", "[1, 2", "{C = 4"])
def test_set_value_opening_toml_it_does_not_close(value: str) -> None:
    """--set 'run.output_dir="abc' is refused (it made a folder named
    "abc, quote and all); a text without quotes is still text."""
    from mpidht_sim.cli import parse_overrides

    item = f"run.output_dir={value}"
    with pytest.raises(ConfigError, match=re.escape(f"--set {item!r}: the value opens a TOML "
                                                    "string")):
        parse_overrides([item])
    assert parse_overrides(["run.output_dir=abc"]) == {"run.output_dir": "abc"}
    assert parse_overrides(['run.output_dir="a b"']) == {"run.output_dir": "a b"}


@pytest.mark.parametrize("key", ["dht.restore", "run.reference", "run.output_dir"])
def test_path_too_long_to_look_up_is_refused(key: str) -> None:
    """A path the system cannot look up (a name longer than 255 bytes) is
    refused naming the setting: --warm-start and --reference ended in a
    traceback (OSError) with exit status 1."""
    long = "a" * 300
    with pytest.raises(ConfigError, match=re.escape(
            f"{key}: '{long}' cannot be looked up: File name too long")):
        load(None, {key: long})


def test_output_folder_with_a_nul_is_refused(tmp_path: Path) -> None:
    """A NUL in an output folder's name is refused naming the setting (a
    ValueError of the file system calls ended the run)."""
    from mpidht_sim.output import check_writable

    with pytest.raises(ConfigError, match=re.escape(f"run.output_dir: {'a' + chr(0) + 'b'!r} "
                                                    "holds a NUL character")):
        check_writable(Path("a\0b"), "run.output_dir")
