"""Waters defined as chemistry and computed by PHREEQC; waters given as
numbers that are not charge balanced are refused, naming the water and its
imbalance, before MPI starts. The expected states are those measured with
the phreeqc package and phreeqc.dat independently of this code."""

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mpidht_sim.config import ConfigError, load

from conftest import outside_job_env

# Waters computed by one PHREEQC, checked before MPI: no communicator of the job.
pytestmark = pytest.mark.one_process

#: The benchmark's typed-in pore water: not charge balanced (-9.8e-7 eq/kgw).
TYPED_INITIAL = {"C": 1.2279e-4, "Ca": 1.2279e-4, "Cl": 0.0, "Mg": 0.0, "pH": 9.91, "pe": 4.0}


def test_default_waters_are_computed() -> None:
    cfg = load()
    initial, injected = cfg.waters["initial"], cfg.waters["injected"]
    # Pore water in equilibrium with calcite, pH by charge balance, O2(g).
    assert initial.state["C"] == pytest.approx(1.22935e-4, rel=1e-5)
    assert initial.state["Ca"] == pytest.approx(initial.state["C"], rel=1e-9)
    assert initial.state["pH"] == pytest.approx(9.9065, abs=1e-4)
    assert initial.state["pe"] == pytest.approx(10.848, abs=1e-3)
    assert initial.state["Cl"] == initial.state["Mg"] == 0.0
    # MgCl2 solution, charge balanced, same O2(g).
    assert injected.state["pH"] == pytest.approx(6.9422, abs=1e-4)
    assert injected.state["pe"] == pytest.approx(13.81, abs=1e-2)
    assert injected.state["Mg"] == pytest.approx(0.001, rel=1e-9)
    assert injected.state["Cl"] == pytest.approx(0.002, rel=1e-9)
    for water in (initial, injected):
        assert abs(water.imbalance) < 1e-12
        assert "SOLUTION" in water.phreeqc_input and "EQUILIBRIUM_PHASES" in water.phreeqc_input
    # What the run starts from is what PHREEQC computed.
    assert cfg.initial == {**initial.state, "calcite": 2.07e-4, "dolomite": 0.0}
    assert cfg.injected == injected.state


def test_typed_in_state_is_refused() -> None:
    with pytest.raises(ConfigError) as e:
        load(None, {"initial.state": TYPED_INITIAL})
    message = str(e.value)
    assert "the initial water is not charge balanced" in message
    assert "imbalance -9.83e-07 eq/kgw" in message
    assert "chemistry.charge_tolerance = 1e-10" in message


def test_computed_state_given_back_is_accepted() -> None:
    """A state copied with full precision from a computed water passes, and
    the tolerance is the documented knob."""
    computed = load().waters["initial"].state
    cfg = load(None, {"initial.state": computed})
    assert cfg.waters["initial"].state == computed
    assert cfg.waters["initial"].phreeqc_input == ""
    relaxed = load(None, {"initial.state": TYPED_INITIAL, "chemistry.charge_tolerance": 1e-6})
    assert relaxed.initial["pH"] == 9.91


def test_unbalanced_solution_is_refused_and_charge_balance_fixes_it() -> None:
    """A water given a solution of its own drops the default's
    charge_balance and equilibrium."""
    unbalanced = {"injected.solution": {"Mg": 0.001, "Cl": 0.001}}
    with pytest.raises(ConfigError, match="the injected water is not charge balanced: "
                                          "imbalance 0.001"):
        load(None, unbalanced)
    # Adjusting Cl instead of pH: Cl becomes twice Mg.
    cfg = load(None, {**unbalanced, "injected.charge_balance": "Cl"})
    assert cfg.injected["Cl"] == pytest.approx(0.002, rel=1e-4)


@pytest.mark.parametrize("water, hint", [
    # Balanced on pH, which PHREEQC's iterations leave 3.2e-8 eq/kgw off.
    ({"solution": {"Cl": 5.0}, "charge_balance": "pH"},
     'charge_balance = "pH" is set, and PHREEQC\'s iterations stopped 3.2e-08 eq/kgw short '
     "of neutrality, as they do for waters this concentrated: raise "
     "chemistry.charge_tolerance above that if so small an imbalance may persist, lower "
     "the solution's totals, or balance on another of C, Ca, Cl, Mg"),
    # Balanced on a total that is absent: PHREEQC leaves it at 0.
    ({"solution": {"Ca": 0.001}, "charge_balance": "Cl"},
     'charge_balance = "Cl" is set, but Cl is 0 in the solution and PHREEQC adjusts only '
     "a total that is present: give initial.solution.Cl an amount above 0 to start from, "
     "or balance on another of pH, C, Ca, Mg"),
    ({"solution": {"Ca": 0.001, "Cl": 0.001}},
     "set charge_balance to balance it"),
])
def test_hint_fits_how_the_water_was_balanced(water: dict[str, Any], hint: str) -> None:
    """A water refused for its imbalance is told what fits how it was
    defined: one already balanced on pH was told to "set charge_balance to
    balance it"."""
    with pytest.raises(ConfigError) as e:
        load(None, {f"initial.{key}": value for key, value in water.items()})
    message = str(e.value)
    assert message.startswith("the initial water is not charge balanced: imbalance ")
    assert message.endswith(f"({hint})")


@pytest.mark.parametrize("overrides, message", [
    ({"initial.state": {"C": 1e-4}}, "initial.state needs every variable: Ca, Cl, Mg, pH, pe"),
    ({"initial.solution": {"Fe": 1e-4}}, "initial.solution: unknown variable 'Fe'"),
    ({"initial.solution": {"C": -1.0}}, "initial.solution.C must be at least 0"),
    ({"initial.solution": {"pH": "high"}}, "initial.solution.pH must be a finite number"),
    ({"initial.charge_balance": "Na"}, "initial.charge_balance must be one of pH, C, Ca"),
    ({"initial.equilibrium": {"Calcite; END": 0.0}}, "is not a phase name"),
    ({"initial.equilibrium": {"Calcitte": 0.0}}, "the initial water: PHREEQC failed: "
                                                 "ERROR: Phase not found in database, Calcitte"),
    ({"initial.state": TYPED_INITIAL, "initial.solution": {"pH": 7.0}}, "not both"),
    ({"injected.state": dict(TYPED_INITIAL, Cl=0.002), "injected.equilibrium": {}},
     "injected.equilibrium applies to a solution, not to a state"),
    ({"chemistry.database": "nosuch.dat"}, "'nosuch.dat' is not a database the phreeqc "
                                           "package ships; it ships Amm.dat"),
    ({"chemistry.database": "ColdChem.dat"}, "Phase not found in database, Calcite"),
    ({"chemistry.charge_tolerance": -1.0}, "chemistry.charge_tolerance must be at least 0"),
])
def test_bad_waters_rejected(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        load(None, overrides)
    assert message in str(e.value)


def test_cli_refuses_unbalanced_water_before_mpi(tmp_path: Path) -> None:
    config = tmp_path / "typed.toml"
    config.write_text("[initial]\nstate = { C = 1.2279e-4, Ca = 1.2279e-4, Cl = 0.0, "
                      "Mg = 0.0, pH = 9.91, pe = 4.0 }\n")
    code = ("import sys; from mpidht_sim.cli import main; "
            f"rc = main(['--config', {str(config)!r}, '--quiet']); "
            "assert 'mpi4py.MPI' not in sys.modules; sys.exit(rc)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, env=outside_job_env(), check=False)
    assert done.returncode == 2, done.stderr
    assert "the initial water is not charge balanced: imbalance -9.83e-07" in done.stderr
