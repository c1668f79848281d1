"""File errors say what and where: the message of a failed dump or restore
ends with the file's path and the reason MPI or the system gave, on every
process, and the status stays the library's."""

import pytest
from mpi4py import MPI

import mpidht

from conftest import shared_tmp


def test_restore_from_a_missing_file_names_it(comm: MPI.Intracomm, protocol: str,
                                              tmp_path_factory: pytest.TempPathFactory) -> None:
    missing = shared_tmp(tmp_path_factory, "files", comm) / "no-such.mpidht"
    with mpidht.Table(comm, 8, 8, 1 << 16, protocol=protocol) as t:
        with pytest.raises(mpidht.Error) as e:
            t.restore(missing)
        assert e.value.status == mpidht.Status.ERR_FILE_IO
        text = str(e.value)
        assert text.startswith(mpidht.strerror(mpidht.Status.ERR_FILE_IO))
        assert str(missing) in text and ("cannot open" in text or "another process" in text)
        comm.Barrier()


def test_dump_into_a_missing_directory_names_it(comm: MPI.Intracomm,
                                                tmp_path_factory: pytest.TempPathFactory) -> None:
    nowhere = shared_tmp(tmp_path_factory, "files", comm) / "no-such-dir" / "t.mpidht"
    with mpidht.Table(comm, 8, 8, 1 << 16) as t:
        with pytest.raises(mpidht.Error) as e:
            t.dump(nowhere)
        assert e.value.status == mpidht.Status.ERR_FILE_IO
        assert str(nowhere) in str(e.value)
        # A later success leaves no detail behind.
        good = nowhere.parent.parent / "good.mpidht"
        t.dump(good)
        assert t.restore(good).entries == 0
        comm.Barrier()


@pytest.mark.parametrize("bad, error", [("t\0.mpidht", ValueError), (42, TypeError)])
def test_a_path_refused_on_one_process_reaches_the_others(
        comm: MPI.Intracomm, tmp_path_factory: pytest.TempPathFactory, bad: object,
        error: type[BaseException]) -> None:
    """A path that is none on the last process (an embedded NUL, an int)
    raises there, and ERR_PEER on the others instead of leaving them
    waiting in the collective call; the table stays usable."""
    good = shared_tmp(tmp_path_factory, "files", comm) / "t.mpidht"
    last = comm.Get_rank() == comm.Get_size() - 1
    with mpidht.Table(comm, 8, 8, 1 << 16) as t:
        for call in (t.dump, t.restore):
            if last:
                with pytest.raises(error):
                    call(bad)  # type: ignore[arg-type]
            else:
                with pytest.raises(mpidht.Error) as e:
                    call(good)
                assert e.value.status == mpidht.Status.ERR_PEER
        t.dump(good)
        assert t.restore(good).entries == 0
