"""The command lines under a launcher: help, version, usage and
configuration errors are printed once (by rank 0), every rank exits
alike; --version names the version; validate and column take --output as
well as --out; an exception on one process of a run ends the job; a
signal to the launcher stops a run, which says so."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mpidht_sim import __version__
from mpidht_sim.cli import launcher_rank
from mpidht_sim.config import ConfigError

from conftest import failing_job, launcher, own_job_env

# Commands and jobs of their own: no communicator of the tests' job.
pytestmark = pytest.mark.one_process

MODULES = ["mpidht_sim", "mpidht_sim.validate", "mpidht_sim.column"]


def run(module: str, *args: str, rank: str) -> subprocess.CompletedProcess[str]:
    # A clean environment: no MPI launcher variables but the rank's.
    env = {k: v for k, v in os.environ.items()
           if k.startswith(("PATH", "PYTHON", "VIRTUAL_ENV", "HOME", "LD_"))}
    env["OMPI_COMM_WORLD_RANK"] = rank
    return subprocess.run([sys.executable, "-m", module, *args], env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("module", MODULES)
def test_help_and_version_on_rank_zero_only(module: str) -> None:
    zero, other = run(module, "--help", rank="0"), run(module, "--help", rank="1")
    assert zero.returncode == other.returncode == 0
    assert "usage:" in zero.stdout and other.stdout == ""
    version = run(module, "--version", rank="0")
    assert version.returncode == 0 and __version__ in version.stdout
    assert run(module, "--version", rank="3").stdout == ""
    bad = run(module, "--no-such-option", rank="1")
    assert bad.returncode == 2 and bad.stderr == ""
    assert "--no-such-option" in run(module, "--no-such-option", rank="0").stderr


@pytest.mark.parametrize("module", MODULES)
def test_configuration_error_on_rank_zero_only(module: str) -> None:
    """Every rank finds a bad --set and exits with 2; rank 0 alone says why."""
    zero = run(module, "--set", "time.no_such_key=1", rank="0")
    other = run(module, "--set", "time.no_such_key=1", rank="2")
    assert zero.returncode == other.returncode == 2
    assert "configuration error" in zero.stderr and "no_such_key" in zero.stderr
    assert other.stderr == ""


#: The simulator with one failing process, after the checks: rank 0 in
#: start (argument "start"), or the last worker in its first package.
FAILING = """
import sys
from mpi4py import MPI
import mpidht_sim.driver, mpidht_sim.output

def fail(*args):
    raise RuntimeError("failed on purpose")

if sys.argv[1] == "start":
    mpidht_sim.output.start = fail
elif MPI.COMM_WORLD.Get_rank() == MPI.COMM_WORLD.Get_size() - 1:
    mpidht_sim.driver.ChemistryWorker.react = fail
from mpidht_sim.cli import main
raise SystemExit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("where, processes", [("start", 2), ("react", 3)])
def test_failure_on_one_rank_ends_the_job(where: str, processes: int,
                                          tmp_path: Path) -> None:
    """An exception on one process after the checks ends the whole job,
    saying where and why; the other processes were left waiting for ever.
    A job of its own."""
    err = failing_job([*launcher(), "-n", str(processes), sys.executable, "-c", FAILING,
                       where, "--set", "grid.nx=4", "--set", "grid.ny=4", "--iterations",
                       "2", "--quiet", "--output", str(tmp_path / "out")])
    rank = 0 if where == "start" else processes - 1
    assert f"mpidht_sim: rank {rank}: RuntimeError: failed on purpose" in err


#: The column command with its report failing on rank 0, after the run.
FAILING_COLUMN = """
import sys
import mpidht_sim.column

def fail(*args):
    raise OSError("failed on purpose")

mpidht_sim.column._write = fail
raise SystemExit(mpidht_sim.column.main(sys.argv[1:]))
"""


def test_column_failing_on_rank_zero_ends_the_job(tmp_path: Path) -> None:
    """column: an error on rank 0 while writing its report ends the whole
    job, naming it; the others waited for rank 0's verdict for ever. A job
    of its own."""
    err = failing_job([*launcher(), "-n", "2", sys.executable, "-c", FAILING_COLUMN,
                       "--cells", "2", "--steps", "2", "--out", str(tmp_path / "out")])
    assert "mpidht_sim.column: rank 0: OSError: failed on purpose" in err


def test_signal_to_the_launcher_stops_the_run(tmp_path: Path) -> None:
    """SIGUSR1 sent to mpiexec once the run has begun (every process past
    its start) reaches every process: the run stops after the iteration in
    progress, far short of its 5000, and writes summary.json saying so.
    Open MPI's mpirun exits with the processes' 3; MPICH's Hydra (4.0)
    exited with 0 from every job here that got SIGUSR1 (a bare mpi4py
    program that exits with 3 too), so there summary.json tells. A job of
    its own."""
    env = own_job_env()
    out = tmp_path / "out"
    command = [*launcher(), "-n", "2", sys.executable, "-m", "mpidht_sim", "--set",
               "grid.nx=8", "--set", "grid.ny=8", "--iterations", "5000", "--set",
               "run.save_every=5000", "--quiet", "--output", str(out)]
    job = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, start_new_session=True)
    try:
        assert job.stdout is not None
        for line in job.stdout:  # rank 0 prints the header once every process set up
            if line.startswith("  minerals:"):
                break
        job.send_signal(signal.SIGUSR1)
        rest, err = job.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        job.communicate()
        pytest.fail("the job still ran 120 s after SIGUSR1")
    from mpi4py import MPI

    openmpi = MPI.Get_library_version().startswith("Open MPI")
    assert job.returncode in ((3,) if openmpi else (0, 3)), err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped"]["reason"] == "SIGUSR1 received"
    assert summary["stopped"]["iteration"] < 5000
    assert "STOPPED after iteration" in rest


#: The simulator with the stop signal sent to every process (as the
#: launcher forwards it) while it checks its configuration, which runs
#: PHREEQC: before MPI starts.
SIGNALLED_EARLY = """
import os
import sys
import mpidht_sim.cli as cli

checked = cli.build_config

def signalled(args):
    os.kill(os.getpid(), cli.STOP_SIGNAL)
    return checked(args)

cli.build_config = signalled
raise SystemExit(cli.main(sys.argv[1:]))
"""


def test_signal_while_set_up_stops_after_the_first_iteration(tmp_path: Path) -> None:
    """SIGUSR1 while the configuration is checked (before MPI starts) is
    noted on the master and ignored on the worker: the run stops after its
    first iteration, writing summary.json (the signal ended both
    processes: no summary.json, exit status 138). A job of its own."""
    env = own_job_env()
    out = tmp_path / "out"
    job = subprocess.run([*launcher(), "-n", "2", sys.executable, "-c", SIGNALLED_EARLY,
                          "--set", "grid.nx=4", "--set", "grid.ny=4", "--iterations", "50",
                          "--quiet", "--no-plots", "--output", str(out)],
                         env=env, capture_output=True, text=True, timeout=120)
    from mpi4py import MPI

    openmpi = MPI.Get_library_version().startswith("Open MPI")
    assert job.returncode in ((3,) if openmpi else (0, 3)), job.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped"] == {"iteration": 1, "iterations": 50,
                                  "reason": "SIGUSR1 received"}
    assert "STOPPED after iteration 1 of 50 (SIGUSR1 received)" in job.stdout


def test_output_is_accepted_where_out_was() -> None:
    for module in ("mpidht_sim.validate", "mpidht_sim.column"):
        text = run(module, "--help", rank="0").stdout
        assert "--out OUT, --output OUT" in text


def test_launcher_rank(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"):
        monkeypatch.delenv(name, raising=False)
    assert launcher_rank() == 0
    monkeypatch.setenv("PMI_RANK", "5")
    assert launcher_rank() == 5


def test_empty_output_is_refused() -> None:
    """--output "" reaches the configuration's check as "" (a Path would
    make it ".", the working folder)."""
    from mpidht_sim.cli import build_config, parse_args

    with pytest.raises(ConfigError, match="run.output_dir must be a path"):
        build_config(parse_args(["--output", ""]))
    assert build_config(parse_args(["--output", "out"])).output_dir == Path("out")


def test_damaged_warm_start_ends_every_process_cleanly(tmp_path: Path) -> None:
    """A saved DHT that restore refuses (here a flipped byte in a record)
    ends every process with status 2 and one message, not MPI_Abort: the
    refusal comes on every worker alike. Nothing of the run is left (its
    waters.json made a rerun need --overwrite). A job of its own."""
    env = own_job_env()
    tiny = ["--set", "grid.nx=4", "--set", "grid.ny=4", "--iterations", "2", "--quiet",
            "--no-plots"]

    def job(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*launcher(), "-n", "2", sys.executable, "-m", "mpidht_sim",
                               *tiny, *args], env=env, capture_output=True, text=True,
                              timeout=120)

    saved = job("--save-dht", "--output", str(tmp_path / "first"))
    assert saved.returncode == 0, saved.stderr
    dump = tmp_path / "first" / "dht.mpidht"
    data = bytearray(dump.read_bytes())
    data[-5] ^= 0x10
    dump.write_bytes(bytes(data))
    warm = job("--warm-start", str(dump), "--output", str(tmp_path / "warm"))
    assert warm.returncode == 2, warm.stderr
    assert warm.stderr.count("mpidht_sim: refused before the first step:") == 1
    assert "MPI_ABORT" not in warm.stderr and "Traceback" not in warm.stderr
    assert not (tmp_path / "warm").exists()
    (tmp_path / "kept").mkdir()
    again = job("--warm-start", str(dump), "--output", str(tmp_path / "kept"))
    assert again.returncode == 2 and list((tmp_path / "kept").iterdir()) == []


def test_validate_refuses_an_out_it_cannot_write(tmp_path: Path) -> None:
    """validate --out naming a file: refused before any run (it ran the
    reference first, then failed with NotADirectoryError)."""
    afile = tmp_path / "afile"
    afile.write_text("mine")
    done = run("mpidht_sim.validate", "--out", str(afile), "--set", "grid.nx=4",
               "--set", "grid.ny=4", "--set", "time.iterations=1", rank="0")
    assert done.returncode == 2, done.stderr
    assert (f"mpidht_sim.validate: configuration error: --out {afile}: run.output_dir: "
            f"{afile / 'reference'} cannot be made: {afile} is not a folder") in done.stderr
    assert "reference run" not in done.stdout and "Traceback" not in done.stderr
    assert afile.read_text() == "mine"
