"""update / update_many / clear, and the eviction and timeout options."""

import re
from typing import Any

import numpy as np
import pytest
from mpi4py import MPI

import mpidht
from conftest import keys_for, scaled, values_for

INCREMENTS = scaled(300, 40)


def add_one(old: "bytes | None") -> bytes:
    count = 0 if old is None else int(np.frombuffer(old, dtype=np.uint64)[0])
    return np.array([count + 1, 0, 0, 0], dtype=np.uint64).tobytes()


def counter(value: "bytes | None") -> int:
    assert value is not None
    return int(np.frombuffer(value, dtype=np.uint64)[0])


def test_counter_every_process_increments_is_exact(table: mpidht.Table,
                                                   comm: MPI.Intracomm) -> None:
    """Hot keys: every rank increments the same three counters, single and
    batched; no increment is lost under any protocol."""
    keys = keys_for([7, 8, 9], salt=1)
    outcomes = set()
    for i in range(INCREMENTS):
        outcomes.add(table.update(keys[i % 3], add_one))
        many = table.update_many(keys, lambda _, old: add_one(old))
        outcomes.update(mpidht.UpdateOutcome(int(o)) for o in many)
    comm.Barrier()
    size = comm.Get_size()
    for j, k in enumerate(keys):
        singles = sum(1 for i in range(INCREMENTS) if i % 3 == j)
        assert counter(table.read(k)) == size * (singles + INCREMENTS)
    assert outcomes <= {mpidht.UpdateOutcome.INSERTED, mpidht.UpdateOutcome.UPDATED}
    assert mpidht.UpdateOutcome.UPDATED in outcomes
    assert table.stats()["atomic_updates"] == 4 * INCREMENTS


def test_update_actions(table: mpidht.Table, comm: MPI.Intracomm) -> None:
    rank = comm.Get_rank()
    k = keys_for([rank], salt=2)[0]
    v = values_for([rank], rank)[0]
    seen = []

    def keep(old: "bytes | None") -> Any:
        seen.append(old)
        return mpidht.KEEP

    assert table.update(k, keep) == mpidht.UpdateOutcome.KEPT
    assert seen == [None] and table.read(k) is None
    assert table.update(k, lambda _: None) == mpidht.UpdateOutcome.KEPT
    assert table.update(k, lambda _: v) == mpidht.UpdateOutcome.INSERTED
    assert table.update(k, keep) == mpidht.UpdateOutcome.KEPT
    assert seen[-1] == v.tobytes()
    assert table.update(k, lambda old: (old or b"")[::-1]) == mpidht.UpdateOutcome.UPDATED
    assert table.read(k) == v.tobytes()[::-1]
    assert table.update(k, lambda _: None) == mpidht.UpdateOutcome.REMOVED
    assert table.read(k) is None
    comm.Barrier()


def test_update_many_sees_earlier_rows(table: mpidht.Table, comm: MPI.Intracomm) -> None:
    """A key repeated in a batch sees the rows before it; row indices are
    passed in order of the rows."""
    rank = comm.Get_rank()
    k = keys_for([100 + rank, 200 + rank], salt=3)
    keys = np.stack([k[0], k[1], k[0], k[0], k[1]])
    rows = []

    def fn(i: int, old: "bytes | None") -> Any:
        rows.append(i)
        if i == 4:
            return None
        return add_one(old)

    out = table.update_many(keys, fn)
    assert sorted(rows) == [0, 1, 2, 3, 4]
    assert list(out) == [mpidht.UpdateOutcome.INSERTED, mpidht.UpdateOutcome.INSERTED,
                         mpidht.UpdateOutcome.UPDATED, mpidht.UpdateOutcome.UPDATED,
                         mpidht.UpdateOutcome.REMOVED]
    assert counter(table.read(k[0])) == 3
    assert table.read(k[1]) is None
    comm.Barrier()


@pytest.mark.parametrize("failure", ["raises", "returns 1 byte"])
def test_update_many_finishes_the_other_rows(table: mpidht.Table, comm: MPI.Intracomm,
                                             failure: str) -> None:
    """As mpidht_update_batch: a row whose function fails is left as it
    was, every other row is updated, and the first failure is raised."""
    rank = comm.Get_rank()
    keys = keys_for([500 + 10 * rank + i for i in range(4)], salt=6)
    old = values_for(range(4), rank)
    table.write_many(keys, old)
    new = values_for(range(4, 8), rank)
    called = []

    def fn(i: int, value: "bytes | None") -> Any:
        called.append(i)
        if i in (1, 2):
            if failure == "raises":
                raise KeyError(f"row {i}")
            return b"x"
        return new[i].tobytes()

    kind = KeyError if failure == "raises" else ValueError
    with pytest.raises(kind) as e:
        table.update_many(keys, fn)
    # The first failure raised: rows are called grouped by the process
    # that hosts them, so either failing row may come first.
    assert (re.fullmatch(r"'row [12]'", str(e.value)) is not None if failure == "raises"
            else "must return" in str(e.value))
    assert sorted(called) == [0, 1, 2, 3]
    got, found = table.read_many(keys)
    assert found.all()
    assert [bytes(r) for r in got] == [new[0].tobytes(), old[1].tobytes(), old[2].tobytes(),
                                       new[3].tobytes()]
    comm.Barrier()


def test_update_many_stops_at_keyboard_interrupt(table: mpidht.Table,
                                                 comm: MPI.Intracomm) -> None:
    """A KeyboardInterrupt from the function stops the calls and is raised,
    also after an earlier row's exception (it was swallowed, and every row
    still called): the rows not called are left as they were."""
    rank = comm.Get_rank()
    keys = keys_for([700 + 10 * rank + i for i in range(6)], salt=7)
    old = values_for(range(6), rank)
    table.write_many(keys, old)
    called = []

    def fn(i: int, value: "bytes | None") -> Any:
        called.append(i)
        if len(called) == 1:
            raise ValueError("first")
        if len(called) == 3:
            raise KeyboardInterrupt("stop")
        return b"n" * 32

    with pytest.raises(KeyboardInterrupt, match="stop"):
        table.update_many(keys, fn)
    assert len(called) == 3
    got, found = table.read_many(keys)
    assert found.all()
    changed = [i for i in range(6) if bytes(got[i]) != old[i].tobytes()]
    assert changed == [called[1]] and bytes(got[called[1]]) == b"n" * 32
    table.update_many(keys, lambda i, value: mpidht.KEEP)  # no error left behind
    comm.Barrier()


def test_update_function_errors_leave_the_key(table: mpidht.Table,
                                              comm: MPI.Intracomm) -> None:
    k = keys_for([300 + comm.Get_rank()], salt=4)[0]
    v = values_for([1], 0)[0]
    table.write(k, v)

    def boom(old: "bytes | None") -> bytes:
        raise KeyError("from the update function")

    with pytest.raises(KeyError, match="from the update function"):
        table.update(k, boom)
    with pytest.raises((TypeError, ValueError)):
        table.update(k, lambda _: b"short")
    with pytest.raises((TypeError, ValueError)):
        table.update(k, lambda _: 42)  # type: ignore[arg-type, return-value]
    assert table.read(k) == v.tobytes()
    comm.Barrier()


def test_table_used_inside_its_update_or_hash_function(table: mpidht.Table,
                                                       comm: MPI.Intracomm) -> None:
    """A call on the table from inside its own update (or hash) function is
    refused with mpidht.Error (ERR_CONCURRENT_USE), saying the table is in
    use by a call in progress; the outer call raises it, the key stays as
    it was and the table stays usable. Every protocol."""
    key, other = (k.tobytes() for k in keys_for([5, 6], salt=9))
    value, newer = values_for([5], 0)[0].tobytes(), values_for([5], 1)[0].tobytes()

    def check(e: pytest.ExceptionInfo[mpidht.Error]) -> None:
        assert e.value.status == mpidht.Status.ERR_CONCURRENT_USE
        assert "in use by a call in progress" in str(e.value)
        assert "update or hash function" in str(e.value)

    if comm.Get_rank() == 0:
        table.write(key, value)
        uses: list[Any] = [
            lambda: table.read(key),
            lambda: table.write(other, newer),
            lambda: table.remove(key),
            lambda: table.update(key, lambda old: old),
            lambda: table.read_many([key]),
            lambda: table.stats(),
        ]
        for use in uses:
            with pytest.raises(mpidht.Error) as e:
                table.update(key, lambda old: (use(), newer)[1])
            check(e)
            with pytest.raises(mpidht.Error) as e:
                table.update_many([other, key], lambda i, old: (use(), newer)[1])
            check(e)
        assert table.read(key) == value and table.read(other) is None
        assert table.update(key, lambda old: newer) == mpidht.UpdateOutcome.UPDATED
        assert table.read(key) == newer
    comm.Barrier()
    tables: list[mpidht.Table] = []
    with mpidht.Table(comm, 16, 32, 1 << 16, hash=lambda k: 7 if not tables
                      else (tables[0].read(other), 7)[1]) as t:
        tables.append(t)
        with pytest.raises(mpidht.Error) as e:
            t.write(key, value)
        check(e)
        tables.clear()
        t.write(key, value)
        assert t.read(key) == value
        comm.Barrier()


def test_clear_empties_every_process(table: mpidht.Table, comm: MPI.Intracomm) -> None:
    ids = np.arange(50) + 1000 * comm.Get_rank()
    table.write_many(keys_for(ids), values_for(ids, 0))
    comm.Barrier()
    before = table.stats()
    table.clear()
    _, found = table.read_many(keys_for(np.arange(50 + 1000 * (comm.Get_size() - 1))))
    assert not found.any()
    assert table.local_entries()[0].shape[0] == 0
    assert table.stats()["writes"] == before["writes"]
    comm.Barrier()  # everyone has looked before anyone writes again
    table.write_many(keys_for(ids), values_for(ids, 1))
    comm.Barrier()
    got, found = table.read_many(keys_for(ids))
    assert found.all() and np.array_equal(got, values_for(ids, 1))
    comm.Barrier()


@pytest.mark.parametrize("eviction", ["recency", "last", mpidht.Eviction.LAST])
def test_eviction_option(comm: MPI.Intracomm, eviction: object) -> None:
    with mpidht.Table(comm, 16, 32, 1 << 14, eviction=eviction,  # type: ignore[arg-type]
                      timeout=2.5) as t:
        info = t.info()
        assert info["eviction"] == str(getattr(eviction, "name", eviction)).lower()
        assert info["timeout"] == 2.5
        comm.Barrier()


def test_recency_keeps_the_entry_read_since(comm: MPI.Intracomm) -> None:
    """Every key on the same two candidates: under "recency" the entry read
    since survives the next insert; under "last" the last candidate goes
    whatever was read."""
    import time
    for eviction in ("recency", "last"):
        with mpidht.Table(comm, 16, 32, 1 << 14, candidates=2, eviction=eviction,
                          hash=lambda key: 5) as t:
            if comm.Get_rank() == 0:
                a, b, c = keys_for([1, 2, 3], salt=5)
                t.write(a, values_for([1], 0)[0])
                t.write(b, values_for([2], 0)[0])
                time.sleep(0.01)
                for _ in range(256):  # one hit in eight refreshes the stamp
                    t.read(b)
                assert t.write(c, values_for([3], 0)[0]) == mpidht.WriteOutcome.EVICTED
                kept = [t.read(x) is not None for x in (a, b, c)]
                assert kept == ([False, True, True] if eviction == "recency"
                                else [True, False, True])
            comm.Barrier()


@pytest.mark.parametrize("bad, error", [
    ("lru", ValueError), (3.5, ValueError), (None, ValueError)])
def test_bad_eviction_refused(comm: MPI.Intracomm, bad: object, error: type) -> None:
    with pytest.raises(error, match="eviction"):
        mpidht.Table(comm, 16, 32, 1 << 14, eviction=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad, error", [
    (-1.0, mpidht.Error), (float("nan"), mpidht.Error), (float("inf"), mpidht.Error),
    ("10", TypeError), (True, TypeError)])
def test_bad_timeout_refused(comm: MPI.Intracomm, bad: object, error: type) -> None:
    with pytest.raises(error) as e:
        mpidht.Table(comm, 16, 32, 1 << 14, timeout=bad)  # type: ignore[arg-type]
    if isinstance(e.value, mpidht.Error):
        assert e.value.status == mpidht.Status.ERR_TIMEOUT_SETTING
    assert "timeout" in str(e.value)
