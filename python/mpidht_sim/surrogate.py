"""The DHT as the chemistry's surrogate: approximated keys and stored changes.

Key: the cell's input state and the time step, encoded by the library's
``mpidht.keys.encode_keys`` (``mpidht_key_encode`` in C). Every value below
``dht.floor`` in magnitude counts as zero; with ``dht.log`` the
concentrations and minerals are replaced by their log10 (pH and pe are
logarithms already), zero being a class of its own. Each value is then
reduced to a key element by ``dht.rounding``:

- ``significant``: rounded to ``dht.digits`` significant digits, stored as
  its integer mantissa and decimal exponent. The rounding is relative: a
  class spans one unit in the last kept digit of the value itself.
- ``decimal`` (POET's): truncated to ``dht.digits`` decimal places, i.e.
  trunc(10**digits * value), stored as that whole number (as a float64, so
  that no value overflows). The rounding is absolute: a class spans
  10**-digits, whatever the value's magnitude.

The time step is part of the key exactly. Equal inputs give equal bytes on
every process; a NaN or infinite input is refused (``mpidht.Error``).

Variables in ``dht.reset`` (pe: every cell is held at a fixed O2(g), so
the pe after a step does not depend on the pe before it) are held at 0 in
the key, and their result, not their change, is stored and used.

Value: the change the reaction made (output minus input), then a 64-bit
fingerprint of the input the change was computed from. A hit adds the
stored change to the cell's actual input, so what the reaction conserves
(Ca + calcite + dolomite, C + calcite + 2 dolomite, Mg + dolomite, Cl)
stays conserved exactly, even though the change came from a slightly
different input. The fingerprint tells an exact hit (the same input as
the stored change's, to ``EXACT_BITS`` significant bits, about 12 decimal
digits, far finer than any key) from an approximate one (another input in
the same class), for the statistics only. Exact is not bitwise: advection leaves rounding
noise of a few ulps in cells the front has not reached.

A hit whose result would make an amount (a total or a mineral) negative is
rejected: the caller computes that cell with PHREEQC instead (``valid``).
Scaling the change down would keep the conserved sums, but it would
invent a result PHREEQC never gave; rejecting costs one reaction and is
counted.

Interpolation (``[interp]``, ``interpolation``): a miss of the exact key
is predicted by ``mpidht.interp`` from the computed results whose inputs
share a coarser key (``interp.digits``, with the DHT's log and floor),
with the time step as context. Its checks here: at least
``min_neighbours`` results within ``radius`` (log10 units; pH and pe in
their own), with the same minerals present in their inputs as in the
cell's and the same in their results; the cell inside the box they span
(up to ``extrapolation`` of their range beyond it); a leave-one-out error
of at most ``tolerance`` times each variable's scale (``variable_scales``); no
negative amount; and what the reaction conserves (Ca + calcite +
dolomite, C + calcite + 2 dolomite, Mg + dolomite, Cl) kept to
``conservation_rtol``. PHREEQC itself keeps these sums (in mol/kgw, as
the state holds them) only to about 1.6e-6 relative, since the water's
mass changes a little as the minerals react.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import numpy as np
import numpy.typing as npt

from .variables import AMOUNTS, MINERALS, VARIABLES

if TYPE_CHECKING:
    from mpidht.interp import Settings
    from mpidht.keys import KeyColumn

    from .config import Config, DhtConfig

Array = npt.NDArray[np.float64]
Bytes = npt.NDArray[np.uint8]

#: Bytes per key: one element of mpidht.keys.ELEMENT_SIZE = 16 bytes (two
#: int64) for each variable and the time step. (mpidht is imported where it
#: is used: the configuration is checked before MPI is started.)
KEY_SIZE = (len(VARIABLES) + 1) * 16
#: Bytes per value: the change of every variable as float64, then the
#: fingerprint of the input.
VALUE_SIZE = len(VARIABLES) * 8 + 8

_LOGGED = np.array([name not in ("pH", "pe") for name in VARIABLES])
_AMOUNTS = np.array([VARIABLES.index(v) for v in AMOUNTS])
#: Inputs equal to this many significant bits (about 12 decimal digits)
#: count as the same input.
EXACT_BITS = 40
_HALF = np.uint64(1 << (52 - EXACT_BITS - 1))
_KEEP = ~np.uint64((1 << (52 - EXACT_BITS)) - 1)
#: Odd 64-bit multipliers, one per word of a row (fixed: fingerprints must
#: agree between processes and runs).
_MULTIPLIERS = np.random.default_rng(0x5EED).integers(
    0, 2**63, size=16, dtype=np.uint64) * np.uint64(2) + np.uint64(1)


#: What the reaction conserves, one row per sum, over VARIABLES (C, Ca, Cl,
#: Mg, pH, pe, calcite, dolomite).
CONSERVED = np.array([[0, 1, 0, 0, 0, 0, 1, 1],    # Ca + calcite + dolomite
                      [1, 0, 0, 0, 0, 0, 1, 2],    # C + calcite + 2 dolomite
                      [0, 0, 0, 1, 0, 0, 0, 1],    # Mg + dolomite
                      [0, 0, 1, 0, 0, 0, 0, 0]],   # Cl
                     dtype=np.float64)


def variable_scales(cfg: Config) -> Array:
    """Each variable's largest magnitude in the waters (minerals: in the
    initial minerals), the unit of interpolation's tolerance."""
    scales = np.array([max(abs(cfg.initial[v]), abs(cfg.injected.get(v, 0.0)))
                       for v in VARIABLES])
    minerals = [VARIABLES.index(m) for m in MINERALS]
    scales[minerals] = max(cfg.initial[m] for m in MINERALS)
    # A variable that is zero everywhere at the start (a mineral of none):
    # the largest scale of its kind, so that the tolerance stays finite.
    return np.where(scales > 0, scales, scales.max())


def interpolation(cfg: Config) -> tuple[list[KeyColumn], Settings]:
    """The coarse key columns and the checks of the interpolating surrogate."""
    from mpidht.interp import Estimate, Method, Settings
    from mpidht.keys import KeyColumn, Rounding

    it = cfg.interp
    columns = [KeyColumn(Rounding.SIGNIFICANT, it.digits[name], bool(cfg.dht.log and logged),
                         cfg.dht.floor) for name, logged in zip(VARIABLES, _LOGGED)]
    settings = Settings(tolerance=it.tolerance * variable_scales(cfg), scale=1.0,
                        method=Method(it.method), slots=it.slots,
                        min_neighbours=it.min_neighbours, neighbours=it.neighbours,
                        radius=it.radius, extrapolation=it.extrapolation,
                        estimate=Estimate(it.estimate), interval=it.interval,
                        presence=[VARIABLES.index(m) for m in MINERALS],
                        ignored=[VARIABLES.index(v) for v in cfg.dht.reset],
                        nonnegative=list(_AMOUNTS), conserved=CONSERVED,
                        conservation_rtol=it.conservation_rtol)
    return columns, settings


def fingerprint(states: Array, dt: float) -> npt.NDArray[np.uint64]:
    """A 64-bit hash of each row, rounded to EXACT_BITS significant bits,
    and of dt (inputs equal to those bits have equal fingerprints; others
    collide with probability about 2**-64)."""
    x = np.ascontiguousarray(states, dtype=np.float64) + 0.0  # + 0.0: no -0.0
    bits = x.view(np.uint64)
    # Round the 52-bit mantissa to EXACT_BITS bits (a carry into the
    # exponent is the correct rounding up).
    bits = (bits + _HALF) & _KEEP
    words = np.column_stack([bits, np.full(x.shape[0], np.float64(dt).view(np.uint64))])
    h: npt.NDArray[np.uint64] = (words * _MULTIPLIERS[:words.shape[1]]).sum(
        axis=1, dtype=np.uint64)
    # splitmix64's finaliser: every input bit reaches every output bit.
    h ^= h >> np.uint64(30)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(27)
    h *= np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(31)
    return h


def same_key(keys: Bytes, rows: npt.NDArray[np.int64]
             ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Of the given rows of keys (distinct row numbers), those whose key an
    earlier one of them has, and for each the first of them with its key
    (row numbers of keys, in the order the rows are given)."""
    from mpidht.keys import distinct

    rows = np.asarray(rows, dtype=np.int64)
    first, number = distinct(keys[rows])
    origin = first[number]
    later = origin != np.arange(rows.size)
    return rows[later], rows[origin[later]]


class Surrogate:
    """Builds keys and values and applies stored changes for one
    configuration."""

    def __init__(self, cfg: DhtConfig) -> None:
        from mpidht.keys import KeyColumn, Rounding, encode_keys

        self.cfg = cfg
        self._encode = encode_keys
        rounding = Rounding.DECIMAL if cfg.rounding == "decimal" else Rounding.SIGNIFICANT
        self.columns = [KeyColumn(rounding, cfg.digits[name], bool(cfg.log and logged),
                                  cfg.floor)
                        for name, logged in zip(VARIABLES, _LOGGED)]
        self.columns.append(KeyColumn(Rounding.EXACT))  # the time step
        #: Columns of dht.reset: out of the key (held at 0), result stored.
        self.reset = np.array([VARIABLES.index(v) for v in cfg.reset], dtype=np.int64)

    def keys(self, states: Array, dt: float) -> Bytes:
        """One KEY_SIZE-byte row per cell of states (cells x variables)."""
        rows = np.empty((states.shape[0], len(VARIABLES) + 1), dtype=np.float64)
        rows[:, :-1] = states
        rows[:, self.reset] = 0.0
        rows[:, -1] = dt
        return self._encode(rows, self.columns)

    def values(self, before: Array, after: Array, dt: float,
               prints: Optional[npt.NDArray[np.uint64]] = None) -> Bytes:
        """The value rows to store: after - before as float64 (after itself
        for the dht.reset variables), then the fingerprint of before
        (``prints``, if the caller has them: ``fingerprint(before, dt)``)."""
        n = before.shape[0]
        change = np.array(after - before, dtype=np.float64)
        change[:, self.reset] = after[:, self.reset]
        rows = np.empty((n, len(VARIABLES) + 1), dtype=np.uint64)
        rows[:, :-1] = change.view(np.uint64)
        rows[:, -1] = fingerprint(before, dt) if prints is None else prints
        return rows.view(np.uint8).reshape(n, VALUE_SIZE)

    def apply(self, before: Array, stored: Bytes, dt: float,
              prints: Optional[npt.NDArray[np.uint64]] = None
              ) -> tuple[Array, npt.NDArray[np.bool_]]:
        """The output of hits (the actual input plus the stored change; the
        stored result for the dht.reset variables) and which of them are
        exact (the change was computed from this input; ``prints`` as for
        ``values``)."""
        rows = np.ascontiguousarray(stored).view(np.uint64).reshape(before.shape[0], -1)
        change = np.ascontiguousarray(rows[:, :-1]).view(np.float64)
        if prints is None:
            prints = fingerprint(before, dt)
        exact: npt.NDArray[np.bool_] = rows[:, -1] == prints
        out = before + change
        out[:, self.reset] = change[:, self.reset]
        return out, exact

    @staticmethod
    def valid(out: Array) -> npt.NDArray[np.bool_]:
        """Which results have no negative amount (a total or a mineral)."""
        return np.asarray((out[:, _AMOUNTS] >= 0).all(axis=1), dtype=np.bool_)
