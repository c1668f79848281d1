"""The state of a cell: its names, in the order every array of states uses.

Transported aqueous variables first (total C, Ca, Cl and Mg in mol/kgw,
then pH and pe), then the immobile minerals (mol per cell)."""

TOTALS = ("C", "Ca", "Cl", "Mg")
AQUEOUS = TOTALS + ("pH", "pe")
MINERALS = ("calcite", "dolomite")
VARIABLES = AQUEOUS + MINERALS
#: Amounts that cannot be negative (all but pH and pe).
AMOUNTS = TOTALS + MINERALS
