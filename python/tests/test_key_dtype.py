"""Keys are bytes: the traps, and the key_dtype guard that removes them.
Without it an int64 array never matches float64 keys of the same numbers
and -0.0 misses an entry written under 0.0; with key_dtype=np.float64 both
find it, a NaN key is refused and floats are not truncated into ints."""

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
            # Bytes objects are still raw keys.
            assert t.read(np.array([1.0, 2.0]).tobytes()) == bytes(range(8))
            with pytest.raises(ValueError, match="NaN"):
                t.read_many([[np.nan, 1.0]])
            with pytest.raises(ValueError, match="a key must be 2 float64 numbers"):
                t.read([1.0, 2.0, 3.0])
        comm.Barrier()


def test_key_dtype_refuses_lossy_conversion_and_bad_sizes(comm: MPI.Intracomm) -> None:
    with pytest.raises(ValueError, match="whole number"):
        mpidht.Table(comm, 12, 8, 1 << 16, key_dtype=np.float64)
    with pytest.raises(TypeError, match="numeric"):
        mpidht.Table(comm, 16, 8, 1 << 16, key_dtype="U4")
    with mpidht.Table(comm, 8, 8, 1 << 16, key_dtype=np.int64) as t:
        with pytest.raises(TypeError, match="without losing"):
            t.read_many(np.array([1.5]))                 # floats into ints: no
        assert not t.read_many(np.array([3], dtype=np.int32))[1][0]  # ints widen
        comm.Barrier()
