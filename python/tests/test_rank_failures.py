"""The suite's plugin for runs under mpiexec (rank_failures.py): a test
that fails on one process while the other waits in it for that one ends
the job within the wait, naming the test and printing its failure; where
the other process finishes the test anyway, the run goes on and pytest
reports the failure as usual; a wait that is no number of seconds is
refused. Jobs of their own, at 2 processes."""

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, failing_job, launcher, own_job_env
from junit_counts import counts

# Jobs of their own: no communicator of the tests' job.
pytestmark = pytest.mark.one_process

SCRATCH = '''
from mpi4py import MPI


def test_fails_between_two_barriers():
    comm = MPI.COMM_WORLD
    comm.Barrier()
    assert comm.Get_rank() == 0, "failed on purpose"
    comm.Barrier()  # rank 0 waits here for rank 1


def test_fails_after_the_last_barrier():
    comm = MPI.COMM_WORLD
    comm.Barrier()
    assert comm.Get_rank() == 0, "failed at the end on purpose"


def test_after():
    MPI.COMM_WORLD.Barrier()
'''


TESTS = REPO / "python" / "tests"


def scratch_pytest(tmp_path: Path, select: str) -> list[str]:
    """pytest's arguments for SCRATCH's tests matching select, written into
    tmp_path, with the plugin (TESTS on PYTHONPATH)."""
    (tmp_path / "test_scratch.py").write_text(SCRATCH)
    return ["-p", "rank_failures", "--rootdir", str(tmp_path), "-k", select,
            str(tmp_path / "test_scratch.py")]


def scratch_job(tmp_path: Path, select: str) -> None:
    """pytest at 2 processes (pytest-rank.sh: logs and JUnit reports per
    rank in tmp_path/out) over scratch_pytest's tests, with a 2 s wait,
    which must fail."""
    failing_job([*launcher(), "-n", "2", "bash", str(TESTS / "pytest-rank.sh"), sys.executable,
                 str(tmp_path / "out"), *scratch_pytest(tmp_path, select)],
                {"PYTHONPATH": str(TESTS), "MPIDHT_TEST_FAILED_WAIT_S": "2"})


def test_failure_while_the_others_wait_ends_the_job(tmp_path: Path) -> None:
    scratch_job(tmp_path, "between or test_after")
    log = (tmp_path / "out" / "rank1.log").read_text()  # rank 1's stderr
    assert ("rank 1 of 2: test_scratch.py::test_fails_between_two_barriers failed here, "
            "and the other processes did not finish it within 2 s") in log
    assert "failed on purpose" in log
    # Ended before pytest wrote its report, at the end of the session.
    assert not (tmp_path / "out" / "rank0.xml").exists()


def test_failure_the_others_finish_leaves_the_run_going(tmp_path: Path) -> None:
    scratch_job(tmp_path, "last_barrier or test_after")
    assert "ending the job" not in (tmp_path / "out" / "rank1.log").read_text()
    assert counts(str(tmp_path / "out" / "rank0.xml")) == (2, 0, 0)
    assert counts(str(tmp_path / "out" / "rank1.xml")) == (1, 1, 0)


@pytest.mark.parametrize("wait", ["soon", "-1", "inf", ""])
def test_a_wait_that_is_no_seconds_is_refused(tmp_path: Path, wait: str) -> None:
    out = subprocess.run([sys.executable, "-m", "pytest", *scratch_pytest(tmp_path, "test_after")],
                         env=own_job_env({"PYTHONPATH": str(TESTS),
                                          "MPIDHT_TEST_FAILED_WAIT_S": wait}),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == pytest.ExitCode.USAGE_ERROR
    assert f"MPIDHT_TEST_FAILED_WAIT_S={wait!r}: expected seconds" in out.stderr
