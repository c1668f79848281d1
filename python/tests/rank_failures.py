"""A pytest plugin for the suite's runs under mpiexec: a test that fails on
some processes while the others wait in it for them (a collective they
never reach) ends the job, saying which test and why, instead of leaving
the job waiting until the launcher's timeout with the failure unprinted
(pytest reports failures at the end of the session).

After every test each process enters a barrier of its own communicator
(a duplicate of MPI.COMM_WORLD, so that it never matches the tests'
collectives). A process where the test passed waits there for the others
as long as they take. A process where it failed waits at most
MPIDHT_TEST_FAILED_WAIT_S seconds (default 60: longer than any test's
rank-0-only checks take here); then it writes the failure to stderr and
calls MPI_Abort. Where the others do arrive the run goes on, and pytest
reports the failure as usual.

conftest.py registers it; another run loads it with `-p rank_failures`
(python/tests on the path)."""

import math
import os
import sys
import time
from collections.abc import Generator

import pytest
from mpi4py import MPI


def _failed_wait_s() -> float:
    """MPIDHT_TEST_FAILED_WAIT_S: seconds, finite and at least 0."""
    text = os.environ.get("MPIDHT_TEST_FAILED_WAIT_S", "60")
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 <= seconds < math.inf:
        raise pytest.UsageError(
            f"MPIDHT_TEST_FAILED_WAIT_S={text!r}: expected seconds, a finite number >= 0")
    return seconds


_COMM = pytest.StashKey[MPI.Intracomm]()
#: Seconds a process whose test failed waits for the others to finish it.
_WAIT_S = pytest.StashKey[float]()
_FAILED = pytest.StashKey[list[pytest.TestReport]]()


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_WAIT_S] = _failed_wait_s()
    if MPI.COMM_WORLD.Get_size() > 1:
        session.config.stash[_COMM] = MPI.COMM_WORLD.Dup()


def pytest_sessionfinish(session: pytest.Session) -> None:
    comm = session.config.stash.get(_COMM, None)
    if comm is not None:
        del session.config.stash[_COMM]
        comm.Free()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.failed:
        item.stash.setdefault(_FAILED, []).append(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: object
                            ) -> Generator[None, object, object]:
    ran = yield
    comm = item.config.stash.get(_COMM, None)
    if comm is not None:
        _after_test(comm, item)
    return ran


def _after_test(comm: MPI.Intracomm, item: pytest.Item) -> None:
    failed = item.stash.get(_FAILED, [])
    wait = item.config.stash[_WAIT_S]
    deadline = time.monotonic() + (wait if failed else math.inf)
    request = comm.Ibarrier()
    while not request.Test():
        if time.monotonic() > deadline:
            _end_job(item, failed, wait)
        time.sleep(1e-4)


def _end_job(item: pytest.Item, failed: list[pytest.TestReport], wait: float) -> None:
    world = MPI.COMM_WORLD
    lines = [f"rank {world.Get_rank()} of {world.Get_size()}: {item.nodeid} failed here, and "
             f"the other processes did not finish it within {wait:g} s (they wait "
             "for this one): ending the job"]
    lines += [f"--- {report.when}:\n{report.longreprtext}" for report in failed]
    sys.stdout.flush()
    sys.stderr.write("\n" + "\n".join(lines) + "\n")
    sys.stderr.flush()
    world.Abort(1)
