"""Hot keys written and read concurrently in batches by every process:
every value read is intact and belongs to its key, under every protocol."""

import numpy as np
from mpi4py import MPI

import mpidht
from conftest import keys_for, scaled

HOT = 48
ROUNDS = scaled(150, 30)
BATCH = 16


def stamped(ids: np.ndarray, writer: int, seq: int) -> np.ndarray:
    """Rows of (id, writer, seq, checksum of the three) as uint64."""
    rows = np.zeros((ids.size, 4), dtype=np.uint64)
    rows[:, 0], rows[:, 1], rows[:, 2] = ids, writer, seq
    rows[:, 3] = (rows[:, 0] * np.uint64(1000003) + rows[:, 1] * np.uint64(7919)
                  + rows[:, 2]) ^ np.uint64(0xA5A5A5A5A5A5A5A5)
    return rows


def test_hot_keys(comm: MPI.Intracomm, protocol: str) -> None:
    rank, size = comm.Get_rank(), comm.Get_size()
    rng = np.random.default_rng(1000 + rank)
    memory = 30 * 64 // size  # about 30 buckets in all: constant eviction
    hits = 0
    with mpidht.Table(comm, 16, 32, memory, protocol=protocol) as table:
        for seq in range(ROUNDS):
            ids = (HOT * rng.random(BATCH) ** 3).astype(np.uint64)
            if rng.random() < (0.8 if rank < (size + 1) // 2 else 0.1):
                table.write_many(keys_for(ids), stamped(ids, rank, seq))
                continue
            got, found = table.read_many(keys_for(ids))
            rows = got.view(np.uint64)
            for row, key_id in zip(rows[found], ids[found]):
                assert row[0] == key_id
                assert row[1] < size and row[2] < ROUNDS
                expect = stamped(np.array([row[0]]), int(row[1]), int(row[2]))[0]
                assert np.array_equal(row, expect)
            hits += int(found.sum())
        comm.Barrier()
        total = comm.allreduce(hits)
        assert total > 0 or size == 1
        stats = table.global_stats()
        assert stats["reads"] == stats["hits"] + stats["misses"]
