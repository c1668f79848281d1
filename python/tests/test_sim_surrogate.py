"""Approximated keys, stored changes and the checks on a hit."""

import numpy as np
import pytest

from mpidht_sim.config import load
from mpidht_sim.surrogate import KEY_SIZE, VALUE_SIZE, Surrogate, same_key

# Keys and checks of one process: no communicator of the job.
pytestmark = pytest.mark.one_process


#: Settings the tests below are written for (not the tuned defaults).
SIX_DIGITS = {"digits": {v: 6 for v in ("C", "Ca", "Cl", "Mg", "pH", "pe")}
              | {"calcite": 5, "dolomite": 5}, "floor": 1e-16}


def surrogate(**dht: object) -> Surrogate:
    settings = {**SIX_DIGITS, **dht}
    return Surrogate(load(None, {f"dht.{k}": v for k, v in settings.items()}).dht)


def state(**changes: float) -> np.ndarray:
    base = dict(C=1.2279e-4, Ca=1.2279e-4, Cl=0.0, Mg=0.0, pH=9.91, pe=4.0,
                calcite=2.07e-4, dolomite=0.0)
    base.update(changes)
    return np.array([list(base.values())])


def test_keys_match_within_rounding_only() -> None:
    s = surrogate()
    a = s.keys(state(), 100.0)
    assert a.shape == (1, KEY_SIZE) and a.dtype == np.uint8
    assert np.array_equal(a, s.keys(state(Ca=1.22790001e-4), 100.0))  # below 6 digits
    assert not np.array_equal(a, s.keys(state(Ca=1.2281e-4), 100.0))
    assert not np.array_equal(a, s.keys(state(), 200.0))  # the time step counts


def test_floor_and_log() -> None:
    s = surrogate(floor=1e-12)
    assert np.array_equal(s.keys(state(Mg=1e-24), 1.0), s.keys(state(Mg=1e-16), 1.0))
    assert not np.array_equal(s.keys(state(Mg=1e-24), 1.0), s.keys(state(Mg=1e-3), 1.0))
    # Zero under log is its own class, not log10(1) = 0.
    assert not np.array_equal(s.keys(state(Mg=0.0), 1.0), s.keys(state(Mg=1.0), 1.0))
    raw = surrogate(log=False)
    assert not np.array_equal(raw.keys(state(Mg=1e-24), 1.0), raw.keys(state(Mg=1e-16), 1.0))


def test_decimal_rounding_is_absolute_significant_is_relative() -> None:
    """At 4 digits, raw decimal places cannot tell 1.21e-4 from 1.29e-4
    (both truncate to 1), significant digits can; with log10 decimal places
    become relative too."""
    a, b = state(Ca=1.21e-4), state(Ca=1.29e-4)
    digits = {v: 6 for v in ("C", "Cl", "Mg", "pH", "pe", "calcite", "dolomite")} | {"Ca": 4}
    decimal = surrogate(rounding="decimal", log=False, digits=digits)
    significant = surrogate(log=False, digits=digits)
    logged = surrogate(rounding="decimal", log=True, digits=digits)
    assert np.array_equal(decimal.keys(a, 1.0), decimal.keys(b, 1.0))
    assert not np.array_equal(significant.keys(a, 1.0), significant.keys(b, 1.0))
    assert not np.array_equal(logged.keys(a, 1.0), logged.keys(b, 1.0))
    assert not np.array_equal(decimal.keys(a, 1.0), significant.keys(a, 1.0))


def test_changes_apply_to_the_actual_input() -> None:
    before, after = state(), state(Ca=1.2279e-4 + 7e-6, calcite=2.07e-4 - 7e-6)
    s = surrogate()
    stored = s.values(before, after, 60.0)
    assert stored.shape == (1, VALUE_SIZE) and stored.dtype == np.uint8
    other = state(Ca=1.2279004e-4)
    out, exact = s.apply(other, stored, 60.0)
    # Ca + calcite is conserved exactly as the reaction conserved it.
    assert abs((out[0, 1] + out[0, 6]) - (other[0, 1] + other[0, 6])) < 1e-19
    assert not exact[0]  # another input than the change was computed from
    again, exact = s.apply(before, stored, 60.0)
    assert exact[0] and np.array_equal(again, after)
    # Rounding noise of transport (a few ulps) is still the same input.
    noisy = before * (1 + 4e-16)
    assert s.apply(noisy, stored, 60.0)[1][0]
    assert not s.apply(before, stored, 61.0)[1][0]  # another time step


def test_negative_amounts_are_not_valid() -> None:
    good, bad_mineral, bad_total = state(), state(calcite=-4.6e-14), state(C=-1e-20)
    rows = np.vstack([good, bad_mineral, bad_total, state(pH=-1.0, pe=-5.0)])
    assert Surrogate.valid(rows).tolist() == [True, False, False, True]


def test_reset_variables_are_out_of_the_key_and_stored_as_results() -> None:
    """dht.reset (default: pe, which the fixed O2(g) sets whatever its
    input): any pe shares a key, and a hit takes the stored pe itself."""
    s = surrogate()
    assert s.cfg.reset == ("pe",)
    assert np.array_equal(s.keys(state(pe=4.0), 1.0), s.keys(state(pe=12.5), 1.0))
    before, after = state(pe=4.0), state(pe=11.25, Ca=1.2279e-4 + 7e-6)
    stored = s.values(before, after, 60.0)
    out, _ = s.apply(state(pe=13.0), stored, 60.0)
    assert out[0, 5] == 11.25 and out[0, 1] == after[0, 1]
    kept = surrogate(reset=[])
    assert not np.array_equal(kept.keys(state(pe=4.0), 1.0), kept.keys(state(pe=12.5), 1.0))
    assert kept.apply(state(pe=13.0), kept.values(before, after, 60.0), 60.0)[0][0, 5] == 20.25


def test_same_key_names_later_rows_and_their_first() -> None:
    s = surrogate()
    rows = np.concatenate([state(), state(Ca=1.3e-4), state(Ca=1.22790001e-4),
                           state(Ca=1.3e-4), state(Ca=1.22790002e-4)])
    keys = s.keys(rows, 100.0)
    later, first = same_key(keys, np.arange(5))
    assert later.tolist() == [2, 3, 4] and first.tolist() == [0, 1, 0]
    # Only the rows given take part: without row 0, row 2 is the first.
    later, first = same_key(keys, np.array([1, 2, 3, 4]))
    assert later.tolist() == [3, 4] and first.tolist() == [1, 2]
    assert same_key(keys, np.array([3]))[0].size == 0
    assert same_key(keys, np.array([0, 1]))[0].size == 0
