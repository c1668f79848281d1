"""The geochemistry: PHREEQC (IPhreeqc from the ``phreeqc`` package) reacting
cells for one time step under the calcite-dolomite kinetics of
Palandri & Kharaka (2004), as in the POET benchmark.

Each cell is its own PHREEQC simulation (SOLUTION, O2(g) equilibrium,
KINETICS, END): the batch reaction of that simulation reacts it exactly
once. pH and pe are carried per cell as state variables, as POET did; the
solution's pe then follows the O2(g) equilibrium in the reaction.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .config import Config

Array = npt.NDArray[np.float64]

# log10 k and activation energy E (J/mol) of the acid and neutral mechanisms,
# and the H+ activity exponent: Palandri & Kharaka (2004), carbonate
# mechanism removed (CHEMISTRY.md); the factor is exp(-E/R (1/T - 1/298.15)).
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

_SETUP = ("RATES\n"
          + _RATE.format(name="Calcite", logk_acid=-0.30, e_acid=14400, n=1.0,
                         logk_neutral=-5.81, e_neutral=23500)
          + _RATE.format(name="Dolomite", logk_acid=-3.19, e_acid=36100, n=0.5,
                         logk_neutral=-7.53, e_neutral=52200)
          + """
SELECTED_OUTPUT 1
 -reset false
 -state true
 -pH true
 -pe true
 -totals C Ca Cl Mg
 -kinetic_reactants Calcite Dolomite
END
""")

# Column order of the selected output after the state column.
_COLUMNS = ("C(mol/kgw)", "Ca(mol/kgw)", "Cl(mol/kgw)", "Mg(mol/kgw)", "pH", "pe",
            "k_Calcite", "k_Dolomite")


class ChemistryError(RuntimeError):
    """PHREEQC failed; the message carries its error text."""


class Chemistry:
    """One IPhreeqc instance with the rates loaded; ``react`` is the
    expensive sub-model the DHT stands in for."""

    def __init__(self, cfg: Config) -> None:
        from phreeqc import Phreeqc  # deferred: only workers need PHREEQC

        self.cfg = cfg
        self.engine = Phreeqc()
        if self.engine.LoadBuiltInDatabase(cfg.database) != 0:
            raise ChemistryError(f"cannot load database {cfg.database}: "
                                 f"{self.engine.GetErrorString()}")
        self._run(_SETUP)

    def _run(self, text: str) -> None:
        if self.engine.RunString(text) != 0:
            raise ChemistryError(self.engine.GetErrorString().strip())

    def _cell(self, number: int, s: Array, dt: float) -> str:
        c, ca, cl, mg, ph, pe, calcite, dolomite = (float(v) for v in s)
        return (f"SOLUTION {number}\n units mol/kgw\n temp 25\n pH {ph!r}\n pe {pe!r}\n"
                f" C {c!r}\n Ca {ca!r}\n Cl {cl!r}\n Mg {mg!r}\n"
                f"EQUILIBRIUM_PHASES {number}\n O2(g) -0.1675 10\n"
                f"KINETICS {number}\nCalcite\n -m {calcite!r}\n -parms {self.cfg.calcite_parm!r}\n"
                f"Dolomite\n -m {dolomite!r}\n -parms {self.cfg.dolomite_parm!r}\n"
                f" -steps {dt!r} in 1\n -tol 1e-10\n -step_divide 100\n"
                " -bad_step_max 2000\nEND\n")

    def react(self, states: Array, dt: float) -> Array:
        """The states (cells x 8: C, Ca, Cl, Mg, pH, pe, calcite, dolomite)
        after dt seconds of reaction."""
        if states.shape[0] == 0:
            return states.copy()
        # Concentrations below zero (round-off of transport) mean none.
        states = states.copy()
        states[:, [0, 1, 2, 3, 6, 7]] = np.maximum(states[:, [0, 1, 2, 3, 6, 7]], 0.0)
        self._run("".join(self._cell(i + 1, s, dt) for i, s in enumerate(states)))
        out = self.engine.GetSelectedOutput()
        react = [i for i, state in enumerate(out["state"]) if state == "react"]
        if len(react) != states.shape[0]:
            raise ChemistryError(f"PHREEQC reacted {len(react)} of {states.shape[0]} cells")
        return np.array([[float(out[col][i]) for col in _COLUMNS] for i in react])
