"""The coupled simulation on a small grid, at the pytest run's process
count: the reaction front forms, a DHT run agrees with the reference (no
DHT) within the documented tolerance, and both agree with a single-process
run."""

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mpi4py import MPI

from mpidht_sim.config import Config, load
from mpidht_sim.driver import error_measure, run
from mpidht_sim.validate import main as validate_main

#: The documented tolerance of Eq. (2) for acceptable results.
TOLERANCE = 1e-5


def small(**extra: Any) -> Config:
    overrides = {"grid.nx": 6, "grid.ny": 6, "time.iterations": 8,
                 "run.package_size": 5, "run.save_every": 4, **extra}
    return load(None, overrides)


@pytest.fixture(scope="module")
def runs() -> dict[str, Any]:
    comm = MPI.COMM_WORLD
    out = {
        "dht": run(small(), comm),
        "reference": run(small(**{"dht.enabled": False}), comm),
        "single": run(small(**{"dht.enabled": False}), MPI.COMM_SELF),
    }
    return out


def test_front_forms(runs: dict[str, Any]) -> None:
    if MPI.COMM_WORLD.Get_rank() != 0:
        return
    final = runs["reference"].final.reshape(6, 6, 8)
    calcite, dolomite, mg = final[..., 6], final[..., 7], final[..., 3]
    assert calcite[0, 1] < 2.07e-4 * 0.5  # dissolving near the inlet
    assert calcite[-1, -2] > 0.8 * 2.07e-4  # little touched far downstream
    assert mg[0, 1] > 0.9e-3 > mg[-1, -2]  # MgCl2 water: full at the inlet, less downstream
    assert dolomite.max() > 0  # dolomite appears behind the front


def test_dht_run_matches_reference(runs: dict[str, Any]) -> None:
    if MPI.COMM_WORLD.Get_rank() != 0:
        return
    dht, ref = runs["dht"], runs["reference"]
    assert sum(r.hits for r in dht.records) > 0
    assert sum(r.hits for r in ref.records) == 0
    for it in ref.saved:
        assert error_measure(dht.saved[it], ref.saved[it]) <= TOLERANCE


def test_process_count_does_not_matter(runs: dict[str, Any]) -> None:
    if MPI.COMM_WORLD.Get_rank() != 0:
        return
    assert error_measure(runs["reference"].final, runs["single"].final) <= TOLERANCE
    assert np.isfinite(runs["single"].final).all()


def test_warm_start_from_a_saved_dht(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A run that saves its DHT, then a run of the same settings started from
    it: every cell reaction hits, and the fields agree with the first run's
    within the documented tolerance."""
    comm = MPI.COMM_WORLD
    out = Path(comm.bcast(str(tmp_path_factory.mktemp("warm")) if comm.Get_rank() == 0
                          else None, root=0))
    first = run(small(**{"dht.dump": True, "run.output_dir": str(out)}), comm)
    saved = out / "dht.mpidht"
    second = run(small(**{"dht.restore": str(saved)}), comm)
    if comm.Get_rank() != 0:
        return
    assert first.dht_dump == saved and saved.is_file()
    assert (out / "dht.mpidht.json").is_file()
    assert sum(r.hits for r in first.records) < sum(r.hits + r.misses for r in first.records)
    assert second.restored > 0
    assert all(r.misses == 0 for r in second.records)
    # Not bit for bit: where two cells of the first run shared a key, one
    # ran PHREEQC and the other may have used its stored change; the
    # second run uses the change of whichever wrote last, for both.
    for it in first.saved:
        assert error_measure(second.saved[it], first.saved[it]) <= TOLERANCE


def test_validation_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The validation command runs every digits x rounding variant and
    writes the table (on a tiny grid here)."""
    out = tmp_path / "validation"
    rc = validate_main(["--set", "grid.nx=4", "--set", "grid.ny=4",
                        "--set", "time.iterations=3", "--out", str(out)])
    assert rc == 0
    if MPI.COMM_WORLD.Get_rank() != 0:
        return
    rows = [line for line in (out / "validation.md").read_text().splitlines()
            if line.startswith("| ") and line[2].isdigit()]
    assert len(rows) == 8  # 4 digit choices x (log10, value)
    errors = [float(row.split("|")[4]) for row in rows]
    assert all(0 <= e <= TOLERANCE for e in errors)


def test_validation_rejects_bad_settings() -> None:
    assert validate_main(["--set", "grid.nx=zero"]) == 2


def test_measure_compares_saved_fields(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """python -m mpidht_sim.measure: Eq. (2) per iteration between two
    output folders, as error_measure gives it; clear refusals."""
    from mpidht_sim.config import VARIABLES
    from mpidht_sim.measure import load_fields, main as measure_main

    rng = np.random.default_rng(3)
    for name, noise in (("ref", 0.0), ("run", 1e-6)):
        (tmp_path / name).mkdir()
        for it in (0, 5, 10):
            base = np.linspace(1.0, 2.0, 12).reshape(3, 4) * (it + 1)
            fields: dict[str, Any] = {v: base + noise * rng.standard_normal((3, 4))
                                      for v in VARIABLES}
            np.savez(tmp_path / name / f"fields_{it:05d}.npz", **fields)
    run, ref = load_fields(tmp_path / "run"), load_fields(tmp_path / "ref")
    assert sorted(run) == [0, 5, 10] and run[5].shape == (12, len(VARIABLES))
    assert measure_main([str(tmp_path / "run"), str(tmp_path / "ref")]) == 0
    out = capsys.readouterr().out
    worst = max(error_measure(run[it], ref[it]) for it in (5, 10))
    assert f"max error {worst:.3e}" in out and "2 iterations compared" in out
    assert measure_main([str(tmp_path / "run"), str(tmp_path / "missing")]) == 2
