"""The interpolating surrogate (mpidht.interp): each acceptance check on a
case built to fail it (and its twin that passes), both methods, online
verification, and the shared neighbour table under concurrent publishing
from every process into one class."""

import dataclasses
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from mpi4py import MPI

from mpidht.interp import (Check, Estimate, Method, Neighbours, Prediction, Settings,
                           Verification, predict_from)
from mpidht.keys import KeyColumn, Rounding

Array = npt.NDArray[np.float64]
#: Three plain columns (no log): distances in the values' own units.
PLAIN = [KeyColumn(Rounding.SIGNIFICANT, 1)] * 3
#: A linear change: y = x + A x + b.
A = np.array([[0.01, 0.02, 0.0], [0.0, -0.01, 0.03], [0.02, 0.0, -0.02]])
B = np.array([0.001, -0.002, 0.0005])


def step(x: Array) -> Array:
    out: Array = x + x @ A.T + B
    return out


def cloud(centre: Array, count: int, spread: float, seed: int = 1) -> Array:
    rng = np.random.default_rng(seed)
    out: Array = centre + spread * rng.uniform(-1.0, 1.0, size=(count, centre.size))
    return out


def one(query: Array, samples: Array, results: Array, settings: Settings,
        columns: list[KeyColumn] = PLAIN) -> Prediction:
    """Predicts one query from its samples (one class)."""
    return predict_from(query[None, :], samples[None], results[None], [samples.shape[0]],
                        columns, settings)


CENTRE = np.array([1.0, 2.0, 3.0])


@pytest.mark.parametrize("method", list(Method))
def test_accepts_a_smooth_model_and_predicts_it(method: Method) -> None:
    xs = cloud(CENTRE, 12, 0.05)
    p = one(CENTRE, xs, step(xs),
            Settings(method=method, min_neighbours=4, tolerance=1e-2, radius=1.0))
    assert p.check[0] == Check.ACCEPTED
    assert p.used[0] == 12
    true = step(CENTRE)
    # LINEAR reproduces a linear change; IDW errs at most by the spread of
    # the change over the samples.
    bound = 1e-10 if method is Method.LINEAR else 0.05 * np.abs(A).sum(axis=1).max() * 2
    assert np.abs(p.values[0] - true).max() <= bound
    assert (p.estimate[0] <= 1e-2).all()


def test_a_sample_at_the_query_gives_its_own_result() -> None:
    xs = cloud(CENTRE, 6, 0.05)
    xs[3] = CENTRE
    ys = step(xs)
    ys[3] += 1e-4  # not on the smooth model: IDW must still return it
    p = one(CENTRE, xs, ys, Settings(method=Method.IDW, min_neighbours=4, tolerance=1.0,
                                     radius=1.0))
    assert p.check[0] == Check.ACCEPTED
    assert np.allclose(p.values[0], ys[3], rtol=0, atol=1e-15)


def test_too_few_samples_in_the_class() -> None:
    xs = cloud(CENTRE, 3, 0.05)
    p = one(CENTRE, xs, step(xs), Settings(min_neighbours=4, tolerance=1e-2, radius=1.0))
    assert p.check[0] == Check.FEW_NEIGHBOURS
    assert np.isnan(p.values[0]).all()
    # Slots past the count are ignored, whatever they hold.
    padded = np.vstack([xs, np.tile(CENTRE, (5, 1))])
    q = predict_from(CENTRE[None], padded[None], step(padded)[None], [3], PLAIN,
                     Settings(min_neighbours=4, tolerance=1e-2, radius=1.0))
    assert q.check[0] == Check.FEW_NEIGHBOURS


def test_a_query_too_far_from_the_samples() -> None:
    xs = cloud(CENTRE, 8, 0.05)
    far = CENTRE + np.array([0.0, 0.0, 0.3])  # one column beyond the radius
    p = one(far, xs, step(xs), Settings(min_neighbours=4, tolerance=1.0, radius=0.2))
    assert p.check[0] == Check.TOO_FAR
    near = one(CENTRE, xs, step(xs), Settings(min_neighbours=4, tolerance=1.0, radius=0.2))
    assert near.check[0] == Check.ACCEPTED


def test_a_query_outside_the_samples_box() -> None:
    """Within the radius, but beyond the samples' range in one column: a
    prediction there would extrapolate."""
    xs = cloud(CENTRE, 8, 0.05)
    beyond = CENTRE + np.array([0.0, 0.08, 0.0])
    strict = Settings(min_neighbours=4, tolerance=1.0, radius=1.0)
    assert one(beyond, xs, step(xs), strict).check[0] == Check.OUTSIDE
    assert one(CENTRE, xs, step(xs), strict).check[0] == Check.ACCEPTED
    lax = Settings(min_neighbours=4, tolerance=1.0, radius=1.0, extrapolation=1.0)
    assert one(beyond, xs, step(xs), lax).check[0] == Check.ACCEPTED
    # A column the samples share must match them.
    flat = xs.copy()
    flat[:, 1] = 2.0
    assert one(CENTRE + np.array([0, 1e-6, 0]), flat, step(flat), lax).check[0] == Check.OUTSIDE
    assert one(CENTRE, flat, step(flat), lax).check[0] == Check.ACCEPTED


def test_distance_on_log10_of_logged_columns() -> None:
    logged = [KeyColumn(Rounding.SIGNIFICANT, 1, log=True, floor=1e-12)] * 3
    xs = CENTRE * 1e-4 * (1 + 0.01 * np.arange(6))[:, None]
    # 5 % above the largest sample: log10 distance 0.02 (within 0.05), but
    # 1.5e-5 in plain units, which no plain radius of 1e-6 admits.
    q = xs[-1] * 1.05
    settings = Settings(min_neighbours=4, tolerance=1.0, radius=0.05, extrapolation=np.inf)
    ok = one(q, xs, step(xs), settings, logged)
    assert ok.check[0] == Check.ACCEPTED
    far = one(q * 2, xs, step(xs), settings, logged)
    assert far.check[0] == Check.TOO_FAR
    # At or below the floor a column is the floor's; NaN is no value at
    # all: a NaN query or sample is never near, not taken for the floor.
    floored = [KeyColumn(Rounding.SIGNIFICANT, 1, log=True, floor=1e-4)] * 3
    at_floor = np.full((6, 3), 1e-4) * (1 + 0.01 * np.arange(6))[:, None]
    below = np.array([0.0, 1e-4, 1e-4])
    assert one(below, at_floor, step(at_floor), settings, floored).check[0] == Check.ACCEPTED
    nan = np.array([np.nan, 1e-4, 1e-4])
    assert one(nan, at_floor, step(at_floor), settings, floored).check[0] == Check.TOO_FAR
    with_nan = at_floor.copy()
    with_nan[:3, 0] = np.nan  # three of six samples: fewer than 4 within
    p = one(at_floor[0], with_nan, step(with_nan), settings, floored)
    assert p.check[0] == Check.TOO_FAR


def test_a_mineral_appearing_in_some_samples_rejects() -> None:
    xs = cloud(CENTRE, 8, 0.05)
    xs[:, 2] = 0.0          # column 2: a mineral absent in every input
    ys = step(xs)
    ys[:, 2] = 0.0          # ...and in every result
    settings = Settings(min_neighbours=4, presence=[2], tolerance=1e-2, radius=1.0)
    query = CENTRE.copy()
    query[2] = 0.0
    assert one(query, xs, ys, settings).check[0] == Check.ACCEPTED
    ys[:3, 2] = 1e-6        # precipitates in three of the samples
    assert one(query, xs, ys, settings).check[0] == Check.PRESENCE


def test_samples_of_other_minerals_present_are_dropped() -> None:
    xs = cloud(CENTRE, 8, 0.05)
    ys = step(xs)
    query = CENTRE.copy()
    query[2] = 0.0          # the query has none of mineral 2; every sample has some
    settings = Settings(min_neighbours=4, presence=[2], tolerance=1.0, radius=5.0,
                        extrapolation=np.inf)
    assert one(query, xs, ys, settings).check[0] == Check.PRESENCE
    xs[:5, 2], ys[:5, 2] = 0.0, 0.0  # five samples without it: those are used
    p = one(query, xs, ys, settings)
    assert p.check[0] == Check.ACCEPTED and p.used[0] == 5


@pytest.mark.parametrize("method", list(Method))
def test_scattered_samples_fail_the_error_estimate(method: Method) -> None:
    xs = cloud(CENTRE, 14, 0.05)
    ys = step(xs) + np.random.default_rng(7).normal(0.0, 1e-3, size=xs.shape)
    tight = Settings(method=method, min_neighbours=4, tolerance=1e-4, radius=1.0)
    p = one(CENTRE, xs, ys, tight)
    assert p.check[0] == Check.ERROR_ESTIMATE
    assert (p.estimate[0] > 1e-4).any()
    loose = Settings(method=method, min_neighbours=4, tolerance=1.0, radius=1.0)
    assert one(CENTRE, xs, ys, loose).check[0] == Check.ACCEPTED


def test_linear_with_too_few_samples_for_its_fit_rejects() -> None:
    """Four samples in three columns: every sample is needed by the fit, so
    leave-one-out cannot estimate the error."""
    xs = cloud(CENTRE, 4, 0.05)
    p = one(CENTRE, xs, step(xs),
            Settings(method=Method.LINEAR, min_neighbours=4, tolerance=1e-2, radius=1.0))
    assert p.check[0] == Check.ERROR_ESTIMATE


def test_linear_prediction_and_leave_one_out_are_those_of_refits() -> None:
    """Without a ridge, the fit's intercept is the least-squares one and each
    sample's leave-one-out error is that of a fit without the sample."""
    rng = np.random.default_rng(3)
    xs = cloud(CENTRE, 12, 0.05)
    ys = step(xs) + rng.normal(0.0, 1e-4, size=xs.shape)
    p = one(CENTRE, xs, ys, Settings(method=Method.LINEAR, min_neighbours=4, tolerance=1.0,
                                     radius=1.0, ridge=0.0))
    assert p.check[0] == Check.ACCEPTED

    def fit(rows: npt.NDArray[np.bool_]) -> Array:
        a = np.hstack([np.ones((int(rows.sum()), 1)), xs[rows] - CENTRE])
        beta: Array = np.linalg.lstsq(a, (ys - xs)[rows], rcond=None)[0]
        return beta

    assert np.allclose(p.values[0], CENTRE + fit(np.ones(12, dtype=bool))[0],
                       rtol=0, atol=1e-12)
    loo = np.zeros(3)
    for j in range(12):
        rows = np.arange(12) != j
        beta = fit(rows)
        left_out = beta[0] + (xs[j] - CENTRE) @ beta[1:]
        loo = np.maximum(loo, np.abs(left_out - (ys[j] - xs[j])))
    assert np.allclose(p.estimate[0], loo, rtol=1e-6, atol=1e-15)


def test_linear_without_a_ridge_on_samples_that_fix_no_slope_rejects() -> None:
    """A column in which neither the samples nor the query vary leaves the
    fit singular without a ridge: the query is rejected, nothing raises."""
    xs = cloud(CENTRE, 12, 0.05)
    xs[:, 2] = CENTRE[2]
    p = one(CENTRE, xs, step(xs), Settings(method=Method.LINEAR, min_neighbours=4,
                                           tolerance=1.0, radius=1.0, ridge=0.0))
    assert p.check[0] == Check.ERROR_ESTIMATE
    assert np.isinf(p.estimate[0]).all()
    # With the default ridge the same samples predict the linear change.
    p = one(CENTRE, xs, step(xs), Settings(method=Method.LINEAR, min_neighbours=4,
                                           tolerance=1e-2, radius=1.0))
    assert p.check[0] == Check.ACCEPTED
    assert np.abs(p.values[0] - step(CENTRE)).max() <= 1e-9


def standard_error(xs: Array, ys: Array, query: Array) -> Array:
    """The intercept's standard error of the least-squares fit of the
    change, linear around the query, per column (NumPy, no ridge)."""
    a = np.hstack([np.ones((xs.shape[0], 1)), xs - query])
    beta, *_ = np.linalg.lstsq(a, ys - xs, rcond=None)
    rss = (((ys - xs) - a @ beta) ** 2).sum(axis=0)
    spread = np.linalg.inv(a.T @ a)[0, 0]
    out: Array = np.sqrt(rss / (xs.shape[0] - a.shape[1]) * spread)
    return out


def test_the_standard_error_estimate_is_that_of_the_fit() -> None:
    """STANDARD_ERROR: interval times sqrt(RSS / (n - p) * (M^-1)_00) per
    column, and accepted or rejected by it against the tolerance."""
    rng = np.random.default_rng(5)
    xs = cloud(CENTRE, 16, 0.05)
    ys = step(xs) + rng.normal(0.0, 1e-4, size=xs.shape)
    se = standard_error(xs, ys, CENTRE)
    settings = Settings(method=Method.LINEAR, min_neighbours=4, radius=1.0, ridge=0.0,
                        estimate=Estimate.STANDARD_ERROR, interval=2.5, tolerance=1.0)
    p = one(CENTRE, xs, ys, settings)
    assert p.check[0] == Check.ACCEPTED
    assert np.allclose(p.estimate[0], 2.5 * se, rtol=1e-8, atol=0)
    # A tolerance just below the estimate in one column rejects.
    tight = 2.5 * se.copy()
    tight[1] *= 0.99
    q = one(CENTRE, xs, ys, dataclasses.replace(settings, tolerance=tight))
    assert q.check[0] == Check.ERROR_ESTIMATE


def test_the_standard_error_grows_where_the_fit_extrapolates() -> None:
    """The same samples and scatter: a query beyond them (the box check
    off) gets a larger standard error than one among them, and the
    tolerance that accepts the one rejects the other."""
    rng = np.random.default_rng(6)
    xs = cloud(CENTRE, 16, 0.05)
    ys = step(xs) + rng.normal(0.0, 1e-4, size=xs.shape)
    settings = Settings(method=Method.LINEAR, min_neighbours=4, radius=1.0,
                        extrapolation=np.inf, estimate=Estimate.STANDARD_ERROR, tolerance=1.0)
    inside = one(CENTRE, xs, ys, settings)
    beyond = one(CENTRE + 0.3, xs, ys, settings)
    assert (beyond.estimate[0] > 3 * inside.estimate[0]).all()
    tight = dataclasses.replace(settings, tolerance=1.5 * inside.estimate[0])
    assert one(CENTRE, xs, ys, tight).check[0] == Check.ACCEPTED
    assert one(CENTRE + 0.3, xs, ys, tight).check[0] == Check.ERROR_ESTIMATE


def test_only_the_nearest_neighbours_are_used() -> None:
    """Twelve samples near the query on the linear model, twelve far ones
    off it: with neighbours = 12 the prediction uses the near ones only
    (exact, accepted); with all 24 the far ones spoil the fit and its
    estimate rejects it."""
    near = cloud(CENTRE, 12, 0.02, seed=2)
    far = cloud(CENTRE, 12, 0.4, seed=3)
    far = far[np.abs(far - CENTRE).max(axis=1) > 0.1]
    xs = np.vstack([far, near])  # the near ones last: the order must not matter
    ys = step(xs)
    ys[:far.shape[0]] += 0.01 * ((xs[:far.shape[0]] - CENTRE) ** 2).sum(axis=1)[:, None]
    settings = Settings(method=Method.LINEAR, min_neighbours=4, radius=1.0, tolerance=1e-6,
                        slots=32, neighbours=12)
    p = one(CENTRE, xs, ys, settings)
    assert p.check[0] == Check.ACCEPTED and p.used[0] == 12
    assert np.abs(p.values[0] - step(CENTRE)).max() <= 1e-10
    q = one(CENTRE, xs, ys, dataclasses.replace(settings, neighbours=0))
    assert q.check[0] == Check.ERROR_ESTIMATE and q.used[0] == xs.shape[0]


def test_the_nearest_are_chosen_among_samples_that_pass_radius_and_presence() -> None:
    """The samples nearest to the query but beyond the radius, or with
    another mineral present, are not among the neighbours used: the next
    nearest are."""
    query = np.array([1.0, 2.0, 0.0])
    xs = cloud(query, 20, 0.05, seed=4)
    xs[:, 2] = 0.0
    closest = np.argsort(np.abs(xs - query).sum(axis=1))[:4]
    xs[closest[:2], 2] = 1e-3   # another mineral present: dropped
    ys = step(xs)
    ys[closest[:2]] += 1.0       # and far off the model: a fit with them would fail
    p = one(query, xs, ys, Settings(method=Method.LINEAR, min_neighbours=4, radius=1.0,
                                    tolerance=1e-8, neighbours=8, presence=[2], slots=20))
    assert p.check[0] == Check.ACCEPTED and p.used[0] == 8
    assert np.abs(p.values[0] - step(query)).max() <= 1e-10


def test_a_prediction_that_drives_an_amount_negative_rejects() -> None:
    xs = cloud(CENTRE, 8, 0.05)
    ys = step(xs)
    ys[:, 0] = xs[:, 0] - 1.2   # column 0 loses more than the query holds
    settings = Settings(min_neighbours=4, nonnegative=[0], tolerance=1.0, radius=1.0)
    assert one(CENTRE, xs, ys, settings).check[0] == Check.NEGATIVE
    assert one(CENTRE + np.array([0.5, 0, 0]), xs, ys,
               Settings(min_neighbours=4, nonnegative=[0], tolerance=1.0, radius=1.0,
                        extrapolation=np.inf)).check[0] == Check.ACCEPTED


def test_a_prediction_that_breaks_conservation_rejects() -> None:
    conserved = np.array([[1.0, 1.0, 0.0]])     # columns 0 + 1 are conserved
    xs = cloud(CENTRE, 8, 0.05)
    shift = np.array([1e-3, -1e-3, 2e-3])       # keeps x0 + x1
    ys = xs + shift
    settings = Settings(min_neighbours=4, conserved=conserved, conservation_rtol=1e-9,
                        tolerance=1.0, radius=1.0)
    assert one(CENTRE, xs, ys, settings).check[0] == Check.ACCEPTED
    ys[:, 0] += 1e-5                            # the samples gain 1e-5 of the sum
    p = one(CENTRE, xs, ys, settings)
    assert p.check[0] == Check.CONSERVATION
    # Within a tolerance the samples meet, the same prediction is accepted.
    lax = Settings(min_neighbours=4, conserved=conserved, conservation_rtol=1e-5,
                   tolerance=1.0, radius=1.0)
    assert one(CENTRE, xs, ys, lax).check[0] == Check.ACCEPTED


def test_checks_come_in_order_and_rows_are_independent() -> None:
    xs = cloud(CENTRE, 8, 0.05)
    ys = step(xs)
    queries = np.array([CENTRE, CENTRE + 5.0, CENTRE])
    inputs = np.stack([xs, xs, xs[:2].repeat(4, axis=0)])
    results = np.stack([ys, ys, ys[:2].repeat(4, axis=0)])
    p = predict_from(queries, inputs, results, [8, 8, 2], PLAIN,
                     Settings(min_neighbours=4, tolerance=1.0, radius=1.0,
                              extrapolation=np.inf))
    assert p.check.tolist() == [Check.ACCEPTED, Check.TOO_FAR, Check.FEW_NEIGHBOURS]
    assert p.accepted.tolist() == [True, False, False]


@pytest.mark.parametrize("bad", [dict(slots=0), dict(min_neighbours=13), dict(radius=0.0),
                                 dict(extrapolation=-0.1),
                                 dict(conservation_rtol=-1.0), dict(method="nearest"),
                                 dict(neighbours=3), dict(neighbours=13), dict(neighbours=2.5),
                                 dict(interval=0.0), dict(interval=np.inf),
                                 dict(estimate="bootstrap"),
                                 dict(estimate="standard-error", method="idw")])
def test_bad_settings_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Settings(**bad)


def test_bad_scale_or_tolerance_is_refused() -> None:
    xs = cloud(CENTRE, 6, 0.05)
    with pytest.raises(ValueError, match="scale"):
        one(CENTRE, xs, step(xs), Settings(scale=[1.0, 0.0, 1.0]))
    with pytest.raises(ValueError, match="tolerance"):
        one(CENTRE, xs, step(xs), Settings(tolerance=-1.0))


@pytest.mark.parametrize("weights", [[1.0, np.nan, 0.0], [np.inf, -1.0, 0.0]])
def test_conserved_weights_must_be_finite(weights: list[float]) -> None:
    """A NaN or infinite weight would turn the conservation check off
    (every comparison with NaN is false): refused."""
    xs = cloud(CENTRE, 8, 0.05)
    with pytest.raises(ValueError, match="conserved must be finite"):
        one(CENTRE, xs, xs + 1.0, Settings(min_neighbours=4, conserved=[weights],
                                           tolerance=1.0, radius=1.0))


def test_no_queries_give_an_empty_prediction() -> None:
    for slots in (0, 8):
        empty = np.zeros((0, slots, 3))
        p = predict_from(np.zeros((0, 3)), empty, empty, np.zeros(0, dtype=np.int64), PLAIN,
                         Settings(tolerance=1.0))
        assert p.values.shape == (0, 3) and p.check.shape == (0,)
    with pytest.raises(ValueError, match="inputs must be"):
        predict_from(np.zeros((2, 3)), np.zeros((2, 5, 2)), np.zeros((2, 5, 2)), [5, 5], PLAIN,
                     Settings(tolerance=1.0))


def test_samples_must_be_n_slots_d() -> None:
    """inputs and results are (n, slots, d): the same numbers as (n, d,
    slots), or a slot count times d that only divides evenly, were
    reshaped and predicted from (a transposed cloud was ACCEPTED with
    values from the wrong samples). One query's (slots, d) is taken."""
    xs = cloud(CENTRE, 8, 0.05)
    settings = Settings(min_neighbours=4, tolerance=1.0, radius=1.0)
    alone = predict_from(CENTRE[None], xs, step(xs), [8], PLAIN, settings)
    assert alone.check[0] == one(CENTRE, xs, step(xs), settings).check[0] == Check.ACCEPTED
    for inputs in (xs.T[None], xs.reshape(1, 12, 2), xs.reshape(-1)[None]):
        with pytest.raises(ValueError, match="inputs must be"):
            predict_from(CENTRE[None], inputs, inputs, [8], PLAIN, settings)


@pytest.mark.parametrize("bad", [dict(method=1), dict(estimate=0), dict(method=None)])
def test_method_and_estimate_must_be_theirs(bad: dict[str, Any]) -> None:
    """method=1 was kept as it was and predicted with IDW."""
    with pytest.raises(TypeError, match="must be a"):
        Settings(**bad)
    assert Settings(method="linear").method is Method.LINEAR  # type: ignore[arg-type]


def test_verification_refuses_rows_of_another_width() -> None:
    """Errors of another number of columns were broadcast into every
    column's maximum."""
    v = Verification()
    v.add(np.zeros((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="3"):
        v.add(np.zeros((2, 1)), np.full((2, 1), 5.0))
    other = Verification()
    other.add(np.zeros((1, 1)), np.full((1, 1), 7.0))
    with pytest.raises(ValueError, match="merged"):
        v.merge(other)
    assert v.max_abs.tolist() == [1.0, 1.0, 1.0] and v.count == 2


def test_verification_chooses_a_repeatable_fraction_and_sums_errors() -> None:
    none, every = Verification(0.0), Verification(1.0)
    assert not none.choose(100).any() and every.choose(100).all()
    a, b = Verification(0.25, seed=3), Verification(0.25, seed=3)
    picks = a.choose(4000)
    assert (picks == b.choose(4000)).all()
    assert 800 < picks.sum() < 1200
    v = Verification(0.5)
    v.add([[1.0, 2.0], [3.0, 4.0]], [[1.5, 2.0], [3.0, 1.0]])
    w = Verification(0.5)
    w.add([[0.0, 0.0]], [[0.0, 1.0]])
    v.merge(w)
    assert v.count == 3
    assert v.max_abs.tolist() == [0.5, 3.0]
    assert np.allclose(v.rms(), np.sqrt(np.array([0.25, 10.0]) / 3))
    with pytest.raises(ValueError):
        Verification(1.5)


# -- the shared table ------------------------------------------------------


@pytest.fixture
def near(comm: MPI.Intracomm, protocol: str) -> Any:
    settings = Settings(tolerance=1e-3, radius=1.0, slots=8, min_neighbours=4,
                        method=Method.LINEAR)
    with Neighbours(comm, [KeyColumn(Rounding.SIGNIFICANT, 1)] * 3, settings, 1 << 20,
                    context_size=1, protocol=protocol) as n:
        yield n
        comm.Barrier()


def test_samples_published_anywhere_predict_everywhere(comm: MPI.Intracomm,
                                                       near: Neighbours) -> None:
    rank, size = comm.Get_rank(), comm.Get_size()
    # 8 samples of one class (every input rounds to [1, 2, 3] at 1 digit),
    # spread over the processes.
    xs = cloud(CENTRE, 8, 0.04)
    mine = xs[rank::size]
    near.publish(mine, step(mine), context=60.0)
    comm.Barrier()
    p = near.predict(CENTRE, context=60.0)
    assert p.check[0] == Check.ACCEPTED and p.used[0] == 8
    assert np.abs(p.values[0] - step(CENTRE)).max() < 1e-10
    # Another context is another class: nothing there.
    assert near.predict(CENTRE, context=30.0).check[0] == Check.FEW_NEIGHBOURS


def test_hot_class_keeps_whole_samples_under_concurrent_publishing(
        comm: MPI.Intracomm, near: Neighbours) -> None:
    """Every process publishes into one class at once, one sample per call;
    afterwards the class holds exactly `slots` whole samples (each result
    the model's for its input: none torn, none mixed), all distinct."""
    rank, size = comm.Get_rank(), comm.Get_size()
    xs = cloud(CENTRE, 40, 0.04, seed=100 + rank)
    comm.Barrier()
    for x in xs:
        near.publish(x[None], step(x[None]), context=1.0)
    comm.Barrier()
    inputs, results, count = near.lookup(CENTRE[None], context=1.0)
    assert count[0] == 8
    assert np.array_equal(results[0], step(inputs[0]))
    assert len({row.tobytes() for row in inputs[0]}) == 8
    everyone = np.vstack(comm.allgather(xs))
    assert all((everyone == row).all(axis=1).any() for row in inputs[0])


def test_a_repeated_input_replaces_its_own_sample(comm: MPI.Intracomm,
                                                  near: Neighbours) -> None:
    if comm.Get_rank() == 0:
        xs = cloud(CENTRE, 3, 0.04)
        near.publish(xs, step(xs), context=2.0)
        near.publish(xs[:1], step(xs[:1]) + 1.0, context=2.0)
        inputs, results, count = near.lookup(CENTRE[None], context=2.0)
        assert count[0] == 3
        assert np.array_equal(results[0, 0], step(xs[:1])[0] + 1.0)
        assert np.array_equal(results[0, 1:3], step(xs[1:]))
    comm.Barrier()


def test_shape_and_context_errors(near: Neighbours) -> None:
    with pytest.raises(ValueError, match="3 columns"):
        near.predict(np.zeros((2, 4)), context=1.0)
    with pytest.raises(ValueError, match="context"):
        near.predict(CENTRE)
    with pytest.raises(ValueError, match="shape"):
        near.publish(np.zeros((2, 3)), np.zeros((3, 3)), context=1.0)


def reset_model(x: Array) -> Array:
    """Columns 0 and 1 change linearly; column 2's result depends only on
    columns 0 and 1 (the model resets it, whatever its input)."""
    y = x.copy()
    y[:, 0] += 0.01 * x[:, 0] + 0.02 * x[:, 1] + 0.001
    y[:, 1] += 0.002 * x[:, 0] - 0.01 * x[:, 1]
    y[:, 2] = 5.0 + 0.1 * x[:, 0] - 0.2 * x[:, 1]
    return y


def test_ignored_columns_are_predicted_as_values() -> None:
    xs = cloud(CENTRE, 12, 0.05)
    xs[:, 2] = np.linspace(1.0, 9.0, 12)      # the reset column spreads widely
    query = CENTRE.copy()
    query[2] = 20.0                           # far outside the samples' range
    ignoring = Settings(method=Method.LINEAR, min_neighbours=6, tolerance=1e-6, radius=0.5,
                        ignored=[2])
    p = one(query, xs, reset_model(xs), ignoring)
    assert p.check[0] == Check.ACCEPTED
    assert np.abs(p.values[0] - reset_model(query[None])[0]).max() < 1e-10
    # Not ignored, the same query is too far from the samples.
    plain = Settings(method=Method.LINEAR, min_neighbours=6, tolerance=1e-6, radius=0.5)
    assert one(query, xs, reset_model(xs), plain).check[0] == Check.TOO_FAR
    with pytest.raises(ValueError, match="ignored"):
        one(query, xs, reset_model(xs), Settings(ignored=[2], conserved=[[0.0, 1.0, 1.0]]))


def test_ignored_columns_do_not_split_classes() -> None:
    settings = Settings(tolerance=1.0, ignored=[2])
    with Neighbours(MPI.COMM_SELF, [KeyColumn(Rounding.SIGNIFICANT, 2)] * 3, settings,
                    1 << 16) as near:
        keys = near.keys([[1.0, 2.0, 3.0], [1.0, 2.0, -70.0], [1.0, 2.5, 3.0]])
    assert (keys[0] == keys[1]).all() and not (keys[0] == keys[2]).all()


def test_one_publish_call_equals_row_by_row(comm: MPI.Intracomm, near: Neighbours) -> None:
    """Rows of one call that share a class are added in their order, as if
    published one at a time: the newest `slots` kept, a repeated input
    replacing its own sample."""
    if comm.Get_rank() == 0:
        xs = cloud(CENTRE, 11, 0.04, seed=9)
        xs[10] = xs[3]                          # a repeat within the call
        ys = step(xs)
        ys[10] += 0.5
        near.publish(xs, ys, context=3.0)
        inputs, results, count = near.lookup(CENTRE[None], context=3.0)
        # 10 distinct inputs into 8 slots: the first two were replaced, in
        # ring order; row 3's sample carries row 10's result.
        assert count[0] == 8
        kept = {row.tobytes(): i for i, row in enumerate(inputs[0])}
        assert set(kept) == {xs[i].tobytes() for i in range(2, 10)}
        assert np.array_equal(results[0, kept[xs[3].tobytes()]], ys[10])
    comm.Barrier()


def test_queries_sharing_a_class_predict_as_each_alone(comm: MPI.Intracomm,
                                                       near: Neighbours) -> None:
    """predict reads each distinct class once for all the queries in it:
    the outcome of every query is the one predict_from gives it from its
    own copy of the class (lookup), queries of an empty class included."""
    xs = cloud(CENTRE, 8, 0.04, seed=11)
    near.publish(xs[comm.Get_rank()::comm.Get_size()],
                 step(xs[comm.Get_rank()::comm.Get_size()]), context=7.0)
    comm.Barrier()
    queries = np.vstack([cloud(CENTRE, 5, 0.03, seed=12), 3 * CENTRE, CENTRE + 0.2])
    p = near.predict(queries, context=7.0)
    inputs, results, count = near.lookup(queries, context=7.0)
    alone = predict_from(queries, inputs, results, count, near.columns, near.settings)
    assert p.check.tolist() == alone.check.tolist()
    assert p.check[5] == Check.FEW_NEIGHBOURS and (p.check[:5] != Check.FEW_NEIGHBOURS).all()
    assert np.array_equal(p.values, alone.values, equal_nan=True)
    assert np.array_equal(p.estimate, alone.estimate, equal_nan=True)
    assert p.used.tolist() == alone.used.tolist()


def test_outside_is_relative_to_the_samples_size() -> None:
    """The box check tolerates rounding relative to the coordinates' size:
    an absolute 1e-9 let samples spanning 1e-12 take a query 300 ranges
    away (extrapolation 0), and equal samples scaled by 1e6 a query 9e-4
    off."""
    one = [KeyColumn(Rounding.SIGNIFICANT, 1)]
    xs = np.linspace(1e-12, 2e-12, 6).reshape(1, 6, 1)
    for estimate in Estimate:
        settings = Settings(tolerance=1e-3, method=Method.LINEAR, estimate=estimate, slots=6,
                            min_neighbours=4, extrapolation=0.0)
        p = predict_from([[3e-10]], xs, xs + 1e18 * xs ** 2, [6], one, settings)
        assert p.check[0] == Check.OUTSIDE
    two = [KeyColumn(Rounding.SIGNIFICANT, 1)] * 2
    rng = np.random.default_rng(0)
    xs2 = np.stack([rng.uniform(1, 2, 8), np.full(8, 5.0)], axis=1).reshape(1, 8, 2)
    for scale in (1.0, 1e6):
        settings = Settings(tolerance=1e-3, scale=[1.0, scale], method=Method.LINEAR, slots=8,
                            min_neighbours=4)
        inside = predict_from([[1.5, 5.0]], xs2, 1.01 * xs2, [8], two, settings)
        assert inside.check[0] == Check.ACCEPTED
        off = predict_from([[1.5, 5.0009]], xs2, 1.01 * xs2, [8], two, settings)
        assert off.check[0] == Check.OUTSIDE


def test_a_failed_fit_is_never_accepted() -> None:
    """ridge 0 with a column the samples do not vary in: the fit fails
    (NaN values, an infinite estimate), which no tolerance accepts, an
    infinite one included (inf <= inf accepted NaN values)."""
    two = [KeyColumn(Rounding.SIGNIFICANT, 2)] * 2
    rng = np.random.default_rng(0)
    xs = np.stack([rng.uniform(1, 2, 8), np.full(8, 5.0)], axis=1).reshape(1, 8, 2)
    for tolerance in (1e-3, float("inf")):
        settings = Settings(tolerance=tolerance, method=Method.LINEAR, ridge=0.0, slots=8,
                            min_neighbours=4)
        p = predict_from([[1.5, 5.0]], xs, 1.01 * xs, [8], two, settings)
        assert p.check[0] == Check.ERROR_ESTIMATE and not p.accepted[0]


@pytest.mark.parametrize("name", ["ignored", "presence", "nonnegative"])
def test_column_numbers_must_be_integers(name: str) -> None:
    """Column numbers given as 0.5 were truncated to column 0."""
    xs = np.ones((1, 4, 2))
    fields: dict[str, Any] = {name: [0.5]}  # what a caller's untyped code may pass
    settings = Settings(tolerance=1e-3, slots=4, min_neighbours=1, **fields)
    with pytest.raises(TypeError, match=f"{name} must be column numbers"):
        predict_from([[1.0, 1.0]], xs, xs, [4], [KeyColumn(Rounding.SIGNIFICANT, 1)] * 2,
                     settings)
