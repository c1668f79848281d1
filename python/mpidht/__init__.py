"""mpidht: a distributed hash table inside an MPI application, for mpi4py.

Every process of a communicator hosts part of the table; any process reads
and writes any key with MPI one-sided communication. See ``Table``::

    from mpi4py import MPI
    import mpidht

    with mpidht.Table(MPI.COMM_WORLD, key_size=16, value_size=8,
                      memory_per_process=1 << 20) as table:
        table.write(b"k" * 16, b"v" * 8)
        values, found = table.read_many(keys)   # keys: (n, 16) uint8
"""

from . import _core, keys
from .table import (KEEP, Error, Eviction, Protocol, RestoreReport, Status, Table,
                    UpdateOutcome, Window, WriteOutcome)

__all__ = ["KEEP", "Error", "Eviction", "Protocol", "RestoreReport", "Status", "Table", "keys",
           "UpdateOutcome", "Window", "WriteOutcome", "strerror"]
# Compiled into the extension from include/mpidht.h, where it is defined.
__version__: str = _core.VERSION


def strerror(status: int) -> str:
    """The library's message for a status code ("unknown status" for an
    int that is none)."""
    if isinstance(status, bool) or not isinstance(status, int):
        raise TypeError(f"status must be an int, got {type(status).__name__}")
    if not -2**31 <= status < 2**31:
        return "unknown status"  # no status is that large
    return str(_core.strerror(status))
