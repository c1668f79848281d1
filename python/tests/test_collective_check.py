"""The debug mode (MPIDHT_DEBUG_COLLECTIVES): a collective call that not
every process enters fails within the set time on the processes that did,
naming the call and the processes that were missing or elsewhere, instead
of hanging; the table stays usable. Every protocol."""

from typing import Iterator

import numpy as np
import pytest
from mpi4py import MPI

import mpidht

from conftest import PROTOCOLS

SECONDS = "1"


@pytest.fixture
def debug(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The mode on, for tables created in the test; every process leaves
    the test together, whatever it asserted."""
    monkeypatch.setenv("MPIDHT_DEBUG_COLLECTIVES", SECONDS)
    try:
        yield
    finally:
        MPI.COMM_WORLD.Barrier()


def others(size: int) -> str:
    """The processes other than 0, as the message lists them."""
    return {2: "process 1", 3: "processes 1, 2"}.get(size, f"processes 1-{size - 1}")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_one_process_calls_global_stats(comm: MPI.Intracomm, debug: None,
                                        protocol: str) -> None:
    with mpidht.Table(comm, 8, 8, 4096, protocol=protocol) as t:
        t.write(bytes(8), bytes([comm.rank]) * 8)
        comm.Barrier()
        if comm.rank == 0 and comm.size > 1:
            with pytest.raises(mpidht.Error) as e:
                t.global_stats()
            assert e.value.status == mpidht.Status.ERR_COLLECTIVE_CHECK
            message = str(e.value)
            assert message.startswith(mpidht.strerror(mpidht.Status.ERR_COLLECTIVE_CHECK)
                                      + ": mpidht_stats_global: after 1 s, ")
            assert f"{others(comm.size)} of {comm.size} had not entered it" in message
        comm.Barrier()
        # Every collective call works again, with every process in it.
        assert t.global_stats()["writes"] == comm.size
        t.clear()
        assert t.read(bytes(8)) is None


def test_processes_in_different_calls(comm: MPI.Intracomm, debug: None) -> None:
    if comm.size == 1:
        pytest.skip("needs 2 processes or more")
    with mpidht.Table(comm, 8, 8, 4096) as t:
        with pytest.raises(mpidht.Error) as e:
            if comm.rank == 0:
                t.clear()
            else:
                t.global_stats()
        assert e.value.status == mpidht.Status.ERR_COLLECTIVE_CHECK
        if comm.rank == 0:
            assert "mpidht_clear: after 1 s, " in str(e.value)
            assert f"{others(comm.size)} had entered mpidht_stats_global instead" in str(e.value)
        else:
            assert "mpidht_stats_global: after 1 s, " in str(e.value)
            assert "process 0 had entered mpidht_clear instead" in str(e.value)
        comm.Barrier()
        t.global_stats()


def test_one_process_dumps_and_closes(comm: MPI.Intracomm, debug: None,
                                      tmp_path_factory: pytest.TempPathFactory) -> None:
    if comm.size == 1:
        pytest.skip("needs 2 processes or more")
    path = tmp_path_factory.mktemp("check") / "never.mpidht"
    t = mpidht.Table(comm, 8, 8, 4096)
    if comm.rank == 0:
        with pytest.raises(mpidht.Error, match="mpidht_dump: after 1 s, .* had not entered it"):
            t.dump(path)
        assert not path.exists()
        with pytest.raises(mpidht.Error, match="mpidht_free: after 1 s, .* had not entered it"):
            t.close()
        assert not t.closed
    comm.Barrier()
    t.close()
    assert t.closed


def test_exception_in_block_is_kept(comm: MPI.Intracomm, debug: None) -> None:
    """An exception on one process inside ``with Table``: that process's
    close fails the check, and the exception goes on with a note instead of
    being replaced by the close's error."""
    if comm.size == 1:
        pytest.skip("needs 2 processes or more")
    t = mpidht.Table(comm, 8, 8, 4096)
    if comm.rank == 0:
        with pytest.raises(KeyError) as e:
            with t:
                raise KeyError("the block's own error")
        assert any("closing the table failed" in note and "mpidht_free" in note
                   for note in e.value.__notes__)
        assert not t.closed
    comm.Barrier()
    t.close()


def test_exception_in_neighbours_block_is_kept(comm: MPI.Intracomm, debug: None) -> None:
    """As for ``with Table``, so for ``with Neighbours`` (mpidht.interp):
    the block's exception goes on with the note; the close's error
    replaced it before."""
    from mpidht.interp import Neighbours, Settings
    from mpidht.keys import KeyColumn, Rounding

    if comm.size == 1:
        pytest.skip("needs 2 processes or more")
    near = Neighbours(comm, [KeyColumn(Rounding.DECIMAL, 0)], Settings(tolerance=1.0), 1 << 16)
    if comm.rank == 0:
        with pytest.raises(KeyError) as e:
            with near:
                raise KeyError("the block's own error")
        assert any("closing the table failed" in note for note in e.value.__notes__)
        assert not near.table.closed
    comm.Barrier()
    near.close()


def test_bad_setting(comm: MPI.Intracomm, monkeypatch: pytest.MonkeyPatch) -> None:
    for text in ["soon", "-1", "nan", "1e999"]:
        monkeypatch.setenv("MPIDHT_DEBUG_COLLECTIVES", text)
        with pytest.raises(mpidht.Error) as e:
            mpidht.Table(comm, 8, 8, 4096)
        assert e.value.status == mpidht.Status.ERR_DEBUG_SETTING
        assert str(e.value).endswith(f"MPIDHT_DEBUG_COLLECTIVES='{text}' on this process")
    monkeypatch.setenv("MPIDHT_DEBUG_COLLECTIVES", "0")
    with mpidht.Table(comm, 8, 8, 4096) as t:
        t.global_stats()


def test_setting_read_as_the_library_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound of the agreement before create is the library's own
    reading of the setting (strtod: 0x2 is 2 s; float() refused it)."""
    from mpidht.table import _debug_seconds

    for text, seconds in [("0x2", 2.0), (" 1.5 ", 1.5), ("0", None), ("", None),
                          ("soon", None), ("1_0", None)]:
        monkeypatch.setenv("MPIDHT_DEBUG_COLLECTIVES", text)
        assert _debug_seconds() == seconds, text


def test_setting_on_some_processes_only(comm: MPI.Intracomm,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The debug mode set on process 0 only is refused on every process
    with ERR_DEBUG_SETTING, as by the library's create, instead of leaving
    the others waiting (a blocking agreement where the mode was off did not
    match the bounded, nonblocking one where it was on)."""
    if comm.size == 1:
        pytest.skip("needs 2 processes or more")
    if comm.rank == 0:
        monkeypatch.setenv("MPIDHT_DEBUG_COLLECTIVES", str(SECONDS))
    else:
        monkeypatch.delenv("MPIDHT_DEBUG_COLLECTIVES", raising=False)
    with pytest.raises(mpidht.Error) as e:
        mpidht.Table(comm, 8, 8, 4096)
    assert e.value.status == mpidht.Status.ERR_DEBUG_SETTING
    monkeypatch.delenv("MPIDHT_DEBUG_COLLECTIVES", raising=False)
    with mpidht.Table(comm, 8, 8, 4096) as t:
        assert t.global_stats()["writes"] == 0


@pytest.mark.parametrize("hashed", [False, True])
def test_create_one_process_never_enters(comm: MPI.Intracomm, debug: None,
                                         hashed: bool) -> None:
    """A create that process 0 never enters fails on the others within the
    time, with a hash function or without: the agreement on it before the
    library's create is bounded too (unbounded, it waited for ever)."""
    if comm.size == 1:
        pytest.skip("needs 2 processes or more")
    # Not freed afterwards: Open MPI may still progress the others' agreement
    # on it, and freeing it under that crashed the next Barrier (signal 11).
    lone = comm.Dup()
    if comm.rank != 0:
        with pytest.raises(mpidht.Error) as e:
            mpidht.Table(lone, 8, 8, 4096, hash=(lambda key: 7) if hashed else None)
        assert e.value.status == mpidht.Status.ERR_COLLECTIVE_CHECK
        assert f"mpidht_create: after {SECONDS} s, not all {comm.size} processes" in str(e.value)
    comm.Barrier()
    if comm.rank == 0:  # completes the others' abandoned agreement, as a late comer would
        # The lowest rank refused (none), key_dtype's number (none: 0) and its
        # negation.
        late = np.array([comm.size, 0, 0], dtype=np.int64)
        lone.Iallreduce(late.copy(), late, op=MPI.MIN).Wait()  # (no blocking one matches)
        assert late[0] == comm.size  # nobody had failed
