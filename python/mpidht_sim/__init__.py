"""A POET-style reactive-transport simulator (calcite-dolomite benchmark) with
mpidht as the surrogate cache of its PHREEQC chemistry. Run
``python -m mpidht_sim --help``."""

import re
from pathlib import Path


def _version() -> str:
    """mpidht's version, found without importing mpidht (which imports
    mpi4py.MPI, and that starts MPI): in a source checkout, from the
    MPIDHT_VERSION_* lines of include/mpidht.h, where it is defined; else
    from the installed distribution's metadata (which setup.py took from
    the same lines); "0+unknown" if neither exists."""
    root = Path(__file__).resolve().parent.parent.parent  # python/mpidht_sim/ -> checkout
    header = root / "include" / "mpidht.h"
    if header.is_file() and (root / "pyproject.toml").is_file():
        text = header.read_text(encoding="utf-8")
        parts = [re.search(rf"^#define MPIDHT_VERSION_{part} +([0-9]+) *$", text, re.M)
                 for part in ("MAJOR", "MINOR", "PATCH")]
        if all(parts):
            return ".".join(m.group(1) for m in parts if m)
    # Imported here, where needed: it takes a third of the command's
    # imports, before the stop signal's handler is installed (cli.main).
    from importlib import metadata

    try:
        return metadata.version("mpidht")
    except metadata.PackageNotFoundError:
        return "0+unknown"


__version__ = _version()
