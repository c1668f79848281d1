"""The simulator's interpolating surrogate ([interp]) on PHREEQC's own
results: a miss near computed results is predicted within tolerance; the
verified fraction is computed by PHREEQC too and its error recorded;
neighbours that break conservation are refused and the cell computed; a
small coupled run accounts for every cell."""

import json
from typing import Any

import numpy as np
import pytest
from mpi4py import MPI

from mpidht_sim.config import Config, load
from mpidht_sim.driver import CHECKS, ChemistryWorker, run
from mpidht_sim.measure import compare
from mpidht_sim.output import spent_budget
from mpidht_sim.surrogate import CONSERVED, variable_scales
from mpidht_sim.validate import main as validate_main
from mpidht_sim.variables import AQUEOUS, VARIABLES

from conftest import shared_tmp


def config(**extra: Any) -> Config:
    overrides = {"grid.nx": 6, "grid.ny": 6, "time.iterations": 8,
                 "run.package_size": 5, "run.save_every": 4, "interp.enabled": True,
                 "interp.verify": 0.0, "interp.tolerance": 1e-4, **extra}
    return load(None, overrides)


def mixed_state(cfg: Config, fraction: float) -> np.ndarray:
    """The initial water mixed with the injected one, calcite as at the start."""
    state = np.array([cfg.initial[v] for v in VARIABLES])
    for v in AQUEOUS:
        i = VARIABLES.index(v)
        state[i] = (1 - fraction) * state[i] + fraction * cfg.injected[v]
    return state


def around(state: np.ndarray, count: int, spread: float) -> np.ndarray:
    rng = np.random.default_rng(5)
    return state * (1 + spread * rng.uniform(-1, 1, size=(count, state.size)))


@pytest.fixture
def worker() -> Any:
    w = ChemistryWorker(config(), MPI.COMM_SELF)
    yield w
    w.close()


def publish_neighbours(w: ChemistryWorker, query: np.ndarray, dt: float) -> np.ndarray:
    samples = around(query, 16, 1e-3)
    results = w.chemistry.react(samples, dt)
    assert w.near is not None
    w.near.publish(samples, results, dt)
    return results


@pytest.mark.one_process
def test_a_miss_near_computed_results_is_interpolated(worker: ChemistryWorker) -> None:
    cfg = config()
    dt = cfg.time_step
    query = mixed_state(cfg, 0.3)
    publish_neighbours(worker, query, dt)
    out, counts, _ = worker.react(query[None], dt)
    assert (counts.hits, counts.interpolated, counts.misses) == (0, 1, 0)
    assert counts.checks[CHECKS.index("accepted")] == 1
    true = worker.chemistry.react(query[None], dt)
    scales = variable_scales(cfg)
    assert (np.abs(out - true)[0] / scales).max() <= 10 * cfg.interp.tolerance
    # What the reaction conserves, the prediction keeps (to PHREEQC's own
    # 1.6e-6).
    residual = np.abs((out - query[None]) @ CONSERVED.T)
    assert (residual <= 1e-5 * (np.abs(query) @ CONSERVED.T)).all()


@pytest.mark.one_process
def test_verified_predictions_use_phreeqc_and_record_the_error() -> None:
    cfg = config(**{"interp.verify": 1.0})
    w = ChemistryWorker(cfg, MPI.COMM_SELF)
    try:
        dt = cfg.time_step
        query = mixed_state(cfg, 0.3)
        publish_neighbours(w, query, dt)
        out, counts, _ = w.react(query[None], dt)
        assert (counts.interpolated, counts.verified, counts.misses) == (0, 1, 1)
        true = w.chemistry.react(query[None], dt)
        assert np.allclose(out, true, rtol=1e-12, atol=0)   # PHREEQC's result is used
        _, _, verification = w.end()
        assert verification.count == 1
        assert 0 < (verification.max_abs / variable_scales(cfg)).max() <= 10 * cfg.interp.tolerance
    finally:
        w.close()


@pytest.mark.one_process
def test_neighbours_that_break_conservation_are_refused(worker: ChemistryWorker) -> None:
    cfg = config()
    dt = cfg.time_step
    query = mixed_state(cfg, 0.3)
    samples = around(query, 16, 1e-3)
    results = worker.chemistry.react(samples, dt)
    results[:, VARIABLES.index("Ca")] *= 1 + 1e-3   # Ca from nowhere
    assert worker.near is not None
    worker.near.publish(samples, results, dt)
    out, counts, _ = worker.react(query[None], dt)
    assert counts.interpolated == 0 and counts.misses == 1
    assert counts.checks[CHECKS.index("conservation")] == 1
    assert np.allclose(out, worker.chemistry.react(query[None], dt), rtol=1e-12, atol=0)
    # The computed result is published beside the 16 bad samples.
    inputs, _, count = worker.near.lookup(query[None], dt)
    assert count[0] == 17 and (inputs[0, :17] == query).all(axis=1).any()


COUPLED = {"grid.nx": 10, "grid.ny": 10, "interp.min_neighbours": 4, "interp.method": "idw",
           "interp.estimate": "leave-one-out"}


@pytest.fixture(scope="module")
def reference() -> Any:
    """The coupled run of COUPLED's grid without the DHT (collective)."""
    return run(config(**{**COUPLED, "dht.enabled": False}), MPI.COMM_WORLD)


def test_a_coupled_run_accounts_for_every_cell(reference: Any) -> None:
    """Every cell is a hit, a prediction or a miss, and the accepted
    predictions (half of them verified) are used. Which results a
    prediction finds depends on the order in which the workers publish
    theirs, which varies from run to run with more than one worker, so no
    error figure is exact; the bound is the one a single prediction is
    held to above (10x the tolerance): a prediction of the wrong
    variable, cell or time step is off by orders of magnitude more (the
    worst cell seen was 2.7e-5 of its variable's maximum in 8 runs at 4
    processes, 1.5e-5 at 1 and 2)."""
    comm = MPI.COMM_WORLD
    cfg = config(**{**COUPLED, "interp.verify": 0.5})
    result = run(cfg, comm)
    if comm.Get_rank() != 0:
        return
    cells = sum(r.hits + r.interpolated + r.misses for r in result.records)
    assert cells == 8 * (100 - 2)
    for r in result.records:
        assert r.checks[0] == r.interpolated + r.verified
    assert sum(r.interpolated for r in result.records) > 0
    assert result.verification is not None and result.final is not None
    assert result.verification.count == sum(r.verified for r in result.records) > 0
    worst = compare(result.saved, reference.saved).worst_max[0]
    assert 0 < worst <= 10 * cfg.interp.tolerance
    assert np.isfinite(result.final).all()
    assert (result.final[:, [VARIABLES.index(v) for v in ("calcite", "dolomite")]] >= 0).all()


def test_a_coupled_run_verifying_every_prediction_is_phreeqc_s_own(reference: Any) -> None:
    """With interp.verify = 1 every accepted prediction is also computed
    and PHREEQC's result used; with exact keys of 15 digits a hit's input
    is the cell's own: the run is the run without the DHT, whatever the
    order of the packages."""
    comm = MPI.COMM_WORLD
    digits = {f"dht.digits.{v}": 15 for v in VARIABLES}
    result = run(config(**{**COUPLED, **digits, "interp.verify": 1.0}), comm)
    if comm.Get_rank() != 0:
        return
    assert sum(r.interpolated for r in result.records) == 0
    accepted = sum(r.checks[0] for r in result.records)
    assert result.verification is not None and result.verification.count == accepted > 0
    assert compare(result.saved, reference.saved).worst_max[0] <= 1e-12


@pytest.mark.one_process
def test_interpolated_cells_are_not_stored_as_exact_entries(worker: ChemistryWorker) -> None:
    """An accepted prediction is not written to the exact table: only
    PHREEQC's results are, so errors do not compound through it."""
    cfg = config()
    dt = cfg.time_step
    query = mixed_state(cfg, 0.3)
    publish_neighbours(worker, query, dt)
    worker.react(query[None], dt)
    assert worker.table is not None
    _, found = worker.table.read_many(worker.surrogate.keys(query[None], dt))
    assert not found[0]


def test_tradeoff_sweep(tmp_path_factory: pytest.TempPathFactory,
                        capsys: pytest.CaptureFixture[str]) -> None:
    """validate --tradeoff runs exact keys at each digits and interpolation
    at each tolerance against one reference, and writes the table and the
    figure (on a tiny grid here)."""
    comm = MPI.COMM_WORLD
    out = shared_tmp(tmp_path_factory, "tradeoff", comm)
    args = ["--set", "grid.nx=5", "--set", "grid.ny=5", "--set", "time.iterations=4",
            "--set", "interp.min_neighbours=4", "--tradeoff", "--digits", "3", "5",
            "--tolerances", "1e-4", "1e-2", "--out", str(out)]
    assert validate_main(args) == 0
    printed = capsys.readouterr().out
    if comm.Get_rank() != 0:
        return
    assert printed.count(": running") == 4
    text = (out / "tradeoff.md").read_text()
    workers = max(comm.Get_size() - 1, 1)  # 23 of 25 cells react
    assert f"packages of {23 if workers == 1 else -(-23 // (4 * workers))} cells" in text
    assert sum(line.startswith("| exact keys |") for line in text.splitlines()) == 2
    assert sum(line.startswith("| interpolation |") for line in text.splitlines()) == 2
    data = json.loads((out / "tradeoff.json").read_text())
    assert set(data) == {"exact_3", "exact_5", "interp_0.0001", "interp_0.01"}
    for row in data.values():
        assert row["phreeqc_ratio"] >= 1.0 and row["worst_rms_term"] >= 0
    assert data["exact_3"]["interpolated_share"] == 0.0
    assert (out / "tradeoff.png").stat().st_size > 0


@pytest.mark.one_process
def test_a_prediction_past_its_cells_budget_is_computed() -> None:
    """interp.budget: a used prediction adds its error estimates to what
    its cell has spent; one that would take the cell past the budget in
    any variable is computed by PHREEQC instead (check "budget"), its
    result used and nothing spent."""
    cfg = config(**{"interp.budget": 1e-3})
    w = ChemistryWorker(cfg, MPI.COMM_SELF)
    try:
        dt = cfg.time_step
        query = mixed_state(cfg, 0.3)
        publish_neighbours(w, query, dt)
        scales = variable_scales(cfg)
        limit = cfg.interp.budget * scales
        spent = np.zeros((1, len(VARIABLES)))
        _, counts, after = w.react(query[None], dt, spent)
        assert (counts.interpolated, counts.misses) == (1, 0)
        assert after is not None and not spent.any()  # the argument left as it was
        estimate = after[0]
        assert (estimate >= 0).all() and (estimate > 0).any()
        assert (estimate <= cfg.interp.tolerance * scales).all()
        # Room for twice this estimate in all but one variable (all of the
        # budget spent where the estimate is 0), for half of it in that one.
        k = int(np.argmax(estimate / limit))
        spent = (limit - 2 * estimate)[None]
        spent[0, k] = limit[k] - estimate[k] / 2
        before = spent.copy()
        out, counts, after = w.react(query[None], dt, spent)
        assert (counts.interpolated, counts.misses) == (0, 1)
        assert counts.checks[CHECKS.index("budget")] == 1
        assert counts.checks[CHECKS.index("accepted")] == 0
        assert after is not None and np.array_equal(after, before)
        assert np.allclose(out, w.chemistry.react(query[None], dt), rtol=1e-12, atol=0)
    finally:
        w.close()


def test_a_coupled_run_keeps_every_cell_within_its_budget(reference: Any) -> None:
    """Over a coupled run (the packages go to the workers and come back
    with what their cells spent), no cell spends more than interp.budget
    in any variable; a budget below any estimate uses no prediction."""
    comm = MPI.COMM_WORLD
    budget = 5e-5
    cfg = config(**{**COUPLED, "interp.budget": budget})
    result = run(cfg, comm)
    tight = run(config(**{**COUPLED, "interp.budget": 1e-12}), comm)
    if comm.Get_rank() != 0:
        return
    assert result.spent is not None and tight.spent is not None
    assert sum(r.interpolated for r in result.records) > 0
    limit = budget * variable_scales(cfg)
    assert (result.spent <= limit * (1 + 1e-9)).all()
    assert (result.spent.max(axis=0) > 0).any()
    # Some cell came close: the budget, not the checks, stopped predictions.
    assert sum(r.checks[CHECKS.index("budget")] for r in result.records) > 0
    assert sum(r.interpolated for r in tight.records) == 0
    assert sum(r.checks[CHECKS.index("budget")] for r in tight.records) > 0
    assert not tight.spent.any()
    # Without predictions nothing is kept, carried or reported.
    assert reference.spent is None and spent_budget(reference, cfg) is None
    # What the run reports (summary.json's "budget"): the most any cell spent.
    reported = spent_budget(result, cfg)
    assert reported is not None and reported["budget"] == budget
    most = np.array([reported["largest_spent"][v] for v in VARIABLES])
    assert np.allclose(most, result.spent.max(axis=0) / variable_scales(cfg), rtol=1e-12)
    assert 0 < most.max() <= budget * (1 + 1e-9)
