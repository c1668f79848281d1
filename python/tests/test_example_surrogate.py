"""examples/python/surrogate.py, the surrogate outside the simulator: every
state is accounted for once, interpolation takes part, and the verified
error stays near the tolerance the example asks for."""

from types import ModuleType

import pytest
from mpi4py import MPI

from conftest import load_script


def load() -> ModuleType:
    return load_script("surrogate_example", "examples/python/surrogate.py")


def test_example_runs_and_accounts_for_every_state() -> None:
    comm = MPI.COMM_WORLD
    figures = load().main(["--states", "600", "--batch", "50"])
    if comm.Get_rank() != 0:
        return
    total = figures["hits"] + figures["interpolated"] + figures["computed"]
    assert total == 600 * comm.Get_size()
    assert figures["interpolated"] > 0 and figures["computed"] > 0
    # The example's tolerance is 2e-4 on a leave-one-out estimate, not a
    # bound; the verified error stays within ten times it.
    assert figures["worst"] <= 2e-3


def test_example_cuts_the_last_batch() -> None:
    """--states that is no multiple of --batch: the last call takes what is
    left (it took a whole batch, 150 states for 130)."""
    figures = load().main(["--states", "130", "--batch", "50"])
    if MPI.COMM_WORLD.Get_rank() == 0:
        total = figures["hits"] + figures["interpolated"] + figures["computed"]
        assert total == 130 * MPI.COMM_WORLD.Get_size()


def test_example_refuses_counts_below_one(capsys: pytest.CaptureFixture[str]) -> None:
    """--batch 0 was a traceback and a negative count ran nothing with exit
    status 0; both are usage errors."""
    for args, says in ((["--batch", "0"], "must be at least 1, got 0"),
                       (["--states", "-100"], "must be at least 1, got -100"),
                       (["--batch", "x"], "not a whole number: 'x'")):
        with pytest.raises(SystemExit) as e:
            load().main(args)
        assert e.value.code == 2
        assert says in capsys.readouterr().err
