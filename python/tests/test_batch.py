"""read_many / write_many: the results of single calls, for every protocol,
with collisions, evictions, misses and repeated keys; and the array forms
they accept."""

import numpy as np
import pytest
from mpi4py import MPI

import mpidht
from conftest import in_turn, keys_for, scaled, values_for

WRITES = scaled(400, 80)
KEY_SPACE = WRITES * 5 // 8  # ids written
TABLE_BUCKETS = WRITES * 3 // 10  # fewer than the keys: collisions


def small_pair(comm: MPI.Intracomm, protocol: str) -> tuple[mpidht.Table, mpidht.Table]:
    """Two identical tables of TABLE_BUCKETS buckets in all. Eviction by
    candidate order: recency stamps are milliseconds of wall time, so two
    tables written at different instants may pick different victims."""
    memory = TABLE_BUCKETS * 64 // comm.Get_size()
    return (mpidht.Table(comm, 16, 32, memory, protocol=protocol, eviction="last"),
            mpidht.Table(comm, 16, 32, memory, protocol=protocol, eviction="last"))


def batch_cuts(total: int) -> list[int]:
    """Row offsets cutting total rows into batches of uneven sizes."""
    cuts = [0]
    sizes = [1, 7, 50, 2, 80, 3, 64]
    while cuts[-1] < total:
        cuts.append(min(total, cuts[-1] + sizes[len(cuts) % len(sizes)]))
    return cuts


def test_batches_match_single_calls(comm: MPI.Intracomm, protocol: str) -> None:
    rank = comm.Get_rank()
    rng = np.random.default_rng(rank)
    ids = rng.integers(0, KEY_SPACE, size=WRITES)
    ids[::3] //= 8  # hot keys, repeated within batches
    keys = keys_for(ids)
    values = values_for(np.arange(WRITES) + 10 * WRITES * rank, rank)
    single, batched = small_pair(comm, protocol)
    with single, batched:
        # One rank at a time under every protocol: both tables must see
        # the same order of writes.
        for mine in in_turn(comm):
            if not mine:
                continue
            one = [single.write(k, v) for k, v in zip(keys, values)]
            cuts = batch_cuts(WRITES)
            many = np.concatenate([batched.write_many(keys[i:j], values[i:j])
                                   for i, j in zip(cuts[:-1], cuts[1:])])
            assert list(many) == [int(o) for o in one]
            assert {int(o) for o in one} >= {int(mpidht.WriteOutcome.EVICTED),
                                             int(mpidht.WriteOutcome.UPDATED)}
        # Every id twice (the second time in reverse), and 50 never written.
        read_span = np.arange(KEY_SPACE + 50)
        read_ids = np.concatenate([read_span, read_span[::-1]])
        read_keys = keys_for(read_ids)
        expect = [single.read(k) for k in read_keys]
        for t in (single, batched):
            got, found = t.read_many(read_keys)
            assert found.dtype == np.bool_ and got.shape == (read_ids.size, 32)
            assert list(found) == [e is not None for e in expect]
            for row, e in zip(got, expect):
                assert row.tobytes() == (e if e is not None else bytes(32))
        assert not found[KEY_SPACE:KEY_SPACE + 100].any()  # never written
        comm.Barrier()


def test_row_forms(table: mpidht.Table, comm: MPI.Intracomm) -> None:
    """Any contiguous array of n rows of key_size bytes is n keys."""
    rank = comm.Get_rank()
    as_u64 = np.arange(10, dtype=np.uint64).reshape(5, 2) + 100 * rank  # 16 B rows
    as_bytes = as_u64.view(np.uint8).reshape(5, 16)
    structured = np.zeros(5, dtype=[("a", "<u8"), ("b", "<u8")])
    structured["a"], structured["b"] = as_u64[:, 0], as_u64[:, 1]
    values = np.arange(20, dtype=np.float64).reshape(5, 4) + rank  # 32 B rows
    outcomes = table.write_many(as_u64, values)
    assert outcomes.dtype == np.uint8 and outcomes.shape == (5,)
    for form in (as_u64, as_bytes, structured, [bytes(r) for r in as_bytes]):
        got, found = table.read_many(form)
        assert found.all()
        assert np.array_equal(got.view(np.float64), values)
    # Non-contiguous input is copied, not misread.
    wide = np.zeros((5, 4), dtype=np.uint64)
    wide[:, ::2] = as_u64
    got, found = table.read_many(wide[:, ::2])
    assert found.all()
    assert table.read(as_bytes[2]) == values[2].tobytes()


def test_empty_batches(table: mpidht.Table) -> None:
    got, found = table.read_many(np.zeros((0, 16), dtype=np.uint8))
    assert got.shape == (0, 32) and found.shape == (0,)
    assert table.write_many(np.zeros((0, 16), np.uint8), np.zeros((0, 32), np.uint8)).shape == (0,)
    assert table.stats()["reads"] == 0


@pytest.mark.parametrize("n", [1, 64, 1500])
def test_large_and_small_batches(table: mpidht.Table, comm: MPI.Intracomm,
                                 protocol: str, n: int) -> None:
    """Batches beyond one internal chunk (1024 keys) come back whole."""
    ids = np.arange(n) + 10_000 * comm.Get_rank()
    table.write_many(keys_for(ids), values_for(ids, comm.Get_rank()))
    comm.Barrier()
    got, found = table.read_many(keys_for(ids))
    assert found.all()
    assert np.array_equal(got, values_for(ids, comm.Get_rank()))
