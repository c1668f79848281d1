"""An IPhreeqc instance (the ``phreeqc`` package) with a database loaded,
and running PHREEQC input on it with errors raised, not printed."""

from __future__ import annotations

from typing import Any

from .errors import ChemistryError


def databases() -> list[str]:
    """The names of the databases the ``phreeqc`` package ships."""
    from phreeqc import Phreeqc

    return sorted(str(name) for name in Phreeqc.ListBuiltInDatabases())


def open_engine(database: str) -> Any:
    """A fresh IPhreeqc instance with ``database`` (a database the
    ``phreeqc`` package ships, e.g. "phreeqc.dat") loaded. Raises
    ChemistryError naming the database if it cannot be loaded."""
    from phreeqc import Phreeqc  # deferred: only processes that react need it

    shipped = databases()
    if database not in shipped:
        raise ChemistryError(f"{database!r} is not a database the phreeqc package ships; "
                             f"it ships {', '.join(shipped)}")
    engine = Phreeqc()
    if engine.LoadBuiltInDatabase(database) != 0:
        raise ChemistryError(f"database {database!r} cannot be loaded: "
                             f"{engine.GetErrorString().strip()}")
    return engine


def run(engine: Any, text: str) -> dict[str, list[Any]]:
    """Runs PHREEQC input on engine; returns its selected output (column
    name -> values). Raises ChemistryError with PHREEQC's message."""
    if engine.RunString(text) != 0:
        raise ChemistryError(engine.GetErrorString().strip())
    out: dict[str, list[Any]] = engine.GetSelectedOutput()
    return out


def version(engine: Any) -> str:
    """The IPhreeqc version string."""
    return str(engine.GetVersionString())
