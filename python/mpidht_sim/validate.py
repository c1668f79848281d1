"""Validation against a reference run without the DHT, in the shape of the
POET paper's Table 1: for each choice of significant digits (aqueous,
minerals) and rounding of the value or of its log10, the maximum over
iterations of the error measure of Eq. (2), the hit rate and the chemistry
time against the reference. Usage, under mpiexec:

    python -m mpidht_sim.validate [--config FILE] [--set grid.nx=20 ...] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

from .cli import parse_overrides
from .config import AQUEOUS, MINERALS, ConfigError, load

#: (aqueous digits, mineral digits): the span of the paper's Table 1.
DIGITS = ((5, 4), (6, 5), (7, 6), (8, 7))
#: The reduced grid and run length used unless --set says otherwise.
REDUCED = {"grid.nx": 20, "grid.ny": 20, "time.iterations": 60, "run.save_every": 1}


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mpidht_sim.validate", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", type=Path, default=None,
                        help="TOML run description (default: SimDol2D)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override a setting (default: a 20 x 20 grid, 60 iterations)")
    parser.add_argument("--out", type=Path, default=Path("sim-validation"),
                        help="folder for validation.md (default sim-validation)")
    args = parser.parse_args(argv)
    try:
        overrides: dict[str, Any] = {**REDUCED, **parse_overrides(args.set)}
        reference_cfg = load(args.config, {**overrides, "dht.enabled": False})
        variants = [(a, m, log, load(args.config, {
            **overrides, "dht.enabled": True, "dht.log": log,
            "dht.digits": {**{v: a for v in AQUEOUS}, **{v: m for v in MINERALS}}}))
            for a, m in DIGITS for log in (True, False)]
    except ConfigError as e:
        print(f"mpidht_sim.validate: configuration error: {e}", file=sys.stderr)
        return 2

    from mpi4py import MPI

    from .driver import error_measure, run

    comm = MPI.COMM_WORLD
    reference = run(reference_cfg, comm)
    rows = []
    for aqueous, minerals, log, cfg in variants:
        result = run(cfg, comm)
        if comm.Get_rank() != 0:
            continue
        worst = max(error_measure(result.saved[it], reference.saved[it])
                    for it in reference.saved if it > 0)
        hits = sum(r.hits for r in result.records)
        cells = hits + sum(r.misses for r in result.records)
        ref_chem = sum(r.chemistry_s for r in reference.records)
        chem = sum(r.chemistry_s for r in result.records)
        rows.append(f"| {aqueous} | {minerals} | {'log10' if log else 'value'} | "
                    f"{worst:.2e} | {hits / max(cells, 1):.1%} | "
                    f"{ref_chem / max(chem, 1e-9):.1f}× |")
    if comm.Get_rank() != 0:
        return 0
    cfg = reference_cfg
    text = [
        "# Validation against the reference (no DHT)", "",
        f"{cfg.nx} x {cfg.ny} cells, {cfg.iterations} iterations, {comm.Get_size()} processes, "
        f"DHT protocol {variants[0][3].dht.protocol}, floor {variants[0][3].dht.floor:g}. "
        "Error: Eq. (2) of the POET paper, the maximum over iterations; about 1e-5 is "
        "acceptable. Speedup: PHREEQC time of the reference over that of the DHT run.", "",
        "| aqueous digits | mineral digits | rounded | max error | hit rate | chemistry speedup |",
        "| --- | --- | --- | --- | --- | --- |", *rows, ""]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "validation.md").write_text("\n".join(text))
    print("\n".join(text))
    print(f"written: {args.out / 'validation.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
