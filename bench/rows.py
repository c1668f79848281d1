"""The benchmark programs' JSON result files, read for the plots and
tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a program's --json file; SystemExit naming the file
    where it is not a JSON list of rows (a run that ended early leaves one
    cut short)."""
    try:
        rows = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise SystemExit(f"{path}: not a file of result rows ({e}); a run that ended early "
                         "leaves one cut short: run it again or remove the file") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise SystemExit(f"{path}: not a JSON list of result rows")
    return rows
