"""Approximated keys and stored changes."""

import numpy as np

from mpidht_sim.config import load
from mpidht_sim.surrogate import KEY_SIZE, Surrogate, round_significant


def test_round_significant() -> None:
    got = round_significant(np.array([123456.0, 0.0012345, -9.996, 0.0]),
                            np.array([3, 2, 3, 5]))
    assert got.tolist() == [[123, 3], [12, -4], [-100, -1], [0, 0]]


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


def test_changes_apply_to_the_actual_input() -> None:
    before, after = state(), state(Ca=1.2279e-4 + 7e-6, calcite=2.07e-4 - 7e-6)
    stored = Surrogate.changes(before, after)
    other = state(Ca=1.2279004e-4)
    out = Surrogate.apply(other, stored)
    # Ca + calcite is conserved exactly as the reaction conserved it.
    assert abs((out[0, 1] + out[0, 6]) - (other[0, 1] + other[0, 6])) < 1e-19
