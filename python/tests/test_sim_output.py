"""What a run leaves behind: no stale outputs of an earlier run, the waters
and the whole effective configuration with the versions that computed it,
errors against a reference run, readable progress in a log."""

import io
import json
import os
import re
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from mpi4py import MPI

from mpidht_sim.cli import main, progress_reporter
from mpidht_sim.config import ConfigError, load
from mpidht_sim.driver import initial_state, run
from mpidht_sim.measure import load_fields
from mpidht_sim.output import check_folders, finish, start, write_field, write_fields
from mpidht_sim.variables import VARIABLES

from conftest import shared_tmp


def tiny_args(iterations: int, *more: str, plots: bool = False) -> list[str]:
    """The command line of a quiet run on a 4 x 4 grid, then more; it
    draws no figures unless plots."""
    return ["--set", "grid.nx=4", "--set", "grid.ny=4", "--iterations", str(iterations),
            "--quiet", *([] if plots else ["--no-plots"]), *more]


@pytest.mark.one_process
def test_earlier_outputs_refused_or_replaced(tmp_path: Path) -> None:
    out = tmp_path / "run"
    cfg = load(None, {"run.output_dir": str(out)})
    check_folders(cfg)  # not there yet
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    check_folders(cfg)  # nothing of a run's
    for name in ("summary.json", "fields_00050.npz", "fields_00050.vtu", "maps.png"):
        (out / name).write_text("old")
    with pytest.raises(ConfigError, match=r"holds an earlier run's outputs \(fields_00050.npz"):
        check_folders(cfg)
    cfg = load(None, {"run.output_dir": str(out), "run.overwrite": True})
    check_folders(cfg)
    start(cfg)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "waters.json"]
    waters = json.loads((out / "waters.json").read_text())
    assert waters["initial"]["state"] == cfg.waters["initial"].state
    assert "EQUILIBRIUM_PHASES" in waters["injected"]["phreeqc_input"]
    (out / "x.txt").write_text("")
    with pytest.raises(ConfigError, match="is not a folder"):
        check_folders(load(None, {"run.output_dir": str(out / "x.txt")}))
    with pytest.raises(ConfigError, match="run.reference: .* holds no saved fields"):
        check_folders(load(None, {"run.reference": str(tmp_path)}))


@pytest.mark.one_process
@pytest.mark.parametrize("name", ["summary.json", "maps.png", "fields_00000.npz",
                                  "fields_00004.vtu"])
def test_folder_where_the_run_writes_a_file_is_refused(tmp_path: Path, name: str) -> None:
    """A folder (or a FIFO) named as a file the run writes is refused
    before the run, --overwrite or not, naming it: it passed the check,
    and the run failed at its end (IsADirectoryError, MPI_Abort)."""
    out = tmp_path / "run"
    (out / name).mkdir(parents=True)
    for overwrite in (False, True):
        cfg = load(None, {"run.output_dir": str(out), "run.overwrite": overwrite})
        with pytest.raises(ConfigError, match=re.escape(
                f"run.output_dir: {out / name} is a folder, where the run writes a file of "
                "that name")):
            check_folders(cfg)
    assert (out / name).is_dir()
    (out / name).rmdir()
    os.mkfifo(out / name)
    with pytest.raises(ConfigError, match=re.escape(f"{out / name} is not a regular file")):
        check_folders(load(None, {"run.output_dir": str(out), "run.overwrite": True}))


@pytest.mark.one_process
def test_output_folder_that_cannot_be_made(tmp_path: Path) -> None:
    """An output folder below a file is refused before anything is
    written, naming run.output_dir and the file."""
    (tmp_path / "afile").write_text("mine")
    for out in (tmp_path / "afile" / "sub", tmp_path / "afile" / "sub" / "deeper"):
        with pytest.raises(ConfigError, match=re.escape(
                f"run.output_dir: {out} cannot be made: {tmp_path / 'afile'} is not a folder")):
            check_folders(load(None, {"run.output_dir": str(out)}))
    assert [p.name for p in tmp_path.iterdir()] == ["afile"]
    # A folder where nobody may make one, though os.access says yes to
    # root: refused as well (it was a FileNotFoundError once writing).
    with pytest.raises(ConfigError, match=re.escape(
            "run.output_dir: /proc/mpidht-out cannot be made: /proc is a folder this "
            "process may not write in")):
        check_folders(load(None, {"run.output_dir": "/proc/mpidht-out"}))
    # The try leaves nothing behind.
    check_folders(load(None, {"run.output_dir": str(tmp_path / "new")}))
    assert [p.name for p in tmp_path.iterdir()] == ["afile"]


@pytest.mark.one_process
def test_overwrite_removes_only_what_a_run_writes(tmp_path: Path) -> None:
    """Files named like fields but not as a run names them (fields_mine.npz,
    fields_1.npz, six digits) are not an earlier run's outputs: not
    refused, not removed, not read as fields, not in fields.pvd."""
    out = tmp_path / "run"
    out.mkdir()
    mine = ["fields_mine.npz", "fields_mine.vtu", "fields_1.npz", "fields_000002.vtu"]
    for name in mine:
        (out / name).write_text("mine")
    settings = {"grid.nx": 4, "grid.ny": 4, "run.output_dir": str(out)}
    cfg = load(None, settings)
    check_folders(cfg)  # nothing of a run's
    (out / "fields_00003.npz").write_text("old")
    with pytest.raises(ConfigError, match=r"earlier run's outputs \(fields_00003.npz\)"):
        check_folders(cfg)
    cfg = load(None, {**settings, "run.overwrite": True})
    start(cfg)
    assert sorted(p.name for p in out.iterdir()) == sorted(mine + ["waters.json"])
    write_field(cfg, out, 4, initial_state(cfg))
    pvd = (out / "fields.pvd").read_text()
    assert pvd.count("<DataSet ") == 1 and 'file="fields_00004.vtu"' in pvd
    assert sorted(load_fields(out)) == [4]


@pytest.mark.one_process
def test_reference_is_not_the_output_folder(tmp_path: Path) -> None:
    """A reference that is the output folder (by any path) is refused, with
    --overwrite too, which would remove its fields; one in a subfolder of
    the output folder is not touched by the run, and is accepted."""
    out = tmp_path / "run"
    out.mkdir()
    tiny = load(None, {"grid.nx": 4, "grid.ny": 4})
    write_field(tiny, out, 2, initial_state(tiny))
    (tmp_path / "link").symlink_to(out)
    for ref in (out, tmp_path / "link", out / "." / ".." / "run"):
        for overwrite in (True, False):
            cfg = load(None, {"run.output_dir": str(out), "run.reference": str(ref),
                              "run.overwrite": overwrite})
            with pytest.raises(ConfigError, match=re.escape(
                    f"run.reference: {ref} is the output folder (run.output_dir: {out})")):
                check_folders(cfg)
    (out / "ref").mkdir()
    (out / "fields_00002.npz").rename(out / "ref" / "fields_00002.npz")
    check_folders(load(None, {"run.output_dir": str(out), "run.reference": str(out / "ref"),
                              "run.overwrite": True, "run.save_every": 2, "grid.nx": 4,
                              "grid.ny": 4}))


def test_reference_that_cannot_be_read(tmp_path: Path) -> None:
    """A reference whose saved field cannot be read is refused before the
    run, naming the file; one that breaks during the run is reported as not
    compared, and summary.json is written all the same."""
    ref = tmp_path / "ref"
    ref.mkdir()
    broken = ref / "fields_00002.npz"
    broken.write_bytes(b"")
    cfg = load(None, {"grid.nx": 4, "grid.ny": 4, "time.iterations": 2,
                      "interp.enabled": False, "run.output_dir": str(tmp_path / "run"),
                      "run.reference": str(ref)})
    with pytest.raises(ConfigError, match=re.escape(f"run.reference: {broken} cannot be")):
        check_folders(cfg)
    done = finish(run(cfg, MPI.COMM_SELF), cfg, {}, plots=False)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["reference"]["errors"] is None
    assert str(broken) in summary["reference"]["problem"]
    assert any(line.startswith(f"against {ref}: not compared: {broken}")
               for line in done.lines)
    # Nothing judged is no pass (the command exits with 1).
    assert done.not_compared is not None
    assert done.not_compared.startswith(f"against {ref}: {broken}")


@pytest.mark.one_process
def test_reference_of_another_grid_is_refused_first(tmp_path: Path) -> None:
    """A reference whose saved fields are of another grid is refused before
    the run, naming the file, also without a summary.json to tell (it was
    found after the run: "not compared", exit status 0), and also where
    the cell count is the same (8 x 2 against 2 x 8)."""
    ref = tmp_path / "ref"
    ref.mkdir()
    for (nx, ny), (run_nx, run_ny) in (((4, 4), (2, 8)), ((8, 2), (2, 8)),
                                       ((2, 8), (4, 4))):
        other = load(None, {"grid.nx": nx, "grid.ny": ny})
        write_field(other, ref, 2, initial_state(other))
        cfg = load(None, {"grid.nx": run_nx, "grid.ny": run_ny, "time.iterations": 2,
                          "run.output_dir": str(tmp_path / "run"),
                          "run.reference": str(ref)})
        with pytest.raises(ConfigError, match=re.escape(
                f"run.reference: {ref / 'fields_00002.npz'} holds the fields of another "
                f"grid: its C is {ny} x {nx} cells (ny x nx), where this grid is "
                f"{run_ny} x {run_nx}")):
            check_folders(cfg)
    same = load(None, {"grid.nx": 2, "grid.ny": 8, "time.iterations": 2,
                       "run.output_dir": str(tmp_path / "run"), "run.reference": str(ref)})
    check_folders(same)
    assert not (tmp_path / "run").exists()


@pytest.mark.one_process
def test_reference_that_does_not_match_is_refused(tmp_path: Path) -> None:
    """--reference: a reference run of another grid, time step or
    chemistry is refused before the run, naming what differs, as is one
    that saved none of the iterations this run saves; one of fewer
    iterations is compared where both saved, saying which were not, and
    gives no speedup."""
    ref = tmp_path / "ref"
    base = {"grid.nx": 4, "grid.ny": 4, "interp.enabled": False, "run.save_every": 1}
    ref_cfg = load(None, {**base, "time.iterations": 2, "dht.enabled": False,
                          "run.output_dir": str(ref)})
    check_folders(ref_cfg)
    start(ref_cfg)
    finish(run(ref_cfg, MPI.COMM_SELF), ref_cfg, {}, plots=False)
    settings = {**base, "run.output_dir": str(tmp_path / "run"), "run.reference": str(ref)}
    for other, named in (({"time.time_step": 5760.0}, "time_step"),
                         ({"grid.nx": 2, "grid.ny": 8}, "nx, ny, fixed"),
                         ({"chemistry.calcite_parm": 0.001}, "calcite_parm")):
        with pytest.raises(ConfigError, match=re.escape(
                f"run.reference: {ref} is not a reference for this run: its {named} differ")):
            check_folders(load(None, {**settings, "time.iterations": 4, **other}))
    with pytest.raises(ConfigError, match=re.escape(
            f"run.reference: {ref} saved none of the iterations this run saves (4, 8)")):
        check_folders(load(None, {**settings, "time.iterations": 8, "run.save_every": 4}))
    cfg = load(None, {**settings, "time.iterations": 4})
    check_folders(cfg)
    lines = finish(run(cfg, MPI.COMM_SELF), cfg, {}, plots=False).lines
    assert any(line.startswith(f"against {ref}: worst cell") and line.endswith(
        "2 of 4 saved iterations compared; not compared (the reference did not save them): "
        "3, 4") for line in lines)
    assert "no speedup over it: it ran 2 iterations, this run 4" in lines
    assert not any(line.startswith("speedup over it") for line in lines)


@pytest.mark.one_process
def test_no_speedup_where_a_run_stopped_early(tmp_path: Path) -> None:
    """A speedup over the reference only where both ran their iterations to
    the end: a run stopped after its first of 2 iterations (or against a
    reference that stopped so) is compared, but claims no speedup, saying
    why (it claimed one of whatever the two times were)."""
    base = {"grid.nx": 4, "grid.ny": 4, "time.iterations": 2, "interp.enabled": False,
            "run.save_every": 1}
    ref = tmp_path / "ref"
    ref_cfg = load(None, {**base, "dht.enabled": False, "run.output_dir": str(ref)})
    start(ref_cfg)
    finish(run(ref_cfg, MPI.COMM_SELF), ref_cfg, {}, plots=False)
    settings = {**base, "run.reference": str(ref)}

    def against(name: str, **extra: Any) -> tuple[list[str], dict[str, Any]]:
        cfg = load(None, {**settings, "run.output_dir": str(tmp_path / name), **extra})
        lines = finish(run(cfg, MPI.COMM_SELF), cfg, {}, plots=False).lines
        return lines, json.loads((tmp_path / name / "summary.json").read_text())["reference"]

    lines, reference = against("whole")
    assert any(line.startswith("speedup over it: chemistry ") for line in lines)
    assert reference["chemistry_speedup"] > 0
    lines, reference = against("stopped", **{"run.stop_after": 1e-9})
    assert "no speedup over it: this run stopped after iteration 1 of 2" in lines
    assert not any(line.startswith("speedup over it") for line in lines)
    assert "chemistry_speedup" not in reference and "wall_speedup" not in reference
    assert reference["errors"]["compared"] == [1]
    summary = json.loads((ref / "summary.json").read_text())
    summary["stopped"] = {"iteration": 1, "iterations": 2, "reason": "SIGUSR1 received"}
    (ref / "summary.json").write_text(json.dumps(summary))
    lines, reference = against("after-stopped")
    assert "no speedup over it: it stopped after iteration 1 of 2" in lines
    assert "chemistry_speedup" not in reference
    lines, reference = against("both-stopped", **{"run.stop_after": 1e-9})
    assert ("no speedup over it: this run stopped after iteration 1 of 2 and it stopped "
            "after iteration 1 of 2") in lines


@pytest.mark.one_process
def test_warm_start_that_computes_nothing_says_so(tmp_path: Path) -> None:
    """A warm start whose saved DHT answers every cell reaction: PHREEQC
    computed none, said without a ratio (it printed "0 of 14 ...: 14.0x
    fewer", dividing by 1 for 0); the first run gives its ratio."""
    base = {"grid.nx": 4, "grid.ny": 4, "time.iterations": 1, "interp.enabled": False}
    first = load(None, {**base, "dht.dump": True, "run.output_dir": str(tmp_path / "first")})
    start(first)
    lines = finish(run(first, MPI.COMM_SELF), first, {}, plots=False).lines
    ratio = [line for line in lines if line.startswith("PHREEQC computed ")]
    assert len(ratio) == 1 and re.fullmatch(
        r"PHREEQC computed \d+ of 14 cell reactions: \d+\.\dx fewer than without the "
        "surrogate", ratio[0]), ratio
    warm = load(None, {**base, "dht.restore": str(tmp_path / "first" / "dht.mpidht"),
                       "run.output_dir": str(tmp_path / "warm")})
    start(warm)
    result = run(warm, MPI.COMM_SELF)
    assert sum(r.misses for r in result.records) == 0
    lines = finish(result, warm, {}, plots=False).lines
    assert [line for line in lines if line.startswith("PHREEQC computed ")] == [
        "PHREEQC computed none of the 14 cell reactions: the surrogate answered every one"]


@pytest.mark.one_process
def test_fields_not_finite_fail_the_run(tmp_path: Path) -> None:
    """A NaN or inf in the run's own saved fields is a failure that names
    the first variable and iteration, whatever comes after it; the outputs
    are written all the same, and the smallest amount printed is a finite
    one."""
    cfg = load(None, {"grid.nx": 4, "grid.ny": 4, "time.iterations": 2,
                      "interp.enabled": False, "run.save_every": 1,
                      "run.output_dir": str(tmp_path / "run")})
    start(cfg)
    result = run(cfg, MPI.COMM_SELF)
    clean = finish(result, cfg, {}, plots=False)
    assert clean.failure is None and not any("NOT FINITE" in line for line in clean.lines)
    result.saved[2][[0, 3], VARIABLES.index("Mg")] = np.inf
    result.saved[2][5, VARIABLES.index("Ca")] = np.nan
    result.saved[1][7, VARIABLES.index("dolomite")] = np.nan
    done = finish(result, cfg, {}, plots=False)
    what = "NaN or inf in the saved fields, first in dolomite at iteration 1 (1 cells)"
    assert done.failure == what
    assert f"NOT FINITE: {what}" in done.lines
    smallest = next(line for line in done.lines if line.startswith("smallest finite amount"))
    assert "nan" not in smallest and "inf" not in smallest
    assert (tmp_path / "run" / "summary.json").is_file()


@pytest.mark.one_process
def test_reference_bounds_fail_the_run(tmp_path: Path) -> None:
    """With a reference, finish judges the comparison against run.cell_bound
    and run.rms_bound: a run equal to its reference passes, saying over
    which iterations; pH off by 9e-4 of its maximum in every cell
    (the worst cell within 1e-3, the RMS term 9 times 1e-4) is a failure
    that names the RMS term, and so is any error at a bound set lower."""
    base = {"grid.nx": 4, "grid.ny": 4, "time.iterations": 2, "interp.enabled": False,
            "run.save_every": 1, "dht.enabled": False}
    ref = tmp_path / "ref"
    ref_cfg = load(None, {**base, "run.output_dir": str(ref)})
    start(ref_cfg)
    finish(run(ref_cfg, MPI.COMM_SELF), ref_cfg, {}, plots=False)
    cfg = load(None, {**base, "run.output_dir": str(tmp_path / "run"),
                      "run.reference": str(ref)})
    result = run(cfg, MPI.COMM_SELF)
    done = finish(result, cfg, {}, plots=False)
    assert done.failure is None and done.exceeded is None
    assert (f"against {ref}: PASSED: worst cell within 0.001, worst RMS term within 0.0001 "
            "(over the 2 iterations compared: 1, 2)") in done.lines
    j = VARIABLES.index("pH")
    for field in result.saved.values():
        field[:, j] += 0.0009 * np.abs(field[:, j]).max()
    done = finish(result, cfg, {}, plots=False)
    assert done.failure is None
    assert done.exceeded is not None and done.exceeded.startswith(
        f"against {ref}: worst RMS term 9.00e-04")
    failed = [line for line in done.lines if line.startswith(f"against {ref}: FAILED: ")]
    assert len(failed) == 1 and "worst cell" not in failed[0]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["reference"]["errors"]["passed"] is False
    loose = load(None, {**base, "run.output_dir": str(tmp_path / "run"),
                        "run.reference": str(ref), "run.cell_bound": 0.5,
                        "run.rms_bound": 0.5})
    assert finish(result, loose, {}, plots=False).exceeded is None
    for key in ("run.cell_bound", "run.rms_bound"):
        with pytest.raises(ConfigError, match=f"{key} must be positive"):
            load(None, {key: 0.0})


def edit_fields(path: Path, name: str, change: Any) -> None:
    """Rewrites the saved fields at path with field name changed."""
    with np.load(path) as data:
        fields = {field: data[field].copy() for field in data.files}
    fields[name] = change(fields[name])
    np.savez(path, **fields)


def test_stopped_run_exits_3_after_writing_everything(
        tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]) -> None:
    """The command line: a run stopped by --stop-after (run.stop_after)
    exits with 3 on every process, having written summary.json (which
    says where and why it stopped), the fields of the iteration it stopped
    after and, with --save-dht, the DHT; the same run to its end exits
    with 0 and says it was not stopped."""
    comm = MPI.COMM_WORLD
    base = shared_tmp(tmp_path_factory, "stop", comm)
    tiny = tiny_args(4, "--set", "run.save_every=2", "--save-dht")
    capsys.readouterr()
    assert main(tiny + ["--output", str(base / "stopped"), "--stop-after", "1e-9"]) == 3
    printed = capsys.readouterr()
    assert main(tiny + ["--output", str(base / "whole")]) == 0
    if comm.Get_rank() != 0:
        return
    summary = json.loads((base / "stopped" / "summary.json").read_text())
    assert summary["config"]["stop_after"] == 1e-9
    stopped = summary["stopped"]
    assert (stopped["iteration"], stopped["iterations"]) == (1, 4)
    assert stopped["reason"].startswith("run.stop_after = 1e-09 s: ")
    assert [r["iteration"] for r in summary["records"]] == [1]
    assert sorted(load_fields(base / "stopped")) == [0, 1]
    assert (base / "stopped" / "dht.mpidht").is_file()
    assert "STOPPED after iteration 1 of 4 (run.stop_after = 1e-09 s: " in printed.out
    assert "its fields are saved, and the DHT" in printed.out
    assert json.loads((base / "whole" / "summary.json").read_text())["stopped"] is None


def test_reference_bounds_exceeded_exit_1(tmp_path_factory: pytest.TempPathFactory,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The command line: a run whose comparison with --reference exceeds a
    bound exits with 1 on every process after writing everything, saying
    which bound; within the bounds it exits with 0."""
    comm = MPI.COMM_WORLD
    base = shared_tmp(tmp_path_factory, "bounds", comm)
    tiny = tiny_args(2, "--set", "run.save_every=1", "--no-dht")
    ref = base / "ref"
    assert main(tiny + ["--output", str(ref)]) == 0
    assert main(tiny + ["--output", str(base / "same"), "--reference", str(ref)]) == 0
    if comm.Get_rank() == 0:
        edit_fields(ref / "fields_00002.npz", "pH",
                    lambda pH: pH + 0.002 * np.abs(pH).max())
    comm.Barrier()
    capsys.readouterr()
    assert main(tiny + ["--output", str(base / "run"), "--reference", str(ref)]) == 1
    printed = capsys.readouterr()
    if comm.Get_rank() == 0:
        assert f"against {ref}: FAILED: worst cell 2.00e-03 (pH, iteration 2) exceeds 0.001" \
            in printed.out
        assert f"mpidht_sim: bounds exceeded: against {ref}: worst cell 2.00e-03" in printed.err
        assert (base / "run" / "summary.json").is_file()


def test_reference_of_another_grid_or_not_compared(
        tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]) -> None:
    """The command line: a reference whose fields are of another grid
    exits with 2 before the run (it ran, said "not compared" and exited
    with 0); a run whose comparison could not be made at all (here it
    stopped after an iteration the reference did not save) exits with 1
    after writing everything, saying so: nothing was judged."""
    comm = MPI.COMM_WORLD
    base = shared_tmp(tmp_path_factory, "grid", comm)
    tiny = tiny_args(2, "--set", "run.save_every=2", "--set", "interp.enabled=false")
    other = base / "other"
    if comm.Get_rank() == 0:
        other.mkdir()
        cfg = load(None, {"grid.nx": 2, "grid.ny": 8})
        write_field(cfg, other, 2, initial_state(cfg))
    comm.Barrier()
    capsys.readouterr()
    assert main(tiny + ["--output", str(base / "vs-other"), "--reference", str(other)]) == 2
    printed = capsys.readouterr()
    ref = base / "ref"
    assert main(tiny + ["--no-dht", "--output", str(ref)]) == 0
    capsys.readouterr()
    assert main(tiny + ["--output", str(base / "run"), "--reference", str(ref),
                        "--stop-after", "1e-9"]) == 1
    stopped = capsys.readouterr()
    if comm.Get_rank() != 0:
        return
    assert (f"mpidht_sim: configuration error: run.reference: {other / 'fields_00002.npz'} "
            "holds the fields of another grid: its C is 8 x 2 cells (ny x nx), where this "
            "grid is 4 x 4") in printed.err
    assert not (base / "vs-other").exists()
    assert (f"mpidht_sim: not compared: against {ref}: no saved iteration (other than 0) in "
            "both runs; the run saved 1") in stopped.err
    assert f"against {ref}: not compared: " in stopped.out
    summary = json.loads((base / "run" / "summary.json").read_text())
    assert summary["stopped"]["iteration"] == 1 and summary["reference"]["errors"] is None


def test_reference_not_finite_or_unchecked(tmp_path_factory: pytest.TempPathFactory,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The command line: a comparison with --reference that meets a NaN
    exits with 1 on every process after writing everything, naming the
    variable and the iteration; a reference without summary.json is
    compared, and the run says its settings were not checked."""
    comm = MPI.COMM_WORLD
    base = shared_tmp(tmp_path_factory, "nan", comm)
    tiny = tiny_args(2, "--set", "run.save_every=1", "--set", "interp.enabled=false")
    ref = base / "ref"
    assert main(tiny + ["--no-dht", "--output", str(ref)]) == 0
    if comm.Get_rank() == 0:
        (ref / "summary.json").unlink()

        def one_nan(ca: np.ndarray) -> np.ndarray:
            ca.flat[3] = np.nan
            return ca
        edit_fields(ref / "fields_00002.npz", "Ca", one_nan)
    comm.Barrier()
    capsys.readouterr()
    assert main(tiny + ["--output", str(base / "run"), "--reference", str(ref)]) == 1
    printed = capsys.readouterr()
    if comm.Get_rank() == 0:
        assert (f"against {ref}: NOT FINITE: NaN or inf in the fields, first in Ca "
                "at iteration 2 (0 cells of this run, 1 of the reference)") in printed.out
        assert (f"settings not checked (grid, flow, time, chemistry, waters): {ref} has no "
                "summary.json") in printed.out
        assert "mpidht_sim: values that are not finite: " in printed.err
        summary = json.loads((base / "run" / "summary.json").read_text())
        assert summary["reference"]["settings_checked"] is False
        assert summary["reference"]["errors"]["not_finite"]["variable"] == "Ca"


@pytest.mark.one_process
def test_maps_of_a_run_that_saves_every_iteration(tmp_path: Path) -> None:
    """maps.png shows at most 7 saved iterations, spread from the first to
    the last: a run that saved all 301 of SimDol2D asked for a figure of
    301 columns (78 000 pixels wide) and spent more than ten minutes
    laying it out after its last iteration."""
    from PIL import Image

    from mpidht_sim.output import mapped_iterations, plot

    assert mapped_iterations(range(301)) == [0, 50, 100, 150, 200, 250, 300]
    assert mapped_iterations([300, 0, 100]) == [0, 100, 300]
    assert mapped_iterations(range(9)) == [0, 1, 3, 4, 5, 7, 8]
    cfg = load(None, {"grid.nx": 4, "grid.ny": 4, "time.iterations": 20,
                      "interp.enabled": False, "run.save_every": 1,
                      "run.output_dir": str(tmp_path)})
    result = run(cfg, MPI.COMM_SELF)
    assert len(result.saved) == 21
    plot(result, cfg, tmp_path)
    with Image.open(tmp_path / "maps.png") as image:
        width = image.size[0]
    # 7 columns of 2.6 inches at 100 dpi and the colour bars: under 2 100
    # pixels; 21 columns would be 5 600.
    assert width < 2100


@pytest.mark.one_process
def test_progress_lines_when_not_a_terminal() -> None:
    stream = io.StringIO()
    update, close = progress_reporter(20, stream)
    for it in range(1, 21):
        update(SimpleNamespace(iteration=it, hits=6, interpolated=1, misses=1))
    close()
    text = stream.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert len(lines) == 10 and lines[-1].startswith(
        "iteration 20/20: hit rate 75.0%, interpolated 12.5%")
    # A line after any iteration that ends a minute or more after the last
    # one, whatever tenth of the run it is in (an iteration count set
    # beyond reach showed nothing).
    stream, now = io.StringIO(), [0.0]
    update, close = progress_reporter(10 ** 20, stream, clock=lambda: now[0])
    for it, seconds in ((1, 59.0), (2, 60.0), (3, 30.0), (4, 30.0)):
        now[0] += seconds
        update(SimpleNamespace(iteration=it, hits=1, interpolated=0, misses=1))
    assert [line.split(":")[0] for line in stream.getvalue().splitlines()] == [
        "iteration 2/100000000000000000000", "iteration 4/100000000000000000000"]
    assert stream.getvalue().splitlines()[1].endswith(", 179.0 s")


def test_run_against_reference(tmp_path_factory: pytest.TempPathFactory,
                               capsys: pytest.CaptureFixture[str]) -> None:
    """The command line end to end: a reference run, a DHT run compared
    with it (summary.json), a refused rerun into the same folder and a
    rerun with --overwrite that leaves no stale field."""
    comm = MPI.COMM_WORLD
    base = shared_tmp(tmp_path_factory, "cli", comm)
    # Only the runs into run draw their figures (--no-plots elsewhere).
    drawn = tiny_args(4, "--set", "run.save_every=1", plots=True)
    tiny = tiny_args(4, "--set", "run.save_every=1")
    ref, cmp, run = base / "ref", base / "cmp", base / "run"
    assert main(tiny + ["--no-dht", "--output", str(ref)]) == 0
    assert main(tiny + ["--output", str(cmp), "--reference", str(ref)]) == 0
    assert main(drawn + ["--output", str(run)]) == 0
    assert main(tiny + ["--output", str(run)]) == 2
    assert main(drawn + ["--output", str(run), "--overwrite", "--set", "run.save_every=2"]) == 0
    if comm.Get_rank() == 0:
        printed = capsys.readouterr()
    # A run that used the DHT compared with, but no speedup claimed over it.
    assert main(tiny + ["--output", str(base / "vs-dht"), "--reference", str(cmp)]) == 0
    if comm.Get_rank() != 0:
        return
    against_dht = capsys.readouterr().out
    assert f"against {cmp}: a run that used the DHT itself: the figures are" in against_dht
    assert "no speedup over it: it used the DHT itself" in against_dht
    assert not any(line.startswith("speedup over it:") for line in against_dht.splitlines())
    over_dht = json.loads((base / "vs-dht" / "summary.json").read_text())["reference"]
    assert over_dht["reference_used_dht"] is True and "chemistry_speedup" not in over_dht
    assert over_dht["errors"]["worst_max_term"]["value"] >= 0
    assert "waters, computed before the first step:" in printed.out
    # 14 cells react (2 of 16 hold a pressure): a lone worker takes them
    # all at once, several workers packages of 14 / (4 per worker).
    workers = max(comm.Get_size() - 1, 1)
    size = 14 if workers == 1 else -(-14 // (4 * workers))
    assert (f"{comm.Get_size()} processes ({workers} reacting, packages of {size} "
            "cells)") in printed.out
    assert f"against {ref}: worst cell" in printed.out
    assert "holds an earlier run's outputs" in printed.err
    assert sorted(p.name for p in run.glob("fields_*.npz")) == [
        "fields_00000.npz", "fields_00002.npz", "fields_00004.npz"]
    for folder, drew in ((ref, False), (cmp, False), (run, True)):
        for figure in ("maps.png", "iterations.png"):
            assert (folder / figure).is_file() is drew, (folder, figure)
    summary = json.loads((ref / "summary.json").read_text())
    assert summary["config"]["nx"] == 4 and summary["config"]["dht"]["enabled"] is False
    assert summary["config"]["waters"]["initial"]["state"]["pH"] == pytest.approx(
        9.9065, abs=1e-4)
    versions = summary["versions"]
    assert versions["mpidht"] and versions["iphreeqc"].startswith("3.")
    # Open MPI's version ends in a NUL, which summary.json kept.
    assert versions["mpi"] == MPI.Get_library_version().replace("\0", "").strip(
    ).splitlines()[0] and "\0" not in versions["mpi"]
    # The package size the run took (run.package_size = 0: chosen for the
    # process count) beside the configured one.
    assert (summary["processes"], summary["package_size"]) == (comm.Get_size(), size)
    assert summary["config"]["package_size"] == 0
    assert summary["totals"]["cells"] == 4 * 14 and summary["totals"]["hits"] == 0
    compared = json.loads((cmp / "summary.json").read_text())["reference"]
    errors = compared["errors"]
    assert errors["worst_rms_term"]["variable"] in summary["config"]["dht"]["digits"]
    assert sorted(errors["iterations"]) == ["1", "2", "3", "4"]
    assert compared["chemistry_speedup"] > 0 and compared["settings_checked"] is True
    assert "settings not checked" not in printed.out
    assert json.loads((run / "summary.json").read_text())["reference"] is None


@pytest.mark.one_process
def test_mpi_library_version_without_nul() -> None:
    """summary.json's versions.mpi: the first line of MPI's version, without
    the NUL that ends Open MPI's."""
    from mpidht_sim.output import mpi_library

    assert mpi_library("Open MPI v4.1.4, package: Debian OpenMPI\0") == (
        "Open MPI v4.1.4, package: Debian OpenMPI")
    assert mpi_library("MPICH Version:\t4.0\nMPICH Release date: ...\n") == (
        "MPICH Version:\t4.0")
    assert mpi_library("\0") == "unknown"


def test_flow_that_cannot_run_is_refused(tmp_path_factory: pytest.TempPathFactory,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Settings that pass the configuration's checks but give no finite
    flow, or a time step of more inner steps than allowed, are refused on
    every process before anything is written, naming them."""
    comm = MPI.COMM_WORLD
    base = shared_tmp(tmp_path_factory, "flow", comm)
    tiny = tiny_args(2, "--output", str(base / "out"))
    for setting in ("grid.permeability=1e300", "grid.cell_size=1e-6"):
        assert main(tiny + ["--set", setting]) == 2
        err = capsys.readouterr().err
        if comm.Get_rank() == 0:
            assert "configuration error: " in err and setting.split("=")[0] in err
    assert not (base / "out").exists()


@pytest.mark.one_process
def test_fields_are_written_as_they_are_saved(tmp_path: Path) -> None:
    """A run that dies at iteration 6 keeps the fields it saved before
    (0 and 4, with a ParaView time series over them); finishing writes
    only what is missing."""
    cfg = load(None, {"grid.nx": 4, "grid.ny": 4, "time.iterations": 8,
                      "run.save_every": 4, "run.output_dir": str(tmp_path),
                      "interp.enabled": False})

    def die(record: Any) -> None:
        if record.iteration == 6:
            raise RuntimeError("killed")

    with pytest.raises(RuntimeError, match="killed"):
        run(cfg, MPI.COMM_SELF, die, partial(write_field, cfg, tmp_path))
    assert sorted(p.name for p in tmp_path.glob("fields_*.vtu")) == [
        "fields_00000.vtu", "fields_00004.vtu"]
    pvd = (tmp_path / "fields.pvd").read_text()
    assert pvd.count("<DataSet ") == 2
    assert f'timestep="{4 * cfg.time_step!r}"' in pvd and 'file="fields_00004.vtu"' in pvd
    result = run(cfg, MPI.COMM_SELF)
    before = (tmp_path / "fields_00004.vtu").stat().st_mtime_ns
    write_fields(result, cfg, tmp_path)
    assert (tmp_path / "fields_00004.vtu").stat().st_mtime_ns == before  # kept
    assert (tmp_path / "fields_00008.vtu").is_file()
    assert (tmp_path / "fields.pvd").read_text().count("<DataSet ") == 3
