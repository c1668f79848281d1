"""The coupled simulation, POET's way: rank 0 computes flow and transport and
hands out chemistry in work packages; every other rank is a worker.

Work packages are built round-robin (package k holds the reacting cells
k, k + P, k + 2P, ... of the P packages), so that each one mixes cells from
all over the domain, and they are dispatched dynamically: a worker gets the
next package as soon as it returns one. With a single process, rank 0 does
the chemistry itself. The workers share one DHT (on their own
communicator); before running PHREEQC a worker looks up its whole package
with one batched read, and writes back what it had to compute with one
batched write.

A hit is accepted only if its result has no negative amount (a total or a
mineral); a rejected hit is computed by PHREEQC like a miss, and its result
replaces the entry (``surrogate``). Misses of one package that share a key
are computed once: the others take the change PHREEQC made for the first,
as they would have hit had they come in a later package ("shared" hits).
With ``[interp]`` on, the misses are then predicted from stored
neighbours (``mpidht.interp``); a prediction that passes every check is
used, one that fails is computed by PHREEQC, and ``interp.verify`` of the
accepted ones are computed as well, their true error recorded
(``Verification``) and PHREEQC's result used.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import numpy.typing as npt
from mpi4py import MPI

import mpidht
from mpidht.interp import Check, Neighbours, Verification

from .checkpoint import DHT_FILE, write_settings
from .chemistry import Chemistry
from .config import Config
from .flow import advection_for
from .surrogate import (KEY_SIZE, VALUE_SIZE, Surrogate, fingerprint, interpolation,
                        same_key, variable_scales)
from .variables import AQUEOUS, VARIABLES
from .waiting import barrier, recv

__all__ = ["Counters", "IterationRecord", "RunResult", "run"]

Array = npt.NDArray[np.float64]
#: Outcomes of a prediction, in mpidht.interp.Check's order (Counters.checks).
CHECKS = tuple(c.name.lower() for c in Check) + ("budget",)
#: The outcome of a prediction that passed every check of mpidht.interp
#: but would take its cell past interp.budget.
OVER_BUDGET = len(Check)
TAG_WORK, TAG_RESULT, TAG_STOP, TAG_DUMP = 1, 2, 3, 4


@dataclass
class Counters:
    """What one package (or a whole iteration) cost and found. Every cell
    is either a hit (its stored change was used) or a miss (PHREEQC
    computed it); exact hits are hits whose input equals the one the change
    was computed from; rejected are found entries that a check refused
    (counted among the misses). With interpolation, a cell is a hit, an
    interpolated cell (an accepted prediction used) or a miss; ``checks``
    counts the predictions by outcome (CHECKS: accepted ones first, the
    verified among them), and verified accepted predictions are misses.
    Shared hits are misses that took the change PHREEQC computed for
    another cell of the same package with the same key (counted among the
    hits).
    dht_s is all the surrogate's time (keys, DHT calls, interpolation),
    interp_s the part spent predicting and publishing."""

    hits: int = 0
    misses: int = 0
    exact_hits: int = 0
    rejected: int = 0
    interpolated: int = 0
    verified: int = 0
    shared: int = 0
    checks: list[int] = field(default_factory=lambda: [0] * len(CHECKS))
    chemistry_s: float = 0.0
    dht_s: float = 0.0
    interp_s: float = 0.0

    def add(self, other: "Counters") -> None:
        self.hits += other.hits
        self.misses += other.misses
        self.exact_hits += other.exact_hits
        self.rejected += other.rejected
        self.interpolated += other.interpolated
        self.verified += other.verified
        self.shared += other.shared
        self.checks = [a + b for a, b in zip(self.checks, other.checks)]
        self.chemistry_s += other.chemistry_s
        self.dht_s += other.dht_s
        self.interp_s += other.interp_s


@dataclass
class IterationRecord:
    iteration: int
    hits: int
    misses: int
    exact_hits: int
    rejected: int
    transport_s: float
    chemistry_s: float
    dht_s: float
    wall_s: float
    interpolated: int = 0
    verified: int = 0
    checks: list[int] = field(default_factory=lambda: [0] * len(CHECKS))
    interp_s: float = 0.0
    shared: int = 0


@dataclass
class RunResult:
    records: list[IterationRecord] = field(default_factory=list)
    saved: dict[int, Array] = field(default_factory=dict)
    final: Optional[Array] = None
    evictions: int = 0
    wall_s: float = 0.0
    restored: int = 0                  # entries loaded from dht.restore
    dht_dump: Optional[Path] = None    # where the DHT was saved
    dump_s: float = 0.0                # time spent saving it
    #: Accepted predictions checked against PHREEQC, over all workers.
    verification: Optional[Any] = None  # mpidht.interp.Verification
    #: Per cell and variable, the error estimates of the predictions used
    #: there, summed over the run (interp.budget; aqueous: as they flowed).
    spent: Optional[Array] = None
    #: Where the run stopped before its last iteration: {"iteration",
    #: "iterations", "reason"}; None where it ran them all.
    stopped: Optional[dict[str, Any]] = None


class ChemistryWorker:
    """PHREEQC behind the DHT (or alone, when the DHT is off)."""

    def __init__(self, cfg: Config, dht_comm: Optional[MPI.Comm]) -> None:
        self.chemistry = Chemistry(cfg.database, cfg.calcite_parm, cfg.dolomite_parm)
        self.surrogate = Surrogate(cfg.dht)
        self.table: Optional[mpidht.Table] = None
        self.near: Optional[Neighbours] = None
        #: The largest sum of error estimates of the predictions used in a
        #: cell, per variable (inf: no limit).
        self.budget = np.full(len(VARIABLES), np.inf)
        if cfg.interp.budget > 0:
            self.budget = cfg.interp.budget * variable_scales(cfg)
        self.verification = Verification(cfg.interp.verify,
                                         seed=dht_comm.Get_rank() if dht_comm else 0)
        if cfg.dht.enabled and dht_comm is not None:
            self.table = mpidht.Table(dht_comm, KEY_SIZE, VALUE_SIZE,
                                      cfg.dht.memory_per_worker, protocol=cfg.dht.protocol)
            if cfg.interp.enabled:
                columns, settings = interpolation(cfg)
                self.near = Neighbours(dht_comm, columns, settings,
                                       cfg.interp.memory_per_worker, context_size=1,
                                       protocol=cfg.dht.protocol)
        #: Entries loaded from a saved DHT (collective over the workers).
        self.restored = 0
        if self.table is not None and cfg.dht.restore is not None:
            try:
                self.restored = self.table.restore(cfg.dht.restore).entries
            except mpidht.Error:  # the same on every worker: all free the tables
                self.close()
                raise

    def react(self, states: Array, dt: float,
              spent: Optional[Array] = None) -> tuple[Array, Counters, Optional[Array]]:
        """Reacts the states (cells x variables) over dt; returns the new
        states, the counters and, where ``spent`` (the same shape: what each
        cell has spent of interp.budget) is given, what the cells have spent
        after it: a prediction that would take its cell past the budget is
        computed instead, and the estimates of those used are added. The
        arguments are left as they are."""
        counts = Counters()
        if self.table is None:
            t0 = time.perf_counter()
            out = self.chemistry.react(states, dt)
            counts.chemistry_s = time.perf_counter() - t0
            counts.misses = states.shape[0]
            return out, counts, spent
        t0 = time.perf_counter()
        spent = None if spent is None else spent.copy()
        keys = self.surrogate.keys(states, dt)
        prints = fingerprint(states, dt)
        stored, found = self.table.read_many(keys)
        out = np.empty_like(states)
        hit = found.copy()
        if found.any():
            out[found], exact = self.surrogate.apply(states[found], stored[found], dt,
                                                     prints[found])
            accepted = self.surrogate.valid(out[found])
            hit[found] = accepted
            counts.exact_hits = int(exact[accepted].sum())
            counts.rejected = int((~accepted).sum())
        t1 = time.perf_counter()
        missing = ~hit
        verify = np.zeros(0, dtype=np.int64)
        predicted = np.zeros((0, states.shape[1]))
        if self.near is not None and missing.any():
            rows = np.flatnonzero(missing)
            p = self.near.predict(states[rows], dt)
            estimate = np.nan_to_num(p.estimate, nan=0.0)
            if spent is not None:
                over = p.accepted & np.any(spent[rows] + estimate > self.budget, axis=1)
                p.check[over] = OVER_BUDGET
            counts.checks = np.bincount(p.check, minlength=len(CHECKS)).tolist()
            taken, values = rows[p.accepted], p.values[p.accepted]
            chosen = self.verification.choose(taken.size)
            out[taken[~chosen]] = values[~chosen]
            if spent is not None:
                spent[taken[~chosen]] += estimate[p.accepted][~chosen]
            missing[taken[~chosen]] = False
            verify, predicted = taken[chosen], values[chosen]
            counts.interpolated, counts.verified = int((~chosen).sum()), int(chosen.sum())
        t2 = time.perf_counter()
        # A miss whose key an earlier miss of this package has takes that
        # one's change, as it would have hit had the two come in separate
        # packages (verified predictions are computed themselves).
        candidates = missing.copy()
        candidates[verify] = False
        shared, source = same_key(keys, np.flatnonzero(candidates))
        computed = missing.copy()
        computed[shared] = False
        chemistry_s = self._react(states, out, computed, dt)
        if shared.size:
            stored = self.surrogate.values(states[source], out[source], dt, prints[source])
            out[shared], exact = self.surrogate.apply(states[shared], stored, dt,
                                                      prints[shared])
            accepted = self.surrogate.valid(out[shared])
            counts.shared = int(accepted.sum())
            counts.exact_hits += int(exact[accepted].sum())
            counts.rejected += int((~accepted).sum())
            hit[shared[accepted]] = True
            refused = np.zeros_like(computed)
            refused[shared[~accepted]] = True
            chemistry_s += self._react(states, out, refused, dt)
            computed |= refused
        if computed.any():
            self.table.write_many(keys[computed], self.surrogate.values(
                states[computed], out[computed], dt, prints[computed]))
            if self.near is not None:
                t3 = time.perf_counter()
                self.verification.add(predicted, out[verify])
                self.near.publish(states[computed], out[computed], dt)
                counts.interp_s += time.perf_counter() - t3
        counts.hits, counts.misses = int(hit.sum()), int(computed.sum())
        counts.chemistry_s = chemistry_s
        counts.interp_s += t2 - t1
        counts.dht_s = time.perf_counter() - t0 - chemistry_s
        return out, counts, spent

    def _react(self, states: Array, out: Array, rows: npt.NDArray[np.bool_],
               dt: float) -> float:
        """PHREEQC for the rows of states into out; returns its time."""
        if not rows.any():
            return 0.0
        t0 = time.perf_counter()
        out[rows] = self.chemistry.react(states[rows], dt)
        return time.perf_counter() - t0

    def end(self) -> tuple[int, int, Verification]:
        """What the master collects at the end: evictions in this worker's
        part of the DHT, entries restored, the verified predictions."""
        evictions = self.table.stats()["evictions"] if self.table is not None else 0
        return evictions, self.restored, self.verification

    def dump(self, path: Path) -> None:
        """Collective over the workers: saves the DHT to path."""
        if self.table is not None:
            self.table.dump(path)

    def close(self) -> None:
        if self.near is not None:
            self.near.close()
        if self.table is not None:
            self.table.close()


def initial_state(cfg: Config) -> Array:
    n = cfg.nx * cfg.ny
    state = np.tile(np.array([cfg.initial[v] for v in VARIABLES]), (n, 1))
    for p in cfg.fixed:
        if p.injects:
            i = p.y * cfg.nx + p.x
            state[i, :len(AQUEOUS)] = [cfg.injected[v] for v in AQUEOUS]
            state[i, len(AQUEOUS):] = 0.0
    return state


#: run.package_size = 0: packages of at most this many cells...
AUTO_PACKAGE_MAX = 4096
#: ...and, with more than one worker, about this many packages per
#: worker and iteration.
AUTO_PACKAGES_PER_WORKER = 4


def package_size(configured: int, cells: int, workers: int) -> int:
    """The work package size: the configured one, or for 0 the cells over
    AUTO_PACKAGES_PER_WORKER packages per worker, rounded up (at most that
    many packages per iteration; a slow package then does not leave the
    other workers idle), and for a lone worker all cells in one package
    (there is nothing to balance, and the surrogate's cost per package is
    paid once); at most AUTO_PACKAGE_MAX cells."""
    if configured > 0:
        return configured
    per_worker = AUTO_PACKAGES_PER_WORKER if workers > 1 else 1
    per_package = -(-cells // (per_worker * max(workers, 1)))
    return max(1, min(AUTO_PACKAGE_MAX, per_package))


def reacting_cells(cfg: Config) -> npt.NDArray[np.int64]:
    """The cells chemistry reacts (all but those held at a fixed pressure)."""
    fixed = {p.y * cfg.nx + p.x for p in cfg.fixed}
    return np.array([i for i in range(cfg.nx * cfg.ny) if i not in fixed], dtype=np.int64)


def worker_count(processes: int) -> int:
    """Chemistry workers among the processes (the master reacts too when
    it is alone)."""
    return max(processes - 1, 1)


def run_package_size(cfg: Config, processes: int) -> int:
    """The work package size a run of cfg on this many processes takes."""
    return package_size(cfg.package_size, reacting_cells(cfg).size, worker_count(processes))


def packages(cells: npt.NDArray[np.int64], size: int) -> list[npt.NDArray[np.int64]]:
    """Round-robin work packages of at most ``size`` cells."""
    count = max(1, -(-cells.size // size))
    return [cells[k::count] for k in range(count)]


class RunRefused(Exception):
    """Raised by ``run`` on every process together where the library
    refused the workers' set-up (a DHT file that restore refuses, a table
    it cannot make): nothing ran, nothing is left waiting."""


def run(cfg: Config, comm: MPI.Intracomm,
        progress: Optional[Callable[[IterationRecord], None]] = None,
        on_save: Optional[Callable[[int, Array], None]] = None,
        stop: Optional[Callable[[], Optional[str]]] = None) -> RunResult:
    """Collective over comm. Rank 0 returns the result; workers return an
    empty one. On rank 0, ``progress`` gets every iteration's record and
    ``on_save`` every saved field (iteration, cells x variables) as soon as
    it is computed, iteration 0 included. The run stops after an iteration
    but the last where ``stop`` (asked on rank 0 after each) gives a
    reason, or where cfg.stop_after would be passed (``stop_reason``):
    then that iteration's fields are saved (and the DHT, with dht.dump)
    and the result says so (``stopped``). Raises RunRefused on every
    process where the workers could not be set up."""
    rank, size = comm.Get_rank(), comm.Get_size()
    worker_comm = comm.Split(0 if rank > 0 or size == 1 else MPI.UNDEFINED, rank)
    try:
        chem = _set_up(cfg, comm, worker_comm)
        if rank == 0:
            try:
                return _master(cfg, comm, chem, progress, on_save, stop)
            finally:
                if chem is not None:
                    chem.close()
        assert chem is not None  # every process but rank 0 of several is a worker
        _worker(chem, comm, worker_comm)
        return RunResult()
    finally:
        if worker_comm != MPI.COMM_NULL:
            worker_comm.Free()


def _set_up(cfg: Config, comm: MPI.Intracomm,
            worker_comm: MPI.Comm) -> Optional[ChemistryWorker]:
    """This process's chemistry where it is a worker (None on the master of
    several processes). The library's refusals come on every worker alike;
    every process learns of them and raises RunRefused."""
    chem, problem = None, None
    if worker_comm != MPI.COMM_NULL:
        try:
            chem = ChemistryWorker(cfg, worker_comm)
        except mpidht.Error as e:
            problem = str(e)
    refused = next((p for p in comm.allgather(problem) if p is not None), None)
    if refused is not None:
        if chem is not None:
            chem.close()
        raise RunRefused(refused)
    return chem


def stop_reason(cfg: Config, elapsed: float, longest: float,
                stop: Optional[Callable[[], Optional[str]]]) -> Optional[str]:
    """Why a run that has run ``elapsed`` seconds, its longest iteration
    ``longest``, stops now, or None: ``stop``'s reason, else
    cfg.stop_after where another iteration as long may end past it."""
    asked = stop() if stop is not None else None
    if asked:
        return asked
    if 0 < cfg.stop_after < elapsed + longest:
        return (f"run.stop_after = {cfg.stop_after:g} s: {elapsed:.1f} s gone, and an "
                f"iteration took up to {longest:.1f} s")
    return None


def _master(cfg: Config, comm: MPI.Intracomm, local: Optional[ChemistryWorker],
            progress: Optional[Callable[[IterationRecord], None]],
            on_save: Optional[Callable[[int, Array], None]],
            stop: Optional[Callable[[], Optional[str]]]) -> RunResult:
    start = time.perf_counter()
    advection = advection_for(cfg)
    state = initial_state(cfg)
    reacting = reacting_cells(cfg)
    work = packages(reacting, run_package_size(cfg, comm.Get_size()))
    result = RunResult()
    result.saved[0] = state.copy()
    if on_save:
        on_save(0, result.saved[0])
    if cfg.dht.enabled and cfg.dht.dump:
        result.dht_dump = cfg.output_dir / DHT_FILE
        cfg.output_dir.mkdir(parents=True, exist_ok=True)
    n_aq = len(AQUEOUS)
    # What each cell has spent of interp.budget, where predictions are
    # made: the aqueous part flows with the water (none in what enters),
    # the minerals' stays.
    spent = np.zeros_like(state) if cfg.dht.enabled and cfg.interp.enabled else None
    longest = 0.0
    for it in range(1, cfg.iterations + 1):
        t0 = time.perf_counter()
        state[:, :n_aq], _ = advection.step(state[:, :n_aq], cfg.time_step)
        if spent is not None:
            spent[:, :n_aq], _ = advection.step(spent[:, :n_aq], cfg.time_step,
                                                np.zeros(n_aq))
        t1 = time.perf_counter()
        counts = _dispatch(comm, local, state, spent, work, cfg.time_step)
        record = IterationRecord(it, counts.hits, counts.misses, counts.exact_hits,
                                 counts.rejected, t1 - t0, counts.chemistry_s, counts.dht_s,
                                 time.perf_counter() - t0, counts.interpolated,
                                 counts.verified, counts.checks, counts.interp_s,
                                 counts.shared)
        result.records.append(record)
        if progress:
            progress(record)
        longest = max(longest, record.wall_s)
        reason = (None if it == cfg.iterations
                  else stop_reason(cfg, time.perf_counter() - start, longest, stop))
        if reason is not None or it % cfg.save_every == 0 or it == cfg.iterations:
            result.saved[it] = state.copy()
            if on_save:
                on_save(it, result.saved[it])
            if result.dht_dump is not None:
                t2 = time.perf_counter()
                _dump(comm, local, result.dht_dump)
                write_settings(result.dht_dump, cfg)
                result.dump_s += time.perf_counter() - t2
        if reason is not None:
            result.stopped = {"iteration": it, "iterations": cfg.iterations, "reason": reason}
            break
    for w in range(1, comm.Get_size()):
        comm.send(None, dest=w, tag=TAG_STOP)
    ends = [local.end()] if local is not None else []
    ends += [recv(comm, w, TAG_RESULT) for w in range(1, comm.Get_size())]
    result.evictions = int(sum(e for e, _, _ in ends))
    result.restored = int(max((r for _, r, _ in ends), default=0))
    if cfg.dht.enabled and cfg.interp.enabled:
        result.verification = Verification(cfg.interp.verify)
        for _, _, v in ends:
            result.verification.merge(v)
    result.final = state
    result.spent = spent
    result.wall_s = time.perf_counter() - start
    return result


def _dump(comm: MPI.Intracomm, local: Optional[ChemistryWorker], path: Path) -> None:
    """Has the workers save the DHT, between iterations (no work in flight)."""
    if local is not None:
        local.dump(path)
        return
    for w in range(1, comm.Get_size()):
        comm.send(str(path), dest=w, tag=TAG_DUMP)
    for w in range(1, comm.Get_size()):
        recv(comm, w, TAG_RESULT)


def _dispatch(comm: MPI.Intracomm, local: Optional[ChemistryWorker], state: Array,
              spent: Optional[Array], work: list[npt.NDArray[np.int64]],
              dt: float) -> Counters:
    """Reacts every package, in place in state and spent."""
    total = Counters()

    def part(cells: npt.NDArray[np.int64]) -> Optional[Array]:
        return None if spent is None else spent[cells]

    def store(cells: npt.NDArray[np.int64], out: Array, counts: Counters,
              after: Optional[Array]) -> None:
        state[cells] = out
        if spent is not None and after is not None:
            spent[cells] = after
        total.add(counts)

    if local is not None:
        for cells in work:
            store(cells, *local.react(state[cells], dt, part(cells)))
        return total
    pending = list(range(len(work)))[::-1]
    busy = 0
    for w in range(1, comm.Get_size()):
        if pending:
            k = pending.pop()
            comm.send((k, state[work[k]], part(work[k]), dt), dest=w, tag=TAG_WORK)
            busy += 1
    status = MPI.Status()
    while busy:
        k, out, counts, after = recv(comm, MPI.ANY_SOURCE, TAG_RESULT, status)
        store(work[k], out, counts, after)
        busy -= 1
        if pending:
            k = pending.pop()
            comm.send((k, state[work[k]], part(work[k]), dt), dest=status.Get_source(),
                      tag=TAG_WORK)
            busy += 1
    return total


def _worker(chem: ChemistryWorker, comm: MPI.Intracomm, worker_comm: MPI.Comm) -> None:
    status = MPI.Status()
    while True:
        msg = recv(comm, 0, MPI.ANY_TAG, status)
        if status.Get_tag() == TAG_STOP:
            break
        if status.Get_tag() == TAG_DUMP:
            chem.dump(Path(msg))
            comm.send(None, dest=0, tag=TAG_RESULT)
            continue
        k, states, spent, dt = msg
        comm.send((k, *chem.react(states, dt, spent)), dest=0, tag=TAG_RESULT)
    comm.send(chem.end(), dest=0, tag=TAG_RESULT)
    # Not after an exception: the other workers are not here (they wait
    # for the master, which waits for this one); the caller ends the job.
    barrier(worker_comm)  # no worker frees the table while another reads
    chem.close()
