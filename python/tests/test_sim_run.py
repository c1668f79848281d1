"""The coupled simulation on a small grid, at the pytest run's process
count: the reaction front forms, a DHT run agrees with the reference (no
DHT) within the documented tolerance of the worst term, and both agree
with a single-process run; a hit that would make an amount negative is
computed instead."""

import json
import math
import os
import signal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mpi4py import MPI

from mpidht_sim.cli import STOP_SIGNAL, stop_on_signal
from mpidht_sim.config import Config, load
from mpidht_sim.driver import ChemistryWorker, IterationRecord, package_size, packages, run
from mpidht_sim.measure import compare, terms
from mpidht_sim.validate import main as validate_main
from mpidht_sim.variables import VARIABLES

from conftest import shared_tmp

#: The documented bounds for acceptable results: of the worst cell (max
#: term) and of the worst RMS term.
CELL_TOLERANCE = 1e-3
TOLERANCE = 1e-4


def small(**extra: Any) -> Config:
    # The exact-key surrogate alone (interpolation: test_sim_interp.py).
    overrides = {"grid.nx": 6, "grid.ny": 6, "time.iterations": 8,
                 "run.package_size": 5, "run.save_every": 4, "interp.enabled": False,
                 **extra}
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
    assert sum(r.hits - r.exact_hits for r in dht.records) > 0  # approximate hits too
    assert sum(r.hits for r in ref.records) == 0
    comparison = compare(dht.saved, ref.saved)
    assert comparison.worst_max[0] <= CELL_TOLERANCE
    assert comparison.worst[0] <= TOLERANCE


def test_process_count_does_not_matter(runs: dict[str, Any]) -> None:
    if MPI.COMM_WORLD.Get_rank() != 0:
        return
    assert terms(runs["reference"].final, runs["single"].final).worst[1] <= 1e-12
    assert np.isfinite(runs["single"].final).all()


def test_warm_start_from_a_saved_dht(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A run that saves its DHT, then a run of the same settings started from
    it: (nearly) every cell reaction hits, and the fields agree with the first run's
    within the documented tolerance."""
    comm = MPI.COMM_WORLD
    out = shared_tmp(tmp_path_factory, "warm", comm)
    first = run(small(**{"dht.dump": True, "run.output_dir": str(out)}), comm)
    saved = out / "dht.mpidht"
    second = run(small(**{"dht.restore": str(saved)}), comm)
    if comm.Get_rank() != 0:
        return
    assert first.dht_dump == saved and saved.is_file()
    assert (out / "dht.mpidht.json").is_file()
    assert sum(r.hits for r in first.records) < sum(r.hits + r.misses for r in first.records)
    assert second.restored > 0
    # The first iteration starts from the same states, so every reaction
    # hits. Later ones nearly all do: where cells of the first run computed
    # changes for the same key, the entry holds the last one written, and a
    # cell that used another moves on from a slightly different state,
    # which may round to a key never computed (3 workers: 263 of 272 hit).
    assert second.records[0].misses == 0

    def hit_rate(records: list[Any]) -> float:
        return float(sum(r.hits for r in records) / sum(r.hits + r.misses for r in records))
    assert hit_rate(second.records) >= 0.9 > hit_rate(first.records)
    # Not bit for bit: where two cells of the first run shared a key, one
    # ran PHREEQC and the other may have used its stored change; the
    # second run uses the change of whichever wrote last, for both.
    comparison = compare(second.saved, first.saved)
    assert comparison.worst_max[0] <= CELL_TOLERANCE
    assert comparison.worst[0] <= TOLERANCE


def test_a_signal_stops_the_run_after_the_iteration(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """SIGUSR1, which mpirun forwards to every process, stops a run after
    the iteration in progress: a worker ignores it, the master saves that
    iteration's fields and the DHT there and says why, and every worker
    ends. The fields are those of a reference run of 3 iterations within
    the documented tolerance. Collective."""
    comm = MPI.COMM_WORLD
    master = comm.Get_rank() == 0
    out = shared_tmp(tmp_path_factory, "stopped", comm)

    def progress(record: IterationRecord) -> None:
        if record.iteration == 3:
            os.kill(os.getpid(), STOP_SIGNAL)

    with stop_on_signal(master) as stop:
        if not master:
            os.kill(os.getpid(), STOP_SIGNAL)  # ignored: the worker goes on
        stopped = run(small(**{"dht.dump": True, "run.output_dir": str(out)}), comm,
                      progress if master else None, None, stop)
    reference = run(small(**{"dht.enabled": False, "time.iterations": 3}), comm)
    if not master:
        return
    assert stopped.stopped == {"iteration": 3, "iterations": 8,
                               "reason": f"{STOP_SIGNAL.name} received"}
    assert [r.iteration for r in stopped.records] == [1, 2, 3]
    assert sorted(stopped.saved) == [0, 3]  # 3: where it stopped (save_every is 4)
    assert stopped.final is not None
    np.testing.assert_array_equal(stopped.final, stopped.saved[3])
    assert (out / "dht.mpidht").is_file() and (out / "dht.mpidht.json").is_file()
    assert reference.stopped is None
    comparison = compare({3: stopped.saved[3]}, {3: reference.saved[3]})
    assert comparison.worst_max[0] <= CELL_TOLERANCE


def test_stop_after_stops_before_an_iteration_may_pass_it() -> None:
    """run.stop_after: a run stops after the iteration past which another
    one as long as the longest so far may end beyond it (here at once),
    and runs to the end without it."""
    comm = MPI.COMM_WORLD
    result = run(small(**{"run.stop_after": 1e-9, "dht.enabled": False}), comm)
    if comm.Get_rank() != 0:
        return
    assert result.stopped is not None
    assert (result.stopped["iteration"], result.stopped["iterations"]) == (1, 8)
    assert result.stopped["reason"].startswith("run.stop_after = 1e-09 s: ")
    assert sorted(result.saved) == [0, 1] and len(result.records) == 1


@pytest.mark.one_process
def test_stop_on_signal_puts_the_handler_back() -> None:
    """The handler before stop_on_signal is back after it, on the master
    and elsewhere; inside, the signal is noted (master) or ignored."""
    seen: list[int] = []
    before = signal.signal(STOP_SIGNAL, lambda signum, frame: seen.append(signum))
    try:
        for master in (True, False):
            with stop_on_signal(master) as stop:
                assert stop() is None
                os.kill(os.getpid(), STOP_SIGNAL)
                assert stop() == (f"{STOP_SIGNAL.name} received" if master else None)
            assert seen == []
            os.kill(os.getpid(), STOP_SIGNAL)
            assert seen == [STOP_SIGNAL]
            seen.clear()
    finally:
        signal.signal(STOP_SIGNAL, before)


@pytest.mark.one_process
def test_hit_with_a_negative_amount_is_computed() -> None:
    """A stored change that would take a mineral below zero is not used:
    the cell is computed by PHREEQC, counted as rejected, and the entry
    replaced by the computed change."""
    cfg = small()
    worker = ChemistryWorker(cfg, MPI.COMM_SELF)
    try:
        state = np.array([[cfg.initial[v] for v in VARIABLES]])
        state[0, VARIABLES.index("calcite")] = 1e-6
        dt = cfg.time_step
        key = worker.surrogate.keys(state, dt)
        bad = state.copy()
        bad[0, VARIABLES.index("calcite")] = -1e-6  # a change of -2e-6
        assert worker.table is not None
        worker.table.write_many(key, worker.surrogate.values(state, bad, dt))
        out, counts, _ = worker.react(state, dt)
        assert (counts.hits, counts.misses, counts.rejected) == (0, 1, 1)
        assert out[0, VARIABLES.index("calcite")] >= 0
        assert np.allclose(out, worker.chemistry.react(state, dt), rtol=1e-12, atol=0)
        again, counts, _ = worker.react(state, dt)  # the entry now holds PHREEQC's change
        assert (counts.hits, counts.exact_hits, counts.rejected) == (1, 1, 0)
        assert np.array_equal(again, out)
    finally:
        worker.close()


@pytest.mark.one_process
def test_misses_with_one_key_in_a_package_are_computed_once() -> None:
    """Two misses of one package with the same key: PHREEQC computes the
    first, the second takes its change (a shared hit), unless that change
    would make an amount of the second negative; then it is computed too."""
    cfg = small()
    worker = ChemistryWorker(cfg, MPI.COMM_SELF)
    try:
        dt = cfg.time_step
        first = np.array([cfg.initial[v] for v in VARIABLES])
        second = first.copy()
        second[VARIABLES.index("Ca")] *= 1 + 1e-7  # within the key's digits
        other = first.copy()
        other[VARIABLES.index("calcite")] *= 0.5
        states = np.stack([first, second, other])
        out, counts, _ = worker.react(states, dt)
        assert (counts.misses, counts.hits, counts.shared, counts.rejected) == (2, 1, 1, 0)
        computed = worker.chemistry.react(states, dt)
        assert np.array_equal(out[[0, 2]], computed[[0, 2]])
        expected = second + (computed[0] - first)
        pe = VARIABLES.index("pe")  # dht.reset: the result itself is taken
        expected[pe] = computed[0, pe]
        assert np.array_equal(out[1], expected)
        assert counts.hits + counts.misses == 3

        # Injected water dissolves a little calcite completely: the first
        # cell's change (-1.0001e-6) would leave -1e-10 in the second.
        water = np.array([cfg.injected[v] for v in VARIABLES[:6]] + [1.0001e-6, 0.0])
        less = water.copy()
        less[VARIABLES.index("calcite")] = 1.0e-6
        states = np.stack([water, less])
        assert np.array_equal(*worker.surrogate.keys(states, dt))
        out, counts, _ = worker.react(states, dt)
        assert (counts.misses, counts.hits, counts.shared, counts.rejected) == (2, 0, 0, 1)
        assert np.array_equal(out, worker.chemistry.react(states, dt))
        assert (out[:, VARIABLES.index("calcite")] >= 0).all()
    finally:
        worker.close()


def test_validation_table(tmp_path_factory: pytest.TempPathFactory,
                          capsys: pytest.CaptureFixture[str]) -> None:
    """The Table 1 command runs every variant asked for, writes the table,
    the verdict per rounding and the heat maps, and reuses finished runs
    when run again (on a tiny grid here)."""
    comm = MPI.COMM_WORLD
    out = shared_tmp(tmp_path_factory, "validation", comm)
    args = ["--set", "grid.nx=4", "--set", "grid.ny=4", "--set", "time.iterations=3",
            "--aqueous", "5", "8", "--minerals", "4", "7", "--out", str(out)]
    assert validate_main(args) == 0
    first = capsys.readouterr().out
    assert validate_main(args) == 0  # everything reused
    second = capsys.readouterr().out
    # A variant kept from another process count (or package size) is run
    # again: its figures were reused, and reported as of this count.
    elsewhere = {"processes": comm.Get_size() + 1, "package_size": 7}
    if comm.Get_rank() == 0:
        kept = out / "variants" / "decimal_log_5_4.json"
        saved = json.loads(kept.read_text())
        saved["job"] = elsewhere
        kept.write_text(json.dumps(saved))
    comm.Barrier()
    assert validate_main(args) == 0
    third = capsys.readouterr().out
    # A reference that is not a run without the DHT is refused.
    assert validate_main(args + ["--reference", str(out / "variants")]) == 2
    # The reference is run again where it was kept from another process
    # count (the speedups are of its timings), and refused as --reference.
    summary = out / "reference" / "summary.json"
    if comm.Get_rank() == 0:
        saved = json.loads(summary.read_text())
        summary.write_text(json.dumps({**saved, **elsewhere}))
    comm.Barrier()
    capsys.readouterr()
    assert validate_main(args + ["--reference", str(out / "reference")]) == 2
    refused = capsys.readouterr().err
    assert validate_main(args) == 0
    fourth = capsys.readouterr().out
    if comm.Get_rank() != 0:
        return
    assert first.count(": running") == 16 and "running" not in second
    assert third.count(": running") == 1 and (
        f"decimal_log_5_4: running again: kept from a run on {comm.Get_size() + 1} "
        "processes, packages of 7 cells") in third
    assert "reference run" not in second + third
    assert (f"--reference {out / 'reference'}: it is a run on {comm.Get_size() + 1} "
            "processes, packages of 7 cells, this one runs on "
            f"{comm.Get_size()} processes") in refused
    assert (f"reference run (DHT off) into {out / 'reference'} again: kept from a run on "
            f"{comm.Get_size() + 1} processes, packages of 7 cells") in fourth
    assert "running" not in fourth.replace("reference run", "")
    assert json.loads(summary.read_text())["processes"] == comm.Get_size()
    assert json.loads(kept.read_text())["job"]["processes"] == comm.Get_size()
    text = (out / "validation.md").read_text()
    rows = [line for line in text.splitlines()
            if line.startswith("| significant |") or line.startswith("| decimal |")]
    assert len(rows) == 16  # 2 roundings x (log10, raw) x 2 x 2 digit pairs
    assert text.count("**significant:") == 1 and text.count("**decimal:") == 1
    # The paper's Table 1 stands beside the measured one, pair by pair.
    assert sum(line.startswith("| 5 | 4 |") and line.endswith("| 1.35e-05 | 4.41e-02 |")
               for line in text.splitlines()) == 2
    assert (out / "validation.png").stat().st_size > 0
    data = json.loads((out / "validation.json").read_text())
    assert all(0 <= row["hit_rate"] <= 1 and row["worst_rms_term"] >= 0
               for row in data.values())


def test_validation_names_runs_not_finite(tmp_path_factory: pytest.TempPathFactory,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A variant whose fields held a NaN (here its kept figures say so, as
    a run's would) is named at the top of the table, loses its log/raw
    comparison, and the command exits with 1 on every process after
    writing everything."""
    comm = MPI.COMM_WORLD
    out = shared_tmp(tmp_path_factory, "validation", comm)
    args = ["--set", "grid.nx=4", "--set", "grid.ny=4", "--set", "time.iterations=2",
            "--aqueous", "5", "--minerals", "4", "--roundings", "significant",
            "--out", str(out)]
    assert validate_main(args) == 0
    if comm.Get_rank() == 0:
        kept = next((out / "variants").glob("*log*.json"))
        saved = json.loads(kept.read_text())
        saved["figures"].update(worst_rms_term=math.nan, worst_variable="Ca",
                                worst_iteration=2)
        kept.write_text(json.dumps(saved))
        (out / "validation.md").unlink()
    comm.Barrier()
    capsys.readouterr()
    assert validate_main(args) == 1
    printed = capsys.readouterr()
    if comm.Get_rank() != 0:
        return
    assert "running" not in printed.out
    text = (out / "validation.md").read_text()
    name = kept.stem
    assert (f"**NOT FINITE**: NaN or inf in the fields of 1 run(s), the worst of all terms "
            f"(shown as NaN): {name} (Ca, iteration 2).") in text
    assert "| NaN (Ca, 2) |" in text
    assert "**significant: raw beats log at every pair, unlike Table 1**" in text
    assert f"values that are not finite in: {name} (Ca, iteration 2)" in printed.err


def test_validation_rejects_bad_settings(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert validate_main(["--set", "grid.nx=zero"]) == 2
    # Runs stopped early would give speedups of part of a run.
    capsys.readouterr()
    out = tmp_path / "sweep"
    assert validate_main(["--set", "grid.nx=4", "--set", "grid.ny=4", "--set",
                          "time.iterations=2", "--aqueous", "5", "--minerals", "4",
                          "--set", "run.stop_after=30", "--out", str(out)]) == 2
    if MPI.COMM_WORLD.Get_rank() == 0:
        assert "run.stop_after must be 0" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.one_process
def test_automatic_package_size() -> None:
    """run.package_size = 0: with several workers the cells over 4
    packages per worker, rounded up, a lone worker one package; none
    larger than 4096 cells; a set size is kept."""
    assert package_size(0, 2498, 1) == 2498      # SimDol2D on 2 processes
    assert package_size(0, 10000, 1) == 4096
    assert package_size(0, 10000, 2) == 1250
    assert package_size(0, 40000, 2) == 4096
    assert package_size(0, 2498, 2) == 313       # 8 packages for 2 workers
    assert package_size(0, 2498, 3) == 209       # 12 packages for 3 workers
    assert package_size(0, 10, 4) == 1
    assert package_size(16, 2498, 3) == 16
    cells = np.arange(2498)
    work = packages(cells, package_size(0, cells.size, 3))
    assert len(work) >= 12 and sorted(np.concatenate(work).tolist()) == cells.tolist()
