"""mpidht_sim.waiting: a process waiting for another gets what MPI's own
call would give it, and does not hold a core while it waits."""

import time
from typing import Callable

import pytest
from mpi4py import MPI

from mpidht_sim import waiting

#: How long rank 0 keeps the others waiting.
DELAY_S = 0.5


def cpu_while(wait: Callable[[], object]) -> tuple[object, float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    got = wait()
    return got, time.process_time() - cpu, time.perf_counter() - wall


def test_recv_gives_the_probed_message_from_any_source() -> None:
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    if rank != 0:
        comm.send(("from", rank), dest=0, tag=7)
        comm.send(("other tag", rank), dest=0, tag=8)
    else:
        status = MPI.Status()
        seen = set()
        for _ in range(size - 1):
            msg = waiting.recv(comm, MPI.ANY_SOURCE, 7, status)
            assert msg == ("from", status.Get_source()) and status.Get_tag() == 7
            seen.add(status.Get_source())
        assert seen == set(range(1, size))
        for source in range(1, size):
            assert waiting.recv(comm, source, 8) == ("other tag", source)
    comm.Barrier()


@pytest.mark.parametrize("call", ["recv", "bcast", "barrier"])
def test_a_long_wait_leaves_the_core(call: str) -> None:
    """Rank 0 sleeps DELAY_S before it sends, broadcasts or enters the
    barrier; the others wait in the call. A spinning wait would use the
    CPU for most of that time (at least a quarter of it with 4 processes
    on 2 cores); this one sleeps after its first millisecond."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    if comm.Get_size() == 1:
        pytest.skip("needs a second process to wait for")
    comm.Barrier()
    if rank == 0:
        time.sleep(DELAY_S)
    if call == "recv":
        if rank == 0:
            for dest in range(1, comm.Get_size()):
                comm.send(dest * 10, dest=dest, tag=3)
            return
        got, cpu, wall = cpu_while(lambda: waiting.recv(comm, 0, 3))
        assert got == rank * 10
    elif call == "bcast":
        got, cpu, wall = cpu_while(lambda: waiting.bcast(comm, "value" if rank == 0 else None))
        assert got == "value"
    else:
        got, cpu, wall = cpu_while(lambda: waiting.barrier(comm))
    if rank != 0:
        assert wall >= DELAY_S / 2
        assert cpu <= 0.1 * wall, f"{cpu:.3f} s of CPU in {wall:.3f} s of waiting"
