"""The command lines under a launcher: help, version, usage and
configuration errors are printed once (by rank 0), every rank exits
alike; --version names the version; validate and column take --output as
well as --out."""

import os
import subprocess
import sys

import pytest

from mpidht_sim import __version__
from mpidht_sim.cli import launcher_rank

MODULES = ["mpidht_sim", "mpidht_sim.validate", "mpidht_sim.column"]


def run(module: str, *args: str, rank: str) -> subprocess.CompletedProcess[str]:
    # A clean environment: no MPI launcher variables but the rank's.
    env = {k: v for k, v in os.environ.items()
           if k.startswith(("PATH", "PYTHON", "VIRTUAL_ENV", "HOME", "LD_"))}
    env["OMPI_COMM_WORLD_RANK"] = rank
    return subprocess.run([sys.executable, "-m", module, *args], env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("module", MODULES)
def test_help_and_version_on_rank_zero_only(module: str) -> None:
    zero, other = run(module, "--help", rank="0"), run(module, "--help", rank="1")
    assert zero.returncode == other.returncode == 0
    assert "usage:" in zero.stdout and other.stdout == ""
    version = run(module, "--version", rank="0")
    assert version.returncode == 0 and __version__ in version.stdout
    assert run(module, "--version", rank="3").stdout == ""
    bad = run(module, "--no-such-option", rank="1")
    assert bad.returncode == 2 and bad.stderr == ""
    assert "--no-such-option" in run(module, "--no-such-option", rank="0").stderr


@pytest.mark.parametrize("module", MODULES)
def test_configuration_error_on_rank_zero_only(module: str) -> None:
    """Every rank finds a bad --set and exits with 2; rank 0 alone says why."""
    zero = run(module, "--set", "time.no_such_key=1", rank="0")
    other = run(module, "--set", "time.no_such_key=1", rank="2")
    assert zero.returncode == other.returncode == 2
    assert "configuration error" in zero.stderr and "no_such_key" in zero.stderr
    assert other.stderr == ""


def test_output_is_accepted_where_out_was() -> None:
    for module in ("mpidht_sim.validate", "mpidht_sim.column"):
        text = run(module, "--help", rank="0").stdout
        assert "--out OUT, --output OUT" in text


def test_launcher_rank(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"):
        monkeypatch.delenv(name, raising=False)
    assert launcher_rank() == 0
    monkeypatch.setenv("PMI_RANK", "5")
    assert launcher_rank() == 5
