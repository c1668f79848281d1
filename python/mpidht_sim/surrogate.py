"""The DHT as the chemistry's surrogate: approximated keys and stored changes.

Key: the cell's input state and the time step, each variable rounded to its
configured number of significant digits — of log10 of the value for the
concentrations and minerals when ``dht.log`` is set (pH and pe are
logarithms already and are rounded as they are) — with every value below
``dht.floor`` in magnitude counting as zero. Each rounded value is stored
as its integer mantissa and decimal exponent, so equal roundings give equal
bytes on every process.

Value: the change the reaction made (output minus input). A hit adds the
stored change to the cell's actual input, so what the reaction conserves
(Ca + calcite + dolomite, C + calcite + 2 dolomite, Cl) stays conserved
exactly, even though the stored change came from a slightly different
input.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .config import VARIABLES, DhtConfig

Array = npt.NDArray[np.float64]

#: Bytes per key: (mantissa, exponent) as int64 for each variable and the
#: time step.
KEY_SIZE = (len(VARIABLES) + 1) * 16
#: Bytes per value: the change of every variable as float64.
VALUE_SIZE = len(VARIABLES) * 8

_LOGGED = np.array([name not in ("pH", "pe") for name in VARIABLES])


def round_significant(x: Array, digits: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """(mantissa, exponent) int64 pairs with x ~ mantissa * 10**exponent and
    |mantissa| < 10**digits; zero maps to (0, 0). Shape: x.shape + (2,)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros(x.shape + (2,), dtype=np.int64)
    nonzero = x != 0
    mag = np.zeros_like(x)
    mag[nonzero] = np.floor(np.log10(np.abs(x[nonzero])))
    exponent = mag - (np.broadcast_to(digits, x.shape) - 1)
    mantissa = np.round(x / np.power(10.0, exponent))
    # Rounding up may add a digit (9.99 -> 10.0): renormalise.
    over = np.abs(mantissa) >= np.power(10.0, np.broadcast_to(digits, x.shape))
    mantissa[over] = np.round(mantissa[over] / 10)
    exponent[over] += 1
    out[..., 0] = np.where(nonzero, mantissa, 0).astype(np.int64)
    out[..., 1] = np.where(nonzero, exponent, 0).astype(np.int64)
    return out


class Surrogate:
    """Builds keys and applies stored changes for one configuration."""

    def __init__(self, cfg: DhtConfig) -> None:
        self.cfg = cfg
        self.digits = np.array([cfg.digits[name] for name in VARIABLES] + [15],
                               dtype=np.int64)

    def keys(self, states: Array, dt: float) -> npt.NDArray[np.uint8]:
        """One KEY_SIZE-byte row per cell of states (cells x variables)."""
        values = np.asarray(states, dtype=np.float64).copy()
        values[np.abs(values) < self.cfg.floor] = 0.0
        if self.cfg.log:
            logged = values[:, _LOGGED]
            positive = logged > 0
            logged[positive] = np.log10(logged[positive])
            logged[~positive] = -np.inf  # zero (or below the floor): one class
            values[:, _LOGGED] = logged
        full = np.column_stack([values, np.full(values.shape[0], dt)])
        finite = np.isfinite(full)
        rounded = round_significant(np.where(finite, full, 0.0), self.digits)
        # -inf (a zero under log) gets its own code, distinct from log10 = 0.
        rounded[~finite] = (0, np.iinfo(np.int64).min)
        return np.ascontiguousarray(rounded).view(np.uint8).reshape(states.shape[0], KEY_SIZE)

    @staticmethod
    def changes(before: Array, after: Array) -> npt.NDArray[np.uint8]:
        """The value rows to store: after - before as float64 bytes."""
        delta = np.ascontiguousarray(after - before, dtype=np.float64)
        return delta.view(np.uint8).reshape(before.shape[0], VALUE_SIZE)

    @staticmethod
    def apply(before: Array, stored: npt.NDArray[np.uint8]) -> Array:
        """The output of a hit: the actual input plus the stored change."""
        return before + np.ascontiguousarray(stored).view(np.float64).reshape(before.shape)
