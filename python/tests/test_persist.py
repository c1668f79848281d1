"""Local iteration, dump and restore from Python."""

import pathlib
from typing import Iterator

import numpy as np
import pytest
from mpi4py import MPI

import mpidht
from conftest import PROTOCOLS, keys_for, scaled, values_for


@pytest.fixture
def shared_dir(comm: MPI.Intracomm, tmp_path_factory: pytest.TempPathFactory
               ) -> Iterator[pathlib.Path]:
    """A directory every rank names the same (rank 0's temporary one)."""
    mine = str(tmp_path_factory.mktemp("persist")) if comm.Get_rank() == 0 else None
    yield pathlib.Path(comm.bcast(mine, root=0))
    comm.Barrier()


def fill(table: mpidht.Table, comm: MPI.Intracomm, protocol: str, count: int) -> None:
    """Ids [0, count) dealt round-robin, each rank writing its own."""
    ids = np.arange(comm.Get_rank(), count, comm.Get_size())
    assert (table.write_many(keys_for(ids), values_for(ids, 0))
            != mpidht.WriteOutcome.EVICTED).all()
    comm.Barrier()


def all_entries(table: mpidht.Table, comm: MPI.Intracomm,
                max_entries: int = 4096) -> dict[bytes, bytes]:
    """Every process's local entries, gathered on every process."""
    mine = {bytes(k): bytes(v) for keys, values in table.iter_local(max_entries)
            for k, v in zip(keys, values)}
    merged: dict[bytes, bytes] = {}
    for part in comm.allgather(mine):
        assert not set(part) & set(merged), "an entry was hosted twice"
        merged.update(part)
    return merged


def expected(count: int) -> dict[bytes, bytes]:
    ids = np.arange(count)
    return {bytes(k): bytes(v) for k, v in zip(keys_for(ids), values_for(ids, 0))}


#: Entries per test (fewer under MPICH, see conftest.SCALE).
COUNT = scaled(900, 150)


def test_iteration_yields_every_entry_once(table: mpidht.Table, comm: MPI.Intracomm,
                                           protocol: str) -> None:
    fill(table, comm, protocol, COUNT)
    for rows in (1, 7, 10_000):
        assert all_entries(table, comm, rows) == expected(COUNT)
    keys, values = table.local_entries()
    assert keys.shape[1] == 16 and values.shape[1] == 32 and len(keys) == len(values)
    assert comm.allreduce(len(keys)) == COUNT
    assert table.stats()["reads"] == 0  # iteration is not counted


def test_empty_table_iterates_nothing(table: mpidht.Table) -> None:
    assert list(table.iter_local()) == []
    keys, values = table.local_entries()
    assert keys.shape == (0, 16) and values.shape == (0, 32)


def test_dump_restore_roundtrip(table: mpidht.Table, comm: MPI.Intracomm, protocol: str,
                                shared_dir: pathlib.Path) -> None:
    """Into a table of the next protocol (the C tests try every pair)."""
    target = PROTOCOLS[(PROTOCOLS.index(protocol) + 1) % len(PROTOCOLS)]
    fill(table, comm, protocol, COUNT)
    path = shared_dir / "table.mpidht"
    table.dump(path)  # a pathlib.Path
    assert path.exists() and not path.with_name("table.mpidht.partial").exists()
    # Another protocol and size; restoring twice updates every entry.
    with mpidht.Table(comm, 16, 32, 1 << 21, protocol=target) as other:
        assert other.restore(str(path)) == mpidht.RestoreReport(COUNT, COUNT, 0, 0)
        assert all_entries(other, comm) == expected(COUNT)
        assert other.restore(path) == mpidht.RestoreReport(COUNT, 0, COUNT, 0)
        values, found = other.read_many(keys_for(np.arange(COUNT)))
        assert found.all()
        assert (values == values_for(np.arange(COUNT), 0)).all()
        comm.Barrier()


def test_small_table_reports_evictions(table: mpidht.Table, comm: MPI.Intracomm,
                                       protocol: str, shared_dir: pathlib.Path) -> None:
    fill(table, comm, protocol, COUNT)
    table.dump(shared_dir / "t.mpidht")
    # Buckets for half the entries (coarse buckets of 16 + 32 bytes: 56).
    memory = max(COUNT // 2 // comm.Get_size(), 1) * 56
    with mpidht.Table(comm, 16, 32, memory, protocol="coarse") as small:
        report = small.restore(shared_dir / "t.mpidht")
        assert report.entries == COUNT and report.evicted > 0
        assert report.inserted + report.updated + report.evicted == COUNT
        assert len(all_entries(small, comm)) == report.inserted
        comm.Barrier()


@pytest.mark.parametrize("damage, status", [
    (lambda b: b[:-1], mpidht.Status.ERR_FILE_CORRUPT),
    (lambda b: b + b"\0", mpidht.Status.ERR_FILE_CORRUPT),
    (lambda b: b[:-3] + bytes([b[-3] ^ 1]) + b[-2:], mpidht.Status.ERR_FILE_CORRUPT),
    (lambda b: b"X" + b[1:], mpidht.Status.ERR_FILE_FORMAT),
    (lambda b: b"", mpidht.Status.ERR_FILE_FORMAT),
])
def test_damaged_file_leaves_table_alone(comm: MPI.Intracomm, shared_dir: pathlib.Path,
                                         damage: object, status: mpidht.Status) -> None:
    protocol = "fine"
    path = shared_dir / "good.mpidht"
    with mpidht.Table(comm, 16, 32, 1 << 20, protocol=protocol) as table:
        fill(table, comm, protocol, COUNT // 3)
        table.dump(path)
        comm.Barrier()
    bad = shared_dir / "bad.mpidht"
    if comm.Get_rank() == 0:
        bad.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]
    comm.Barrier()
    with mpidht.Table(comm, 16, 32, 1 << 20, protocol=protocol) as other:
        ids = np.arange(5000 + comm.Get_rank() * 10, 5010 + comm.Get_rank() * 10)
        other.write_many(keys_for(ids), values_for(ids, 1))
        comm.Barrier()
        before = all_entries(other, comm)
        with pytest.raises(mpidht.Error) as e:
            other.restore(bad)
        assert e.value.status == status
        assert all_entries(other, comm) == before
        comm.Barrier()


def test_rejections(comm: MPI.Intracomm, shared_dir: pathlib.Path) -> None:
    with mpidht.Table(comm, 16, 32, 1 << 16) as table:
        check_rejections(table, comm, shared_dir)
        comm.Barrier()


def check_rejections(table: mpidht.Table, comm: MPI.Intracomm,
                     shared_dir: pathlib.Path) -> None:
    with pytest.raises(mpidht.Error) as e:
        table.restore(shared_dir / "missing.mpidht")
    assert e.value.status == mpidht.Status.ERR_FILE_IO
    with mpidht.Table(comm, 8, 32, 1 << 16) as other:
        other.dump(shared_dir / "other.mpidht")
        comm.Barrier()
    with pytest.raises(mpidht.Error) as e:
        table.restore(shared_dir / "other.mpidht")
    assert e.value.status == mpidht.Status.ERR_FILE_MISMATCH
    if comm.Get_size() > 1:
        with pytest.raises(mpidht.Error) as e:
            table.dump(shared_dir / f"rank{comm.Get_rank()}.mpidht")
        assert e.value.status == mpidht.Status.ERR_PATH_MISMATCH
    with pytest.raises(TypeError):
        table.dump(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        next(table.iter_local(0))
    # A chunk size beyond the process's buckets allocates no more than them.
    assert sum(len(k) for k, _ in table.iter_local(2**40)) == \
        sum(len(k) for k, _ in table.iter_local())
    with pytest.raises(TypeError):
        next(table.iter_local("many"))  # type: ignore[arg-type]
