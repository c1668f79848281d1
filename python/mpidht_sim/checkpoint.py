"""Saving the DHT with a run and starting another run from it.

A saved DHT is the mpidht dump file (``Table.dump``) plus a JSON file beside
it, ``<dump>.json``, with the settings that give its keys and values their
meaning: key and value sizes, rounding, digits, log, floor, time step and chemistry.
A run restores a DHT only if all of them equal its own; otherwise its
entries would answer questions they were not computed for. The check runs
with the configuration, before any MPI work.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ConfigError
from .surrogate import KEY_SIZE, VALUE_SIZE

if TYPE_CHECKING:
    from .config import Config

#: Version of the settings file's layout.
SETTINGS_VERSION = 2
#: Name of the saved DHT in the output folder.
DHT_FILE = "dht.mpidht"


def settings(cfg: Config) -> dict[str, Any]:
    """What a DHT's content depends on."""
    return {
        "version": SETTINGS_VERSION,
        "key_size": KEY_SIZE, "value_size": VALUE_SIZE,
        "digits": dict(cfg.dht.digits), "log": cfg.dht.log, "floor": cfg.dht.floor,
        "rounding": cfg.dht.rounding, "reset": list(cfg.dht.reset),
        "time_step": cfg.time_step, "database": cfg.database,
        "calcite_parm": cfg.calcite_parm, "dolomite_parm": cfg.dolomite_parm,
    }


def settings_path(dump: Path) -> Path:
    return dump.with_name(dump.name + ".json")


def write_settings(dump: Path, cfg: Config) -> None:
    """Writes ``<dump>.json`` (after the dump itself is complete)."""
    tmp = dump.with_name(dump.name + ".json.partial")
    tmp.write_text(json.dumps(settings(cfg), indent=1, sort_keys=True))
    tmp.replace(settings_path(dump))


def check_restore(cfg: Config) -> None:
    """Raises ConfigError unless cfg.dht.restore names a saved DHT whose
    settings match cfg's."""
    dump = cfg.dht.restore
    if dump is None:
        return
    if not dump.is_file():
        raise ConfigError(f"dht.restore: {dump} is not a file")
    meta = settings_path(dump)
    try:
        saved = json.loads(meta.read_text())
    except FileNotFoundError:
        raise ConfigError(f"dht.restore: {meta} is missing; it records the settings the "
                          f"DHT was computed with (written with the dump)") from None
    except (OSError, ValueError, RecursionError) as e:  # nested beyond Python's depth
        raise ConfigError(f"dht.restore: cannot read {meta}: {e}") from None
    ours = settings(cfg)
    if not isinstance(saved, dict) or saved.get("version") != SETTINGS_VERSION:
        raise ConfigError(f"dht.restore: {meta} is not a settings file of version "
                          f"{SETTINGS_VERSION}")
    differ = [f"{key} = {saved.get(key)!r} there, {value!r} here"
              for key, value in ours.items() if saved.get(key) != value]
    if differ:
        raise ConfigError(f"dht.restore: {dump} was computed with other settings: "
                          + "; ".join(differ))
