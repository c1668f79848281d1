"""The distributed hash table on an mpi4py communicator."""

from __future__ import annotations

import contextlib
import enum
from types import TracebackType
import os
import sys
import time
import zlib
from typing import Any, Callable, Iterator, NamedTuple, Optional, Sequence, Type, Union

import numpy as np
import numpy.typing as npt
from mpi4py import MPI

from . import _core


def _check_same_mpi() -> None:
    """The extension and mpi4py must use one MPI library: communicator
    handles are passed between them as plain values."""
    ours, theirs = _core.mpi_library_version(), MPI.Get_library_version()
    if ours.split(",")[0].split("\n")[0] != theirs.split(",")[0].split("\n")[0]:
        raise ImportError(
            "mpidht was built with a different MPI library than mpi4py uses:\n"
            f"  mpidht: {ours.splitlines()[0]}\n  mpi4py: {theirs.splitlines()[0]}\n"
            "Rebuild one of them with the other's compiler wrapper "
            "(MPICC=... pip install --no-binary mpi4py mpi4py, or MPICC=... pip install .)")


_check_same_mpi()


class Status(enum.IntEnum):
    """The library's status codes (``MPIDHT_STATUS_LIST`` in mpidht.h, less
    the prefix; the test suite checks that the two lists agree). Printed by
    name (``Status.ERR_PEER``), compared as the C value."""

    __str__ = enum.Enum.__str__

    OK = 0
    NOT_FOUND = 1
    ERR_NULL_ARGUMENT = 2
    ERR_INVALID_HANDLE = 3
    ERR_MPI_NOT_INITIALIZED = 4
    ERR_INVALID_COMM = 5
    ERR_PARAMS_VERSION = 6
    ERR_KEY_SIZE = 7
    ERR_VALUE_SIZE = 8
    ERR_UNKNOWN_PROTOCOL = 9
    ERR_UNKNOWN_WINDOW = 10
    ERR_CANDIDATES = 11
    ERR_BUDGET_TOO_SMALL = 12
    ERR_BUDGET_TOO_LARGE = 13
    ERR_NO_STORAGE = 14
    ERR_MISMATCHED_PARAMS = 15
    ERR_WINDOW_UNSUPPORTED = 16
    ERR_NO_MEMORY = 17
    ERR_MPI = 18
    ERR_PEER = 19
    ERR_BATCH_SIZE = 20
    ERR_ITERATION = 21
    ERR_PATH_MISMATCH = 22
    ERR_FILE_IO = 23
    ERR_FILE_FORMAT = 24
    ERR_FILE_MISMATCH = 25
    ERR_FILE_CORRUPT = 26
    ERR_CONCURRENT_USE = 27
    ERR_TIMEOUT = 28
    ERR_STRUCT_SIZE = 29
    ERR_UNKNOWN_EVICTION = 30
    ERR_TIMEOUT_SETTING = 31
    ERR_UPDATE_ACTION = 32
    ERR_KEY_COLUMN = 33
    ERR_KEY_VALUE = 34
    ERR_COLLECTIVE_CHECK = 35
    ERR_DEBUG_SETTING = 36
    ERR_ACCESS_SETTING = 37
    ERR_MPI_LIBRARY = 38


class Error(RuntimeError):
    """A failed library call.

    ``str(error)`` is the library's message; ``error.status`` its ``Status``
    (e.g. ``Status.ERR_PEER`` when the call failed on another process).
    """

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = Status(status)

    def __reduce__(self) -> tuple[type["Error"], tuple[str, int]]:
        # pickle and copy (mpi4py's gather, multiprocessing) rebuild it
        # from both arguments, not from args alone.
        return type(self), (str(self), int(self.status))


class Protocol(enum.IntEnum):
    """Consistency protocols (docs/design.md, "Protocols")."""

    COARSE = 1
    FINE = 2
    LOCKFREE = 3


class Window(enum.IntEnum):
    """How the table's MPI window is allocated (docs/design.md, "Windows")."""

    AUTO = 0
    SHARED = 1
    ALLOCATE = 2
    CREATE = 3


class Eviction(enum.IntEnum):
    """Which entry a write overwrites when every candidate of its key holds
    another key (``mpidht_eviction_t``)."""

    RECENCY = 0  #: the one written or read longest ago
    LAST = 1     #: always the last candidate (the paper's table)


class RestoreReport(NamedTuple):
    """What ``Table.restore`` loaded, summed over all processes."""

    entries: int   #: records in the file
    inserted: int  #: records added (the entries they displaced placed again)
    updated: int   #: replaced the value of a key already present
    evicted: int   #: entries lost for want of room: the table too small


class WriteOutcome(enum.IntEnum):
    """What a write did."""

    INSERTED = 0
    UPDATED = 1
    EVICTED = 2


class UpdateOutcome(enum.IntEnum):
    """What an update did (``mpidht_update_outcome_t``)."""

    KEPT = 0      #: the function kept the key (or deleted an absent one)
    INSERTED = 1  #: stored; the key was absent
    UPDATED = 2   #: stored; the key was present
    EVICTED = 3   #: stored over another key's entry
    REMOVED = 4   #: deleted a present key


class _Keep:
    """The type of ``KEEP``."""

    _instance: Optional["_Keep"] = None

    def __new__(cls) -> "_Keep":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "mpidht.KEEP"


#: Returned by an update function to leave the key as it is.
KEEP = _Keep()

ProtocolLike = Union[Protocol, str]  # or "coarse", "fine", "lockfree"
EvictionLike = Union[Eviction, str]  # or "recency", "last"
WindowLike = Union[Window, str]  # or "auto", "shared", "allocate", "create"
BytesLike = Union[bytes, bytearray, memoryview, npt.NDArray[Any]]
#: Rows of a batch: an array whose rows are the keys or values, or a list
#: or tuple of bytes-like objects, one a row.
RowsLike = Union[npt.ArrayLike, Sequence[Union[bytes, bytearray, memoryview]]]
#: An update function: the current value (None if absent) to the new one
#: (bytes-like of value_size bytes), None to delete the key, or KEEP.
UpdateFunction = Callable[[Optional[bytes]], Union[BytesLike, None, _Keep]]


def _to_enum(kind: Type[enum.IntEnum], value: object, what: str) -> int:
    if isinstance(value, kind):
        return int(value)
    if isinstance(value, str) and value.upper() in kind.__members__:
        return int(kind[value.upper()])
    names = ", ".join(repr(m.lower()) for m in kind.__members__)
    raise ValueError(f"unknown {what} {value!r}; expected one of {names}")


def _check_size(value: object, what: str, bounded: bool = True) -> int:
    """value as a non-negative int; bounded: at most sys.maxsize (a C
    Py_ssize_t), else any size (the extension saturates it, and the library
    refuses what is too large)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an integer, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{what} must not be negative, got {value}")
    if bounded and value > sys.maxsize:
        raise ValueError(f"{what} is too large: {value} (at most {sys.maxsize})")
    return int(value)


def _check_timeout(value: object) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                     np.floating)):
        raise TypeError(f"timeout must be a number of seconds, got {type(value).__name__}")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"timeout is too large for a float: {value}") from None


def _byte_rows(rows: Union[list[Any], tuple[Any, ...]], row_size: int,
               what: str) -> Optional[npt.NDArray[np.uint8]]:
    """rows, a list or tuple with a bytes-like object (bytes, bytearray,
    memoryview) in it, as an (n, row_size) uint8 array, where every row is
    bytes-like and holds exactly row_size bytes (NumPy would pad shorter
    bytes objects with NULs into other rows); None without one."""
    types = set(map(type, rows))
    if not any(issubclass(t, (bytes, bytearray, memoryview)) for t in types):
        return None
    if not (all(issubclass(t, (bytes, bytearray)) for t in types)
            and set(map(len, rows)) == {row_size}):
        for i, row in enumerate(rows):
            if not isinstance(row, (bytes, bytearray, memoryview)):
                raise TypeError(f"row {i} of {what} is of type {type(row).__name__}; rows "
                                "given as bytes-like objects must all be bytes-like")
            size = row.nbytes if isinstance(row, memoryview) else len(row)
            if size != row_size:
                raise ValueError(f"row {i} of {what} must be {row_size} bytes, got {size}")
    # A strided memoryview is joined as its bytes in order.
    joined = b"".join(r.tobytes() if isinstance(r, memoryview) and not r.c_contiguous else r
                      for r in rows)
    return np.frombuffer(joined, dtype=np.uint8).reshape(len(rows), row_size)


def _rows(array: object, row_size: int, what: str) -> tuple[int, npt.NDArray[Any]]:
    """Returns (n, contiguous array) for n rows of row_size bytes each.

    The first axis counts rows; each row, whatever its dtype and shape,
    must hold exactly row_size bytes. A list or tuple of bytes-like
    objects is one row per object, each exactly row_size bytes.
    """
    if isinstance(array, (list, tuple)):
        rows = _byte_rows(array, row_size, what)
        if rows is not None:
            return rows.shape[0], rows
    a = np.asarray(array)
    if a.dtype.hasobject:
        raise TypeError(f"{what} must hold plain numbers or bytes, not Python objects")
    if a.dtype.kind == "U":
        # NumPy would store each str as UCS-4, padded with NULs to the
        # longest in the batch: bytes that depend on the other rows.
        raise TypeError(f"{what} must hold plain numbers or bytes, not str: encode each "
                        "(e.g. s.encode()) to bytes of the row size")
    if a.ndim == 0:
        raise ValueError(f"{what} must have one row per key, got a scalar")
    n = a.shape[0]
    if a.ndim == 1 and n == 0:  # no rows (an empty list: NumPy makes it float64)
        return 0, np.empty((0, row_size), dtype=np.uint8)
    per_row = a.dtype.itemsize * int(np.prod(a.shape[1:], dtype=np.int64))
    if per_row != row_size:
        raise ValueError(
            f"each row of {what} must be {row_size} bytes, got {per_row} "
            f"(shape {a.shape}, dtype {a.dtype})")
    return n, np.ascontiguousarray(a)


def _check_key_dtype(key_dtype: Optional[npt.DTypeLike], key_size: int) -> Optional[np.dtype[Any]]:
    if key_dtype is None:
        return None
    try:
        dtype = np.dtype(key_dtype)
    except TypeError as e:
        raise TypeError(f"key_dtype must be a NumPy dtype, got {key_dtype!r}: {e}") from None
    if dtype.kind not in "biuf":
        raise TypeError(f"key_dtype must be a numeric dtype (bool, int, float), got {dtype}")
    if dtype.kind == "f":
        info = np.finfo(dtype)
        if info.nmant + info.nexp + 1 < 8 * dtype.itemsize:
            # x86's long double: 80 bits in 16 bytes, whose 6 padding bytes
            # NumPy leaves as they happen to be, so equal keys would differ.
            raise TypeError(f"key_dtype {dtype} is refused: its items are "
                            f"{info.nmant + info.nexp + 1} bits in {dtype.itemsize} bytes, and "
                            "the padding bytes are not the same for equal numbers")
    if key_size % dtype.itemsize:
        raise ValueError(f"key_size {key_size} is not a whole number of {dtype} "
                         f"({dtype.itemsize} bytes each)")
    return dtype


def _exactly(keys: npt.NDArray[Any], dtype: np.dtype[Any]) -> npt.NDArray[Any]:
    """keys converted to dtype, where every key keeps its value: integers
    within an integer dtype's range; integers and floats that a float dtype
    holds exactly (a NaN stays a NaN); bools. Anything else (floats to
    integers, bytes, strings, Python objects) raises
    TypeError, a key that would change ValueError."""
    source = keys.dtype
    if source.kind in "iu" and dtype.kind == "f":
        # NumPy calls int64 to float64 safe, but 2**53 + 1 is no float64:
        # a float holds the integers up to 2**(nmant + 1) in magnitude.
        limit = 2 ** (np.finfo(dtype).nmant + 1)
        every = (np.iinfo(source).max <= limit or keys.size == 0
                 or (-limit <= int(keys.min()) and int(keys.max()) <= limit))
    else:
        every = np.can_cast(source, dtype, "safe")
    if every:
        return keys.astype(dtype, copy=False)
    with np.errstate(over="ignore", invalid="ignore"):
        if source.kind in "iu" and dtype.kind == "b":
            # 0 and 1 are the integers a bool holds.
            bad = (keys != 0) & (keys != 1)
            converted = keys.astype(dtype)
        elif source.kind in "iu" and dtype.kind in "iu":
            have, want = np.iinfo(source), np.iinfo(dtype)
            bad = np.zeros(keys.shape, dtype=np.bool_)
            if want.min > have.min:
                bad |= keys < source.type(want.min)
            if want.max < have.max:
                bad |= keys > source.type(want.max)
            converted = keys.astype(dtype)
        elif source.kind in "iuf" and dtype.kind == "f":
            converted = keys.astype(dtype)
            if source.kind == "f":
                bad = (converted.astype(source) != keys) & ~np.isnan(keys)
            else:
                # Compared as integers, where the float is finite and lies
                # in their range (both ends are powers of two: exact, or
                # beyond the float's finite values).
                have = np.iinfo(source)
                inside = (np.isfinite(converted) & (converted >= float(have.min))
                          & (converted < float(have.max + 1)))
                bad = ~inside | (np.where(inside, converted, 0).astype(source) != keys)
        else:
            first = f" (such as {keys.reshape(-1)[:1].tolist()[0]!r})" if keys.size else ""
            why = ("floats are never converted to an integer key_dtype, not even whole ones"
                   if source.kind == "f" and dtype.kind in "iu" else
                   "it would not keep every value")
            raise TypeError(f"keys of dtype {source}{first} are not taken by the table's "
                            f"key_dtype {dtype}: {why}")
    if bad.any():
        i = int(np.argmax(bad.reshape(-1)))
        raise ValueError(f"key {keys.flat[i]} cannot be held exactly by the table's key_dtype "
                         f"{dtype} (it would become {converted.flat[i]})")
    return converted


def _exact_number(x: object, dtype: np.dtype[Any]) -> Any:
    """One number of a list of keys, converted to dtype as ``_exactly``
    converts an array of its own type: a Python int as int64 or uint64
    (one beyond both is held only by a float dtype that holds it
    exactly), a Python float as float64, NumPy scalars as they are."""
    if isinstance(x, int) and not isinstance(x, bool):
        if -2**63 <= x < 2**63:
            return _exactly(np.asarray(x, dtype=np.int64), dtype)[()]
        if 0 <= x < 2**64:
            return _exactly(np.asarray(x, dtype=np.uint64), dtype)[()]
        if dtype.kind == "f":
            try:
                near = float(x)
            except OverflowError:
                near = None
            if near is not None and int(near) == x:
                return _exactly(np.asarray(near), dtype)[()]
            raise ValueError(f"key {x} cannot be held exactly by the table's key_dtype {dtype}"
                             + (" (it is beyond its range)" if near is None
                                else f" (it would become {near})"))
        raise ValueError(f"key {x} cannot be held exactly by the table's key_dtype {dtype} "
                         "(it is out of its range)")
    if isinstance(x, float):
        return _exactly(np.asarray(x, dtype=np.float64), dtype)[()]
    return _exactly(np.asarray(x), dtype)[()]


def _exact_array(keys: object, dtype: np.dtype[Any]) -> npt.NDArray[Any]:
    """keys (an array, a NumPy scalar, a Python number or a list or tuple
    of them) converted to dtype by ``_exactly``. NumPy converts a list to
    one dtype first, which may change a key (an int beyond 2**53 among
    floats, or beside an int beyond int64's range, becomes float64), so
    the numbers of a list that NumPy does not hold as integers are
    converted one by one, each as a single key is."""
    if isinstance(keys, (np.ndarray, np.generic)):
        return _exactly(np.asarray(keys), dtype)
    a = np.asarray(keys)
    if a.dtype.kind not in "fO":
        return _exactly(a, dtype)  # integers and bools as they are, or TypeError
    items = np.asarray(keys, dtype=object)
    if a.dtype.kind == "f" and items.size and all(type(x) is float for x in items.flat):
        return _exactly(a, dtype)  # Python floats only: float64 holds each as it is
    out = np.empty(items.shape, dtype=dtype)
    for i, x in enumerate(items.flat):
        out.flat[i] = _exact_number(x, dtype)
    return out


def _typed_keys(keys: object, dtype: np.dtype[Any], key_size: int) -> npt.NDArray[Any]:
    """Keys given as numbers, converted to dtype exactly (rows of key_size
    bytes), with -0.0 folded to 0.0; a NaN is refused (it never equals
    itself)."""
    a = _exact_array(keys, dtype)
    per = key_size // dtype.itemsize
    if a.ndim <= 1 and per == 1:
        a = a.reshape(-1, 1)
    if dtype.kind == "f":
        if np.isnan(a).any():
            raise ValueError("a NaN key never matches itself; refused")
        # -0.0 + 0.0 is 0.0; the sum comes in native byte order, so it is
        # put back into dtype's (a big-endian key_dtype keeps its bytes).
        a = (a + dtype.type(0.0)).astype(dtype, copy=False)
    return a


#: The agreements before create that timed out in the debug mode, with
#: their buffers: MPI still owns them (_agree_before_create).
_ABANDONED: list[tuple[MPI.Request, tuple[npt.NDArray[Any], ...]]] = []

#: The bytes of a refusal's message that the agreement before create gives
#: the other processes.
_MESSAGE_BYTES = 512


def _debug_seconds() -> Optional[float]:
    """MPIDHT_DEBUG_COLLECTIVES as the library reads it: seconds, or None
    where the mode is off or the value no number of seconds (create then
    refuses it)."""
    status, seconds = _core.debug_setting()
    return seconds if status == int(Status.OK) and seconds > 0 else None


def _wait_bounded(comm: MPI.Comm, request: MPI.Request,
                  buffers: tuple[npt.NDArray[Any], ...]) -> None:
    """Waits for request: for ever where the debug mode is off, otherwise
    for its time at most, raising Error (ERR_COLLECTIVE_CHECK) as create's
    own check does where not every process came within it."""
    seconds = _debug_seconds()
    if seconds is None:
        request.Wait()
        return
    deadline = time.monotonic() + seconds
    while not request.Test():
        if time.monotonic() > deadline:
            # Left to MPI, which writes into the buffers if the missing
            # processes come after all: kept, never freed.
            _ABANDONED.append((request, buffers))
            status = int(Status.ERR_COLLECTIVE_CHECK)
            raise Error(f"{_core.strerror(status)}: mpidht_create: after {seconds:g} s, not "
                        f"all {comm.Get_size()} processes of the communicator had entered it "
                        "(the agreement on the arguments before it, which cannot tell "
                        "which; the communicator's collective calls are out of step now: "
                        "end the program)", status)
        time.sleep(0.001)


def _agree_before_create(comm: MPI.Comm, problem: Optional[BaseException],
                         key_dtype: Optional[np.dtype[Any]]) -> Optional[tuple[int, str]]:
    """The lowest rank whose arguments were refused (problem) and its
    refusal in words, agreed on by every process before the collective
    create; None where none was. Where none was, a key_dtype that differs
    between processes (keys of the same numbers would be other bytes)
    raises Error (ERR_MISMATCHED_PARAMS) on every process, as create does
    for its own parameters. Nonblocking collectives on every process (a
    blocking one would not match a nonblocking one), each bounded in the
    debug mode (MPIDHT_DEBUG_COLLECTIVES) as create's own check is."""
    size = comm.Get_size()
    # The dtype as a number (0: None); its lowest and highest agreed on.
    kind = 0 if problem is not None or key_dtype is None else \
        1 + zlib.crc32(key_dtype.str.encode())
    mine = np.array([comm.Get_rank() if problem is not None else size, kind, -kind],
                    dtype=np.int64)
    agreed = np.zeros(3, dtype=np.int64)
    _wait_bounded(comm, comm.Iallreduce(mine, agreed, op=MPI.MIN), (mine, agreed))
    failed = int(agreed[0])
    if failed >= size and agreed[1] != -agreed[2]:
        status = int(Status.ERR_MISMATCHED_PARAMS)
        raise Error(f"{_core.strerror(status)}: key_dtype ({key_dtype} on this process) "
                    "differs between processes", status)
    if failed >= size:
        return None
    text = np.zeros(_MESSAGE_BYTES, dtype=np.uint8)
    if problem is not None and failed == comm.Get_rank():
        words = _message_bytes(f"{type(problem).__name__}: {problem}")
        text[:len(words)] = np.frombuffer(words, dtype=np.uint8)
    _wait_bounded(comm, comm.Ibcast(text, root=failed), (text,))
    return failed, bytes(text).split(b"\0", 1)[0].decode("utf-8", "replace")


def _message_bytes(message: str) -> bytes:
    """message as UTF-8 in fewer than _MESSAGE_BYTES bytes (NUL-ended in
    the buffer): NULs written as \\x00, cut at a character with "..." where
    too long."""
    words = message.replace("\0", "\\x00").encode("utf-8", "replace")
    if len(words) < _MESSAGE_BYTES:
        return words
    return words[:_MESSAGE_BYTES - 4].decode("utf-8", "ignore").encode() + b"..."


def _check_hash(hash: Optional[Callable[[bytes], int]], key_size: int) -> None:
    """Calls hash once, raising what it raises or TypeError where it is no
    function of bytes returning an int."""
    if hash is None:
        return
    if not callable(hash):
        raise TypeError(f"hash must be callable, got {type(hash).__name__}")
    value = hash(bytes(max(key_size, 1)))
    if isinstance(value, bool) or not isinstance(value, int):  # as the library's call
        raise TypeError(f"the hash function must return an int, not {type(value).__name__}")


def _comm_handle(comm: MPI.Comm) -> int:
    handle = getattr(comm, "handle", None)  # mpi4py >= 4
    return int(handle if handle is not None else MPI._handleof(comm))


@contextlib.contextmanager
def _library_errors() -> Iterator[None]:
    """Turns the extension's errors into ``Error``. (The extension ends the
    message of a collective call's error with ``mpidht_error_detail``.)"""
    try:
        yield
    except _core.Error as e:
        message, status = e.args
        raise Error(message, status) from None


class Table:
    """A distributed hash table over the processes of an mpi4py communicator.

    Collective over ``comm`` (every process must call them, in the same
    order): creating and closing the table, ``clear``, ``dump``,
    ``restore`` and ``global_stats``. Every other call is one-sided and
    local to the calling process. Keys and values have
    fixed sizes in bytes. Use it as a context manager, or call ``close()``
    on every process: a table that is garbage-collected while open is not
    freed (freeing is collective) and warns with ResourceWarning.

    A collective call that some process never makes waits for ever. With
    the environment variable ``MPIDHT_DEBUG_COLLECTIVES`` set to a number
    of seconds on every process when the table is created, each collective
    call first checks that every process entered it, and otherwise raises
    ``Error`` (status ``ERR_COLLECTIVE_CHECK``) within that time on the
    processes that did, naming the call and the missing processes; the
    table stays usable. (Creating the table first agrees on the ``hash``
    function, given or not, with an mpi4py collective, bounded by the same
    time; where not every process enters it, the message cannot name the
    missing ones.)

    Args:
        comm: an intracommunicator (e.g. ``MPI.COMM_WORLD``).
        key_size: bytes per key, 1 .. 65536.
        value_size: bytes per value, 1 .. 16 MiB.
        memory_per_process: bytes of table this process hosts; 0 to use the
            table without hosting any of it (not on every process).
        protocol: ``"lockfree"`` (default), ``"fine"`` or ``"coarse"``.
        window: ``"auto"`` (default), ``"shared"``, ``"allocate"`` or
            ``"create"``.
        candidates: buckets probed per key, 1 .. 16; 0 for the default (6).
        eviction: ``"recency"`` (default) or ``"last"`` (``Eviction``).
        timeout: seconds a call waits for a lock, or for another process's
            write of the same key, before it raises ``Error`` with status
            ``ERR_TIMEOUT`` (fine and lock-free protocols); 0 waits for
            ever. Default 60.
        key_dtype: None (default): keys are bytes, and arrays are taken as
            their raw bytes, so an int64 array never matches float64 keys of
            the same numbers and -0.0 misses an entry written under 0.0. A
            bool, integer or float dtype (e.g. ``np.float64``; not complex,
            nor a float with padding bytes such as x86's ``np.longdouble``):
            keys given as numbers (any
            array, list or scalar; not bytes objects) are converted to it
            first, and only where every key keeps its value: integers within
            an integer dtype's range (0 and 1 for bool), integers and floats that a float
            dtype holds exactly (not ``2**53 + 1`` in float64, nor the
            Python float ``0.1`` in float32: give ``np.float32(0.1)``).
            A key that would change raises ValueError, naming it; floats
            for an integer dtype, and keys that are not numbers, raise
            TypeError. -0.0 becomes 0.0 and a NaN is refused; key_size
            must be a whole number of its items.
        hash: a function of a key (bytes) returning an int, of which the low
            64 bits place the key; it must give the same result for the same
            bytes on every process. None (default) uses XXH3-64 in C, which
            is much faster than any Python function.

    Sizes, protocol, window, candidates, eviction, hash and key_dtype must
    be equal on every process (a hash given on some processes only is
    refused as one that differs: ``Error`` with ``ERR_MISMATCHED_PARAMS``
    everywhere).
    Every protocol is linearizable per key: a read returns the latest
    completed write of its key (or a miss after a remove or an
    eviction), never a torn or foreign value, and an update is atomic. A
    hash that raises makes the call that used it raise the same exception;
    what that call did to the table is then unspecified.

    Raises:
        Error: the library refused (its message says why) or failed; on every
            process at once.
        TypeError, ValueError: an argument of the wrong type or value, or
            what the hash function raised, before the table is created; the
            other processes then raise ``Error`` (``ERR_PEER``) naming the
            lowest rank that failed and its error.
    """

    def __init__(self, comm: MPI.Comm, key_size: int, value_size: int,
                 memory_per_process: int, *, protocol: ProtocolLike = "lockfree",
                 window: WindowLike = "auto", candidates: int = 0,
                 eviction: EvictionLike = "recency", timeout: float = 60.0,
                 hash: Optional[Callable[[bytes], int]] = None,
                 key_dtype: Optional[npt.DTypeLike] = None) -> None:
        if not isinstance(comm, MPI.Comm):
            raise TypeError(f"comm must be an mpi4py communicator, got {type(comm).__name__}")
        # Every argument is checked, and the hash called once, on every
        # process; the verdicts are agreed on before the collective create,
        # so that a refusal on one process cannot leave the others waiting
        # in it. A hash given on some processes only reaches create
        # everywhere, which refuses it as a differing parameter.
        problem: Optional[BaseException] = None
        try:
            self._key_size = _check_size(key_size, "key_size")
            self._key_dtype = _check_key_dtype(key_dtype, self._key_size)
            self._value_size = _check_size(value_size, "value_size")
            memory = _check_size(memory_per_process, "memory_per_process")
            proto = _to_enum(Protocol, protocol, "protocol")
            win = _to_enum(Window, window, "window")
            cand = _check_size(candidates, "candidates", bounded=False)
            evict = _to_enum(Eviction, eviction, "eviction")
            seconds = _check_timeout(timeout)
            _check_hash(hash, self._key_size)
        except BaseException as e:  # KeyboardInterrupt too: agreed on, then raised
            problem = e
        # Where MPI is not running (before MPI_Init, after MPI_Finalize) no
        # MPI call may be made, not even Is_inter: create refuses that
        # alone (ERR_MPI_NOT_INITIALIZED), as it does a null or an
        # intercommunicator.
        if (MPI.Is_initialized() and not MPI.Is_finalized() and comm != MPI.COMM_NULL
                and not comm.Is_inter()):
            failed = _agree_before_create(comm, problem,
                                          None if problem is not None else self._key_dtype)
            if failed is not None and problem is None:
                status = int(Status.ERR_PEER)
                raise Error(f"{_core.strerror(status)}: process {failed[0]} (the lowest rank "
                            f"that failed): {failed[1]}", status)
        if problem is not None:
            raise problem
        # Every conversion that could fail on one process alone was made
        # above, before the agreement.
        with _library_errors():
            self._table = _core.Table(_comm_handle(comm), self._key_size, self._value_size,
                                      memory, proto, win, cand, evict, seconds, hash)

    def __repr__(self) -> str:
        if self.closed:
            return f"<mpidht.Table closed, key {self._key_size} B, value {self._value_size} B>"
        try:
            i = self.info()
        except Error as e:  # in use (inside an update or hash function, another thread)
            return (f"<mpidht.Table key {self._key_size} B, value {self._value_size} B, "
                    f"{e.status.name}>")
        return (f"<mpidht.Table {i['protocol']}, key {i['key_size']} B, value "
                f"{i['value_size']} B, {i['local_buckets']} of {i['total_buckets']} buckets "
                f"here, {i['comm_size']} processes, window {i['window']}>")

    # -- lifetime ---------------------------------------------------------

    def close(self) -> None:
        """Collective: frees the table. Calling it again does nothing."""
        with _library_errors():
            self._table.close()

    @property
    def closed(self) -> bool:
        """True once ``close()`` has run."""
        return bool(self._table.closed)

    def __enter__(self) -> "Table":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]],
                 exc: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        """Closes the table. Where the block raised, its exception goes on,
        with a note if closing failed too (as in the debug mode, when the
        other processes did not leave the block)."""
        if exc is None:
            self.close()
            return
        try:
            self.close()
        except Error as e:
            exc.add_note(f"and closing the table failed: {e}")

    # -- single keys ------------------------------------------------------

    @property
    def key_size(self) -> int:
        return self._key_size

    @property
    def value_size(self) -> int:
        return self._value_size

    @property
    def key_dtype(self) -> Optional[np.dtype[Any]]:
        """The dtype keys given as numbers are converted to, or None."""
        return self._key_dtype

    def _key(self, key: Any) -> Any:
        """One key: bytes-like as they are; numbers, with key_dtype, as
        their bytes in that dtype."""
        if self._key_dtype is None or isinstance(key, (bytes, bytearray, memoryview)):
            return key
        a = _typed_keys(key, self._key_dtype, self._key_size)
        if a.size * self._key_dtype.itemsize != self._key_size:
            raise ValueError(f"a key must be {self._key_size // self._key_dtype.itemsize} "
                             f"{self._key_dtype} numbers, got shape {np.shape(key)}")
        return a.tobytes()

    def _keys(self, keys: Any) -> Any:
        """Many keys: with key_dtype, numbers converted to it; a list or
        tuple of bytes objects stays raw keys, as a single one does."""
        if self._key_dtype is None:
            return keys
        if isinstance(keys, (list, tuple)) and keys:
            raw = [isinstance(k, (bytes, bytearray, memoryview)) for k in keys]
            if all(raw):
                return keys
            if any(raw):
                raise TypeError("keys mix bytes objects (raw keys) with numbers (of the "
                                f"key_dtype {self._key_dtype}); give one kind")
        return _typed_keys(keys, self._key_dtype, self._key_size)

    def read(self, key: Any) -> Optional[bytes]:
        """The value stored for ``key`` (exactly key_size bytes, or numbers
        with ``key_dtype``), or None."""
        with _library_errors():
            value: Optional[bytes] = self._table.read(self._key(key))
        return value

    def write(self, key: Any, value: BytesLike) -> WriteOutcome:
        """Stores ``value`` for ``key``; returns what the write did."""
        with _library_errors():
            return WriteOutcome(self._table.write(self._key(key), value))

    def remove(self, key: Any) -> bool:
        """Removes ``key``; True if it was present."""
        with _library_errors():
            return bool(self._table.remove(self._key(key)))

    def update(self, key: Any, fn: UpdateFunction) -> UpdateOutcome:
        """Atomic read-modify-write of ``key`` (``mpidht_update``).

        ``fn`` is called once with the current value (bytes, or None if the
        key is absent) while the key is locked against every other write,
        update and remove of it, on any process; it returns the new value
        (value_size bytes), None to delete the key, or ``KEEP``. It must be
        quick and must not use the table (such a call raises ``Error`` with
        ``ERR_CONCURRENT_USE``, which ``update`` raises). An exception in ``fn`` (or a result
        of another type or size) leaves the key as it was and is raised.
        """
        with _library_errors():
            return UpdateOutcome(self._table.update(self._key(key), lambda _, old: fn(old),
                                                    KEEP))

    # -- many keys --------------------------------------------------------

    def read_many(self, keys: RowsLike
                  ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.bool_]]:
        """Reads n keys at once (``mpidht_read_batch``).

        Args:
            keys: n rows of key_size bytes: an (n, key_size) uint8 array,
                any array whose first axis has n entries of key_size bytes
                each (e.g. (n, 3) float64 for key_size 24), or a list of n
                bytes-like objects of key_size bytes each.

        Returns:
            (values, found): an (n, value_size) uint8 array (rows of misses
            are zero; ``values.view(dtype)`` reinterprets them) and a bool
            array of n hit flags. Each key's result is what ``read`` gives.
        """
        n, k = _rows(self._keys(keys), self._key_size, "keys")
        return self._read_rows(n, k, np.zeros((n, self._value_size), dtype=np.uint8))

    def _read_into(self, keys: npt.ArrayLike, values: npt.NDArray[np.uint8]
                   ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.bool_]]:
        """``read_many`` into values, a C-contiguous (n, value_size) uint8
        array the caller keeps (rows of misses are left as they were), so
        that a caller that reads many times reuses its pages."""
        n, k = _rows(self._keys(keys), self._key_size, "keys")
        if values.shape != (n, self._value_size) or not values.flags.c_contiguous:
            raise ValueError(f"values must be a C-contiguous ({n}, {self._value_size}) array")
        return self._read_rows(n, k, values)

    def _read_rows(self, n: int, keys: npt.NDArray[Any], values: npt.NDArray[np.uint8]
                   ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.bool_]]:
        """The read of n contiguous key rows into values."""
        found = np.zeros(n, dtype=np.bool_)
        with _library_errors():
            self._table.read_batch(n, keys, values, found.view(np.uint8))
        return values, found

    def write_many(self, keys: RowsLike, values: RowsLike) -> npt.NDArray[np.uint8]:
        """Writes n keys at once (``mpidht_write_batch``), in row order.

        ``keys`` as for ``read_many``; ``values`` the same number of rows of
        value_size bytes each. The table ends as if ``write`` had been called
        row by row (a repeated key keeps its last value).

        Returns:
            A uint8 array of n ``WriteOutcome`` values.
        """
        n, k = _rows(self._keys(keys), self._key_size, "keys")
        m, v = _rows(values, self._value_size, "values")
        if m != n:
            raise ValueError(f"keys has {n} rows but values has {m}")
        outcomes = np.zeros(n, dtype=np.uint8)
        with _library_errors():
            self._table.write_batch(n, k, v, outcomes)
        return outcomes

    def update_many(self, keys: RowsLike,
                    fn: Callable[[int, Optional[bytes]], Union[BytesLike, None, _Keep]]
                    ) -> npt.NDArray[np.uint8]:
        """Updates n keys at once (``mpidht_update_batch``), as if one at a
        time in row order (rows that share no candidate bucket may be called
        in another order).

        ``fn(i, value)`` is called for row i as ``update`` calls its
        function; rows see the rows before them (a key repeated in the batch
        sees its earlier rows' results). As ``mpidht_update_batch`` does,
        a row whose function raises an ``Exception`` (or returns something
        else than value_size bytes, None or ``KEEP``) is left as it was and
        the others are still updated; the first exception raised (in call
        order: rows are called grouped by the process hosting them) is then
        raised. A ``KeyboardInterrupt`` or other ``BaseException`` stops the
        calls: the rows not yet called are left as they were, and it is
        raised.

        Returns:
            A uint8 array of n ``UpdateOutcome`` values.
        """
        n, k = _rows(self._keys(keys), self._key_size, "keys")
        outcomes = np.zeros(n, dtype=np.uint8)
        with _library_errors():
            self._table.update_batch(n, k, fn, KEEP, outcomes)
        return outcomes

    def _append_samples(self, keys: npt.NDArray[np.uint8], slots: int, d: int,
                        rows: npt.NDArray[np.float64], start: npt.NDArray[np.int64]) -> None:
        """``mpidht.interp``'s publish: one atomic update per class key
        (``update_many``'s guarantees), in C. keys: the n distinct classes;
        rows: (start[n], 2 d) inputs then results, class i's at rows
        start[i]..start[i+1]-1. The values must be classes of ``slots``
        samples (``Neighbours``' layout)."""
        n, k = _rows(self._keys(keys), self._key_size, "keys")
        outcomes = np.zeros(n, dtype=np.uint8)
        with _library_errors():
            self._table.append_samples(n, k, slots, d, np.ascontiguousarray(rows, np.float64),
                                       np.ascontiguousarray(start, np.int64), outcomes)

    def clear(self) -> None:
        """Collective: empties the table on every process; the statistics
        stay. No operation may be in flight anywhere."""
        with _library_errors():
            self._table.clear()

    # -- local entries, dump and restore ------------------------------------

    def iter_local(self, max_entries: int = 4096
                   ) -> Iterator[tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]]:
        """The entries this process hosts (``mpidht_local_next``), in chunks.

        Yields (keys, values): (m, key_size) and (m, value_size) uint8 arrays
        of 1 <= m <= max_entries rows, fresh for every chunk. Local: no
        communication. Entries that stay in place during the iteration come
        exactly once; what other processes write or remove meanwhile may or
        may not appear, but every entry yielded is whole. Under the fine
        protocol with a timeout, a chunk whose bucket another process's
        writer holds past it raises ``Error`` (``ERR_TIMEOUT``) and ends
        the iteration; the chunks yielded before stay valid.
        """
        n = _check_size(max_entries, "max_entries")
        if n < 1:
            raise ValueError("max_entries must be at least 1")
        # No chunk holds more entries than this process has buckets.
        n = min(n, max(1, int(self.info()["local_buckets"])))
        cursor = 0
        while True:
            keys = np.empty((n, self._key_size), dtype=np.uint8)
            values = np.empty((n, self._value_size), dtype=np.uint8)
            with _library_errors():
                cursor, count = self._table.local_next(cursor, n, keys, values)
            if count == 0:
                return
            yield keys[:count], values[:count]

    def local_entries(self) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
        """All entries this process hosts as one (keys, values) pair of arrays."""
        chunks = list(self.iter_local())
        if not chunks:
            return (np.empty((0, self._key_size), dtype=np.uint8),
                    np.empty((0, self._value_size), dtype=np.uint8))
        return (np.concatenate([k for k, _ in chunks]),
                np.concatenate([v for _, v in chunks]))

    def dump(self, path: Union[str, os.PathLike[str]]) -> None:
        """Collective: writes every entry to ``path`` (``mpidht_dump``).

        The file is written as ``<path>.partial`` and renamed when complete:
        a crash leaves any previous file at ``path`` intact. ``path`` must be
        the same on every process. Only a regular file is replaced: a FIFO,
        device, directory or symbolic link at ``path`` (or at
        ``<path>.partial``), or a file of the user's named ``<path>.lock``,
        raises ``Error`` (``ERR_FILE_IO``) and is left as it is. A failure's
        message ends with what it failed on: the file and the system's
        reason.
        """
        with _library_errors():
            self._table.dump(path)

    def restore(self, path: Union[str, os.PathLike[str]]) -> RestoreReport:
        """Collective: loads a file written by ``dump`` (``mpidht_restore``).

        The file may come from another process count, table size or
        protocol; key and value sizes must match. The whole file is verified
        first: a damaged or unsuitable file raises ``Error`` (status
        ``ERR_FILE_IO``, ``ERR_FILE_FORMAT``, ``ERR_FILE_MISMATCH`` or
        ``ERR_FILE_CORRUPT``, the same on every process) and leaves the table
        as it was. Entries not in the file stay.
        """
        with _library_errors():
            return RestoreReport(*self._table.restore(path))

    def progress(self) -> None:
        """Lets MPI serve the one-sided calls other processes make on this
        process's buckets (``mpidht_progress``). Between hosts, where such
        a call may complete only when its target enters MPI, call it every
        few tens of microseconds of a long computation that makes no MPI
        call; on one node it changes nothing. Local; it takes no lock and
        changes nothing in the table."""
        with _library_errors():
            self._table.progress()

    # -- statistics -------------------------------------------------------

    def stats(self) -> dict[str, int]:
        """This process's counters (reads, hits, misses, writes, ...)."""
        with _library_errors():
            return dict(self._table.stats(False))

    def global_stats(self) -> dict[str, int]:
        """Collective: the counters summed over the communicator."""
        with _library_errors():
            return dict(self._table.stats(True))

    def reset_stats(self) -> None:
        """Sets this process's counters to zero."""
        with _library_errors():
            self._table.reset_stats()

    def info(self) -> dict[str, Any]:
        """Sizes, bucket counts, protocol and window actually used, and
        ``direct``: whether the buckets are reached with loads and stores
        (a shared window on one node, unless ``MPIDHT_SHARED_ACCESS=mpi``)."""
        with _library_errors():
            return dict(self._table.info())
