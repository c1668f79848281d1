"""The simulator's own errors, and the check of a path given by a user."""

from pathlib import Path


class ConfigError(ValueError):
    """A configuration that cannot run; the message says which key and why."""


class ChemistryError(RuntimeError):
    """PHREEQC failed; the message carries its error text."""


def check_path(path: Path, what: str) -> None:
    """Raises ConfigError, naming what, where the system cannot look path
    up for a reason other than its absence (a name too long, a loop of
    links, no permission on a folder above it), which pathlib's exists()
    and is_dir() raise as OSError, or where it holds a NUL."""
    try:
        path.stat()
    except (FileNotFoundError, NotADirectoryError):
        pass
    except OSError as e:
        raise ConfigError(f"{what}: {str(path)!r} cannot be looked up: "
                          f"{e.strerror or e}") from None
    except ValueError:  # os.stat's, for an embedded NUL
        raise ConfigError(f"{what}: {str(path)!r} holds a NUL character, which no path "
                          "may") from None
