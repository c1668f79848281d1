"""Waiting for other processes without holding a core.

MPI's blocking calls poll while they wait: MPICH without a pause, Open
MPI giving up the processor between polls (sched_yield) only where its
launcher knows the node is oversubscribed (mpi_yield_when_idle), and a
yield lets the others run only until the poller's next turn. Where
processes outnumber cores, a worker waiting for its next package, or
every process waiting while rank 0 writes the outputs, would take the
cores of those that compute.
The calls here poll for SPIN_S, as MPI would, then sleep between polls,
from FIRST_NAP_S doubling to LAST_NAP_S: a reply within the spin costs
what it did, a later one at most LAST_NAP_S more.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Optional

from mpi4py import MPI

__all__ = ["barrier", "bcast", "recv"]

SPIN_S, FIRST_NAP_S, LAST_NAP_S = 1e-3, 5e-5, 1e-3


def _until(done: Callable[[], bool]) -> None:
    give_up_spin = time.perf_counter() + SPIN_S
    nap = FIRST_NAP_S
    while not done():
        if time.perf_counter() >= give_up_spin:
            time.sleep(nap)
            nap = min(2 * nap, LAST_NAP_S)


def recv(comm: MPI.Comm, source: int, tag: int, status: Optional[MPI.Status] = None) -> Any:
    """comm.recv(source=source, tag=tag, status=status), waiting as above."""
    found = status if status is not None else MPI.Status()
    _until(lambda: bool(comm.iprobe(source=source, tag=tag, status=found)))
    # The message probed, not one that came from another source since.
    return comm.recv(source=found.Get_source(), tag=found.Get_tag(), status=status)


def barrier(comm: MPI.Comm) -> None:
    """comm.Barrier(), waiting as above. Collective."""
    request = comm.Ibarrier()
    _until(request.Test)


def bcast(comm: MPI.Comm, value: Any, root: int = 0) -> Any:
    """comm.bcast(value, root): the others wait as above until root has
    called it. Collective."""
    barrier(comm)
    return comm.bcast(value, root=root)
