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
   dropped; of the rest, the ``neighbours`` nearest to the query are used
   (all of them if ``neighbours`` is 0); fewer than ``min_neighbours``
   left, or the ones used disagree on which ``presence`` columns are > 0
   in their results (a mineral that appears or vanishes in some of them),
   rejects.
4. ``OUTSIDE``: the query lies outside the box the samples used span, in
   some column by more than ``extrapolation`` times the samples' range
   there (a prediction would extrapolate; a column in which the samples
   do not vary must match them, to within 1e-12 of the coordinates' size
   for rounding; coordinates are after ``scale`` and the log).
5. ``ERROR_ESTIMATE``: the error estimate (``estimate``) exceeds
   ``tolerance`` in some column of the change, or the fit failed (a
   value that is not finite, or an infinite estimate, as ``ridge`` 0 can
   give: rejected whatever the tolerance, an infinite one included):
   ``LEAVE_ONE_OUT``, the
   largest error of predicting each sample used from the others by the
   same method; or ``STANDARD_ERROR`` (``LINEAR`` only), ``interval``
   times the standard error of the fit's prediction at the query (the
   samples' scatter about the fitted plane, magnified by how far the
   query's place among them makes the fit extrapolate).
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
ignored; its leave-one-out errors come from the fit's hat matrix, in C).
Both are linear in the samples' changes, so a conserved combination the
samples keep exactly, the prediction keeps too; the conservation check
catches samples that did not. Either error estimate is an estimate, not
a bound: verify (below) to know the error actually made.

Which settings accept most predictions at an error actually made was
measured on the simulator's benchmark (``docs/simulator.md``): the
nearest 24 of up to 96 samples per class, ``STANDARD_ERROR`` at 3 and
``extrapolation`` 0.25 accepted about twice as many predictions as all of
24 samples, ``LEAVE_ONE_OUT`` and no extrapolation, at a comparable
largest error. The defaults here are the conservative ones.

Online verification (``Verification``): a fixed fraction of the accepted
predictions, chosen at random, is also computed by the model by the
caller and ``add``-ed, so that a run reports the error it made, not only
the error it expected.

Concurrency: ``publish`` appends to a class with one atomic update per
class (``mpidht_update_batch``, the samples added in C), so processes
publishing into one class at once keep every sample up to ``slots`` (the
oldest is replaced after that); a repeated input replaces its own
sample. ``predict`` reads a consistent copy of each class.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from types import TracebackType
from typing import Optional, Sequence, Type

import numpy as np
import numpy.typing as npt
from mpi4py import MPI

from . import _core
from .keys import KeyColumn, Rounding, distinct, encode_keys, key_size
from .table import ProtocolLike, Table

__all__ = ["Check", "Estimate", "Method", "Neighbours", "Prediction", "Settings",
           "Verification", "predict_from"]

Array = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]
#: Header words of a class's entry: the number of samples and the next slot
#: (float64, native byte order, as the rest of the entry).
_HEADER = 2


class Check(enum.IntEnum):
    """The outcome of a prediction: ACCEPTED, or the first check it failed
    (the checks run in C, ``_interp.c``, which numbers them)."""

    ACCEPTED = _core.CHECK_ACCEPTED
    FEW_NEIGHBOURS = _core.CHECK_FEW_NEIGHBOURS
    TOO_FAR = _core.CHECK_TOO_FAR
    PRESENCE = _core.CHECK_PRESENCE
    OUTSIDE = _core.CHECK_OUTSIDE
    ERROR_ESTIMATE = _core.CHECK_ERROR_ESTIMATE
    NEGATIVE = _core.CHECK_NEGATIVE
    CONSERVATION = _core.CHECK_CONSERVATION


class Method(enum.Enum):
    """How the change at the query is predicted from the samples."""

    IDW = "idw"
    LINEAR = "linear"


class Estimate(enum.Enum):
    """What the ERROR_ESTIMATE check compares with the tolerance."""

    #: The largest error of each sample used predicted from the others.
    LEAVE_ONE_OUT = "leave-one-out"
    #: ``Settings.interval`` times the standard error of the prediction at
    #: the query (LINEAR only).
    STANDARD_ERROR = "standard-error"


@dataclass(frozen=True)
class Settings:
    """What a prediction may use and must pass (see the module's checks).

    Arrays are per input column (``d`` entries); ``conserved`` is a
    (q, d) matrix. ``tolerance`` and ``scale`` are required in effect:
    ``tolerance`` is the largest error estimate (``estimate``) accepted in
    each column of the change (the column's units), ``scale`` the unit of
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
    #: Samples used: the nearest this many that pass the radius and
    #: presence checks (0: all of them).
    neighbours: int = 0
    estimate: Estimate = Estimate.LEAVE_ONE_OUT
    #: The factor on the standard error (``Estimate.STANDARD_ERROR``).
    interval: float = 3.0

    def __post_init__(self) -> None:
        # A Method or its name (Method(1) would be no error: 1 is no name).
        for name, kind in (("method", Method), ("estimate", Estimate)):
            value = getattr(self, name)
            if isinstance(value, str) and not isinstance(value, kind):
                try:
                    value = kind(value)
                except ValueError:
                    raise ValueError(f"{name} must be one of "
                                     f"{', '.join(repr(k.value) for k in kind)}, "
                                     f"got {value!r}") from None
            if not isinstance(value, kind):
                raise TypeError(f"{name} must be a {kind.__name__} or its name, got {value!r}")
            object.__setattr__(self, name, value)
        if self.estimate is Estimate.STANDARD_ERROR and self.method is not Method.LINEAR:
            raise ValueError("estimate 'standard-error' needs method 'linear' (a fit has a "
                             f"standard error; got method {self.method.value!r})")
        if not isinstance(self.neighbours, int) or not (
                self.neighbours == 0 or self.min_neighbours <= self.neighbours <= self.slots):
            raise ValueError(f"neighbours must be 0 or an integer in min_neighbours "
                             f"({self.min_neighbours})..slots ({self.slots}), "
                             f"got {self.neighbours!r}")
        if not self.interval > 0 or not math.isfinite(self.interval):
            raise ValueError(f"interval must be finite and > 0, got {self.interval!r}")
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
    error estimate per column (``Settings.estimate``; NaN where not made)
    and the number of samples used (0 where no prediction was made)."""

    values: Array
    check: npt.NDArray[np.uint8]
    estimate: Array
    used: npt.NDArray[np.int64]

    @property
    def accepted(self) -> Mask:
        return np.asarray(self.check == Check.ACCEPTED)


def _columns(given: Sequence[int], name: str) -> npt.NDArray[np.int64]:
    """Column numbers given as integers (0.5 was truncated to column 0)."""
    a = np.asarray(given)
    if a.size and a.dtype.kind not in "iu":
        raise TypeError(f"{name} must be column numbers (integers), got {list(given)!r}")
    return a.astype(np.int64)


class _Plan:
    """Settings and key columns turned into the arrays a prediction uses,
    checked once (``Neighbours`` keeps one; ``predict_from`` makes one)."""

    def __init__(self, columns: Sequence[KeyColumn], settings: Settings) -> None:
        d = len(columns)
        self.d = d
        self.settings = settings
        # Coordinates (in C): log10 of values at or below a column's floor
        # (or 0) is the floor's; then over scale; 0 in ignored columns.
        self.log_mask = np.array([c.log for c in columns], dtype=np.uint8)
        self.floor = np.array([max(c.floor, 1e-300) for c in columns], dtype=np.float64)
        self.scale = np.broadcast_to(np.asarray(settings.scale, dtype=np.float64), (d,)).copy()
        if not (self.scale > 0).all() or not np.isfinite(self.scale).all():
            raise ValueError(f"scale must be finite and > 0 in every column, got {self.scale}")
        self.tolerance = np.broadcast_to(np.asarray(settings.tolerance, dtype=np.float64),
                                         (d,)).copy()
        if not (self.tolerance >= 0).all():
            raise ValueError(f"tolerance must be >= 0 in every column, got {self.tolerance}")
        self.presence = _columns(settings.presence, "presence")
        self.nonnegative = _columns(settings.nonnegative, "nonnegative")
        self.ignored = _columns(settings.ignored, "ignored")
        for name, idx in (("presence", self.presence), ("nonnegative", self.nonnegative),
                          ("ignored", self.ignored)):
            if idx.size and not ((idx >= 0) & (idx < d)).all():
                raise ValueError(f"{name} columns must lie in 0..{d - 1}, got {idx.tolist()}")
        if self.presence.size > 64:
            raise ValueError(f"at most 64 presence columns, got {self.presence.size}")
        # What the C prediction (_interp.c) takes.
        self.ignored_mask = np.zeros(d, dtype=np.uint8)
        self.ignored_mask[self.ignored] = 1
        self.nonnegative_mask = np.zeros(d, dtype=np.uint8)
        self.nonnegative_mask[self.nonnegative] = 1
        self.method = (_core.METHOD_LINEAR if settings.method is Method.LINEAR
                       else _core.METHOD_IDW)
        self.estimate = (_core.ESTIMATE_STANDARD_ERROR
                         if settings.estimate is Estimate.STANDARD_ERROR
                         else _core.ESTIMATE_LEAVE_ONE_OUT)
        self.conserved_rows = np.zeros((0, d))
        if settings.conserved is not None:
            c = np.atleast_2d(np.asarray(settings.conserved, dtype=np.float64))
            if c.ndim != 2 or c.shape[1] != d:
                raise ValueError(f"conserved must be a matrix of {d} columns, got shape {c.shape}")
            if not np.isfinite(c).all():
                raise ValueError(f"conserved must be finite, got {c.tolist()}")
            if self.ignored.size and (c[:, self.ignored] != 0).any():
                raise ValueError("conserved must not weigh ignored columns (their results "
                                 "are predicted as values, not as changes)")
            self.conserved_rows = np.ascontiguousarray(c)


def _per_query(a: npt.ArrayLike, n: int, d: int, what: str) -> Array:
    """a as (n, slots, d) float64, of that shape exactly (a (n, d, slots)
    array of as many numbers was read in the wrong order before); one
    query's (slots, d) is taken where n is 1."""
    array = np.asarray(a, dtype=np.float64)
    if n == 1 and array.ndim == 2:
        array = array[np.newaxis]
    if array.ndim != 3 or array.shape[0] != n or array.shape[2] != d or (
            n > 0 and array.shape[1] == 0):
        raise ValueError(f"{what} must be (n, slots, d) = ({n}, slots >= 1, {d}), "
                         f"got shape {array.shape}")
    return array


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
    xs = _per_query(inputs, n, d, "inputs")
    ys = _per_query(results, n, d, "results")
    if ys.shape != xs.shape:
        raise ValueError(f"results have shape {ys.shape}, inputs {xs.shape}")
    # The layout of a stored class: each sample's input, then its result.
    samples = np.stack([xs, ys], axis=2).reshape(n, 2 * xs.shape[1] * d)
    return _predict(_Plan(columns, settings), x, samples, xs.shape[1],
                    np.minimum(np.asarray(count, dtype=np.int64).reshape(n), xs.shape[1]))


def _predict(plan: _Plan, x: Array, samples: Array, slots: int,
             count: npt.NDArray[np.int64], cls: Optional[npt.NDArray[np.int64]] = None,
             offset: int = 0) -> Prediction:
    """The checks and the prediction of each query x[i] from the samples of
    its class cls[i] (queries that share a class share its samples; cls
    None: class i for query i), in C (``_interp.c``). samples: (m, words)
    float64 rows, one per class as it is stored: from ``offset`` on, slot
    j's input (d) then its result (d); the first count[k] slots of class k
    hold samples."""
    settings = plan.settings
    x = np.ascontiguousarray(x, dtype=np.float64)
    n, d = x.shape
    samples = np.ascontiguousarray(samples, dtype=np.float64)
    m, stride = samples.shape
    if stride - offset < 2 * slots * d:
        raise ValueError(f"classes of {stride - offset} numbers cannot hold {slots} samples "
                         f"of {d} inputs and results")
    if cls is None:
        cls = np.arange(n)
    check = np.empty(n, dtype=np.uint8)
    values = np.empty((n, d))
    estimate = np.empty((n, d))
    used = np.empty(n, dtype=np.int64)
    width = settings.neighbours if 0 < settings.neighbours < slots else slots
    if n:
        _core.predict(n, m, slots, d, stride, settings.min_neighbours, width,
                      float(settings.radius), float(settings.extrapolation), plan.method,
                      plan.estimate, float(settings.interval), float(settings.ridge),
                      float(settings.conservation_rtol), float(settings.conservation_atol),
                      plan.conserved_rows.shape[0], plan.presence.size, plan.tolerance,
                      plan.ignored_mask, plan.nonnegative_mask, plan.conserved_rows,
                      plan.log_mask, plan.floor, plan.scale, plan.presence,
                      samples.reshape(-1)[offset:offset + (m - 1) * stride + 2 * slots * d],
                      np.ascontiguousarray(count, dtype=np.int64), x,
                      np.ascontiguousarray(cls, dtype=np.int64), check, values, estimate, used)
    return Prediction(values, check, estimate, used)


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
        #: The entries of the last ``_classes`` call's classes (reused).
        self._buffer = np.empty((0, self._words * 8), dtype=np.uint8)

    def close(self) -> None:
        """Collective: frees the table."""
        self.table.close()

    def __enter__(self) -> "Neighbours":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        """Closes the table as ``Table.__exit__`` does: an exception of the
        block goes on, with a note if closing failed too."""
        self.table.__exit__(exc_type, exc, traceback)

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
        words, count, cls = self._classes(states, context)
        slots = words[:, _HEADER:].reshape(words.shape[0], self.settings.slots, 2, self.d)
        return slots[cls, :, 0, :], slots[cls, :, 1, :], count[cls]

    def _classes(self, states: npt.ArrayLike, context: Optional[npt.ArrayLike]
                 ) -> tuple[Array, npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """The distinct classes of the states, read once each: their entries
        as float64 rows (m, words), samples (m,), and each state's class
        (n,)."""
        keys = self.keys(states, context)
        first, cls = distinct(keys)
        # Into pages kept from the last call (fresh ones cost a page fault
        # each); rows of absent classes are zeroed: no samples.
        if self._buffer.shape[0] < first.size:
            self._buffer = np.empty((max(first.size, 2 * self._buffer.shape[0]),
                                     self._words * 8), dtype=np.uint8)
        raw, found = self.table._read_into(keys[first], self._buffer[:first.size])
        raw[~found] = 0
        words = raw.view(np.float64).reshape(first.size, self._words)
        count = np.minimum(words[:, 0].astype(np.int64), self.settings.slots)
        return words, count, cls

    def predict(self, states: npt.ArrayLike,
                context: Optional[npt.ArrayLike] = None) -> Prediction:
        """Predicts each state's result from its class and checks it."""
        words, count, cls = self._classes(states, context)
        x = np.atleast_2d(np.asarray(states, dtype=np.float64))
        return _predict(self._plan, x, words, self.settings.slots, count, cls, _HEADER)

    def publish(self, states: npt.ArrayLike, results: npt.ArrayLike,
                context: Optional[npt.ArrayLike] = None) -> None:
        """Adds computed samples (state -> result) to their classes."""
        x = np.atleast_2d(np.asarray(states, dtype=np.float64))
        y = np.atleast_2d(np.asarray(results, dtype=np.float64))
        if y.shape != x.shape:
            raise ValueError(f"results have shape {y.shape}, states {x.shape}")
        keys = self.keys(x, context)
        # One update per class, adding its rows in order (in C: _interp.c's
        # interp_append), the classes in the order of their first rows.
        first, cls = distinct(keys)
        by_class = np.argsort(cls, kind="stable")
        start = np.zeros(first.size + 1, dtype=np.int64)
        np.cumsum(np.bincount(cls, minlength=first.size), out=start[1:])
        self.table._append_samples(keys[first], self.settings.slots, self.d,
                                   np.concatenate([x, y], axis=1)[by_class], start)


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
        if p.shape != c.shape or p.ndim != 2:
            raise ValueError(f"predicted has shape {p.shape}, computed {c.shape}")
        if self.count and p.shape[1] != self.sum_sq.size:
            raise ValueError(f"predictions of {p.shape[1]} columns added to a Verification "
                             f"of {self.sum_sq.size}")
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
        if self.count and other.sum_sq.size != self.sum_sq.size:
            raise ValueError(f"a Verification of {other.sum_sq.size} columns merged into one "
                             f"of {self.sum_sq.size}")
        if self.count == 0:
            self.sum_sq, self.max_abs = np.zeros_like(other.sum_sq), np.zeros_like(other.max_abs)
        self.count += other.count
        self.sum_sq = self.sum_sq + other.sum_sq
        self.max_abs = np.maximum(self.max_abs, other.max_abs)

    def rms(self) -> Array:
        """Root-mean-square error per column (empty before any ``add``)."""
        return np.sqrt(self.sum_sq / self.count) if self.count else np.zeros(0)
