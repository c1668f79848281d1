"""The simulator's own errors."""


class ConfigError(ValueError):
    """A configuration that cannot run; the message says which key and why."""


class ChemistryError(RuntimeError):
    """PHREEQC failed; the message carries its error text."""
