"""Command line: ``python -m mpidht_sim [options]`` under mpiexec."""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path
from typing import Any, Optional, Sequence

from .config import DEFAULT_CONFIG, ConfigError, Config, load


def _parse_value(text: str) -> Any:
    """A TOML value (so that --set 'dht.digits={C = 4, ...}' gives a table),
    else an int, a float, a bool or the text itself."""
    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        pass
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m mpidht_sim",
        description="Reactive transport (POET's SimDol2D calcite-dolomite benchmark) with "
                    "PHREEQC chemistry and the mpidht distributed hash table as its "
                    "surrogate. Rank 0 computes flow and transport; the other ranks "
                    "compute chemistry in work packages.",
        epilog=f"The default configuration is {DEFAULT_CONFIG.name} (documented in place). "
               "Example: mpiexec -n 2 python -m mpidht_sim --iterations 20")
    parser.add_argument("--config", type=Path, default=None,
                        help="TOML run description (default: the SimDol2D benchmark)")
    parser.add_argument("--iterations", type=int, help="coupling iterations (time.iterations)")
    parser.add_argument("--no-dht", action="store_true",
                        help="reference run: PHREEQC for every cell (dht.enabled = false)")
    parser.add_argument("--output", type=Path, help="output folder (run.output_dir)")
    parser.add_argument("--warm-start", type=Path, metavar="DHT_FILE",
                        help="start from a DHT saved by an earlier run (dht.restore)")
    parser.add_argument("--save-dht", action="store_true",
                        help="save the DHT as OUTPUT/dht.mpidht at every saved "
                             "iteration (dht.dump)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one setting, e.g. --set grid.nx=20 (repeatable)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser.parse_args(argv)


def parse_overrides(items: Sequence[str]) -> dict[str, Any]:
    """--set SECTION.KEY=VALUE items as a dict of overrides."""
    overrides: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--set {item!r}: expected SECTION.KEY=VALUE")
        overrides[key.strip()] = _parse_value(value.strip())
    return overrides


def build_config(args: argparse.Namespace) -> Config:
    overrides = parse_overrides(args.set)
    if args.iterations is not None:
        overrides["time.iterations"] = args.iterations
    if args.no_dht:
        overrides["dht.enabled"] = False
    if args.output is not None:
        overrides["run.output_dir"] = str(args.output)
    if args.warm_start is not None:
        overrides["dht.restore"] = str(args.warm_start)
    if args.save_dht:
        overrides["dht.dump"] = True
    return load(args.config, overrides)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    try:
        cfg = build_config(args)  # every rank checks it, before any MPI work
    except ConfigError as e:
        print(f"mpidht_sim: configuration error: {e}", file=sys.stderr)
        return 2
    from mpi4py import MPI

    from .driver import run
    from .output import save

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    bar: Any = None
    if rank == 0 and not args.quiet:
        from tqdm import tqdm
        bar = tqdm(total=cfg.iterations, unit="it", desc="coupling", file=sys.stderr)

    def progress(record: Any) -> None:
        if bar is not None:
            cells = record.hits + record.misses
            bar.set_postfix(hit_rate=f"{record.hits / max(cells, 1):.0%}")
            bar.update(1)

    try:
        result = run(cfg, comm, progress)
    except Exception as e:  # a worker or PHREEQC failed: stop every rank
        print(f"mpidht_sim: rank {rank}: {type(e).__name__}: {e}", file=sys.stderr)
        comm.Abort(1)
        return 1
    if bar is not None:
        bar.close()
    if rank != 0:
        return 0
    records = result.records
    hits = sum(r.hits for r in records)
    cells = hits + sum(r.misses for r in records)
    transport = sum(r.transport_s for r in records)
    chemistry = sum(r.chemistry_s for r in records)
    dht = sum(r.dht_s for r in records)
    path = save(result, cfg, cfg.output_dir, {"processes": comm.Get_size()})
    print(f"{cfg.nx} x {cfg.ny} cells, {cfg.iterations} iterations, "
          f"{comm.Get_size()} processes, DHT {'on (' + cfg.dht.protocol + ')' if cfg.dht.enabled else 'off'}")
    print(f"runtime {result.wall_s:.1f} s: transport {transport:.1f} s, "
          f"chemistry {chemistry:.1f} s (summed over workers), DHT {dht:.1f} s")
    print(f"hit rate {hits / max(cells, 1):.1%} ({hits} of {cells} cell reactions), "
          f"evictions {result.evictions}")
    if result.restored:
        print(f"warm start: {result.restored} DHT entries loaded from {cfg.dht.restore}")
    if result.dht_dump is not None:
        print(f"DHT saved to {result.dht_dump} ({result.dump_s:.1f} s)")
    print(f"outputs: {path.parent}")
    return 0
