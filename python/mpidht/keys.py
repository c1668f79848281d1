"""Approximate keys: rows of numbers rounded into table keys.

A surrogate looks results up by its inputs rounded, so that nearby inputs
share one entry. ``encode_keys`` does the rounding in C
(``mpidht_key_encode``, whose header comment is the contract), the same
bytes on every process for the same inputs::

    import numpy as np
    from mpidht.keys import KeyColumn, Rounding, distinct, encode_keys, key_size

    columns = [KeyColumn(Rounding.SIGNIFICANT, digits=5, log=True, floor=1e-12)] * 3 + [
        KeyColumn(Rounding.EXACT)]                 # e.g. the time step, as it is
    keys = encode_keys(states, columns)            # (rows, key_size(columns)) uint8
    first, number = distinct(keys)                 # rounded alike: one key, read once
    values, found = table.read_many(keys[first])
    values, found = values[number], found[number]  # back to one row per state

Every column becomes ``ELEMENT_SIZE`` bytes. Inputs are converted to
float64 first, so an integer 42 and a float 42.0 give the same key (the
raw bytes of an int64 array and a float64 array would not), and -0.0
gives the key of 0.0.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import numpy.typing as npt

from . import _core
from .table import _library_errors

#: Bytes per column of a key (MPIDHT_KEY_ELEMENT_SIZE).
ELEMENT_SIZE = 16


class Rounding(enum.IntEnum):
    """How a column is reduced (``mpidht_key_rounding_t``)."""

    #: ``digits`` significant digits, half to even (a relative class).
    SIGNIFICANT = 0
    #: Truncated to ``digits`` decimal places, as POET does (an absolute class).
    DECIMAL = 1
    #: The value itself (NaN refused).
    EXACT = 2


@dataclass(frozen=True)
class KeyColumn:
    """One column of a key (``mpidht_key_column_t``).

    ``digits``: significant digits 1..15, or decimal places -20..20;
    unused for EXACT. ``log``: round log10(x); every x <= 0 is one class.
    ``floor``: |x| < floor counts as 0 (before the log). log and floor do
    not apply to EXACT columns.
    """

    rounding: Rounding = Rounding.EXACT
    digits: int = 0
    log: bool = False
    floor: float = 0.0

    def __post_init__(self) -> None:
        # Integers only: 2.7 digits were truncated to 2, a rounding of 0.9
        # to SIGNIFICANT, "3" taken as 3. The ranges are the library's to
        # refuse (ERR_KEY_COLUMN), when the column is used.
        for name in ("rounding", "digits"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise TypeError(f"KeyColumn.{name} must be an integer, got {value!r}")
        if int(self.rounding) not in {int(r) for r in Rounding}:
            raise ValueError(f"KeyColumn.rounding must be one of "
                             f"{', '.join(r.name for r in Rounding)}, got {self.rounding!r}")
        object.__setattr__(self, "rounding", Rounding(int(self.rounding)))
        # log: a bool or 0 / 1 (the string "False" was taken as true).
        if not isinstance(self.log, (bool, np.bool_, int, np.integer)) or self.log not in (0, 1):
            raise TypeError(f"KeyColumn.log must be a bool, got {self.log!r}")
        object.__setattr__(self, "log", bool(self.log))
        # floor: a real number, not a string ("1e-3" was parsed); its range
        # (>= 0, finite) is the library's to refuse, as for digits.
        if isinstance(self.floor, (bool, np.bool_)) or not isinstance(
                self.floor, (int, float, np.integer, np.floating)):
            raise TypeError(f"KeyColumn.floor must be a real number, got {self.floor!r}")
        try:
            object.__setattr__(self, "floor", float(self.floor))
        except OverflowError:
            raise ValueError(f"KeyColumn.floor {self.floor} is beyond a double's range") from None


#: Beyond any column's range of digits, within a C int.
_DIGITS_CLAMP = 1 << 30


def key_size(columns: Sequence[KeyColumn]) -> int:
    """Bytes of a key with these columns."""
    return ELEMENT_SIZE * len(columns)


def encode_keys(values: npt.ArrayLike, columns: Sequence[KeyColumn]) -> npt.NDArray[np.uint8]:
    """The keys of the rows of ``values`` (rows x len(columns), any real
    dtype; one row may be given as a 1-D array), as a (rows, key_size)
    uint8 array.

    Raises ``mpidht.Error`` with ``Status.ERR_KEY_COLUMN`` for a column
    out of range and ``Status.ERR_KEY_VALUE`` for a NaN input, an
    infinite one in a rounded column (an ``EXACT`` column keeps it), or
    one too large for its decimal places; ``ValueError`` if the shape does
    not match the columns; ``TypeError`` for values that are not real
    numbers (complex, strings, Python objects) and for columns that are
    not ``KeyColumn``.
    """
    for i, c in enumerate(columns):
        if not isinstance(c, KeyColumn):
            raise TypeError(f"column {i} must be a KeyColumn, got {type(c).__name__}")
    given = np.asarray(values)
    # Complex: float64 would drop the imaginary parts; strings: it would
    # parse them.
    if given.dtype.kind not in "biuf":
        raise TypeError(f"values must be real numbers, got {given.dtype}")
    rows = np.ascontiguousarray(np.atleast_2d(np.asarray(given, dtype=np.float64)))
    if rows.ndim != 2 or rows.shape[1] != len(columns):
        raise ValueError(f"values must be rows of {len(columns)} numbers (one per column), "
                         f"got shape {np.shape(values)}")
    # Digits beyond a C int are out of every column's range: the
    # library's refusal (ERR_KEY_COLUMN), not an OverflowError here.
    spec = [(int(c.rounding), max(-_DIGITS_CLAMP, min(int(c.digits), _DIGITS_CLAMP)),
             bool(c.log), float(c.floor)) for c in columns]
    out = np.empty((rows.shape[0], key_size(columns)), dtype=np.uint8)
    with _library_errors():
        _core.key_encode(spec, rows.shape[0], rows, out)
    return out


def distinct(keys: npt.ArrayLike) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The distinct rows of ``keys`` (rows x bytes, uint8; any rows of equal
    width), numbered 0, 1, ... in the order they first appear: the row
    where each first appears (ascending), and each row's number, so that
    ``keys[first][number]`` equals ``keys``. Rows are equal when their
    bytes are (one pass with a hash table, in C).
    """
    rows = np.ascontiguousarray(keys)
    if rows.dtype != np.uint8 or rows.ndim != 2:
        raise ValueError(f"keys must be rows of bytes (2-D uint8, as encode_keys gives), "
                         f"got {rows.dtype} of shape {rows.shape}")
    n, width = rows.shape
    first = np.empty(n, dtype=np.int64)
    number = np.empty(n, dtype=np.int64)
    found = _core.distinct(rows, n, width, first, number)
    # A copy when rows repeat: a view would keep all n entries alive.
    return (first if found == n else first[:found].copy()), number
