"""Bad input raises a Python exception with a clear message, on every
process, and never reaches MPI in a form that would crash or hang."""

import copy
import pickle
import subprocess
import sys
import threading

import numpy as np
import pytest
from mpi4py import MPI

import mpidht

from conftest import own_job_env


def test_bad_constructor_arguments_before_mpi(comm: MPI.Intracomm) -> None:
    with pytest.raises(TypeError, match="communicator"):
        mpidht.Table("world", 8, 8, 4096)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="key_size"):
        mpidht.Table(comm, 8.0, 8, 4096)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="value_size"):
        mpidht.Table(comm, 8, True, 4096)
    with pytest.raises(ValueError, match="memory_per_process must not be negative"):
        mpidht.Table(comm, 8, 8, -1)
    with pytest.raises(ValueError, match="unknown protocol 'locked'"):
        mpidht.Table(comm, 8, 8, 4096, protocol="locked")
    with pytest.raises(ValueError, match="unknown window"):
        mpidht.Table(comm, 8, 8, 4096, window=7)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="too large"):
        mpidht.Table(comm, 8, 8, 1 << 80)


def long_message(key: bytes) -> int:
    raise ValueError("a\0b " + "é" * 600)


def interrupted(key: bytes) -> int:
    raise KeyboardInterrupt("interrupted")


@pytest.mark.parametrize("where", ["process 0", "the last process", "every process"])
def test_bad_argument_on_some_processes_reaches_all(comm: MPI.Intracomm, where: str) -> None:
    """An argument refused on some processes only (before the library's
    create) raises there, and ERR_PEER on the others, naming the lowest
    rank that failed and its error, instead of leaving them waiting in the
    collective create; the communicator stays in step."""
    rank, size = comm.Get_rank(), comm.Get_size()
    bad = {"process 0": rank == 0, "the last process": rank == size - 1,
           "every process": True}[where]
    first = 0 if where != "the last process" else size - 1
    cases: list[tuple[dict[str, object], type[BaseException], str]] = [
        (dict(protocol="bogus"), ValueError, "unknown protocol 'bogus'"),
        (dict(candidates=-1), ValueError, "candidates must not be negative"),
        (dict(timeout="1"), TypeError, "timeout must be a number of seconds, got str"),
        # Conversions that failed after the agreement left the others waiting.
        (dict(memory_per_process=2**63), ValueError, "memory_per_process is too large"),
        (dict(timeout=10**400), ValueError, "timeout is too large for a float"),
        (dict(hash=lambda key: 1 // 0), ZeroDivisionError, "integer division or modulo by "
         "zero"),
        # Agreed on too, then raised: the communicator stays in step.
        (dict(hash=interrupted), KeyboardInterrupt, "interrupted"),
        (dict(hash=lambda key: np.uint64(7)), TypeError,
         "the hash function must return an int, not uint64"),
        # Cut at a character, NULs shown: "a\x00b" arrived as "a".
        (dict(hash=long_message), ValueError, "a\\x00b " + "é" * 10),
    ]
    for kwargs, kind, words in cases:
        with pytest.raises((kind, mpidht.Error)) as e:
            mpidht.Table(comm, 8, 8, **({"memory_per_process": 4096}  # type: ignore[arg-type]
                                        | (kwargs if bad else {})))
        if bad:  # its own exception, NULs as they are
            assert e.type is kind and words.replace("\\x00", "\0") in str(e.value)
        else:
            assert isinstance(e.value, mpidht.Error)
            assert e.value.status == mpidht.Status.ERR_PEER
            assert str(e.value).startswith(
                f"{mpidht.strerror(mpidht.Status.ERR_PEER)}: process {first} (the lowest "
                f"rank that failed): {kind.__name__}: {words}")
            assert "\ufffd" not in str(e.value)
            if kwargs.get("hash") is long_message:
                assert str(e.value).endswith("é...")
    with mpidht.Table(comm, 8, 8, 4096) as t:
        assert t.global_stats()["writes"] == 0


@pytest.mark.parametrize("kwargs, status", [
    (dict(key_size=0), mpidht.Status.ERR_KEY_SIZE),
    (dict(key_size=1 << 17), mpidht.Status.ERR_KEY_SIZE),
    (dict(value_size=0), mpidht.Status.ERR_VALUE_SIZE),
    (dict(memory_per_process=3), mpidht.Status.ERR_BUDGET_TOO_SMALL),
    (dict(memory_per_process=0), mpidht.Status.ERR_NO_STORAGE),
    (dict(candidates=17), mpidht.Status.ERR_CANDIDATES),
    # Beyond the C API's unsigned: refused too, not cut to 3, 0 (the
    # default) or 1.
    (dict(candidates=2**32 + 3), mpidht.Status.ERR_CANDIDATES),
    (dict(candidates=2**32), mpidht.Status.ERR_CANDIDATES),
    (dict(candidates=2**64 + 1), mpidht.Status.ERR_CANDIDATES),
])
def test_library_rejections_on_every_rank(comm: MPI.Intracomm, kwargs: dict[str, int],
                                          status: int) -> None:
    args = dict(key_size=8, value_size=8, memory_per_process=4096) | kwargs
    with pytest.raises(mpidht.Error) as e:
        mpidht.Table(comm, args["key_size"], args["value_size"],
                     args["memory_per_process"], candidates=args.get("candidates", 0))
    assert e.value.status == status
    # The status's message, then the library's detail: this process's own
    # argument, or for a table without memory, that every process gave 0.
    assert str(e.value).startswith(f"{mpidht.strerror(status)}: " + (
        f"memory_per_process is 0 on all {comm.Get_size()} processes"
        if status == mpidht.Status.ERR_NO_STORAGE else
        f"on this process (rank {comm.Get_rank()}): "))
    if kwargs.get("candidates", 0) >= 2**32:  # the count passed is cut to UINT_MAX
        assert str(e.value).endswith("candidates is 4294967295 or more")


def test_fault_on_one_rank_reaches_all(comm: MPI.Intracomm) -> None:
    rank = comm.Get_rank()
    with pytest.raises(mpidht.Error) as e:
        mpidht.Table(comm, 8 if rank else 0, 8, 4096)
    assert e.value.status == (mpidht.Status.ERR_KEY_SIZE if rank == 0 else mpidht.Status.ERR_PEER)
    # Each says what failed: its own key_size, or which process failed how.
    assert str(e.value).endswith(
        "on this process (rank 0): key_size is 0" if rank == 0 else
        f"process 0 (the lowest rank that failed): {mpidht.strerror(mpidht.Status.ERR_KEY_SIZE)}")
    if comm.Get_size() > 1:
        with pytest.raises(mpidht.Error) as e:
            mpidht.Table(comm, 8, 8 + rank, 4096)
        assert e.value.status == mpidht.Status.ERR_MISMATCHED_PARAMS
        # The message names the one parameter that differs.
        assert str(e.value) == (f"{mpidht.strerror(mpidht.Status.ERR_MISMATCHED_PARAMS)}: "
                                f"value_size ({8 + rank} on this process) differs between "
                                "processes")


WITHOUT_MPI = """
import sys
import mpi4py
mpi4py.rc.initialize = sys.argv[1] == "after"
from mpi4py import MPI
import mpidht
if sys.argv[1] == "after":
    MPI.Finalize()
try:
    mpidht.Table(MPI.COMM_WORLD, 8, 8, 1 << 20)
except mpidht.Error as e:
    print(e.status.name)
"""


@pytest.mark.one_process
@pytest.mark.parametrize("when", ["before", "after"])
def test_create_without_mpi_running(when: str) -> None:
    """A table made before MPI_Init or after MPI_Finalize raises
    ERR_MPI_NOT_INITIALIZED; no MPI call is made (Open MPI aborts the job
    on one). A process of its own."""
    out = subprocess.run([sys.executable, "-c", WITHOUT_MPI, when], env=own_job_env(),
                         capture_output=True, text=True, timeout=120)
    assert (out.returncode, out.stdout) == (0, "ERR_MPI_NOT_INITIALIZED\n"), out.stderr


def test_null_communicator() -> None:
    with pytest.raises(mpidht.Error) as e:
        mpidht.Table(MPI.COMM_NULL, 8, 8, 4096)
    assert e.value.status == mpidht.Status.ERR_INVALID_COMM


def test_bad_keys_and_values(table: mpidht.Table) -> None:
    with pytest.raises(ValueError, match="key must be 16 bytes, got 3"):
        table.read(b"abc")
    with pytest.raises(ValueError, match="value must be 32 bytes"):
        table.write(bytes(16), bytes(31))
    with pytest.raises(TypeError):
        table.write("a string key....", bytes(32))
    with pytest.raises(TypeError):
        table.remove(16)


def test_single_keys_and_values_of_python_objects(table: mpidht.Table) -> None:
    """An object array's bytes are pointers: refused as a key, a value or
    an update's result, as in a batch; a structured array with a field
    named with an O is plain data, and is taken."""
    objects = np.array(["hello", 3.5], dtype=object)  # 16 bytes of pointers
    with pytest.raises(TypeError, match="value must hold plain numbers or bytes"):
        table.write(bytes(16), np.array([1.0, 2.0, "x", None], dtype=object))
    with pytest.raises(TypeError, match="key must hold plain numbers or bytes"):
        table.write(objects, bytes(32))
    with pytest.raises(TypeError, match="key must hold plain numbers or bytes"):
        table.read(objects.data)
    with pytest.raises(TypeError, match="key must hold plain numbers or bytes"):
        table.remove(objects)
    table.write(bytes(16), bytes(32))
    with pytest.raises(TypeError, match="result must hold plain numbers or bytes"):
        table.update(bytes(16), lambda old: np.array([None] * 4, dtype=object))
    assert table.read(bytes(16)) == bytes(32)
    plain = np.zeros(2, dtype=[("Oxygen", "<f8"), ("O2", "<f8")])
    plain["Oxygen"] = 1.5
    plain["O2"][0] = MPI.COMM_WORLD.Get_rank()  # a key of this process's own
    assert table.write(plain[:1], plain) == mpidht.WriteOutcome.INSERTED
    assert table.read(plain[:1]) == plain.tobytes()


def test_bad_batches(table: mpidht.Table) -> None:
    keys = np.zeros((4, 16), dtype=np.uint8)
    with pytest.raises(ValueError, match="each row of keys must be 16 bytes, got 15"):
        table.read_many(np.zeros((4, 15), dtype=np.uint8))
    with pytest.raises(ValueError, match="each row of keys must be 16 bytes, got 1"):
        table.read_many(np.zeros(16, dtype=np.uint8))  # 16 one-byte rows
    with pytest.raises(ValueError, match="scalar"):
        table.read_many(np.uint8(3))
    with pytest.raises(TypeError, match="Python objects"):
        table.read_many(np.array([b"x" * 16, None], dtype=object))
    with pytest.raises(ValueError, match="4 rows but values has 3"):
        table.write_many(keys, np.zeros((3, 32), dtype=np.uint8))
    with pytest.raises(ValueError, match="each row of values must be 32 bytes"):
        table.write_many(keys, np.zeros((4, 4), dtype=np.float32))
    # Nothing was counted: every rejection came before the library.
    assert table.stats()["reads"] == 0 and table.stats()["writes"] == 0


def test_byte_rows_must_each_be_the_row_size(table: mpidht.Table) -> None:
    """Rows given as bytes-like objects, one per row, must each hold exactly
    key_size (value_size) bytes, as a single key must: NumPy would pad a
    shorter bytes object with NULs into another key or value."""
    key, value = b"k" * 15 + b"\0", b"v" * 32
    with pytest.raises(ValueError, match="row 1 of keys must be 16 bytes, got 3"):
        table.read_many([key, b"abc"])
    with pytest.raises(ValueError, match="row 1 of values must be 32 bytes, got 5"):
        table.write_many([key, b"q" * 16], (value, b"short"))
    with pytest.raises(ValueError, match="row 0 of keys must be 16 bytes, got 17"):
        table.write_many([b"k" * 17], [value])
    with pytest.raises(ValueError, match="row 2 of keys must be 16 bytes, got 15"):
        table.update_many([bytearray(16), memoryview(key), memoryview(bytes(15))],
                          lambda i, old: mpidht.KEEP)
    with pytest.raises(TypeError, match="row 1 of keys is of type int; rows given as bytes-like"):
        table.read_many([key, 5])  # type: ignore[arg-type]
    assert all(table.stats()[c] == 0 for c in ("reads", "writes", "atomic_updates"))
    # Rows of the right size, trailing NULs and all, in any bytes-like form.
    keys = [key, bytearray(b"j" * 16), memoryview(b"i" * 16)]
    table.write_many(keys, [value, bytearray(32), memoryview(bytes(range(32)))])
    got, found = table.read_many(keys)
    assert found.all() and got.tobytes() == value + bytes(32) + bytes(range(32))
    assert table.read(key) == value and table.read(b"k" * 15 + b"\1") is None


def test_integers_beyond_their_c_type_are_refused(table: mpidht.Table) -> None:
    """The extension's integer arguments raise OverflowError beyond their C
    type instead of passing on their low bits."""
    keys, values = np.empty((4, 16), np.uint8), np.empty((4, 32), np.uint8)
    for cursor in (-1, 2**64):
        with pytest.raises(OverflowError):
            table._table.local_next(cursor, 4, keys, values)
    assert table._table.local_next(0, 4, keys, values)[1] == 0
    # strerror answers for every int, its low bits not taken for a status.
    for status in (2**32 + int(mpidht.Status.NOT_FOUND), 2**70, -2**70):
        assert mpidht.strerror(status) == "unknown status"
    assert mpidht.strerror(mpidht.Status.NOT_FOUND) != mpidht.strerror(-1)
    with pytest.raises(TypeError, match="status must be an int"):
        mpidht.strerror(1.0)  # type: ignore[arg-type]


def test_status_list_matches_library() -> None:
    """mpidht.Status is written out for type checkers; it must equal the C
    library's list, which the extension exports as MPIDHT_* constants."""
    from mpidht import _core
    exported = {name[len("MPIDHT_"):]: getattr(_core, name)
                for name in dir(_core) if name.startswith("MPIDHT_")}
    assert exported == {s.name: s.value for s in mpidht.Status}
    for s in mpidht.Status:
        assert mpidht.strerror(s) not in ("", "unknown status")


def test_concurrent_use_from_two_threads_is_refused(table: mpidht.Table,
                                                    comm: MPI.Intracomm) -> None:
    """A table must not be used by two threads at once: while one thread
    waits inside a call, any call from another raises instead of entering
    the library. Rank 0 holds a collective open in a thread until it has
    seen the refusal; rank 1 joins the collective only after being told so,
    so no timing is involved."""
    if comm.Get_size() < 2 or MPI.Query_thread() != MPI.THREAD_MULTIPLE:
        pytest.skip("needs 2 processes and MPI_THREAD_MULTIPLE")
    signal = comm.Dup()
    if comm.Get_rank() == 0:
        result: list[dict[str, int]] = []
        worker = threading.Thread(target=lambda: result.append(table.global_stats()))
        worker.start()
        refused = None
        while refused is None:
            try:
                table.read(bytes(16))
            except RuntimeError as e:
                refused = e
        signal.send(True, dest=1)
        worker.join()
        assert "in use by a call in progress" in str(refused)
        assert "another thread" in str(refused)
        assert isinstance(refused, mpidht.Error)
        assert refused.status == mpidht.Status.ERR_CONCURRENT_USE
        assert result and result[0]["reads"] >= 0
    else:
        if comm.Get_rank() == 1:
            assert signal.recv(source=0) is True
        table.global_stats()
    signal.Free()


def test_errors_survive_pickle_and_copy(comm: MPI.Intracomm) -> None:
    """An mpidht.Error crosses processes (mpi4py's gather pickles it) and
    copies with its message and status (its constructor's two arguments
    were not in args: unpickling raised TypeError)."""
    with pytest.raises(mpidht.Error) as caught:
        mpidht.Table(comm, 0, 8, 4096)
    error = caught.value
    for other in (pickle.loads(pickle.dumps(error)), copy.copy(error), copy.deepcopy(error)):
        assert type(other) is mpidht.Error
        assert str(other) == str(error) and other.status == error.status
    gathered = comm.allgather((error, str(error)))  # the message may name the process
    assert all(str(e) == text and e.status == error.status for e, text in gathered)


def test_timeout_takes_numpy_numbers(comm: MPI.Intracomm) -> None:
    """A NumPy integer is a number of seconds as a NumPy float is (it raised
    TypeError); a bool is not."""
    for seconds in (np.int64(2), np.uint8(2), np.float32(2.0)):
        with mpidht.Table(comm, 8, 8, 4096, timeout=seconds) as t:  # type: ignore[arg-type]
            assert t.info()["key_size"] == 8
    for flag in (True, np.bool_(True)):
        with pytest.raises(TypeError, match="timeout must be a number of seconds"):
            mpidht.Table(comm, 8, 8, 4096, timeout=flag)  # type: ignore[arg-type]
