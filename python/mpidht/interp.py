"""An interpolating surrogate: predict a step model's result from stored
neighbours, and accept a prediction only where it passes checks.

A step model maps a state of ``d`` numbers to a new state of the same ``d``
numbers (a chemistry time step, say), and is expensive. ``Neighbours``
keeps the results it computed in a DHT, grouped by a *coarse* key of the
input (``mpidht.keys``: every input that rounds to the same coarse key
falls into one class), each class holding up to ``slots`` samples
(input, result) in one table entry. On a miss of the caller's exact
lookup, one batched read fetches each query's class, and ``predict``
interpolates the change (result - input) at the query from the samples,
then runs the checks below. A prediction that fails any of them is for
the caller to compute with the model and ``publish``::

    from mpidht.interp import Neighbours, Settings
    from mpidht.keys import KeyColumn, Rounding

    coarse = [KeyColumn(Rounding.SIGNIFICANT, digits=3, log=True, floor=1e-10)] * d
    with Neighbours(comm, coarse, Settings(tolerance=tol, scale=scale),
                    memory_per_process=64 << 20) as near:
        p = near.predict(states)             # p.check == Check.ACCEPTED: p.values
        todo = p.check != Check.ACCEPTED
        results = model(states[todo])
        near.publish(states[todo], results)  # the samples of later predictions

Checks, in the order they are made (``Prediction.check`` names the first
one that failed):

1. ``FEW_NEIGHBOURS``: the class holds fewer than ``min_neighbours`` samples.
2. ``TOO_FAR``: fewer than ``min_neighbours`` samples lie within ``radius``
   of the query in every input column (distance in units of ``scale``, on
   log10 of the columns whose key column has ``log``).
3. ``PRESENCE``: of those, samples whose input differs from the query in
   which ``presence`` columns are > 0 (a mineral present or absent) are
   dropped; fewer than ``min_neighbours`` left, or the rest disagree on
   which ``presence`` columns are > 0 in their results (a mineral that
   appears or vanishes in some of them), rejects.
4. ``OUTSIDE``: the query lies outside the box the samples used span, in
   some column by more than ``extrapolation`` times the samples' range
   there (a prediction would extrapolate; a column in which the samples
   do not vary must match them).
5. ``ERROR_ESTIMATE``: leave-one-out over the samples used (each one
   predicted from the others by the same method) errs by more than
   ``tolerance`` in some column of the change.
6. ``NEGATIVE``: a ``nonnegative`` column of the predicted result is < 0.
7. ``CONSERVATION``: a row c of ``conserved`` (what the model conserves:
   c . result = c . input) has a residual |c . change| above
   ``conservation_rtol`` * (|c| . |input|) + ``conservation_atol``.

Columns the model's result does not depend on (``ignored``; e.g. a
quantity the model resets whatever its input) are left out of the coarse
key, of distances and of the box, and their result is predicted as a
value, not as a change.

Methods: ``IDW`` (inverse squared-distance weights; a sample at the query
itself gives its own change) and ``LINEAR`` (a least-squares fit of the
change, linear in the scaled inputs around the query, with a small ridge
on the slopes, so that columns that do not vary among the samples are
ignored; its leave-one-out errors come from the fit's hat matrix). Both
are linear in the samples' changes, so a conserved combination the
samples keep exactly, the prediction keeps too; the conservation check
catches samples that did not. The leave-one-out error is an estimate,
not a bound: verify (below) to know the error actually made.

Online verification (``Verification``): a fixed fraction of the accepted
predictions, chosen at random, is also computed by the model by the
caller and ``add``-ed, so that a run reports the error it made, not only
the error it expected.

Concurrency: ``publish`` appends to a class with ``Table.update_many``
(atomic per key), so processes publishing into one class at once keep
every sample up to ``slots`` (the oldest is replaced after that); a
repeated input replaces its own sample. ``predict`` reads a consistent
copy of each class.
"""

from __future__ import annotations

import enum
import math
import struct
from dataclasses import dataclass, field
from types import TracebackType
from typing import Optional, Sequence, Type, Union

import numpy as np
import numpy.typing as npt
from mpi4py import MPI

from .keys import KeyColumn, Rounding, encode_keys, key_size
from .table import KEEP, ProtocolLike, Table, _Keep

__all__ = ["Check", "Method", "Neighbours", "Prediction", "Settings", "Verification",
           "predict_from"]

Array = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]
#: Header words of a class's entry: the number of samples and the next slot
#: (float64, native byte order, as the rest of the entry).
_HEADER = 2
_COUNTS = struct.Struct("=2d")
#: Scaled coordinates this close count as equal (the OUTSIDE check).
_SAME = 1e-9


class Check(enum.IntEnum):
    """The outcome of a prediction: ACCEPTED, or the first check it failed."""

    ACCEPTED = 0
    FEW_NEIGHBOURS = 1
    TOO_FAR = 2
    PRESENCE = 3
    OUTSIDE = 4
    ERROR_ESTIMATE = 5
    NEGATIVE = 6
    CONSERVATION = 7


class Method(enum.Enum):
    """How the change at the query is predicted from the samples."""

    IDW = "idw"
    LINEAR = "linear"


@dataclass(frozen=True)
class Settings:
    """What a prediction may use and must pass (see the module's checks).

    Arrays are per input column (``d`` entries); ``conserved`` is a
    (q, d) matrix. ``tolerance`` and ``scale`` are required in effect:
    ``tolerance`` is the largest leave-one-out error accepted in each
    column of the change (the column's units), ``scale`` the unit of
    distance in each column (on log10 where the key column has ``log``).
    """

    tolerance: npt.ArrayLike = 0.0
    scale: npt.ArrayLike = 1.0
    method: Method = Method.IDW
    slots: int = 12
    min_neighbours: int = 4
    radius: float = math.inf
    extrapolation: float = 0.0
    presence: Sequence[int] = ()
    ignored: Sequence[int] = ()
    nonnegative: Sequence[int] = ()
    conserved: Optional[npt.ArrayLike] = None
    conservation_rtol: float = 1e-9
    conservation_atol: float = 0.0
    #: Ridge on the slopes of LINEAR, relative to the widest column's
    #: sum of squares: settles the columns that do not vary.
    ridge: float = 1e-8

    def __post_init__(self) -> None:
        if isinstance(self.method, str):
            object.__setattr__(self, "method", Method(self.method))
        if not isinstance(self.slots, int) or not 1 <= self.slots <= 4096:
            raise ValueError(f"slots must be an integer in 1..4096, got {self.slots!r}")
        if not isinstance(self.min_neighbours, int) or not 1 <= self.min_neighbours <= self.slots:
            raise ValueError(f"min_neighbours must be an integer in 1..slots ({self.slots}), "
                             f"got {self.min_neighbours!r}")
        if not self.radius > 0:
            raise ValueError(f"radius must be > 0, got {self.radius!r}")
        if not self.extrapolation >= 0:
            raise ValueError(f"extrapolation must be >= 0, got {self.extrapolation!r}")
        for name in ("conservation_rtol", "conservation_atol", "ridge"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)!r}")


@dataclass
class Prediction:
    """Per query: the predicted result (NaN where no prediction was made:
    FEW_NEIGHBOURS, TOO_FAR, PRESENCE, OUTSIDE), the check outcome, the
    leave-one-out error estimate per column (NaN where not made) and the
    number of samples used (0 where no prediction was made)."""

    values: Array
    check: npt.NDArray[np.uint8]
    estimate: Array
    used: npt.NDArray[np.int64]

    @property
    def accepted(self) -> Mask:
        return np.asarray(self.check == Check.ACCEPTED)


class _Plan:
    """Settings and key columns turned into the arrays a prediction uses,
    checked once (``Neighbours`` keeps one; ``predict_from`` makes one)."""

    def __init__(self, columns: Sequence[KeyColumn], settings: Settings) -> None:
        d = len(columns)
        self.d = d
        self.settings = settings
        self.log = np.array([c.log for c in columns], dtype=np.bool_)
        self.any_log = bool(self.log.any())
        # log10 of values at or below a column's floor (or 0) is the floor's.
        self.floor = np.array([max(c.floor, 1e-300) for c in columns])[self.log]
        self.scale = np.broadcast_to(np.asarray(settings.scale, dtype=np.float64), (d,)).copy()
        if not (self.scale > 0).all() or not np.isfinite(self.scale).all():
            raise ValueError(f"scale must be finite and > 0 in every column, got {self.scale}")
        self.tolerance = np.broadcast_to(np.asarray(settings.tolerance, dtype=np.float64),
                                         (d,)).copy()
        if not (self.tolerance >= 0).all():
            raise ValueError(f"tolerance must be >= 0 in every column, got {self.tolerance}")
        self.presence = np.asarray(settings.presence, dtype=np.int64)
        self.nonnegative = np.asarray(settings.nonnegative, dtype=np.int64)
        self.ignored = np.asarray(settings.ignored, dtype=np.int64)
        for name, idx in (("presence", self.presence), ("nonnegative", self.nonnegative),
                          ("ignored", self.ignored)):
            if idx.size and not ((idx >= 0) & (idx < d)).all():
                raise ValueError(f"{name} columns must lie in 0..{d - 1}, got {idx.tolist()}")
        self.conserved: Optional[Array] = None
        if settings.conserved is not None:
            c = np.atleast_2d(np.asarray(settings.conserved, dtype=np.float64))
            if c.ndim != 2 or c.shape[1] != d:
                raise ValueError(f"conserved must be a matrix of {d} columns, got shape {c.shape}")
            if self.ignored.size and (c[:, self.ignored] != 0).any():
                raise ValueError("conserved must not weigh ignored columns (their results "
                                 "are predicted as values, not as changes)")
            self.conserved, self.conserved_abs = c.T.copy(), np.abs(c).T.copy()

    def coords(self, x: Array) -> Array:
        """The coordinates distances are measured in."""
        u = x.copy()
        if self.any_log:
            u[..., self.log] = np.log10(np.maximum(u[..., self.log], self.floor))
        u /= self.scale
        if self.ignored.size:
            u[..., self.ignored] = 0.0
        return u


def predict_from(states: npt.ArrayLike, inputs: npt.ArrayLike, results: npt.ArrayLike,
                 count: npt.ArrayLike, columns: Sequence[KeyColumn],
                 settings: Settings) -> Prediction:
    """Predicts and checks, from given samples (what ``Neighbours.predict``
    does after its read; no MPI).

    Args:
        states: (n, d) queries.
        inputs, results: (n, slots, d) samples of each query's class; slots
            at index >= count are ignored.
        count: (n,) samples per query.
        columns: the d key columns (their ``log`` and ``floor`` set the
            distance's coordinates).
        settings: the checks' parameters.
    """
    x = np.atleast_2d(np.asarray(states, dtype=np.float64))
    n, d = x.shape
    if len(columns) != d:
        raise ValueError(f"states have {d} columns but {len(columns)} key columns were given")
    xs = np.asarray(inputs, dtype=np.float64).reshape(n, -1, d)
    ys = np.asarray(results, dtype=np.float64).reshape(n, -1, d)
    return _predict(_Plan(columns, settings), x, xs, ys,
                    np.minimum(np.asarray(count, dtype=np.int64).reshape(n), xs.shape[1]))


def _predict(plan: _Plan, x: Array, xs: Array, ys: Array,
             count: npt.NDArray[np.int64]) -> Prediction:
    settings = plan.settings
    n, k, d = xs.shape
    need = settings.min_neighbours
    check = np.zeros(n, dtype=np.uint8)
    values = np.full((n, d), np.nan)
    estimate = np.full((n, d), np.nan)
    check[count < need] = Check.FEW_NEIGHBOURS

    uq = plan.coords(x)
    us = plan.coords(xs)
    delta = us - uq[:, None, :]
    use = (np.arange(k) < count[:, None]) & (np.abs(delta) <= settings.radius).all(axis=2)
    check[(check == 0) & (use.sum(axis=1) < need)] = Check.TOO_FAR

    p = plan.presence
    if p.size:
        use &= ((xs[:, :, p] > 0) == (x[:, None, p] > 0)).all(axis=2)
        present = ys[:, :, p] > 0
        first = present[np.arange(n), np.argmax(use, axis=1)]
        agree = ((present == first[:, None, :]).all(axis=2) | ~use).all(axis=1)
        check[(check == 0) & ((use.sum(axis=1) < need) | ~agree)] = Check.PRESENCE

    rows = np.flatnonzero(check == 0)
    if rows.size and np.isfinite(settings.extrapolation):
        inside, ur = use[rows, :, None], us[rows]
        lo = np.where(inside, ur, np.inf).min(axis=1)
        hi = np.where(inside, ur, -np.inf).max(axis=1)
        margin = settings.extrapolation * (hi - lo) + _SAME
        q = uq[rows]
        check[rows[((q < lo - margin) | (q > hi + margin)).any(axis=1)]] = Check.OUTSIDE

    rows = np.flatnonzero(check == 0)
    used = np.where(check == 0, use.sum(axis=1), 0).astype(np.int64)
    if rows.size:
        change = ys[rows] - xs[rows]
        if plan.ignored.size:
            change[:, :, plan.ignored] = ys[rows][:, :, plan.ignored]
        w_use = use[rows]
        if settings.method is Method.IDW:
            pred, err = _idw(delta[rows], us[rows], change, w_use)
        else:
            pred, err = _linear(delta[rows], change, w_use, settings.ridge)
        estimate[rows] = err
        values[rows] = x[rows] + pred
        if plan.ignored.size:
            values[rows[:, None], plan.ignored] = pred[:, plan.ignored]
        bad = ~(err <= plan.tolerance).all(axis=1)  # NaN or inf: bad too
        check[rows[bad]] = Check.ERROR_ESTIMATE
        ok = rows[~bad]
        if plan.nonnegative.size and ok.size:
            neg = (values[ok][:, plan.nonnegative] < 0).any(axis=1)
            check[ok[neg]] = Check.NEGATIVE
            ok = ok[~neg]
        if plan.conserved is not None and ok.size:
            residual = np.abs(pred[np.searchsorted(rows, ok)] @ plan.conserved)
            bound = (settings.conservation_rtol * (np.abs(x[ok]) @ plan.conserved_abs)
                     + settings.conservation_atol)
            check[ok[(residual > bound).any(axis=1)]] = Check.CONSERVATION
    return Prediction(values, check, estimate, used)


def _idw(delta: Array, us: Array, change: Array, use: Mask) -> tuple[Array, Array]:
    """Inverse squared-distance weighting: the prediction at the query and
    the leave-one-out error of each column (max over the samples used)."""
    tiny = 1e-300
    w = np.where(use, 1.0 / ((delta ** 2).sum(axis=2) + tiny), 0.0)
    pred = np.einsum("nk,nkd->nd", w, change) / w.sum(axis=1)[:, None]
    # Leave one out: sample j from the others, weighted by their distance to j.
    pair = us[:, :, None, :] - us[:, None, :, :]
    wj = 1.0 / ((pair ** 2).sum(axis=3) + tiny)
    wj *= use[:, None, :] & use[:, :, None]
    k = use.shape[1]
    wj[:, np.arange(k), np.arange(k)] = 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        loo = np.einsum("njk,nkd->njd", wj, change) / wj.sum(axis=2)[:, :, None]
    err = np.where(use[:, :, None], np.abs(loo - change), 0.0)
    return pred, err.max(axis=1)


def _linear(delta: Array, change: Array, use: Mask, ridge: float) -> tuple[Array, Array]:
    """Least squares, linear in the scaled inputs around the query: the
    intercept is the prediction; leave-one-out errors from the hat matrix."""
    n, k, d = delta.shape
    a = np.empty((n, k, d + 1))
    a[:, :, 0] = 1.0
    a[:, :, 1:] = delta
    a *= use[:, :, None]
    at = a.transpose(0, 2, 1)
    m = at @ a
    slopes = np.arange(1, d + 1)
    # The ridge is relative to the widest column's spread, so that it only
    # settles the columns that do not vary among the samples.
    widest = m[:, slopes, slopes].max(axis=1)
    m[:, slopes, slopes] += ridge * np.maximum(widest, 1e-300)[:, None]
    inv = np.linalg.inv(m)
    y = change * use[:, :, None]
    beta = inv @ (at @ y)
    residual = y - a @ beta
    hat = ((a @ inv) * a).sum(axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        loo = residual / (1.0 - hat)[:, :, None]
    # A sample the fit cannot do without (leverage 1) leaves no estimate.
    loo[use & (hat > 1.0 - 1e-4)] = np.inf
    loo[~use] = 0.0
    return beta[:, 0, :], np.abs(loo).max(axis=1)


class Neighbours:
    """Samples of a step model in a DHT, by coarse key of their input.

    Collective: the constructor and ``close`` (over ``comm``). ``predict``
    and ``publish`` are one-sided: any process, any time.

    Args:
        comm: the processes that share the samples.
        columns: the coarse key column of each of the d state columns.
        settings: the prediction's parameters (``Settings``).
        memory_per_process: bytes of table each process hosts; an entry
            holds ``slots`` samples of 2 d float64.
        context_size: numbers that must match exactly and are not
            interpolated (e.g. the time step), given to ``predict`` and
            ``publish`` as ``context``.
        protocol: the table's consistency protocol.
    """

    def __init__(self, comm: MPI.Comm, columns: Sequence[KeyColumn], settings: Settings,
                 memory_per_process: int, *, context_size: int = 0,
                 protocol: ProtocolLike = "lockfree") -> None:
        self.columns = list(columns)
        self.settings = settings
        self.d = len(self.columns)
        if self.d == 0:
            raise ValueError("columns must name at least one state column")
        self._plan = _Plan(self.columns, settings)  # refuses bad settings up front
        if context_size < 0:
            raise ValueError(f"context_size must be >= 0, got {context_size}")
        self.context_size = context_size
        self._key_columns = self.columns + [KeyColumn(Rounding.EXACT)] * context_size
        self._words = _HEADER + settings.slots * 2 * self.d
        self.table = Table(comm, key_size(self._key_columns), self._words * 8,
                           memory_per_process, protocol=protocol)

    def close(self) -> None:
        """Collective: frees the table."""
        self.table.close()

    def __enter__(self) -> "Neighbours":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        self.close()

    def keys(self, states: npt.ArrayLike,
             context: Optional[npt.ArrayLike] = None) -> npt.NDArray[np.uint8]:
        """The coarse keys of the states (and their context)."""
        x = np.atleast_2d(np.asarray(states, dtype=np.float64))
        if x.shape[1] != self.d:
            raise ValueError(f"states must have {self.d} columns, got shape {x.shape}")
        if self._plan.ignored.size:  # one class, whatever their values
            x = x.copy()
            x[:, self._plan.ignored] = 0.0
        if self.context_size:
            if context is None:
                raise ValueError(f"context ({self.context_size} numbers per state) is required")
            c = np.broadcast_to(np.asarray(context, dtype=np.float64),
                                (x.shape[0], self.context_size))
            x = np.concatenate([x, c], axis=1)
        elif context is not None:
            raise ValueError("context given, but context_size is 0")
        return encode_keys(x, self._key_columns)

    def lookup(self, states: npt.ArrayLike, context: Optional[npt.ArrayLike] = None
               ) -> tuple[Array, Array, npt.NDArray[np.int64]]:
        """Each state's class: inputs and results (n, slots, d) and the
        number of samples (n,)."""
        keys = self.keys(states, context)
        raw, _ = self.table.read_many(keys)
        words = raw.view(np.float64).reshape(keys.shape[0], self._words)
        count = words[:, 0].astype(np.int64)
        slots = words[:, _HEADER:].reshape(keys.shape[0], self.settings.slots, 2, self.d)
        return slots[:, :, 0, :], slots[:, :, 1, :], count

    def predict(self, states: npt.ArrayLike,
                context: Optional[npt.ArrayLike] = None) -> Prediction:
        """Predicts each state's result from its class and checks it."""
        xs, ys, count = self.lookup(states, context)
        x = np.atleast_2d(np.asarray(states, dtype=np.float64))
        return _predict(self._plan, x, xs, ys, np.minimum(count, self.settings.slots))

    def publish(self, states: npt.ArrayLike, results: npt.ArrayLike,
                context: Optional[npt.ArrayLike] = None) -> None:
        """Adds computed samples (state -> result) to their classes."""
        x = np.atleast_2d(np.asarray(states, dtype=np.float64))
        y = np.atleast_2d(np.asarray(results, dtype=np.float64))
        if y.shape != x.shape:
            raise ValueError(f"results have shape {y.shape}, states {x.shape}")
        keys = self.keys(x, context)
        slots, size = self.settings.slots, 8 * self.d
        first, step = 8 * _HEADER, 2 * size
        # Samples are compared and stored as bytes (+ 0.0: -0.0 is 0.0).
        xb = [row.tobytes() for row in x + 0.0]
        yb = [row.tobytes() for row in y]
        # One update per class, adding its rows in order: the same entry as
        # row by row, with fewer callbacks (classes are coarse).
        groups: dict[bytes, list[int]] = {}
        for row, key in enumerate(keys):
            groups.setdefault(key.tobytes(), []).append(row)
        members = list(groups.values())
        classes = keys[[rows[0] for rows in members]]
        empty = bytes(self._words * 8)

        def add(i: int, old: Optional[bytes]) -> Union[bytes, _Keep]:
            entry = bytearray(empty if old is None else old)
            n, at = (int(v) for v in _COUNTS.unpack_from(entry))
            changed = False
            for row in members[i]:
                xi, yi = xb[row], yb[row]
                # The sample with this input: a match of its bytes at the
                # start of one of the n samples' inputs.
                end = first + n * step
                j = entry.find(xi, first, end)
                while j >= 0 and (j - first) % step:
                    j = entry.find(xi, j + 1, end)
                if j >= 0:
                    if entry[j + size:j + step] != yi:
                        entry[j + size:j + step] = yi
                        changed = True
                else:
                    j = first + at * step
                    entry[j:j + step] = xi + yi
                    n, at = min(n + 1, slots), (at + 1) % slots
                    changed = True
            if not changed:
                return KEEP
            _COUNTS.pack_into(entry, 0, n, at)
            return bytes(entry)

        self.table.update_many(classes, add)


@dataclass
class Verification:
    """Errors of predictions checked against the model.

    ``choose(n)`` picks which of n accepted predictions to verify (each with
    probability ``fraction``, from a generator seeded with ``seed``, so a
    run repeats); ``add`` records predicted against computed results.
    Several are combined with ``merge`` (e.g. one per process).
    """

    fraction: float = 0.0
    seed: int = 0
    count: int = 0
    sum_sq: Array = field(default_factory=lambda: np.zeros(0))
    max_abs: Array = field(default_factory=lambda: np.zeros(0))

    def __post_init__(self) -> None:
        if not 0.0 <= self.fraction <= 1.0:
            raise ValueError(f"fraction must be in [0, 1], got {self.fraction!r}")
        self._rng = np.random.default_rng(self.seed)
        self._left = np.zeros(0)

    def choose(self, n: int) -> Mask:
        if self.fraction <= 0.0 or n == 0:
            return np.zeros(n, dtype=np.bool_)
        if self._left.size < n:  # draws in blocks: one generator call per many
            self._left = np.concatenate([self._left, self._rng.random(max(n, 4096))])
        picked, self._left = self._left[:n], self._left[n:]
        return np.asarray(picked < self.fraction)

    def add(self, predicted: npt.ArrayLike, computed: npt.ArrayLike) -> None:
        p = np.atleast_2d(np.asarray(predicted, dtype=np.float64))
        c = np.atleast_2d(np.asarray(computed, dtype=np.float64))
        if p.shape != c.shape:
            raise ValueError(f"predicted has shape {p.shape}, computed {c.shape}")
        if p.shape[0] == 0:
            return
        err = np.abs(p - c)
        if self.count == 0:
            self.sum_sq, self.max_abs = np.zeros(p.shape[1]), np.zeros(p.shape[1])
        self.count += p.shape[0]
        self.sum_sq = self.sum_sq + (err ** 2).sum(axis=0)
        self.max_abs = np.maximum(self.max_abs, err.max(axis=0))

    def merge(self, other: "Verification") -> None:
        if other.count == 0:
            return
        if self.count == 0:
            self.sum_sq, self.max_abs = np.zeros_like(other.sum_sq), np.zeros_like(other.max_abs)
        self.count += other.count
        self.sum_sq = self.sum_sq + other.sum_sq
        self.max_abs = np.maximum(self.max_abs, other.max_abs)

    def rms(self) -> Array:
        """Root-mean-square error per column (empty before any ``add``)."""
        return np.sqrt(self.sum_sq / self.count) if self.count else np.zeros(0)
