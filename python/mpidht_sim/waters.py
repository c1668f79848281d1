"""Waters: what the cells hold at the start and what enters the domain,
computed by PHREEQC from a definition as a geochemist writes it.

A water is defined in one of two ways:

- **As chemistry** (``solution``): a PHREEQC SOLUTION in mol/kgw at 25 °C
  (totals of C, Ca, Cl and Mg, absent ones zero; pH and pe, PHREEQC's
  defaults 7 and 4 when absent), optionally with one of pH or a total
  adjusted to electrical neutrality (``charge_balance``), then brought to
  equilibrium with phases at given saturation indices (``equilibrium``,
  each phase present in excess, 10 mol). The water is the result of that
  calculation: SOLUTION, EQUILIBRIUM_PHASES, END.
- **As a state** (``state``): the six numbers a cell carries (C, Ca, Cl,
  Mg, pH, pe), used as they are.

Either way, the state is then speciated exactly as the chemistry step will
see it (a SOLUTION of those numbers, nothing adjusted) and its electrical
imbalance is read from PHREEQC. pH is carried as state, so an imbalance
never goes away: a water whose imbalance exceeds the tolerance (eq/kgw) is
refused with its name and imbalance. On the 50-cell column of ``column``
(compared with PHREEQC's TRANSPORT after every step), a pore water off by
2.5e-9 eq/kgw raises the worst difference from 5.4e-5 to 7.7e-5 of a
variable's maximum, and one off by 2.5e-8 to 8.5e-4; at 2.5e-10 nothing
changes, hence the default tolerance of 1e-10 eq/kgw.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from . import engine as phreeqc
from .errors import ChemistryError, ConfigError
from .variables import AQUEOUS, TOTALS

#: A phase name as PHREEQC spells it (letters, digits and ()+-_.:,
#: no spaces): anything else could not be written into its input safely.
PHASE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9()+\-_.:]*\Z")
#: What charge_balance may name.
CHARGE_TARGETS = ("pH",) + TOTALS
#: Moles of each equilibrium phase: an excess that no water here exhausts.
PHASE_EXCESS = 10.0

_OUTPUT = """SELECTED_OUTPUT 1
 -reset false
 -state true
 -pH true
 -pe true
 -charge_balance true
 -totals C Ca Cl Mg
"""


@dataclass(frozen=True)
class WaterDefinition:
    """A water as the configuration defines it (exactly one of solution
    and state is set)."""

    name: str
    solution: Optional[dict[str, float]] = None
    charge_balance: Optional[str] = None
    equilibrium: dict[str, float] = field(default_factory=dict)
    state: Optional[dict[str, float]] = None

    def to_dict(self) -> dict[str, Any]:
        if self.state is not None:
            return {"state": dict(self.state)}
        out: dict[str, Any] = {"solution": dict(self.solution or {})}
        if self.charge_balance is not None:
            out["charge_balance"] = self.charge_balance
        if self.equilibrium:
            out["equilibrium"] = dict(self.equilibrium)
        return out


@dataclass(frozen=True)
class Water:
    """A water's state (C, Ca, Cl, Mg, pH, pe) and how it was obtained."""

    definition: WaterDefinition
    state: dict[str, float]
    #: Electrical imbalance of the state as the chemistry step sees it (eq/kgw).
    imbalance: float
    #: The PHREEQC input that computed the state ("" for a given state).
    phreeqc_input: str

    def to_dict(self) -> dict[str, Any]:
        return {"definition": self.definition.to_dict(), "state": dict(self.state),
                "charge_imbalance_eq_per_kgw": self.imbalance,
                "phreeqc_input": self.phreeqc_input}

    def describe(self) -> str:
        """One line: the state and its imbalance."""
        numbers = " ".join(f"{v} {self.state[v]:.6g}" for v in AQUEOUS)
        how = "computed by PHREEQC" if self.phreeqc_input else "given as a state"
        return f"{numbers}  (imbalance {self.imbalance:.1e} eq/kgw, {how})"


def check_definition(name: str, table: dict[str, Any]) -> WaterDefinition:
    """The definition in a configuration table ([initial] or [injected],
    minerals taken out); raises ConfigError naming the key at fault."""
    has_solution, has_state = "solution" in table, "state" in table
    if has_solution == has_state:
        raise ConfigError(f"[{name}] must define the water either as chemistry "
                          f"(solution = {{ ... }}) or as a state (state = {{ ... }}), "
                          "not both and not neither")
    if has_state:
        for key in ("charge_balance", "equilibrium"):
            if key in table:
                raise ConfigError(f"{name}.{key} applies to a solution, not to a state")
        state = _numbers(table["state"], f"{name}.state", AQUEOUS)
        missing = [v for v in AQUEOUS if v not in state]
        if missing:
            raise ConfigError(f"{name}.state needs every variable: {', '.join(missing)} "
                              f"missing (the state is C, Ca, Cl, Mg, pH, pe)")
        return WaterDefinition(name, state=state)
    solution = _numbers(table["solution"], f"{name}.solution", AQUEOUS)
    charge = table.get("charge_balance")
    if charge is not None and charge not in CHARGE_TARGETS:
        raise ConfigError(f"{name}.charge_balance must be one of "
                          f"{', '.join(CHARGE_TARGETS)}, got {charge!r}")
    phases = table.get("equilibrium", {})
    if not isinstance(phases, dict):
        raise ConfigError(f"{name}.equilibrium must be a table of phase = saturation index")
    for phase in phases:
        if not PHASE_NAME.match(phase):
            raise ConfigError(f"{name}.equilibrium: {phase!r} is not a phase name")
    equilibrium = _numbers(phases, f"{name}.equilibrium", None)
    return WaterDefinition(name, solution=solution, charge_balance=charge,
                           equilibrium=equilibrium)


def _numbers(table: Any, where: str, allowed: Optional[tuple[str, ...]]) -> dict[str, float]:
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    out = {}
    for key, value in table.items():
        if allowed is not None and key not in allowed:
            raise ConfigError(f"{where}: unknown variable {key!r}; expected some of "
                              f"{', '.join(allowed)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value):
            raise ConfigError(f"{where}.{key} must be a finite number, got {value!r}")
        if key in TOTALS and value < 0:
            raise ConfigError(f"{where}.{key} must be at least 0, got {value!r}")
        out[key] = float(value)
    return out


def phreeqc_input(definition: WaterDefinition, number: int = 1) -> str:
    """PHREEQC input that defines the water as solution ``number`` (SAVEd
    after its equilibration, if it has one)."""
    d = definition
    if d.state is not None:
        lines = [f"SOLUTION {number} {d.name} water", " units mol/kgw", " temp 25",
                 f" pH {d.state['pH']!r}", f" pe {d.state['pe']!r}"]
        lines += [f" {v} {d.state[v]!r}" for v in TOTALS if d.state[v] > 0]
        return "\n".join(lines) + "\nEND\n"
    solution = d.solution or {}
    lines = [f"SOLUTION {number} {d.name} water", " units mol/kgw", " temp 25"]
    for var in ("pH", "pe"):
        value = solution.get(var, 7.0 if var == "pH" else 4.0)
        lines.append(f" {var} {value!r}" + (" charge" if d.charge_balance == var else ""))
    for var in TOTALS:
        value = solution.get(var, 0.0)
        if value > 0 or d.charge_balance == var:
            lines.append(f" {var} {value!r}" + (" charge" if d.charge_balance == var else ""))
    if d.equilibrium:
        lines.append(f"EQUILIBRIUM_PHASES {number}")
        lines += [f" {phase} {si!r} {PHASE_EXCESS!r}" for phase, si in d.equilibrium.items()]
        lines.append(f"SAVE solution {number}")
    return "\n".join(lines) + "\nEND\n"


def _last_row(out: dict[str, list[Any]]) -> dict[str, float]:
    row = {name: out[column][-1] for name, column in
           (("C", "C(mol/kgw)"), ("Ca", "Ca(mol/kgw)"), ("Cl", "Cl(mol/kgw)"),
            ("Mg", "Mg(mol/kgw)"), ("pH", "pH"), ("pe", "pe"), ("charge", "charge(eq)"))}
    return {k: float(v) for k, v in row.items()}


def open_database(database: str) -> Any:
    """A PHREEQC engine with database loaded; raises ConfigError (listing
    the databases there are) if it cannot be loaded."""
    try:
        return phreeqc.open_engine(database)
    except ChemistryError as e:
        raise ConfigError(f"chemistry.database: {e}") from None


def _balance_hint(definition: WaterDefinition, state: dict[str, float],
                  imbalance: float) -> str:
    """What to do about a water refused for its imbalance (eq/kgw), given
    how it was defined and the state PHREEQC computed."""
    if definition.state is not None:
        return ("give its exact computed state, or define it as chemistry with "
                "charge_balance = \"pH\"")
    target = definition.charge_balance
    if target is None:
        return "set charge_balance to balance it"
    others = ", ".join(t for t in CHARGE_TARGETS if t != target)
    if target in TOTALS and state[target] == 0:
        # PHREEQC adjusts a total that is there; one of 0 stays 0.
        return (f"charge_balance = \"{target}\" is set, but {target} is 0 in the solution "
                f"and PHREEQC adjusts only a total that is present: give "
                f"{definition.name}.solution.{target} an amount above 0 to start from, or "
                f"balance on another of {others}")
    return (f"charge_balance = \"{target}\" is set, and PHREEQC's iterations stopped "
            f"{abs(imbalance):.2g} eq/kgw short of neutrality, as they do for waters this "
            "concentrated: raise chemistry.charge_tolerance above that if so small an "
            f"imbalance may persist, lower the solution's totals, or balance on another of "
            f"{others}")


def compute(definition: WaterDefinition, engine: Any, tolerance: float) -> Water:
    """The water's state, computed by PHREEQC on engine (``open_database``),
    and its imbalance; raises ConfigError naming the water if PHREEQC fails
    or the imbalance exceeds tolerance (eq/kgw)."""
    name = definition.name
    text = ""
    try:
        if definition.state is not None:
            state = dict(definition.state)
        else:
            text = phreeqc_input(definition)
            row = _last_row(phreeqc.run(engine, _OUTPUT + text))
            state = {v: row[v] for v in AQUEOUS}
        as_given = phreeqc_input(WaterDefinition(name, state=state))
        imbalance = _last_row(phreeqc.run(engine, _OUTPUT + as_given))["charge"]
    except ChemistryError as e:
        raise ConfigError(f"the {name} water: PHREEQC failed: {e}") from None
    if not all(math.isfinite(state[v]) for v in AQUEOUS):
        raise ConfigError(f"the {name} water: PHREEQC gave no finite state: {state}")
    if abs(imbalance) > tolerance:
        hint = _balance_hint(definition, state, imbalance)
        raise ConfigError(
            f"the {name} water is not charge balanced: imbalance {imbalance:.3g} eq/kgw, "
            f"more than chemistry.charge_tolerance = {tolerance:g} eq/kgw; pH is carried "
            f"as state, so the imbalance would persist through the run ({hint})")
    return Water(definition, {v: state[v] for v in AQUEOUS}, imbalance, text)
