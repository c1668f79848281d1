"""Steady flow and upwind transport: mass is conserved up to what crosses
the fixed-pressure boundary cells, and the CFL limit sets the inner steps."""

import dataclasses
import re

import numpy as np
import pytest

from mpidht_sim import flow as flow_module
from mpidht_sim.config import ConfigError, load
from mpidht_sim.flow import Advection, solve_flow

# Pure flow and transport: no communicator of the tests' job.
pytestmark = pytest.mark.one_process


@pytest.mark.parametrize("nx, ny", [(12, 9), (1, 15)])
def test_mass_balance(nx: int, ny: int) -> None:
    cfg = load(None, {"grid.nx": nx, "grid.ny": ny})
    flow = solve_flow(cfg)
    # Fluid is conserved in every cell that is not held at a pressure.
    n = nx * ny
    net = np.bincount(flow.dst, flow.q, n) - np.bincount(flow.src, flow.q, n)
    fixed = [p.y * nx + p.x for p in cfg.fixed]
    free = np.setdiff1d(np.arange(n), fixed)
    assert np.abs(net[free]).max() < 1e-9 * flow.q.max()
    rng = np.random.default_rng(0)
    c = rng.random((n, 3))
    adv = Advection(flow, cfg, injected=np.array([1.0, 0.0, 0.5]))
    dt = 3.7 * adv.dt_max  # several inner steps
    assert adv.inner_steps(dt) == 4
    before = c[free].sum(axis=0) * flow.pore_volume
    after_c, exchanged = adv.step(c, dt)
    after = after_c[free].sum(axis=0) * flow.pore_volume
    assert np.allclose(after - before, exchanged, rtol=1e-12, atol=1e-12 * before.max())
    assert (after_c >= -1e-12).all()  # upwind with Courant <= 1 stays positive


def test_injected_water_spreads_downstream() -> None:
    cfg = load(None, {"grid.nx": 1, "grid.ny": 10})
    adv = Advection(solve_flow(cfg), cfg, injected=np.array([1.0]))
    c = np.zeros((10, 1))
    for _ in range(3):  # Courant 1/2: the front smears over a few cells
        c, _ = adv.step(c, adv.dt_max / 2)
    assert c[0, 0] == 1.0 and 1.0 > c[1, 0] > c[2, 0] > c[3, 0] > 0.0
    assert c[5, 0] == 0.0  # not arrived yet


@pytest.mark.parametrize("injecting, pressures", [(0, (1e6, 2e6)), (1, (1e6, 2e6, 3e6))])
def test_an_injecting_cell_nothing_flows_from_is_refused(
        injecting: int, pressures: tuple[float, ...]) -> None:
    """Injected water held where the pressure is lowest never entered: the
    run went on with the initial water alone, as if nothing were injected."""
    cells = [[0, 0], [-1, -1], [2, 0]]
    fixed = [{"cell": cells[i], "pressure": p} for i, p in enumerate(pressures)]
    fixed[injecting]["water"] = "injected"
    cfg = load(None, {"grid.nx": 5, "grid.ny": 5, "flow.fixed_pressure": fixed})
    x, y = cfg.fixed[injecting].x, cfg.fixed[injecting].y
    with pytest.raises(ConfigError, match=re.escape(
            f"flow.fixed_pressure[{injecting}]: the injected water held at cell [{x}, {y}] "
            f"({pressures[injecting]:g} Pa) never enters")):
        solve_flow(cfg)


@pytest.mark.parametrize("permeability", [1e300, 1e-320])
def test_flow_that_is_no_finite_number_is_refused(permeability: float) -> None:
    """A permeability the pressure solve or the fluxes cannot hold (over- or
    underflow) is refused, naming it; a field of NaN carried no flow."""
    cfg = load(None, {"grid.nx": 4, "grid.ny": 4, "grid.permeability": permeability})
    with pytest.raises(ConfigError, match=re.escape(
            f"flow: no finite steady flow with grid.permeability = {permeability:g} m^2, "
            "flow.viscosity = 0.001 Pa s and the pressures of flow.fixed_pressure")):
        solve_flow(cfg)


def test_time_step_of_too_many_inner_steps_is_refused() -> None:
    """Cells so small that a time step takes more than MAX_INNER_STEPS
    inner steps are refused, naming the time step and the cell size: the
    run would take years."""
    cfg = load(None, {"grid.nx": 4, "grid.ny": 4, "grid.cell_size": 1e-6})
    flow = solve_flow(cfg)
    with pytest.raises(ConfigError, match=r"time.time_step: 57600 s would take 6.12e\+12 "
                                          r"inner advection steps \(at most 1e\+06\)"):
        Advection(flow, cfg, injected=np.zeros(6))
    most = flow_module.MAX_INNER_STEPS
    longest = dataclasses.replace(cfg, time_step=most * flow.cfl_time_step(16))
    adv = Advection(flow, longest, injected=np.zeros(6))
    assert adv.inner_steps(longest.time_step) == most
    with pytest.raises(ConfigError, match="grid.cell_size"):
        adv.inner_steps(1.01 * longest.time_step)
    # Cells whose pore volume underflows to 0: a CFL limit of 0 s, refused
    # the same way (it was a ZeroDivisionError).
    tiny = load(None, {"grid.nx": 4, "grid.ny": 4, "grid.cell_size": 1e-200})
    with pytest.raises(ConfigError, match=r"would take inf inner advection steps.*grid.cell_size"):
        Advection(solve_flow(tiny), tiny, injected=np.zeros(6))
