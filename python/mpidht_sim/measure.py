"""The error measure of Eq. (2) of the POET paper, and its command line:
comparing the fields two runs saved, e.g. a DHT run against a reference
run without the DHT. No MPI. Usage:

    python -m mpidht_sim.measure RUN_DIR REFERENCE_DIR
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import numpy.typing as npt

from .config import VARIABLES

Array = npt.NDArray[np.float64]


def error_measure(run: Array, reference: Array) -> float:
    """Eq. (2) of the POET paper: the geometric mean over variables of the
    RMS difference to the reference, each normalised by the variable's
    maximum magnitude in the reference (variables that are zero everywhere
    in both are left out)."""
    terms = []
    for j in range(reference.shape[1]):
        scale = np.abs(reference[:, j]).max()
        rms = float(np.sqrt(np.mean((run[:, j] - reference[:, j]) ** 2)))
        if scale == 0:
            if rms == 0:
                continue
            scale = 1.0
        terms.append(max(rms / scale, 1e-300))
    return float(np.exp(np.mean(np.log(terms)))) if terms else 0.0


def load_fields(folder: Path) -> dict[int, Array]:
    """The fields_NNNNN.npz a run saved, by iteration, as (cells, variables)."""
    fields = {}
    for path in folder.glob("fields_*.npz"):
        match = re.fullmatch(r"fields_(\d+)\.npz", path.name)
        if match:
            with np.load(path) as data:
                fields[int(match.group(1))] = np.column_stack(
                    [data[v].ravel() for v in VARIABLES])
    return fields


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mpidht_sim.measure", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path, help="output folder of the run to judge")
    parser.add_argument("reference", type=Path, help="output folder of the reference run")
    args = parser.parse_args(argv)
    run, ref = load_fields(args.run), load_fields(args.reference)
    common = sorted(set(run) & set(ref) - {0})
    if not common:
        print(f"mpidht_sim.measure: no saved iteration (other than 0) in both {args.run} "
              f"and {args.reference}", file=sys.stderr)
        return 2
    if run[common[0]].shape != ref[common[0]].shape:
        print("mpidht_sim.measure: the runs have different grids", file=sys.stderr)
        return 2
    errors = [(it, error_measure(run[it], ref[it])) for it in common]
    for it, err in errors:
        print(f"{it:6d} {err:.3e}")
    worst = max(errors, key=lambda e: e[1])
    print(f"max error {worst[1]:.3e} at iteration {worst[0]} ({len(errors)} iterations compared)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
