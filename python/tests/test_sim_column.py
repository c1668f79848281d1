"""The simulator against PHREEQC's own TRANSPORT on a short 1-D column at
Courant number 1: with the default waters every variable agrees within
1e-3 of its maximum after every step, and the comparison does catch
waters typed in as numbers (the benchmark's description), which are not
charge balanced."""

import json
import os
from pathlib import Path

import numpy as np
import pytest
from mpi4py import MPI

from mpidht_sim.column import column_config, main, validate_column
from mpidht_sim.driver import run
from mpidht_sim.errors import ConfigError
from mpidht_sim.measure import compare
from mpidht_sim.variables import VARIABLES

from conftest import shared_tmp

CELLS, STEPS = 20, 40
TOLERANCE = 1e-3
TYPED = {"initial.state": {"C": 1.2279e-4, "Ca": 1.2279e-4, "Cl": 0.0, "Mg": 0.0,
                           "pH": 9.91, "pe": 4.0},
         "injected.state": {"C": 0.0, "Ca": 0.0, "Cl": 0.002, "Mg": 0.001,
                            "pH": 7.0, "pe": 4.0},
         "chemistry.charge_tolerance": 1e-5}


def test_column_matches_phreeqc_transport() -> None:
    comm = MPI.COMM_WORLD
    result = validate_column(CELLS, STEPS, 1000.0, comm)
    typed = run(column_config(CELLS, STEPS, 1000.0, None, TYPED), comm)
    if comm.Get_rank() != 0:
        return
    assert result is not None
    assert sorted(result.simulator) == sorted(result.phreeqc) == list(range(1, STEPS + 1))
    worst, name, step = result.comparison.worst_max
    assert worst <= TOLERANCE, f"{name} at step {step}: {worst:.2e}"
    # The front has moved: the comparison is not of two untouched columns.
    last = result.phreeqc[STEPS]
    assert last[0, VARIABLES.index("calcite")] < 0.5 * 2.07e-4
    assert last[:, VARIABLES.index("dolomite")].max() > 0
    # The typed-in waters, run by the same simulator, are far off.
    simulated = {it: f[1:-1] for it, f in typed.saved.items() if it > 0}
    assert compare(simulated, result.phreeqc).worst_max[0] > 10 * TOLERANCE


def test_column_with_the_surrogate() -> None:
    """--dht: the simulator runs with its DHT and interpolation, and what
    is compared with PHREEQC is that run's: the surrogate answered some
    cells, and its fields differ from the run without it. The default
    surrogate stays within the bound where calcite runs out under a front
    of carbon-free water (cell 12, step 57): without interp.budget the
    small errors of one cell's predictions add up there to 2.52e-3 of
    pH's maximum (1.24e-4 of calcite's at step 59 with it)."""
    comm = MPI.COMM_WORLD
    cells, steps = 16, 60
    plain = validate_column(cells, steps, 1000.0, comm)
    cached = validate_column(cells, steps, 1000.0, comm, None, None, dht=True)
    if comm.Get_rank() != 0:
        return
    assert plain is not None and cached is not None
    assert plain.surrogate is None
    assert cached.surrogate is not None
    assert cached.surrogate["cells"] == cells * steps
    assert 0 < cached.surrogate["misses"] < cells * steps
    assert cached.surrogate["interpolated"] > 0 and cached.surrogate["over_budget"] > 0
    assert any(not np.array_equal(plain.simulator[s], cached.simulator[s])
               for s in range(1, steps + 1))
    assert cached.comparison.worst_max[0] <= TOLERANCE


@pytest.mark.parametrize("overrides", [
    {"initial.dolomite": 1e-4},
    {"initial.equilibrium": {"O2(g)": -0.1675}},  # a pore water not at calcite equilibrium
])
def test_column_waters_out_of_equilibrium(overrides: dict[str, object]) -> None:
    """Where the initial water reacts with the cells' minerals, PHREEQC's
    side must not react it once more than the simulator does (its first
    shift, which fills the inlet cell, reacted every cell: 3.3e-2 of Ca's
    maximum with initial dolomite, 0.50 of C's with the other pore water,
    where the simulator is within 3e-6 of PHREEQC's ADVECTION)."""
    comm = MPI.COMM_WORLD
    result = validate_column(7, 13, 57600.0, comm, None, overrides)
    if comm.Get_rank() != 0:
        return
    assert result is not None
    worst, name, step = result.comparison.worst_max
    assert worst <= 1e-4, f"{name} at step {step}: {worst:.2e}"


def test_column_command(tmp_path_factory: pytest.TempPathFactory,
                        capsys: pytest.CaptureFixture[str]) -> None:
    comm = MPI.COMM_WORLD
    out = shared_tmp(tmp_path_factory, "column", comm)
    rc = main(["--cells", "4", "--steps", "5", "--out", str(out)])
    assert rc == 0
    if comm.Get_rank() == 0:
        printed = capsys.readouterr().out
        assert "Worst:" in printed and "Passed: within --tolerance 0.001." in printed
        assert {p.name for p in out.iterdir()} == {"column.md", "column.json", "column.png"}
        judged = json.loads((out / "column.json").read_text())
        assert judged["passed"] is True and judged["exceeded"] == []
        assert judged["bounds"] == {"cell": 1e-3, "rms": None}
    assert main(["--cells", "0"]) == 2
    assert main(["--set", "chemistry.database=nosuch.dat"]) == 2


def test_column_refuses_bad_settings(tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Exit status 2, before MPI work, for settings the column cannot use:
    a --set of a key the column sets itself (it was dropped silently) and
    a tolerance no comparison can be checked against."""
    assert main(["--config", str(tmp_path)]) == 2  # a folder
    short = ["--cells", "2", "--steps", "2", "--out", str(tmp_path / "out")]
    assert main(short + ["--set", "grid.nx=20"]) == 2
    assert main(short + ["--set", "time.iterations=7"]) == 2
    assert main(short + ["--tolerance", "-1"]) == 2
    assert main(short + ["--tolerance", "nan"]) == 2
    assert main(["--cells", "999999", "--out", str(tmp_path / "out")]) == 2
    # What would change nothing compared: the flow is set for Courant 1.
    assert main(short + ["--set", "grid.porosity=0.5"]) == 2
    assert main(short + ["--set", "flow.viscosity=2e-3"]) == 2
    err = capsys.readouterr().err
    if MPI.COMM_WORLD.Get_rank() == 0:  # the one that prints
        assert "cannot override 'grid.nx' for the column: it is one cell wide" in err
        assert "cannot override 'time.iterations' for the column: set by --steps" in err
        assert "--tolerance must be positive and finite, got -1.0" in err
        assert "--tolerance must be positive and finite, got nan" in err
        assert "--cells must be at most 999998 (the column has two fixed cells" in err
        assert ("cannot override 'grid.porosity' for the column: its flow is set for "
                "Courant number 1") in err
        assert "cannot override 'flow.viscosity' for the column" in err
    assert not (tmp_path / "out").exists()


def test_column_out_that_cannot_be_written_is_refused_first(
        tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]) -> None:
    """An --out that is a file, or below one, is refused with exit status
    2 before the column runs (it ran, then crashed writing, status 1); a
    run above its tolerance says so in its report."""
    comm = MPI.COMM_WORLD
    base = shared_tmp(tmp_path_factory, "out", comm)
    afile = base / "afile"
    if comm.Get_rank() == 0:
        afile.write_text("mine")
    comm.Barrier()
    short = ["--cells", "2", "--steps", "2"]
    capsys.readouterr()
    assert main(short + ["--out", str(afile)]) == 2
    assert main(short + ["--out", str(afile / "below")]) == 2
    # A folder where a report file goes: refused first (the run failed
    # after writing column.md).
    blocked, piped = base / "blocked", base / "piped"
    if comm.Get_rank() == 0:
        (blocked / "column.json").mkdir(parents=True)
        piped.mkdir()
        os.mkfifo(piped / "column.png")
    comm.Barrier()
    assert main(short + ["--out", str(blocked)]) == 2
    assert main(short + ["--out", str(piped)]) == 2
    err = capsys.readouterr().err
    if comm.Get_rank() == 0:
        assert f"mpidht_sim.column: --out: {afile} is not a folder" in err
        assert f"--out: {afile / 'below'} cannot be made: {afile} is not a folder" in err
        assert afile.read_text() == "mine"
        assert f"--out: {blocked / 'column.json'} is not a file" in err
        assert f"--out: {piped / 'column.png'} is not a file" in err
        assert not (blocked / "column.md").exists() and not (piped / "column.md").exists()
    # Links where the report goes are replaced, not written through (the
    # report replaced the file a link pointed to, outside --out).
    strict, kept = base / "strict", base / "kept.md"
    if comm.Get_rank() == 0:
        strict.mkdir()
        kept.write_text("mine")
        (strict / "column.md").symlink_to(kept)
        (strict / "column.json").symlink_to(base / "nothing-here.json")
    comm.Barrier()
    assert main(short + ["--out", str(strict), "--tolerance", "1e-300"]) == 1
    if comm.Get_rank() == 0:
        assert "FAILED: not within --tolerance 1e-300." in capsys.readouterr().out
        assert kept.read_text() == "mine" and not (base / "nothing-here.json").exists()
        assert not (strict / "column.md").is_symlink()
        assert "FAILED" in (strict / "column.md").read_text()
        assert "FAILED: not within --tolerance 1e-300." in (
            base / "strict" / "column.md").read_text()
        # column.json records the command's verdict and bound (it said
        # "passed": true against the default bounds of 1e-3 and 1e-4).
        judged = json.loads((base / "strict" / "column.json").read_text())
        assert judged["passed"] is False and judged["tolerance"] == 1e-300
        assert judged["bounds"] == {"cell": 1e-300, "rms": None}
        assert judged["exceeded"][0].startswith("worst cell ")
        assert judged["exceeded"][0].endswith(" exceeds 1e-300")


@pytest.mark.one_process
def test_column_config_sets_its_keys(tmp_path: Path) -> None:
    """The column runs without the DHT: a configuration that saves or loads
    one still runs the column; overrides of the column's own keys are
    refused."""
    saving = tmp_path / "saving.toml"
    saving.write_text("[dht]\ndump = true\n")
    cfg = column_config(2, 2, 1000.0, saving)
    assert not cfg.dht.enabled and not cfg.dht.dump and cfg.dht.restore is None
    # What the column does without is refused too (run.output_dir was
    # accepted and ignored).
    for key, value in (("grid.ny", 5), ("dht.enabled", True), ("flow.fixed_pressure", []),
                       ("dht.digits.C", 3), ("interp.enabled", True),
                       ("run.output_dir", str(tmp_path)), ("run.reference", str(tmp_path))):
        with pytest.raises(ConfigError, match=f"cannot override '{key}' for the column"):
            column_config(2, 2, 1000.0, None, {key: value})
    # With the DHT (--dht), its settings and the interpolation's may be
    # set, but not what the column sets itself: on, empty, saving nothing.
    cfg = column_config(2, 2, 1000.0, saving, {"interp.tolerance": 5e-6, "dht.digits.C": 4},
                        dht=True)
    assert cfg.dht.enabled and not cfg.dht.dump and cfg.dht.restore is None
    assert cfg.interp.tolerance == 5e-6
    for key, why in (("dht.enabled", "set by --dht"), ("dht.dump", "it saves nothing"),
                     ("dht.restore", "it starts from an empty table"),
                     ("grid.ny", "set by --cells")):
        with pytest.raises(ConfigError, match=f"cannot override '{key}' for the column: {why}"):
            column_config(2, 2, 1000.0, None, {key: "x"}, dht=True)


@pytest.mark.one_process
def test_column_time_step_beyond_its_pressures_is_named() -> None:
    """A time step so long that Courant number 1 needs a pressure difference
    lost against the outlet's pressure is refused naming --time-step (it was
    refused as "all pressures are equal", a setting the user never gave)."""
    with pytest.raises(ConfigError, match="--time-step 1e[+]300 s: Courant number 1 needs"):
        column_config(2, 2, 1e300)
    assert column_config(2, 2, 1000.0).time_step == 1000.0
