"""Importing mpidht refuses an mpi4py that uses another MPI library than
the extension was built with (communicator handles pass between them as
plain values): the check compares the libraries' names and versions, the
part of MPI_Get_library_version before its first comma or line break."""

import pytest

from mpi4py import MPI

from mpidht import _core, table

# Version strings only: no communicator.
pytestmark = pytest.mark.one_process

OPEN_MPI_4 = ("Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, "
              "May 26, 2022")
OPEN_MPI_5 = "Open MPI v5.0.3, package: Open MPI builder, ident: 5.0.3, repo rev: v5.0.3"
MPICH = ("MPICH Version:      4.0.2\nMPICH Release date: Thu Mar 31 11:10:07 CDT 2022\n"
         "MPICH ABI:          14:2:2")


def check_with(monkeypatch: pytest.MonkeyPatch, ours: str, theirs: str) -> None:
    monkeypatch.setattr(_core, "mpi_library_version", lambda: ours)
    monkeypatch.setattr(MPI, "Get_library_version", lambda: theirs)
    table._check_same_mpi()


@pytest.mark.parametrize("ours, theirs", [
    (OPEN_MPI_4, MPICH), (MPICH, OPEN_MPI_4), (OPEN_MPI_4, OPEN_MPI_5), (OPEN_MPI_5, OPEN_MPI_4),
    (MPICH, MPICH.replace("4.0.2", "4.1.1"))])
def test_another_library_is_refused(monkeypatch: pytest.MonkeyPatch, ours: str,
                                    theirs: str) -> None:
    with pytest.raises(ImportError, match="different MPI library") as refused:
        check_with(monkeypatch, ours, theirs)
    message = str(refused.value)
    assert ours.splitlines()[0] in message and theirs.splitlines()[0] in message


@pytest.mark.parametrize("ours, theirs", [
    (OPEN_MPI_4, OPEN_MPI_4.replace("Debian OpenMPI", "another build")),
    (MPICH, MPICH.replace("Thu Mar 31", "Fri Apr 1"))])
def test_same_library_and_version_is_accepted(monkeypatch: pytest.MonkeyPatch, ours: str,
                                              theirs: str) -> None:
    check_with(monkeypatch, ours, theirs)
