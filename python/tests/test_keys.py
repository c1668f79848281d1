"""Approximate keys (mpidht.keys over mpidht_key_encode): worked examples,
the traps the encoding removes, and refusals. No MPI communication."""

import numpy as np
import pytest

from mpidht import Error, Status
from mpidht.keys import ELEMENT_SIZE, KeyColumn, Rounding, distinct, encode_keys, key_size

# Pure key encoding: no communicator of the tests' job.
pytestmark = pytest.mark.one_process

SIG = Rounding.SIGNIFICANT
DEC = Rounding.DECIMAL


def elements(values: list[float], column: KeyColumn) -> list[list[int]]:
    """The (whole, exponent) pairs of one column's values."""
    keys = encode_keys(np.array(values)[:, None], [column])
    return keys.view(np.int64).reshape(-1, 2).tolist()


def as_bits(x: float) -> int:
    return int(np.float64(x).view(np.int64))


def test_significant_digits() -> None:
    got = [elements([x], KeyColumn(SIG, d))[0]
           for x, d in ((123456.0, 3), (0.0012345, 2), (-9.996, 3), (0.0, 5), (-0.0, 5))]
    assert got == [[123, 3], [12, -4], [-100, -1], [0, 0], [0, 0]]
    # Half to even, as NumPy's round.
    assert elements([2.5, -2.5, 3.5], KeyColumn(SIG, 1)) == [[2, 0], [-2, 0], [4, 0]]


def test_decimal_places_as_poet() -> None:
    """POET's ROUND(value, signif): the integer part of 10**signif * value."""
    values = [0.00123456, 0.00123456, -1.25, 9.91, -0.3, 0.3]
    got = [elements([x], KeyColumn(DEC, d))[0]
           for x, d in zip(values, (5, 3, 1, 0, 0, 0))]
    assert [w for w, _ in got] == [as_bits(v) for v in (123.0, 1.0, -12.0, 9.0, 0.0, 0.0)]
    assert [e for _, e in got] == [5, 3, 1, 0, 0, 0]


def test_log_and_floor() -> None:
    column = KeyColumn(SIG, 3, log=True, floor=1e-10)
    got = elements([100.0, 1e-12, 0.0, -1.0, 1e-9], column)
    zero = [0, int(np.iinfo(np.int64).min)]
    assert got == [[200, -2], zero, zero, zero, [-900, -2]]


def test_exact_column_and_layout() -> None:
    columns = [KeyColumn(SIG, 3), KeyColumn(Rounding.EXACT)]
    keys = encode_keys([[0.0012345, 0.1], [2.0, -0.0]], columns)
    assert keys.shape == (2, key_size(columns)) == (2, 2 * ELEMENT_SIZE)
    assert keys.dtype == np.uint8
    assert keys.view(np.int64).tolist() == [[123, -5, as_bits(0.1), 0], [200, -2, 0, 0]]


def test_types_and_signed_zero_do_not_split_keys() -> None:
    """The traps of raw bytes: int64 42 vs float 42.0, and -0.0 vs 0.0."""
    columns = [KeyColumn(SIG, 6), KeyColumn(Rounding.EXACT), KeyColumn(DEC, 2)]
    as_int = encode_keys(np.array([[42, 0, 7]], dtype=np.int64), columns)
    as_float = encode_keys(np.array([[42.0, -0.0, 7.0]]), columns)
    assert np.array_equal(as_int, as_float)
    assert np.array_equal(encode_keys([42.0, 0.0, 7.0], columns), as_float)  # one row, 1-D


@pytest.mark.parametrize("column", [KeyColumn(SIG, 0), KeyColumn(SIG, 16), KeyColumn(DEC, 21),
                                    KeyColumn(SIG, 3, floor=-1.0),
                                    KeyColumn(SIG, 3, floor=float("nan")),
                                    KeyColumn(SIG, 2**40), KeyColumn(DEC, -2**70)])
def test_bad_columns_are_refused(column: KeyColumn) -> None:
    with pytest.raises(Error) as e:
        encode_keys([[1.0]], [column])
    assert e.value.status == Status.ERR_KEY_COLUMN


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_values_are_refused(value: float) -> None:
    with pytest.raises(Error) as e:
        encode_keys([[1.0], [value]], [KeyColumn(SIG, 3)])
    assert e.value.status == Status.ERR_KEY_VALUE
    assert "NaN or infinite" in str(e.value)


def test_values_and_columns_of_other_types_are_refused() -> None:
    """Strings were parsed as numbers, a plain tuple as a column raised
    AttributeError."""
    col = KeyColumn(Rounding.SIGNIFICANT, 3)
    with pytest.raises(TypeError, match="real numbers, got <U3"):
        encode_keys([["1.5"]], [col])
    with pytest.raises(TypeError, match="real numbers, got object"):
        encode_keys(np.array([[1.5]], dtype=object), [col])
    with pytest.raises(TypeError, match="column 0 must be a KeyColumn, got tuple"):
        encode_keys([[1.5]], [(0, 4, False, 0.0)])  # type: ignore[list-item]
    assert encode_keys([[True, 2]], [col, col]).shape[0] == 1  # bools and ints are numbers


def test_complex_values_are_refused() -> None:
    """Complex numbers are refused, not cut to their real parts."""
    with pytest.raises(TypeError, match="real numbers, got complex128"):
        encode_keys(np.array([[1 + 2j]]), [KeyColumn(SIG, 3)])


def test_shape_must_match_the_columns() -> None:
    with pytest.raises(ValueError, match="rows of 2 numbers"):
        encode_keys(np.zeros((4, 3)), [KeyColumn(SIG, 3)] * 2)
    assert encode_keys(np.zeros((0, 2)), [KeyColumn(SIG, 3)] * 2).shape == (0, 32)


def reference_distinct(keys: np.ndarray) -> tuple[list[int], list[int]]:
    """Numbering by first appearance, the slow and obvious way."""
    seen: dict[bytes, int] = {}
    first: list[int] = []
    number: list[int] = []
    for i, row in enumerate(keys):
        if row.tobytes() not in seen:
            seen[row.tobytes()] = len(first)
            first.append(i)
        number.append(seen[row.tobytes()])
    return first, number


@pytest.mark.parametrize("rows,width,kinds", [(0, 16, 1), (1, 16, 1), (7, 0, 1), (500, 3, 4),
                                              (2000, 144, 50), (3000, 1, 256)])
def test_distinct_numbers_rows_by_first_appearance(rows: int, width: int, kinds: int) -> None:
    """Every row's number names a row with its bytes; numbers follow first
    appearance; rows that differ in one byte only (the last) are apart."""
    rng = np.random.default_rng(rows + width)
    pool = rng.integers(0, 256, size=(kinds, width), dtype=np.uint8)
    if width:
        pool[:, :-1] = pool[0, :-1]  # the rows differ in their last byte at most
        pool = np.unique(pool, axis=0)
    keys = pool[rng.integers(0, pool.shape[0], size=rows)]
    first, number = distinct(keys)
    want_first, want_number = reference_distinct(keys)
    assert first.tolist() == want_first and number.tolist() == want_number
    assert np.array_equal(keys[first][number], keys)
    assert first.base is None  # its own array, not a view of one per row


def test_distinct_rows_all_apart() -> None:
    """Thousands of distinct rows (long probes, some around the table's
    end): each its own number, in order."""
    keys = (np.arange(5000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)).view(
        np.uint8).reshape(5000, 8)
    first, number = distinct(keys)
    assert first.tolist() == list(range(5000)) and number.tolist() == list(range(5000))


def test_distinct_binding_refuses_inconsistent_sizes() -> None:
    """The extension's call checks what it is given (mpidht.keys.distinct
    passes consistent arrays; nothing may be written out of bounds)."""
    from mpidht import _core

    rows, out = np.zeros((4, 3), dtype=np.uint8), np.empty(4, dtype=np.int64)
    assert _core.distinct(rows, 4, 3, out, out.copy()) == 1
    with pytest.raises(ValueError, match="first must be 32 bytes"):
        _core.distinct(rows, 4, 3, out[:3], out)
    with pytest.raises(ValueError, match="rows must be"):
        _core.distinct(rows, 5, 3, out, out)
    for n, width in ((-1, 3), (4, -1), (2**61, 0), (2**40, 2**40)):
        with pytest.raises(ValueError, match="must be 0 or more"):
            _core.distinct(rows, n, width, out, out)


def test_distinct_of_encoded_keys_groups_equal_inputs() -> None:
    columns = [KeyColumn(SIG, 2, log=True, floor=1e-10)] * 2
    keys = encode_keys([[1.01e-3, 5.0], [1.0e-3, 5.01], [2e-3, 5.0], [0.0, 5.0], [1e-12, 5.0]],
                       columns)
    first, number = distinct(keys)
    assert first.tolist() == [0, 2, 3] and number.tolist() == [0, 0, 1, 2, 2]


@pytest.mark.parametrize("keys", [np.zeros(5, dtype=np.uint8), np.zeros((2, 3), dtype=np.int64),
                                  np.zeros((2, 3, 4), dtype=np.uint8)])
def test_distinct_refuses_what_are_not_rows_of_bytes(keys: np.ndarray) -> None:
    with pytest.raises(ValueError, match="rows of bytes"):
        distinct(keys)


@pytest.mark.parametrize("rounding,digits,error", [
    (SIG, 2.7, TypeError), (SIG, "3", TypeError), (SIG, True, TypeError),
    (0.9, 3, TypeError), (7, 3, ValueError)])
def test_column_fields_must_be_integers(rounding: object, digits: object,
                                        error: type[Exception]) -> None:
    """2.7 digits were truncated to 2 and a rounding of 0.9 to SIGNIFICANT;
    now refused when the column is made. A plain int rounding is taken."""
    with pytest.raises(error, match="KeyColumn.(rounding|digits)"):
        KeyColumn(rounding, digits)  # type: ignore[arg-type]
    assert KeyColumn(0, 3).rounding is Rounding.SIGNIFICANT  # type: ignore[arg-type]


@pytest.mark.parametrize("field, value, error", [
    ("log", "False", TypeError), ("log", 2, TypeError), ("log", None, TypeError),
    ("floor", "1e-3", TypeError), ("floor", None, TypeError), ("floor", True, TypeError),
    pytest.param("floor", 10**400, ValueError, id="floor-10**400")])
def test_log_and_floor_must_be_what_they_say(field: str, value: object,
                                             error: type[Exception]) -> None:
    """log="False" rounded log10(x) (bool of a non-empty string) and floor
    "1e-3" was parsed as a number; now refused when the column is made.
    A bool or 0 / 1 log and an integer floor are taken."""
    with pytest.raises(error, match=f"KeyColumn.{field}"):
        KeyColumn(SIG, 3, **{field: value})  # type: ignore[arg-type]
    assert KeyColumn(SIG, 3, log=1).log is True  # type: ignore[arg-type]
    assert KeyColumn(SIG, 3, floor=1).floor == 1.0
