"""Steady Darcy flow on the grid and explicit upwind advection.

Cells are numbered ``y * nx + x`` (y = 0 is the top row). Between two
neighbouring cells the volumetric flux is Darcy's law with the harmonic
(here: equal) transmissibility ``k / mu * A / dx``; the domain's edges are
closed. Cells listed in ``flow.fixed_pressure`` hold their pressure: they
are where water enters or leaves the domain, and a fixed cell that
``injects`` holds the injected water's concentrations.

Settings that pass the configuration's checks can still give no usable
flow: a permeability over viscosity so far from 1e-10 m^2/(Pa s) that the
pressure solve or the fluxes overflow or underflow, or a time step that
needs more than ``MAX_INNER_STEPS`` inner steps (tiny cells); both raise
ConfigError naming the settings.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Optional

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .config import Config
from .errors import ConfigError
from .variables import AQUEOUS

Array = npt.NDArray[np.float64]

#: The most inner steps one coupling step may take: a guard against
#: settings that would not finish, not a limit on speed. An inner step
#: moves water at most one cell, so 10^6 of them move the fastest cell's
#: water five times the longest straight path of the largest grid the
#: configuration accepts (nx + ny <= 200 000) in one coupling step; an
#: inner step took 15 us on a 4 x 4 grid and 0.7 ms on SimDol2D's 50 x 50
#: (whose time step needs 3), so 10^6 of them 15 s and 12 min.
MAX_INNER_STEPS = 10**6


@dataclass(frozen=True)
class FlowField:
    """Face fluxes (m^3/s) of the steady flow: ``src[i] -> dst[i]`` carries
    ``q[i] > 0``; plus what each cell's pore volume is."""

    src: npt.NDArray[np.int64]
    dst: npt.NDArray[np.int64]
    q: Array
    pore_volume: float
    pressure: Array

    def cfl_time_step(self, n_cells: int) -> float:
        """The largest explicit time step with Courant number 1: no cell
        may send out more than its pore volume in one step."""
        out = np.bincount(self.src, weights=self.q, minlength=n_cells)
        return float(self.pore_volume / out.max())


def _faces(nx: int, ny: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Every pair of neighbouring cells (left-right, then top-bottom)."""
    idx = np.arange(nx * ny).reshape(ny, nx)
    a = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    b = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    return a.astype(np.int64), b.astype(np.int64)


def solve_flow(cfg: Config) -> FlowField:
    """The steady pressure field and its face fluxes."""
    n = cfg.nx * cfg.ny
    a, b = _faces(cfg.nx, cfg.ny)
    # Unit thickness: face area = cell_size * 1 m, distance = cell_size.
    trans = cfg.permeability / cfg.viscosity  # * area / distance, which cancel
    fixed = {p.y * cfg.nx + p.x: p.pressure for p in cfg.fixed}
    diag = np.bincount(np.concatenate([a, b]), minlength=n).astype(float) * trans
    rows = np.concatenate([a, b, np.arange(n)])
    cols = np.concatenate([b, a, np.arange(n)])
    vals = np.concatenate([-trans * np.ones(a.size), -trans * np.ones(b.size), diag])
    rhs = np.zeros(n)
    is_fixed = np.zeros(n, dtype=bool)
    is_fixed[list(fixed)] = True
    # Fixed cells: identity rows.
    keep = ~is_fixed[rows]
    rows, cols, vals = rows[keep], cols[keep], vals[keep]
    fixed_idx = np.array(sorted(fixed), dtype=np.int64)
    rows = np.concatenate([rows, fixed_idx])
    cols = np.concatenate([cols, fixed_idx])
    vals = np.concatenate([vals, np.ones(fixed_idx.size)])
    rhs[fixed_idx] = [fixed[i] for i in fixed_idx]
    matrix = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    with warnings.catch_warnings(), np.errstate(over="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", spla.MatrixRankWarning)  # NaN: refused below
        pressure = np.asarray(spla.spsolve(matrix.tocsc(), rhs), dtype=np.float64)
        flux = trans * (pressure[a] - pressure[b])  # a -> b when positive
    src = np.where(flux > 0, a, b)
    dst = np.where(flux > 0, b, a)
    q = np.abs(flux)
    moving = q > 0
    if not (np.isfinite(pressure).all() and np.isfinite(flux).all() and moving.any()):
        pressures = [p.pressure for p in cfg.fixed]
        raise ConfigError(
            f"flow: no finite steady flow with grid.permeability = {cfg.permeability:g} m^2, "
            f"flow.viscosity = {cfg.viscosity:g} Pa s and the pressures of "
            f"flow.fixed_pressure ({min(pressures):g} to {max(pressures):g} Pa): the "
            "pressure solve or the fluxes (permeability / viscosity x pressure difference) "
            "overflow or underflow")
    entering = src[moving][~is_fixed[dst[moving]]]  # sources of flow into the domain
    for i, p in enumerate(cfg.fixed):
        if p.injects and not np.any(entering == p.y * cfg.nx + p.x):
            raise ConfigError(
                f"flow.fixed_pressure[{i}]: the injected water held at cell [{p.x}, {p.y}] "
                f"({p.pressure:g} Pa) never enters: no water flows from it into a cell that "
                "reacts (its pressure is not above that of its neighbours)")
    pore_volume = cfg.cell_size * cfg.cell_size * 1.0 * cfg.porosity
    return FlowField(src[moving], dst[moving], q[moving], pore_volume, pressure)


class Advection:
    """First-order upwind advection of the aqueous variables, with as many
    inner steps per coupling step as the CFL limit requires."""

    def __init__(self, flow: FlowField, cfg: Config, injected: Array) -> None:
        self.flow = flow
        self.n = cfg.nx * cfg.ny
        self.fixed = np.array([p.y * cfg.nx + p.x for p in cfg.fixed], dtype=np.int64)
        self.injecting = np.array([p.y * cfg.nx + p.x for p in cfg.fixed if p.injects],
                                  dtype=np.int64)
        self.injected = injected
        self.dt_max = flow.cfl_time_step(self.n)
        self.inner_steps(cfg.time_step)  # refused now, not at the first step

    def inner_steps(self, dt: float) -> int:
        """The inner steps over dt, each within the CFL limit; raises
        ConfigError beyond MAX_INNER_STEPS."""
        with np.errstate(over="ignore", divide="ignore"):
            # As NumPy divides: a CFL limit of 0 s (a cell's pore volume
            # lost to underflow) gives inf, refused below.
            steps = np.ceil(np.divide(dt, self.dt_max) - 1e-12)
        if not steps <= MAX_INNER_STEPS:
            raise ConfigError(
                f"time.time_step: {dt:g} s would take {steps:.3g} inner advection steps "
                f"(at most {MAX_INNER_STEPS:g}) at the CFL limit of {self.dt_max:.3g} s, which "
                "grows with grid.cell_size squared and grid.porosity and falls with the flow "
                "(grid.permeability / flow.viscosity, flow.fixed_pressure): shorten "
                "time.time_step or make grid.cell_size larger")
        return max(1, int(steps))

    def step(self, c: Array, dt: float,
             injected: Optional[Array] = None) -> tuple[Array, Array]:
        """Advects the columns of c (cells x variables) over dt, the
        injecting cells holding ``injected`` (the injected water where
        None); returns the new field and the amount (per variable,
        concentration x m^3) that entered minus what left through the fixed
        cells."""
        c = c.copy()
        c[self.injecting] = self.injected if injected is None else injected
        steps = self.inner_steps(dt)
        h = dt / steps
        src, dst, q = self.flow.src, self.flow.dst, self.flow.q
        v = self.flow.pore_volume
        exchanged = np.zeros(c.shape[1])
        for _ in range(steps):
            moved = q[:, None] * h * c[src]  # amount leaving src for dst
            delta = np.zeros_like(c)
            np.add.at(delta, dst, moved)
            np.subtract.at(delta, src, moved)
            # Fixed cells are boundaries: what they gain leaves the domain,
            # what they lose entered it; their state stays as it is.
            exchanged -= delta[self.fixed].sum(axis=0)
            delta[self.fixed] = 0.0
            c += delta / v
        return c, exchanged


def advection_for(cfg: Config) -> Advection:
    """cfg's steady flow and the advection of its aqueous variables, with
    the injected water at the injecting cells; raises ConfigError where the
    flow cannot be computed or a time step takes too many inner steps."""
    return Advection(solve_flow(cfg), cfg, np.array([cfg.injected[v] for v in AQUEOUS]))
