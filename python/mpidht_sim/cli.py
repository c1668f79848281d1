"""Command line: ``python -m mpidht_sim [options]`` under mpiexec."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
import tomllib
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional, Sequence, TextIO

from . import __version__
# The configuration (NumPy, PHREEQC) is imported when used: main notes the
# stop signal from its start, before those imports take their time.
from .errors import ConfigError

if TYPE_CHECKING:
    from _typeshed import SupportsWrite
    from mpi4py import MPI

    from .config import Config

#: Where MPI launchers put a process's rank before MPI starts (Open MPI,
#: PMIx, MPICH's Hydra); arguments are parsed before MPI starts.
RANK_VARIABLES = ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK")


def launcher_rank() -> int:
    """This process's rank as the MPI launcher set it (0 without one)."""
    for name in RANK_VARIABLES:
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return 0


class Parser(argparse.ArgumentParser):
    """An argument parser whose help, version and usage errors are printed
    by rank 0 only (every rank parses, and exits alike), and which takes
    --version."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.add_argument("--version", action="version",
                          version=f"%(prog)s (mpidht_sim) {__version__}")

    def _print_message(self, message: str,
                       file: Optional["SupportsWrite[str]"] = None) -> None:
        if launcher_rank() == 0:
            super()._print_message(message, file)


def _parse_value(text: str) -> Any:
    """A TOML value (so that --set 'dht.digits={C = 4, ...}' gives a table),
    else an int, a float, a bool or the text itself. Text that opens a TOML
    string, array or table but is not one (an unclosed quote) raises
    ConfigError rather than becoming text with its quote in it."""
    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError as e:  # checked as text, then refused
        if text[:1] in ("'", '"', "[", "{"):
            raise ConfigError(f"the value opens a TOML string, array or table but is not "
                              f"one ({e}); quote a text whole or not at all") from None
    except RecursionError:
        pass
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    """--config FILE and --set SECTION.KEY=VALUE, as every command takes them."""
    from .config import DEFAULT_CONFIG

    parser.add_argument("--config", type=Path, default=None,
                        help="TOML run description (default: the SimDol2D benchmark, "
                             f"{DEFAULT_CONFIG.name}, documented in place)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one setting, e.g. --set grid.porosity=0.3 or "
                             "--set dht.digits.C=5 (repeatable)")


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    from .config import DEFAULT_CONFIG

    parser = Parser(
        prog="python -m mpidht_sim",
        description="Reactive transport (POET's SimDol2D calcite-dolomite benchmark) with "
                    "PHREEQC chemistry and the mpidht distributed hash table as its "
                    "surrogate. Rank 0 computes flow and transport; the other ranks "
                    "compute chemistry in work packages.",
        epilog=f"The default configuration is {DEFAULT_CONFIG.name} (documented in place). "
               "Example: mpiexec -n 2 python -m mpidht_sim --iterations 20. "
               "SIGUSR1 (to mpiexec, which forwards it) or run.stop_after stops a run "
               "after the iteration in progress: it saves that iteration's fields (and, "
               "with --save-dht, the DHT), writes summary.json and exits with 3. Exit "
               "status 1: values that are not finite, bounds against the reference "
               "exceeded, or no comparison with it made; 2: a configuration or a table "
               "refused.")
    add_config_arguments(parser)
    parser.add_argument("--iterations", type=int, help="coupling iterations (time.iterations)")
    parser.add_argument("--no-dht", action="store_true",
                        help="reference run: PHREEQC for every cell (dht.enabled = false)")
    # A string, not a Path: str(Path("")) is ".", and "" must reach the
    # configuration's check.
    parser.add_argument("--output", help="output folder (run.output_dir)")
    parser.add_argument("--warm-start", type=Path, metavar="DHT_FILE",
                        help="start from a DHT saved by an earlier run (dht.restore)")
    parser.add_argument("--save-dht", action="store_true",
                        help="save the DHT as OUTPUT/dht.mpidht at every saved "
                             "iteration (dht.dump)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an earlier run's outputs in the output folder "
                             "(run.overwrite); without it such a folder is refused")
    parser.add_argument("--no-plots", action="store_true",
                        help="draw no maps.png or iterations.png (run.plots = false); "
                             "everything else is written as before")
    parser.add_argument("--reference", type=Path, metavar="RUN_DIR",
                        help="compare the saved fields with those of a reference run, e.g. "
                             "one made with --no-dht (run.reference); the errors go to "
                             "summary.json, and the run exits with 1 where its worst cell "
                             "exceeds run.cell_bound (1e-3) or its worst RMS term "
                             "run.rms_bound (1e-4) over the iterations compared, or where "
                             "no iteration could be compared")
    parser.add_argument("--stop-after", type=float, metavar="SECONDS",
                        help="stop rather than begin an iteration that may end more than "
                             "SECONDS after the first step (run.stop_after; exit status 3)")
    parser.add_argument("--quiet", action="store_true", help="no progress output")
    return parser.parse_args(argv)


def parse_overrides(items: Sequence[str]) -> dict[str, Any]:
    """--set SECTION.KEY=VALUE items as a dict of overrides."""
    overrides: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--set {item!r}: expected SECTION.KEY=VALUE")
        try:
            overrides[key.strip()] = _parse_value(value.strip())
        except ConfigError as e:
            raise ConfigError(f"--set {item!r}: {e}") from None
    return overrides


def build_config(args: argparse.Namespace) -> Config:
    from .config import load

    overrides = parse_overrides(args.set)
    flags: dict[str, tuple[str, Any]] = {}
    if args.iterations is not None:
        flags["time.iterations"] = ("--iterations", args.iterations)
    if args.no_dht:
        flags["dht.enabled"] = ("--no-dht", False)
    if args.output is not None:
        flags["run.output_dir"] = ("--output", args.output)
    if args.warm_start is not None:
        flags["dht.restore"] = ("--warm-start", str(args.warm_start))
    if args.save_dht:
        flags["dht.dump"] = ("--save-dht", True)
    if args.overwrite:
        flags["run.overwrite"] = ("--overwrite", True)
    if args.no_plots:
        flags["run.plots"] = ("--no-plots", False)
    if args.reference is not None:
        flags["run.reference"] = ("--reference", str(args.reference))
    if args.stop_after is not None:
        flags["run.stop_after"] = ("--stop-after", args.stop_after)
    for key, (flag, value) in flags.items():
        if key in overrides:  # one would silently win over the other
            raise ConfigError(f"{flag} and --set {key} both set {key}: give one")
        overrides[key] = value
    return load(args.config, overrides)


#: Seconds after which a run writing to a log says where it is, whatever
#: tenth of the run it is in.
PROGRESS_S = 60.0


def progress_reporter(total: int, stream: TextIO,
                      clock: Callable[[], float] = time.perf_counter
                      ) -> tuple[Callable[[Any], None], Callable[[], None]]:
    """(update per iteration record, close): a tqdm bar on a terminal, else
    a line at every tenth of the run, so that logs stay readable, and
    after any iteration that ends PROGRESS_S or more after the last line
    (a long run's tenth, or an iteration count set beyond reach, showed
    nothing for hours)."""
    if stream.isatty():
        from tqdm import tqdm

        bar = tqdm(total=total, unit="it", desc="coupling", file=stream)

        def update(record: Any) -> None:
            cells = record.hits + record.interpolated + record.misses
            bar.set_postfix(hit_rate=f"{record.hits / max(cells, 1):.0%}",
                            interpolated=f"{record.interpolated / max(cells, 1):.0%}")
            bar.update(1)
        return update, bar.close

    start = clock()
    last = [start]
    every = max(1, total // 10)

    def line(record: Any) -> None:
        now = clock()
        if (record.iteration % every == 0 or record.iteration == total
                or now - last[0] >= PROGRESS_S):
            last[0] = now
            cells = record.hits + record.interpolated + record.misses
            print(f"iteration {record.iteration}/{total}: hit rate "
                  f"{record.hits / max(cells, 1):.1%}, interpolated "
                  f"{record.interpolated / max(cells, 1):.1%}, "
                  f"{now - start:.1f} s", file=stream, flush=True)
    return line, lambda: None


#: The exit status of a run stopped before its last iteration (SIGUSR1 or
#: run.stop_after), which wrote everything up to there.
EXIT_STOPPED = 3
#: The signal that asks a run to stop after the iteration in progress:
#: mpirun forwards it to every process, and Slurm sends it ahead of a
#: job's end with --signal=USR1@SECONDS.
STOP_SIGNAL = signal.SIGUSR1


@contextmanager
def stop_on_signal(master: bool) -> Iterator[Callable[[], Optional[str]]]:
    """While open, STOP_SIGNAL no longer ends this process: on the master
    it is noted, and the callable yielded gives the reason to stop once it
    came (driver.run asks after each iteration); the other processes
    ignore it (the launcher sends it to every process). The handlers before
    are put back on leaving."""
    received: list[str] = []

    def note(signum: int, frame: Optional[FrameType]) -> None:
        received.append(signal.Signals(signum).name)

    previous = signal.signal(STOP_SIGNAL, note if master else signal.SIG_IGN)
    # The note waits for the interpreter; a system call the signal comes
    # in (MPI's own, in any thread) restarts instead of failing with EINTR.
    signal.siginterrupt(STOP_SIGNAL, False)
    try:
        yield lambda: f"{received[0]} received" if received else None
    finally:
        signal.signal(STOP_SIGNAL, previous)


def main(argv: Optional[Sequence[str]] = None) -> int:
    # From the start, before the configuration is checked (PHREEQC computes
    # the waters) and MPI starts: a signal that comes while the run is set
    # up stops it after its first iteration; a worker ignores it. The rank
    # is the launcher's, MPI's own not being known yet (without a launcher
    # every process counts as rank 0 and takes a note; only the master of
    # the run asks for it).
    with stop_on_signal(launcher_rank() == 0) as stop:
        args = parse_args(argv)
        try:
            cfg = build_config(args)  # every rank checks it, before any MPI work
        except ConfigError as e:
            if launcher_rank() == 0:  # every rank found it; one says so
                print(f"mpidht_sim: configuration error: {e}", file=sys.stderr)
            return 2
        from mpi4py import MPI

        comm = MPI.COMM_WORLD
        return ending_job_on_failure("mpidht_sim", comm,
                                     partial(_simulate, args, cfg, comm, stop))


# How long a process that ends the job waits after printing why, so that
# the launcher forwards the message before MPI_Abort has it killed: MPICH's
# Hydra lost the whole job's stderr in 2 of 30 jobs without the wait
# (0 of 40 with it).
ABORT_GRACE_SECONDS = 0.5


def ending_job_on_failure(prog: str, comm: "MPI.Intracomm", work: Callable[[], int]) -> int:
    """work()'s exit status. work is collective over comm: an exception in
    it on one process would leave the others waiting, so it prints the
    process's rank and the error and ends the whole job (MPI_Abort, after
    ABORT_GRACE_SECONDS) where there are others."""
    try:
        return work()
    except Exception as e:
        print(f"{prog}: rank {comm.Get_rank()}: {type(e).__name__}: {e}",
              file=sys.stderr, flush=True)
        if comm.Get_size() > 1:
            time.sleep(ABORT_GRACE_SECONDS)
            comm.Abort(1)
        return 1


def checked_on_one(comm: "MPI.Intracomm", check: Callable[[], object]) -> Optional[str]:
    """Runs check on process 0 of comm (the one that writes what it
    checks) and gives every process its verdict: the message of the
    ConfigError it raised, or None. Collective."""
    problem = None
    if comm.Get_rank() == 0:
        try:
            check()
        except ConfigError as e:
            problem = str(e)
    from .waiting import bcast

    verdict: Optional[str] = bcast(comm, problem)
    return verdict


def _simulate(args: argparse.Namespace, cfg: Config, comm: "MPI.Intracomm",
              stop: Callable[[], Optional[str]]) -> int:
    """main's run of a checked configuration, collective over comm; its
    exit status. An exception on one process would leave the others
    waiting: main ends the whole job on one."""
    from .driver import RunRefused, run, run_package_size, worker_count
    from .flow import advection_for
    from .output import check_folders, finish, job, start, unstart, write_field
    from .waiting import bcast

    rank = comm.Get_rank()

    # The folders are checked by one process, which then writes into them,
    # and the flow, which it computes: every process gets the same verdict,
    # before anything is written.
    def check() -> None:
        check_folders(cfg)
        advection_for(cfg)

    problem = checked_on_one(comm, check)
    if problem is not None:
        if rank == 0:
            print(f"mpidht_sim: configuration error: {problem}", file=sys.stderr)
        return 2
    made = False
    if rank == 0:
        made = start(cfg)
        print(f"{cfg.nx} x {cfg.ny} cells, {cfg.iterations} iterations, "
              f"{comm.Get_size()} processes ({worker_count(comm.Get_size())} reacting, "
              f"packages of {run_package_size(cfg, comm.Get_size())} cells), DHT "
              f"{'on (' + cfg.dht.protocol + ')' if cfg.dht.enabled else 'off'}")
        print("waters, computed before the first step:")
        for name, water in cfg.waters.items():
            print(f"  {name:8s} {water.describe()}")
        print(f"  minerals: calcite {cfg.initial['calcite']:g} mol, "
              f"dolomite {cfg.initial['dolomite']:g} mol per cell", flush=True)
    progress: Optional[Callable[[Any], None]] = None
    close: Callable[[], None] = lambda: None
    if rank == 0 and not args.quiet:
        progress, close = progress_reporter(cfg.iterations, sys.stderr)
    try:
        result = run(cfg, comm, progress,
                     partial(write_field, cfg, cfg.output_dir) if rank == 0 else None, stop)
    except RunRefused as e:  # on every process: each ends, one says why
        close()
        if rank == 0:
            unstart(cfg, made)
            print(f"mpidht_sim: refused before the first step: {e}", file=sys.stderr)
        return 2
    close()
    failure, stopped = None, None
    if rank == 0:
        done = finish(result, cfg, job(cfg, comm.Get_size()), plots=cfg.plots)
        stopped = result.stopped
        for line in done.lines:
            print(line)
        failure = done.failure
        if failure is not None:
            print(f"mpidht_sim: values that are not finite: {failure}", file=sys.stderr)
        if done.exceeded is not None:
            print(f"mpidht_sim: bounds exceeded: {done.exceeded}", file=sys.stderr)
            failure = failure or done.exceeded
        if done.not_compared is not None:
            # Asked for and not made: nothing was judged, which is no pass.
            print(f"mpidht_sim: not compared: {done.not_compared}", file=sys.stderr)
            failure = failure or done.not_compared
    # Every process exits alike.
    failure, stopped = bcast(comm, (failure, stopped))
    return 1 if failure is not None else EXIT_STOPPED if stopped is not None else 0
