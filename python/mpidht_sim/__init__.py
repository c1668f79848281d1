"""A POET-style reactive-transport simulator (calcite-dolomite benchmark) with
mpidht as the surrogate cache of its PHREEQC chemistry. Run
``python -m mpidht_sim --help``."""

__version__ = "0.2.0"
