"""A surrogate for an expensive step model, shared by every MPI process:
exact-key reuse through ``mpidht.Table`` and error-controlled
interpolation through ``mpidht.interp``, outside any simulator.

The model: a reversible reaction A <-> B with second-order forward rate,
integrated over one time step with many small explicit steps (the
expensive part). A + B is conserved, and neither may go negative. Every
process draws states near a slowly drifting centre (as cells of a
simulation would), and asks the surrogate first. Run:

    mpiexec -n 2 python examples/python/surrogate.py [--states 2000]

It prints, summed over the processes, how many states were exact-key
hits, accepted interpolations and model calls, and the error of the
verified predictions against the model.
"""

from __future__ import annotations

import argparse
from typing import Optional, Sequence

import numpy as np
import numpy.typing as npt
from mpi4py import MPI

import mpidht
from mpidht.interp import Check, Method, Neighbours, Settings, Verification
from mpidht.keys import KeyColumn, Rounding, encode_keys

Array = npt.NDArray[np.float64]
FORWARD, BACKWARD, DT, SUBSTEPS = 3.0, 0.5, 0.05, 500


def model(states: Array) -> Array:
    """The expensive model: (A, B) after DT."""
    a, b = states[:, 0].copy(), states[:, 1].copy()
    h = DT / SUBSTEPS
    for _ in range(SUBSTEPS):
        rate = FORWARD * a * a - BACKWARD * b
        a, b = a - h * rate, b + h * rate
    return np.column_stack([a, b])


def _positive(text: str) -> int:
    """A whole number above 0, for argparse."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main(argv: Optional[Sequence[str]] = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=_positive, default=2000, help="states per process")
    parser.add_argument("--batch", type=_positive, default=50,
                        help="states per surrogate call (the last call takes what is left)")
    args = parser.parse_args(argv)
    comm = MPI.COMM_WORLD
    rng = np.random.default_rng(comm.Get_rank())

    # Exact keys: 4 significant digits of log10(A) and log10(B).
    fine = [KeyColumn(Rounding.SIGNIFICANT, 4, log=True, floor=1e-12)] * 2
    # Neighbour classes: 1 significant digit of the same.
    coarse = [KeyColumn(Rounding.SIGNIFICANT, 1, log=True, floor=1e-12)] * 2
    settings = Settings(tolerance=2e-4, radius=0.1, method=Method.LINEAR, slots=16,
                        min_neighbours=6, nonnegative=[0, 1], conserved=[[1.0, 1.0]],
                        conservation_rtol=1e-9)
    verification = Verification(fraction=0.05, seed=comm.Get_rank())
    counts = np.zeros(3, dtype=np.int64)  # hits, interpolated, model calls
    with mpidht.Table(comm, 32, 16, 1 << 22) as table, \
            Neighbours(comm, coarse, settings, 1 << 22) as near:
        for start in range(0, args.states, args.batch):
            centre = np.array([0.5 + 0.3 * start / args.states, 0.2])
            n = min(args.batch, args.states - start)
            states = centre * (1 + 0.05 * rng.uniform(-1, 1, size=(n, 2)))
            keys = encode_keys(states, fine)
            stored, found = table.read_many(keys)
            out = np.empty_like(states)
            out[found] = stored[found].view(np.float64).reshape(-1, 2)
            miss = np.flatnonzero(~found)
            p = near.predict(states[miss])
            ok = miss[p.check == Check.ACCEPTED]
            check = verification.choose(ok.size)
            out[ok[~check]] = p.values[p.check == Check.ACCEPTED][~check]
            todo = np.setdiff1d(miss, ok[~check])
            out[todo] = model(states[todo])
            verification.add(p.values[p.check == Check.ACCEPTED][check], out[ok[check]])
            table.write_many(keys[todo], out[todo])
            near.publish(states[todo], out[todo])
            counts += [found.sum(), (~check).sum(), todo.size]
        comm.Barrier()
    total = comm.reduce(counts, op=MPI.SUM, root=0)
    everyone = comm.gather(verification, root=0)
    if comm.Get_rank() != 0:
        return {}
    merged = Verification()
    for v in everyone or []:
        merged.merge(v)
    assert total is not None
    worst = float(merged.max_abs.max()) if merged.count else 0.0
    print(f"{int(total.sum())} states on {comm.Get_size()} processes: {total[0]} exact-key "
          f"hits, {total[1]} interpolated, {total[2]} computed by the model; verified "
          f"{merged.count} predictions: worst error {worst:.2e}")
    return {"hits": float(total[0]), "interpolated": float(total[1]),
            "computed": float(total[2]), "verified": float(merged.count), "worst": worst}


if __name__ == "__main__":
    main()
