"""Single-key operations, statistics, info and lifetime."""

import gc
import sys
import threading
import time
import warnings
import weakref
from typing import Any, Optional

import numpy as np
import pytest
from mpi4py import MPI

import mpidht
from conftest import keys_for, values_for


def test_roundtrip_update_remove(table: mpidht.Table, comm: MPI.Intracomm,
                                 protocol: str) -> None:
    rank = comm.Get_rank()
    ids = np.arange(rank * 100, rank * 100 + 100)
    keys, values = keys_for(ids), values_for(ids, rank)
    for k, v in zip(keys, values):
        assert table.write(k, v) == mpidht.WriteOutcome.INSERTED
    assert table.write(keys[0], values[1]) == mpidht.WriteOutcome.UPDATED
    comm.Barrier()
    assert table.read(keys[0]) == values[1].tobytes()
    for k, v in zip(keys[1:], values[1:]):
        assert table.read(bytes(k)) == v.tobytes()
    other = keys_for(ids + 10_000)
    assert table.read(other[0]) is None
    comm.Barrier()
    assert table.remove(keys[5]) is True
    assert table.remove(keys[5]) is False
    assert table.read(keys[5]) is None

    stats = table.stats()
    assert stats["writes"] == 101 and stats["updates"] == 1
    assert stats["reads"] == 102 and stats["hits"] == 100 and stats["misses"] == 2
    assert stats["removes"] == 1
    total = table.global_stats()
    assert total["writes"] == 101 * comm.Get_size()
    table.reset_stats()
    assert all(v == 0 for v in table.stats().values())


def test_strided_bytes_like_and_empty_batches(comm: MPI.Intracomm, protocol: str) -> None:
    """A bytes-like key or value that is not contiguous (a strided
    memoryview) is read as its bytes in order, in single and batched calls
    and as an update function's result (it raised BufferError); an empty
    list is a batch of no rows (it was read as a float64 row)."""
    with mpidht.Table(comm, 24, 16, 1 << 20, protocol=protocol) as t:
        if comm.Get_rank() == 0:
            key = memoryview(b"ab" * 24)[::2]  # the bytes of b"a" * 24
            assert not key.c_contiguous
            assert t.write(key, memoryview(b"vw" * 16)[::2]) == mpidht.WriteOutcome.INSERTED
            assert t.read(b"a" * 24) == b"v" * 16
            assert t.read(key) == b"v" * 16
            assert t.update(key, lambda old: memoryview(b"xy" * 16)[::2]) == \
                mpidht.UpdateOutcome.UPDATED
            assert t.read(b"a" * 24) == b"x" * 16
            values, found = t.read_many([key, b"z" * 24])
            assert found.tolist() == [True, False] and bytes(values[0]) == b"x" * 16
            t.write_many([memoryview(b"cd" * 24)[::2]], [memoryview(b"12" * 16)[::2]])
            assert t.read(b"c" * 24) == b"1" * 16
            assert t.remove(key) and t.read(key) is None
            values, found = t.read_many([])
            assert values.shape == (0, 16) and found.shape == (0,)
            t.write_many([], [])
            assert t.update_many([], lambda i, old: None).shape == (0,)
        comm.Barrier()


def test_strided_numpy_keys_in_single_calls(comm: MPI.Intracomm, protocol: str) -> None:
    """A strided NumPy key or value is read as its bytes in order in single
    calls too, as in batches (NumPy refused the contiguous buffer with
    ValueError, which went to the caller)."""
    with mpidht.Table(comm, 8, 8, 1 << 20, protocol=protocol) as t:
        if comm.Get_rank() == 0:
            key = np.arange(16, dtype=np.uint8)[::2]
            value = np.arange(100, 116, dtype=np.uint8)[::2]
            assert not key.flags.c_contiguous
            assert t.write(key, value) == mpidht.WriteOutcome.INSERTED
            assert t.read(key) == t.read(key.tobytes()) == value.tobytes()
            _, found = t.read_many(key[None, :])
            assert found.tolist() == [True]
            assert t.remove(key) and t.read(key.tobytes()) is None
        comm.Barrier()


def test_str_rows_are_refused(comm: MPI.Intracomm, protocol: str) -> None:
    """A list of str is not rows of bytes: NumPy would store UCS-4 padded to
    the longest str of the batch, so one key's bytes depended on the
    others (["a", "cd"] with 8-byte keys was accepted, ["a", "c"] not)."""
    with mpidht.Table(comm, 8, 8, 1 << 20, protocol=protocol) as t:
        for keys in (["a", "cd"], ["ab"], np.array(["a", "cd"])):
            with pytest.raises(TypeError, match="not str: encode each"):
                t.write_many(keys, np.zeros((len(keys), 8), np.uint8))
            with pytest.raises(TypeError, match="not str: encode each"):
                t.read_many(keys)
        with pytest.raises(TypeError, match="not str"):
            t.write_many([b"k" * 8, b"l" * 8], ["v" * 2, "w" * 2])
        # Single calls too: a NumPy array of str was taken as its UCS-4
        # bytes, padded to the array's longest str.
        for text in (np.array("ab"), np.array(["a", "b"])):
            with pytest.raises(TypeError, match="not str"):
                t.write(text, b"v" * 8)
            with pytest.raises(TypeError, match="not str"):
                t.read(text)
            with pytest.raises(TypeError, match="not str"):
                t.remove(text)
            with pytest.raises(TypeError, match="not str"):
                t.write(b"k" * 8, text)
        assert t.stats()["writes"] == 0 and t.stats()["reads"] == 0


def test_stats_names_match_library(table: mpidht.Table) -> None:
    assert list(table.stats()) == [
        "reads", "hits", "misses", "writes", "updates", "evictions", "removes",
        "checksum_retries", "lock_retries", "timeouts", "atomic_updates", "probes_reused"]


def test_info(table: mpidht.Table, comm: MPI.Intracomm, protocol: str) -> None:
    info = table.info()
    assert info["key_size"] == 16 and info["value_size"] == 32
    assert info["protocol"] == protocol
    assert info["comm_size"] == comm.Get_size()
    assert info["hosting_processes"] == comm.Get_size()
    assert info["total_buckets"] == info["local_buckets"] * comm.Get_size()
    assert info["candidates"] == 6
    # One node: a shared window, reached with loads and stores.
    assert info["window"] == "shared" and info["direct"] is True


@pytest.mark.parametrize("setting, direct", [("mpi", False), ("direct", True), ("", True)])
def test_shared_access_setting(comm: MPI.Intracomm, monkeypatch: pytest.MonkeyPatch,
                               setting: str, direct: bool) -> None:
    monkeypatch.setenv("MPIDHT_SHARED_ACCESS", setting)
    with mpidht.Table(comm, 8, 8, 4096) as t:
        assert t.info()["direct"] is direct
        key = comm.Get_rank().to_bytes(8, "little")
        t.write(key, key[::-1])
        comm.Barrier()
        for rank in range(comm.Get_size()):
            k = rank.to_bytes(8, "little")
            assert t.read(k) == k[::-1]
        comm.Barrier()


def test_shared_access_bad_setting(comm: MPI.Intracomm,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MPIDHT_SHARED_ACCESS", "MPI")
    with pytest.raises(mpidht.Error) as e:
        mpidht.Table(comm, 8, 8, 4096)
    assert e.value.status == mpidht.Status.ERR_ACCESS_SETTING
    assert "MPIDHT_SHARED_ACCESS='MPI' on this process" in str(e.value)


def test_repr_and_status_names(table: mpidht.Table, comm: MPI.Intracomm,
                               protocol: str) -> None:
    text = repr(table)
    assert text.startswith(f"<mpidht.Table {protocol}, key 16 B, value 32 B, ")
    assert f"{comm.Get_size()} processes, window " in text
    # A status prints by name and still compares as the C value.
    assert str(mpidht.Status.ERR_WINDOW_UNSUPPORTED) == "Status.ERR_WINDOW_UNSUPPORTED"
    assert f"{mpidht.Status.ERR_PEER}" == "Status.ERR_PEER"
    assert int(mpidht.Status.ERR_PEER) == 19


def test_repr_inside_an_update_function(comm: MPI.Intracomm, protocol: str) -> None:
    """repr of a table in use (from its own update function) names the
    state instead of raising ERR_CONCURRENT_USE."""
    with mpidht.Table(comm, 8, 8, 1 << 16, protocol=protocol) as t:
        seen: list[str] = []

        def fn(old: Optional[bytes]) -> bytes:
            seen.append(repr(t))
            return b"v" * 8

        t.update(comm.Get_rank().to_bytes(8, "little"), fn)
        assert seen == ["<mpidht.Table key 8 B, value 8 B, ERR_CONCURRENT_USE>"]
        assert repr(t).startswith(f"<mpidht.Table {protocol}, key 8 B")


def test_context_manager_closes(comm: MPI.Intracomm) -> None:
    with mpidht.Table(comm, 8, 8, 4096) as t:
        assert not t.closed
    assert t.closed
    assert repr(t) == "<mpidht.Table closed, key 8 B, value 8 B>"
    t.close()  # again: nothing happens
    with pytest.raises(mpidht.Error) as e:
        t.read(b"12345678")
    assert e.value.status == mpidht.Status.ERR_INVALID_HANDLE
    assert str(e.value) == mpidht.strerror(mpidht.Status.ERR_INVALID_HANDLE)
    with pytest.raises(mpidht.Error):
        t.read_many(np.zeros((2, 8), dtype=np.uint8))
    with pytest.raises(mpidht.Error):
        t.stats()
    with pytest.raises(mpidht.Error):
        t.progress()


def test_progress_leaves_the_table_as_it_was(table: mpidht.Table, comm: MPI.Intracomm) -> None:
    """progress() may be called any time on every process: values, counters
    and other processes' operations are as without it."""
    rank = comm.Get_rank()
    ids = np.arange(rank * 50, rank * 50 + 50)
    keys, values = keys_for(ids), values_for(ids, rank)
    table.reset_stats()
    for k, v in zip(keys, values):
        table.write(k, v)
        table.progress()
    comm.Barrier()
    for k, v in zip(keys, values):
        table.progress()
        assert table.read(k) == v.tobytes()
    stats = table.stats()
    assert stats["writes"] == 50 and stats["reads"] == 50 and stats["hits"] == 50


def test_subcommunicator(comm: MPI.Intracomm) -> None:
    """A table on half of the processes; the others are not involved."""
    half = comm.Split(comm.Get_rank() % 2, comm.Get_rank())
    # (The default window: Open MPI 4.1's osc rdma names its shared segment
    # after the communicator's context id, which the two halves share, and
    # then warns that one half's unlink found the file gone.)
    with mpidht.Table(half, 8, 8, 4096, protocol="fine") as t:
        assert t.info()["comm_size"] == half.Get_size()
        key = np.uint64(half.Get_rank()).tobytes()
        t.write(key, key)
        half.Barrier()
        assert t.read(key) == key
        half.Barrier()
    half.Free()


def test_dropped_open_table_warns(comm: MPI.Intracomm) -> None:
    """Freeing is collective, so the garbage collector never frees a table:
    it warns instead (and the table's memory stays until MPI_Finalize)."""
    t = mpidht.Table(comm, 8, 8, 4096)
    with pytest.warns(ResourceWarning, match="close"):
        del t
        gc.collect()


@pytest.mark.one_process
def test_dropped_table_warns_without_leaving_an_exception_set() -> None:
    """With warnings as errors, the warning of a dropped open table was left
    set inside its deallocator, and unrelated code later failed
    (SystemError from dict.clear()). Now it is reported as unraisable."""
    seen: list[Optional[BaseException]] = []
    hook, sys.unraisablehook = sys.unraisablehook, lambda u: seen.append(u.exc_value)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            holder = {"t": mpidht.Table(MPI.COMM_SELF, 8, 8, 4096)}
            holder.clear()  # drops the table here
            assert len([1, 2, 3]) == 3
    finally:
        sys.unraisablehook = hook
    assert len(seen) == 1 and isinstance(seen[0], ResourceWarning)


@pytest.mark.one_process
def test_a_table_holds_no_update_function_after_its_call() -> None:
    """The last update function, and what it refers to, stayed alive as long
    as the table (after close() too): a model holding its table and
    updating with its own method was never collected."""
    class Model:
        def __init__(self) -> None:
            self.table = mpidht.Table(MPI.COMM_SELF, 8, 8, 4096)

        def merge(self, old: Optional[bytes]) -> Any:
            return mpidht.KEEP

    for batched in (False, True):
        m = Model()
        if batched:
            model = m

            def merge_row(i: int, old: Optional[bytes]) -> Any:
                return model.merge(old)

            m.table.update_many([b"k" * 8], merge_row)
            del model, merge_row
        else:
            m.table.update(b"k" * 8, m.merge)
        held = weakref.ref(m)
        m.table.close()
        del m
        gc.collect()
        assert held() is None


@pytest.mark.one_process
def test_a_table_in_a_cycle_is_collected_and_warns() -> None:
    """A table its own hash function refers to was never collected (the
    extension's type took no part in the garbage collector), so it never
    warned either."""
    def make() -> "weakref.ref[mpidht.Table]":
        box: list[mpidht.Table] = []
        box.append(mpidht.Table(MPI.COMM_SELF, 8, 8, 4096,
                                hash=lambda key: len(box) + key[0]))
        return weakref.ref(box[0])

    with pytest.warns(ResourceWarning, match="close"):
        held = make()
        gc.collect()
    assert held() is None


@pytest.mark.one_process
def test_update_beside_a_call_in_another_thread_is_refused_cleanly() -> None:
    """An update let another thread in while it swapped its function (the
    old one's __del__ may let go of the GIL), then passed no table to the
    library (ERR_INVALID_HANDLE on an open table) and cleared the other
    call's busy mark. Every refusal is now ERR_CONCURRENT_USE."""
    with mpidht.Table(MPI.COMM_SELF, 16, 64, 1 << 22) as t:
        keys = np.random.default_rng(0).integers(0, 256, (2000, 16), dtype=np.uint8)
        t.write_many(keys, np.zeros((2000, 64), np.uint8))
        stop = threading.Event()
        other: set[str] = set()

        def reader() -> None:
            while not stop.is_set():
                try:
                    t.read_many(keys)
                except mpidht.Error as e:
                    other.add(e.status.name)

        class Slow:
            def __del__(self) -> None:
                time.sleep(0.001)  # lets the reader in while this goes

        thread = threading.Thread(target=reader)
        thread.start()
        seen: set[str] = set()
        try:
            for _ in range(300):
                slow = Slow()

                def keep(old: Optional[bytes], s: Slow = slow) -> Any:
                    return mpidht.KEEP

                try:
                    t.update(b"k" * 16, keep)
                except mpidht.Error as e:
                    seen.add(e.status.name)
                del slow, keep
        finally:
            stop.set()
            thread.join()
        assert seen <= {"ERR_CONCURRENT_USE"} and other <= {"ERR_CONCURRENT_USE"}
        assert not t.closed


def low_bytes(key: bytes) -> int:
    """A user hash: the key's first 8 bytes as an integer, mixed."""
    return (int.from_bytes(key[:8], "little") * 0x9E3779B97F4A7C15) & (2**64 - 1)


def test_custom_hash(comm: MPI.Intracomm, protocol: str) -> None:
    rank = comm.Get_rank()
    with mpidht.Table(comm, 16, 32, 1 << 16, protocol=protocol, hash=low_bytes) as t:
        ids = np.arange(50) + 1000 * rank
        keys, values = keys_for(ids), values_for(ids, rank)
        t.write_many(keys, values)
        comm.Barrier()
        got, found = t.read_many(keys)
        assert found.all() and np.array_equal(got, values)
        assert t.read(keys[3]) == values[3].tobytes()
        comm.Barrier()


def test_constant_hash_still_correct(comm: MPI.Intracomm) -> None:
    """Every key on the same six candidates: at most six stay, none wrong."""
    with mpidht.Table(comm, 16, 32, 1 << 16, protocol="fine", hash=lambda k: 42) as t:
        ids = np.arange(20) + 100 * comm.Get_rank()
        t.write_many(keys_for(ids), values_for(ids, comm.Get_rank()))
        comm.Barrier()
        got, found = t.read_many(keys_for(ids))
        assert np.array_equal(got[found], values_for(ids, comm.Get_rank())[found])
        assert comm.allreduce(int(found.sum())) <= 6


def test_hash_errors(comm: MPI.Intracomm) -> None:
    rank = comm.Get_rank()

    def fails_on_rank_0(key: bytes) -> int:
        if rank == 0:
            raise ZeroDivisionError("bad hash")
        return 1

    with pytest.raises((ZeroDivisionError, mpidht.Error)) as e:
        mpidht.Table(comm, 16, 32, 4096, hash=fails_on_rank_0)
    if rank == 0:
        assert e.type is ZeroDivisionError
    else:
        assert isinstance(e.value, mpidht.Error)
        assert e.value.status == mpidht.Status.ERR_PEER
    with pytest.raises(TypeError, match="must return an int, not str"):
        mpidht.Table(comm, 16, 32, 4096, hash=lambda k: "7")  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match="callable"):
        mpidht.Table(comm, 16, 32, 4096, hash=7)  # type: ignore[arg-type]
    if comm.Get_size() > 1:
        with pytest.raises(mpidht.Error) as e2:
            mpidht.Table(comm, 16, 32, 4096, hash=lambda k: rank)
        assert e2.value.status == mpidht.Status.ERR_MISMATCHED_PARAMS


@pytest.mark.parametrize("others", [np.int64, None, ">f8"])
def test_key_dtype_differing_is_mismatched(comm: MPI.Intracomm, others: Any) -> None:
    """A key_dtype that differs between processes (the same numbers would
    be other key bytes there, so every read would miss) is refused on
    every process before the table is created, naming it; the
    communicator stays in step (a table made afterwards works)."""
    rank, size = comm.Get_rank(), comm.Get_size()
    if size == 1:
        pytest.skip("needs 2 processes or more")
    mine = np.float64 if rank == 0 else others
    with pytest.raises(mpidht.Error) as e:
        mpidht.Table(comm, 16, 32, 4096, key_dtype=mine)
    assert e.value.status == mpidht.Status.ERR_MISMATCHED_PARAMS
    assert "key_dtype" in str(e.value) and "differs between processes" in str(e.value)
    with mpidht.Table(comm, 16, 32, 4096, key_dtype=np.float64) as t:
        t.write([1.5, 2.5], bytes(32))
        comm.Barrier()
        assert t.read([1.5, 2.5]) == bytes(32)
        comm.Barrier()


@pytest.mark.parametrize("given", ["on process 0", "on all but process 0", "on even ranks"])
def test_hash_on_some_processes_only_is_mismatched(comm: MPI.Intracomm, given: str) -> None:
    """A hash given on some processes only is refused on every process as
    a differing hash is, instead of leaving them in different collective
    calls; a hash that raises where the others have none raises there and
    fails with ERR_PEER elsewhere. The communicator stays in step."""
    rank, size = comm.Get_rank(), comm.Get_size()
    if size == 1:
        pytest.skip("needs 2 processes or more")
    has = {"on process 0": rank == 0, "on all but process 0": rank != 0,
           "on even ranks": rank % 2 == 0}[given]
    with pytest.raises(mpidht.Error) as e:
        mpidht.Table(comm, 16, 32, 4096, hash=(lambda k: 1) if has else None)
    assert e.value.status == mpidht.Status.ERR_MISMATCHED_PARAMS
    assert "hash" in str(e.value)

    def raises(key: bytes) -> int:
        raise ZeroDivisionError("bad hash")

    with pytest.raises((ZeroDivisionError, mpidht.Error)) as e2:
        mpidht.Table(comm, 16, 32, 4096, hash=raises if has else None)
    if has:
        assert e2.type is ZeroDivisionError
    else:
        assert isinstance(e2.value, mpidht.Error)
        assert e2.value.status == mpidht.Status.ERR_PEER
    with mpidht.Table(comm, 16, 32, 4096) as t:
        assert t.global_stats()["writes"] == 0


def test_hash_raising_during_a_call(comm: MPI.Intracomm) -> None:
    def picky(key: bytes) -> int:
        if key[0] == 0xFF:
            raise KeyError("no keys starting with 0xff")
        return low_bytes(key)

    with mpidht.Table(comm, 16, 32, 1 << 16, hash=picky) as t:
        with pytest.raises(KeyError, match="0xff"):
            t.read(b"\xff" * 16)
        bad = np.full((3, 16), 0xFF, dtype=np.uint8)
        with pytest.raises(KeyError):
            t.write_many(bad, np.zeros((3, 32), np.uint8))
        with pytest.raises(KeyError):
            t.read_many(bad)
        good = np.uint64(7 + comm.Get_rank()).tobytes() * 2
        t.write(good, bytes(32))  # still usable
        assert t.read(good) == bytes(32)
        comm.Barrier()
