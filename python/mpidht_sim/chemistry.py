"""The geochemistry: PHREEQC (IPhreeqc from the ``phreeqc`` package) reacting
cells for one time step under the calcite-dolomite kinetics of
Palandri & Kharaka (2004), as in the POET benchmark.

Each cell is its own PHREEQC simulation (SOLUTION, O2(g) equilibrium,
KINETICS, END): the batch reaction of that simulation reacts it exactly
once. pH and pe are carried per cell as state variables, as POET did; the
solution's pe then follows the O2(g) equilibrium in the reaction. The
states must be charge balanced (``waters``): PHREEQC keeps a state's
imbalance through the reaction, and pH is not transported conservatively.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from . import engine as phreeqc
from .errors import ChemistryError
from .variables import AMOUNTS, VARIABLES

__all__ = ["Chemistry", "ChemistryError", "O2_SATURATION_INDEX", "RATES", "reactants"]

Array = npt.NDArray[np.float64]

# log10 k and activation energy E (J/mol) of the acid and neutral mechanisms,
# and the H+ activity exponent: Palandri & Kharaka (2004), carbonate
# mechanism removed, as in the POET benchmark (De Lucia et al. 2021, section
# 3.1); the factor is exp(-E/R (1/T - 1/298.15)).
_RATE = """
{name}
-start
10 if (m <= 0 and si("{name}") < 0) then goto 200
20 t = 1 / 298.15 - 1 / TK
30 acid = 10^{logk_acid} * exp({e_acid} / 8.314462 * t) * act("H+")^{n}
40 neutral = 10^{logk_neutral} * exp({e_neutral} / 8.314462 * t)
50 moles = parm(1) * (acid + neutral) * (1 - SR("{name}")) * time
200 save moles
-end
"""

#: The RATES block of both minerals.
RATES = ("RATES\n"
         + _RATE.format(name="Calcite", logk_acid=-0.30, e_acid=14400, n=1.0,
                        logk_neutral=-5.81, e_neutral=23500)
         + _RATE.format(name="Dolomite", logk_acid=-3.19, e_acid=36100, n=0.5,
                        logk_neutral=-7.53, e_neutral=52200))
#: Every reacting cell is held in equilibrium with O2(g) at this saturation
#: index, as in POET's SimDol2D input.
O2_SATURATION_INDEX = -0.1675

_SETUP = RATES + """
SELECTED_OUTPUT 1
 -reset false
 -state true
 -pH true
 -pe true
 -totals C Ca Cl Mg
 -kinetic_reactants Calcite Dolomite
END
"""

# Column order of the selected output after the state column.
_COLUMNS = ("C(mol/kgw)", "Ca(mol/kgw)", "Cl(mol/kgw)", "Mg(mol/kgw)", "pH", "pe",
            "k_Calcite", "k_Dolomite")
_AMOUNTS = [VARIABLES.index(v) for v in AMOUNTS]


def reactants(cells: str, calcite: float, dolomite: float, calcite_parm: float,
              dolomite_parm: float, dt: float | None = None) -> str:
    """The EQUILIBRIUM_PHASES (O2(g)) and KINETICS blocks of cells ("3" or
    "1-50"), with POET's integrator settings; dt (one step) for a batch
    reaction, None where TRANSPORT sets the time."""
    steps = f" -steps {dt!r} in 1\n" if dt is not None else ""
    return (f"EQUILIBRIUM_PHASES {cells}\n O2(g) {O2_SATURATION_INDEX!r} 10\n"
            f"KINETICS {cells}\nCalcite\n -m {calcite!r}\n -parms {calcite_parm!r}\n"
            f"Dolomite\n -m {dolomite!r}\n -parms {dolomite_parm!r}\n"
            f"{steps} -tol 1e-10\n -step_divide 100\n -bad_step_max 2000\n")


class Chemistry:
    """One IPhreeqc instance with the rates loaded; ``react`` is the
    expensive sub-model the DHT stands in for."""

    def __init__(self, database: str, calcite_parm: float, dolomite_parm: float) -> None:
        self.calcite_parm = calcite_parm
        self.dolomite_parm = dolomite_parm
        self.engine = phreeqc.open_engine(database)
        phreeqc.run(self.engine, _SETUP)

    def _cell(self, number: int, s: Array, dt: float) -> str:
        c, ca, cl, mg, ph, pe, calcite, dolomite = (float(v) for v in s)
        return (f"SOLUTION {number}\n units mol/kgw\n temp 25\n pH {ph!r}\n pe {pe!r}\n"
                f" C {c!r}\n Ca {ca!r}\n Cl {cl!r}\n Mg {mg!r}\n"
                + reactants(str(number), calcite, dolomite, self.calcite_parm,
                            self.dolomite_parm, dt) + "END\n")

    def react(self, states: Array, dt: float) -> Array:
        """The states (cells x 8: C, Ca, Cl, Mg, pH, pe, calcite, dolomite)
        after dt seconds of reaction."""
        if states.shape[0] == 0:
            return states.copy()
        # Concentrations below zero (round-off of transport) mean none.
        states = states.copy()
        states[:, _AMOUNTS] = np.maximum(states[:, _AMOUNTS], 0.0)
        out = phreeqc.run(self.engine,
                          "".join(self._cell(i + 1, s, dt) for i, s in enumerate(states)))
        react = [i for i, state in enumerate(out["state"]) if state == "react"]
        if len(react) != states.shape[0]:
            raise ChemistryError(f"PHREEQC reacted {len(react)} of {states.shape[0]} cells")
        return np.array([[float(out[col][i]) for col in _COLUMNS] for i in react])
