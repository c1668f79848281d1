"""Keys are bytes: the traps, and the key_dtype guard that removes them.
Without it an int64 array never matches float64 keys of the same numbers
and -0.0 misses an entry written under 0.0; with key_dtype=np.float64 both
find it, a NaN key is refused, floats are not truncated into ints and no
key is converted to another (300 to int8's 44, 2**53 + 1 to float64's
2**53)."""

import re
from typing import Any, Callable

import numpy as np
import pytest
from mpi4py import MPI

import mpidht


def test_raw_bytes_keys_keep_the_traps(comm: MPI.Intracomm, protocol: str) -> None:
    with mpidht.Table(comm, 8, 8, 1 << 16, protocol=protocol) as t:
        if comm.Get_rank() == 0:
            t.write_many(np.array([1.0, 2.0, 0.0]), np.ones((3, 8), dtype=np.uint8))
            _, found = t.read_many(np.array([1, 2], dtype=np.int64))
            assert not found.any()                      # other bytes
            assert not t.read_many(np.array([-0.0]))[1][0]
        comm.Barrier()


def test_key_dtype_matches_numbers_not_bytes(comm: MPI.Intracomm, protocol: str) -> None:
    with mpidht.Table(comm, 16, 8, 1 << 16, protocol=protocol,
                      key_dtype=np.float64) as t:
        assert t.key_dtype == np.dtype(np.float64)
        if comm.Get_rank() == 0:
            t.write_many(np.array([[1.0, 2.0], [0.0, 5.0]]),
                         np.arange(16, dtype=np.uint8).reshape(2, 8))
            values, found = t.read_many(np.array([[1, 2], [0, 5]], dtype=np.int64))
            assert found.all()
            assert t.read_many([[-0.0, 5.0]])[1][0]      # -0.0 is 0.0
            assert t.read([1, 2]) == bytes(range(8))      # single keys alike
            t.write([-0.0, 7], b"x" * 8)
            assert t.read(np.array([0.0, 7.0])) == b"x" * 8
            assert t.remove((0, 7)) and t.read([0.0, 7.0]) is None
            # Bytes objects are still raw keys, alone or as a batch's list.
            raw = [np.array(k).tobytes() for k in ([1.0, 2.0], [0.0, 5.0], [9.0, 9.0])]
            assert t.read(raw[0]) == bytes(range(8))
            assert t.read_many(raw)[1].tolist() == [True, True, False]
            assert t.read_many(tuple(raw[:2]))[1].all()
            t.write_many([raw[2]], np.full((1, 8), 3, dtype=np.uint8))
            assert t.read([9.0, 9.0]) == b"\x03" * 8
            assert t.update_many([raw[2]], lambda i, old: b"u" * 8).tolist() == [
                mpidht.UpdateOutcome.UPDATED]
            assert t.read(raw[2]) == b"u" * 8
            with pytest.raises(TypeError, match="keys mix bytes objects"):
                t.read_many([raw[0], [0.0, 5.0]])
            with pytest.raises(ValueError, match="NaN"):
                t.read_many([[np.nan, 1.0]])
            with pytest.raises(ValueError, match="a key must be 2 float64 numbers"):
                t.read([1.0, 2.0, 3.0])
        comm.Barrier()


@pytest.mark.parametrize("dtype", [">f8", "<f8", ">f4", ">i8", "<u4"])
def test_key_dtype_keeps_its_byte_order(comm: MPI.Intracomm, dtype: str) -> None:
    """A key given as numbers is stored as key_dtype's bytes, in its byte
    order, whichever it is (a float key's -0.0 folding gave native bytes
    for a big-endian float dtype)."""
    d = np.dtype(dtype)
    with mpidht.Table(comm, 2 * d.itemsize, 8, 1 << 16, key_dtype=d) as t:
        if comm.Get_rank() == 0:
            numbers = np.array([1.5 if d.kind == "f" else 3, 2], dtype=d)
            t.write(numbers.tolist(), b"v" * 8)
            assert t.read(numbers.tobytes()) == b"v" * 8     # the raw bytes of key_dtype
            t.write_many([[-0.0 if d.kind == "f" else 0, 4]], np.zeros((1, 8), np.uint8))
            assert t.read(np.array([0, 4], dtype=d).tobytes()) == bytes(8)
        comm.Barrier()
        keys, _ = t.local_entries()
        stored = comm.allgather(keys)
        found = {bytes(k) for part in stored for k in part}
        assert np.array([1.5 if d.kind == "f" else 3, 2], dtype=d).tobytes() in found


def test_key_dtype_refuses_lossy_conversion_and_bad_sizes(comm: MPI.Intracomm) -> None:
    with pytest.raises(ValueError, match="whole number"):
        mpidht.Table(comm, 12, 8, 1 << 16, key_dtype=np.float64)
    with pytest.raises(TypeError, match="numeric"):
        mpidht.Table(comm, 16, 8, 1 << 16, key_dtype="U4")
    with mpidht.Table(comm, 8, 8, 1 << 16, key_dtype=np.int64) as t:
        # An empty list or tuple is no batch of floats: nothing to read.
        nothing: list[tuple[()] | list[int]] = [[], ()]
        for empty in nothing:
            values, found = t.read_many(empty)
            assert values.shape == (0, 8) and found.shape == (0,)
        t.write_many([], np.zeros((0, 8), dtype=np.uint8))
        for floats in (np.array([1.5]), np.array([3.0]), 3.0):  # floats into ints: no
            with pytest.raises(TypeError, match="floats are never converted to an integer "
                               "key_dtype, not even whole ones"):
                t.read_many(floats)
        assert not t.read_many(np.array([3], dtype=np.int32))[1][0]  # ints widen
        comm.Barrier()


def test_key_dtype_refuses_a_float_with_padding(comm: MPI.Intracomm) -> None:
    """x86's long double holds 80 bits in 16 bytes; NumPy leaves the other 6
    as they were, so one number gave keys of different bytes (half of the
    keys written one by one were missed by read_many). Refused on every
    process; where long double has no padding it is taken."""
    ld = np.dtype(np.longdouble)
    info = np.finfo(ld)
    if info.nmant + info.nexp + 1 == 8 * ld.itemsize:
        with mpidht.Table(comm, ld.itemsize, 8, 1 << 16, key_dtype=ld) as t:
            assert t.key_dtype == ld
        return
    with pytest.raises(TypeError, match="padding bytes"):
        mpidht.Table(comm, ld.itemsize, 8, 1 << 16, key_dtype=ld)


def test_bool_key_dtype_takes_the_integers_0_and_1(comm: MPI.Intracomm) -> None:
    """[0, 1] was refused for a bool key_dtype (\"it would not keep every
    value\"); 0 and 1 are the integers a bool holds, 2 is not."""
    with mpidht.Table(comm, 2, 8, 1 << 16, key_dtype=np.bool_) as t:
        if comm.Get_rank() == 0:
            t.write([0, 1], b"A" * 8)
            assert t.read(np.array([False, True])) == b"A" * 8
            assert t.read_many([[0, 1], [1, 1]])[1].tolist() == [True, False]
            with pytest.raises(ValueError, match="key 2 cannot be held exactly"):
                t.read([0, 2])
        comm.Barrier()


@pytest.mark.parametrize("dtype, key, became", [
    (np.int8, 300, "44"),                     # wraps
    (np.uint8, -1, "255"),
    (np.int64, np.uint64(2**63), "-9223372036854775808"),
    (np.float32, 1.00000001, "1.0"),          # rounds
    (np.float32, 1e300, "inf"),               # overflows
    (np.float64, 2**53 + 1, "9007199254740992.0"),
])
def test_key_dtype_refuses_keys_it_cannot_hold(comm: MPI.Intracomm, dtype: type[np.generic],
                                               key: Any, became: str) -> None:
    """A key that would change in key_dtype is refused, in every form and
    call, naming the key and the dtype; it is never stored as the key it
    would have become."""
    name = np.dtype(dtype).name
    message = re.escape(f"key {np.asarray(key)} cannot be held exactly by the table's "
                        f"key_dtype {name} (it would become {became})")
    with mpidht.Table(comm, np.dtype(dtype).itemsize, 8, 1 << 16, key_dtype=dtype) as t:
        if comm.Get_rank() == 0:
            with pytest.raises(ValueError, match=message):
                t.write(key, b"A" * 8)
            with pytest.raises(ValueError, match=message):
                t.read(key)
            with pytest.raises(ValueError, match=message):
                k = np.asarray(key)  # its dtype: the first offender in a batch
                t.write_many(np.array([k, np.zeros_like(k)])[::-1],
                             np.zeros((2, 8), dtype=np.uint8))
            with pytest.raises(ValueError, match=message):
                t.read_many([key])
            assert t.stats()["writes"] == 0 and t.stats()["reads"] == 0
        comm.Barrier()


def test_key_dtype_takes_exact_conversions(comm: MPI.Intracomm) -> None:
    """Conversions that keep every value still pass: narrower integers in
    range, integers a float holds exactly, infinities; and a large batch
    names its first key out of range."""
    with mpidht.Table(comm, 1, 8, 1 << 16, key_dtype=np.int8) as t:
        if comm.Get_rank() == 0:
            t.write_many(np.array([-128, 127], dtype=np.int64), np.ones((2, 8), np.uint8))
            assert t.read(np.uint64(127)) == b"\x01" * 8
            assert t.read_many([-128, 127])[1].all()
            with pytest.raises(ValueError, match="key 128 cannot be held exactly"):
                t.read_many(np.arange(100_000))
        comm.Barrier()
    with mpidht.Table(comm, 4, 8, 1 << 16, key_dtype=np.float32) as t:
        if comm.Get_rank() == 0:
            t.write_many([0.5, 2**24, float("inf")], np.ones((3, 8), np.uint8))
            assert t.read_many(np.array([0.5, 2**24, np.inf], dtype=np.float32))[1].all()
            with pytest.raises(ValueError, match="key 16777217 cannot be held exactly"):
                t.read(2**24 + 1)
        comm.Barrier()
    with mpidht.Table(comm, 8, 8, 1 << 16, key_dtype=np.float64) as t:
        if comm.Get_rank() == 0:
            t.write(np.uint64(2**63), b"x" * 8)
            assert t.read(2.0**63) == b"x" * 8
            with pytest.raises(ValueError, match="key 18446744073709551615 cannot be held"):
                t.read(np.uint64(2**64 - 1))
        comm.Barrier()


# Lists of Python numbers that NumPy alone would turn into one dtype that
# changes a key: each key stays as given, and a list is checked key by key
# as a single key is.
@pytest.mark.parametrize("dtype, good, bad, message", [
    # float64: an int beyond 2**53 among ints beyond int64 (NumPy: float64).
    (np.float64, 3, 2**63 + 1, "key 9223372036854775809 cannot be held exactly by the "
     "table's key_dtype float64 (it would become 9.223372036854776e+18)"),
    # ... or among floats.
    (np.float64, 0.5, 2**53 + 1, "key 9007199254740993 cannot be held exactly by the "
     "table's key_dtype float64 (it would become 9007199254740992.0)"),
    (np.float32, 0.5, 2**24 + 1, "key 16777217 cannot be held exactly by the "
     "table's key_dtype float32 (it would become 16777216.0)"),
    # Python floats only (taken as float64 at once): one float32 rounds.
    (np.float32, 0.5, 1.00000001, "key 1.00000001 cannot be held exactly by the "
     "table's key_dtype float32 (it would become 1.0)"),
    (np.float32, 0.5, 1e300, "key 1e+300 cannot be held exactly by the "
     "table's key_dtype float32 (it would become inf)"),
    # Beyond float64's range.
    (np.float64, 3, 2**1024, f"key {2**1024} cannot be held exactly by the table's "
     "key_dtype float64 (it is beyond its range)"),
    # int64: an int beyond its range (NumPy: float64, or objects past 2**64).
    (np.int64, 5, 2**63, "key 9223372036854775808 cannot be held exactly by the "
     "table's key_dtype int64 (it would become -9223372036854775808)"),
    (np.int64, 5, 2**64, "key 18446744073709551616 cannot be held exactly by the "
     "table's key_dtype int64 (it is out of its range)"),
    (np.uint8, 5, -2**63 - 1, "key -9223372036854775809 cannot be held exactly by the "
     "table's key_dtype uint8 (it is out of its range)"),
], ids=["f8-beside-big-int", "f8-beside-float", "f4-beside-float", "f4-floats-round",
        "f4-floats-overflow", "f8-overflow",
        "i8-2**63", "i8-2**64", "u1-below-int64"])
def test_key_lists_are_checked_key_by_key(comm: MPI.Intracomm, dtype: type[np.generic],
                                          good: Any, bad: Any, message: str) -> None:
    """Every call that takes keys refuses a list holding a key the dtype
    does not hold, with the single key's ValueError naming it, however
    NumPy would have converted the list; nothing is read or written."""
    size = np.dtype(dtype).itemsize
    pattern = re.escape(message)
    values = np.zeros((2, 8), dtype=np.uint8)
    with mpidht.Table(comm, size, 8, 1 << 16, key_dtype=dtype) as t, \
            mpidht.Table(comm, 2 * size, 8, 1 << 16, key_dtype=dtype) as pairs:
        if comm.Get_rank() == 0:
            with pytest.raises(ValueError, match=pattern):
                t.read(bad)
            calls: list[Callable[[], object]] = [
                lambda: t.read_many([good, bad]),
                lambda: t.read_many((good, bad)),
                lambda: t.read_many([[good], [bad]]),
                lambda: t._read_into([good, bad], np.zeros((2, 8), dtype=np.uint8)),
                lambda: t.write_many([good, bad], values),
                lambda: t.update_many([good, bad], lambda i, old: b"u" * 8),
                lambda: pairs.read([good, bad]),
                lambda: pairs.write([good, bad], b"w" * 8),
                lambda: pairs.remove([good, bad]),
                lambda: pairs.update([good, bad], lambda old: b"u" * 8),
                lambda: pairs.read_many([[good, bad]]),
                lambda: pairs.write_many([[good, good], [good, bad]], values),
            ]
            for call in calls:
                with pytest.raises(ValueError, match=pattern):
                    call()
            for table in (t, pairs):
                stats = table.stats()
                assert stats["reads"] == stats["writes"] == 0
        comm.Barrier()


def test_key_list_never_hits_a_rounded_key(comm: MPI.Intracomm) -> None:
    """2**63 + 1 beside 0 or 3 in a list (float64 for NumPy, where it is
    2**63) is refused, never a hit on the entry of 2**63."""
    with mpidht.Table(comm, 16, 8, 1 << 16, key_dtype=np.float64) as t:
        if comm.Get_rank() == 0:
            t.write([0, 2**63], b"v" * 8)
            assert t.read([0, 2**63]) == b"v" * 8
            assert t.read([0.0, 2.0**63]) == b"v" * 8
            with pytest.raises(ValueError, match="key 9223372036854775809 "):
                t.read([0, 2**63 + 1])
            # Exact conversions of lists still pass, as before.
            rows: list[list[float]] = [[0, 2**63], [0.0, 2.0**63]]
            assert t.read_many(rows)[1].all()
            assert t.read([2**64, 0.5]) is None
        comm.Barrier()
    with mpidht.Table(comm, 8, 8, 1 << 16, key_dtype=np.float64) as t:
        if comm.Get_rank() == 0:
            t.write(2**63, b"v" * 8)
            with pytest.raises(ValueError, match="key 9223372036854775809 "):
                t.read_many([3, 2**63 + 1])
            assert list(t.read_many([3, 2**63, 2**64, 0.5])[1]) == [False, True, False, False]
        comm.Barrier()
