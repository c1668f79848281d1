"""Shared fixtures. Every test runs on every process of MPI.COMM_WORLD (the
suite is started under mpirun at 1, 2 and 4 processes), in the same order,
so collective calls match up; a test that fails on some processes while
the others wait in it ends the job (rank_failures.py).

MPIDHT_TEST_SCALE (default 1) scales the operation counts of the heavy
tests: MPICH's one-sided operations wait for the target process to run,
which oversubscribed ranks rarely do, so its run uses fewer."""

import importlib.util
import os
import shutil
import signal
import subprocess
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Iterator

import numpy as np
import numpy.typing as npt
import pytest
from mpi4py import MPI

import mpidht
# A test failing on some processes while the others wait in it ends the job.
from rank_failures import (pytest_runtest_makereport, pytest_runtest_protocol,  # noqa: F401
                           pytest_sessionfinish, pytest_sessionstart)

PROTOCOLS = ["coarse", "fine", "lockfree"]
SCALE = float(os.environ.get("MPIDHT_TEST_SCALE", "1"))


#: The repository's root (scripts outside the packages are loaded from it).
REPO = Path(__file__).resolve().parents[2]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked one_process use no communicator of the job: at more
    than one process each process would run the same thing at once,
    competing for the cores and proving nothing more, so they are skipped
    there (the suite's 1-process run runs them). Every process decides
    alike, so the collective tests still match up."""
    if MPI.COMM_WORLD.Get_size() == 1:
        return
    skip = pytest.mark.skip(reason="one_process: run in the 1-process run of the suite")
    for item in items:
        if item.get_closest_marker("one_process"):
            item.add_marker(skip)


def load_script(name: str, relative: str) -> ModuleType:
    """Imports a script of the repository that is not in a package, by
    its path relative to the root, as module `name`."""
    spec = importlib.util.spec_from_file_location(name, REPO / relative)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def scaled(count: int, minimum: int) -> int:
    """count times MPIDHT_TEST_SCALE, but at least minimum."""
    return max(minimum, int(count * SCALE))


def outside_job_env() -> dict[str, str]:
    """This process's environment without the MPI launcher's rank
    variables: a command started with it is no rank of the job, and prints
    its messages as a command started by hand does (the simulator's
    commands leave them to rank 0 under mpiexec)."""
    from mpidht_sim.cli import RANK_VARIABLES

    return {k: v for k, v in os.environ.items() if k not in RANK_VARIABLES}


def launcher() -> list[str]:
    """The mpiexec of the MPI that mpi4py runs on, for a job of its own."""
    openmpi = MPI.Get_library_version().startswith("Open MPI")
    name = "mpiexec.openmpi" if openmpi else "mpiexec.mpich"
    path = shutil.which(name) or shutil.which("mpiexec")
    if path is None:
        pytest.skip(f"neither {name} nor mpiexec is installed")
    return [path, "--oversubscribe"] if openmpi else [path]


def own_job_env(more_env: Mapping[str, str] = {}) -> dict[str, str]:
    """The environment of a command that starts MPI as a job of its own,
    even when this process runs under a launcher: none of the launcher's
    variables (an MPI started with them would take itself for a rank of
    this job, and fail to reach its launcher), more_env added."""
    env = {k: v for k, v in os.environ.items()
           if k.startswith(("PATH", "PYTHON", "VIRTUAL_ENV", "HOME", "LD_", "MPI4PY_",
                            "OMPI_ALLOW_RUN_AS_ROOT"))}
    return {**env, **more_env}


def failing_job(command: list[str], more_env: Mapping[str, str] = {}) -> str:
    """The stderr of a job of its own (own_job_env(more_env)) that must
    fail within 120 s; the test fails if it still runs then (a process
    waited for the failed one)."""
    job = subprocess.Popen(command, env=own_job_env(more_env), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, err = job.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        job.communicate()
        pytest.fail("the job still ran after 120 s: a process waited for the failed one")
    assert job.returncode != 0
    return err


def shared_tmp(tmp_path_factory: pytest.TempPathFactory, name: str,
               comm: MPI.Intracomm = MPI.COMM_WORLD) -> Path:
    """A new folder every process of comm sees: rank 0's, broadcast (each
    process has a temporary base of its own, pytest-rank.sh)."""
    return Path(comm.bcast(str(tmp_path_factory.mktemp(name)) if comm.Get_rank() == 0
                           else None, root=0))


@pytest.fixture
def comm() -> MPI.Intracomm:
    return MPI.COMM_WORLD


@pytest.fixture(params=PROTOCOLS)
def protocol(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def table(comm: MPI.Intracomm, protocol: str) -> Iterator[mpidht.Table]:
    """A roomy table (16-byte keys, 32-byte values, 16 384 buckets per
    process): the tests' few thousand keys are never evicted."""
    with mpidht.Table(comm, 16, 32, 1 << 20, protocol=protocol) as t:
        yield t
        comm.Barrier()  # no one frees while others still operate


def keys_for(ids: npt.ArrayLike, key_size: int = 16, salt: int = 0) -> npt.NDArray[np.uint8]:
    """Deterministic, distinct key rows for integer ids."""
    ids = np.asarray(ids, dtype=np.uint64)
    rng = np.random.default_rng(12345 + salt)
    pad = rng.integers(0, 256, size=key_size, dtype=np.uint8)
    rows = np.tile(pad, (ids.size, 1))
    rows[:, :8] = ids.reshape(-1, 1).view(np.uint8).reshape(-1, 8)
    return rows


def values_for(ids: npt.ArrayLike, writer: int, value_size: int = 32) -> npt.NDArray[np.uint8]:
    """Value rows that carry their key id and writer, then derived bytes."""
    ids = np.asarray(ids, dtype=np.uint64)
    out = np.zeros((ids.size, value_size // 8), dtype=np.uint64)
    out[:, 0] = ids
    out[:, 1] = writer
    for c in range(2, value_size // 8):
        out[:, c] = ids * np.uint64(0x9E3779B97F4A7C15 + c) + np.uint64(writer)
    return out.view(np.uint8).reshape(ids.size, value_size)


def in_turn(comm: MPI.Intracomm) -> Iterator[bool]:
    """Yields, once per rank, whether it is this rank's turn, with a
    barrier after each: for tests that need one global order of writes."""
    for turn in range(comm.Get_size()):
        yield turn == comm.Get_rank()
        comm.Barrier()
