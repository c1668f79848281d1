"""The version is defined once, by the MPIDHT_VERSION_* macros of
include/mpidht.h; everything else that states it must agree. The checks of
files in the checkout are skipped where the tests run without one."""

import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import mpidht
from mpidht import _core

# Version strings and fresh interpreters: no communicator.
pytestmark = pytest.mark.one_process

ROOT = Path(__file__).resolve().parents[2]
HEADER = ROOT / "include" / "mpidht.h"
checkout = pytest.mark.skipif(not HEADER.is_file(), reason="no source checkout")


def header_version() -> str:
    text = HEADER.read_text(encoding="utf-8")
    parts = []
    for part in ("MAJOR", "MINOR", "PATCH"):
        found = re.findall(rf"^#define MPIDHT_VERSION_{part} +([0-9]+) *$", text, re.M)
        assert len(found) == 1, f"MPIDHT_VERSION_{part} defined {len(found)} times"
        parts.append(found[0])
    return ".".join(parts)


def test_version_is_major_minor_patch() -> None:
    assert re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", mpidht.__version__)
    assert mpidht.__version__ == _core.VERSION


def test_installed_metadata_agrees() -> None:
    """pip's metadata (setup.py read the header) and the extension (compiled
    from it) come from one build."""
    assert metadata.version("mpidht") == mpidht.__version__


@checkout
def test_package_built_from_this_checkout() -> None:
    assert mpidht.__version__ == header_version()


def sim_version(extra_path: str | None) -> str:
    """mpidht_sim.__version__ in a fresh interpreter, which must import
    neither mpidht nor mpi4py (importing mpi4py.MPI starts MPI)."""
    code = ("import sys, mpidht_sim; "
            "loaded = sorted({'mpidht', 'mpi4py'} & sys.modules.keys()); "
            "assert not loaded, loaded; print(mpidht_sim.__version__)")
    env = dict(os.environ)
    if extra_path is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [extra_path, env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, check=False, cwd=Path(__file__).parent)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_sim_version_installed() -> None:
    """The installed simulator reads the installed metadata."""
    assert sim_version(None) == metadata.version("mpidht")


@checkout
def test_sim_version_from_checkout() -> None:
    """The simulator run from the checkout's python/ reads the header."""
    assert sim_version(str(ROOT / "python")) == header_version()


@checkout
def test_no_other_copy_of_the_version() -> None:
    """Neither CMake, pyproject.toml nor the packages write the number
    down; CMake reads it from the header."""
    cmake = (ROOT / "CMakeLists.txt").read_text(encoding="utf-8")
    project = re.search(r"^project\(mpidht VERSION ([^\s)]+)", cmake, re.M)
    assert project and project.group(1).startswith("${"), "project() must read the header"
    assert "include/mpidht.h" in cmake
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^dynamic = \[.*"version".*\]', pyproject, re.M)
    assert not re.search(r"^version *=", pyproject, re.M)
    for init in ("python/mpidht/__init__.py", "python/mpidht_sim/__init__.py"):
        text = (ROOT / init).read_text(encoding="utf-8")
        assert not re.search(r"""__version__\s*(:\s*str\s*)?=\s*["']""", text), init


@checkout
def test_citation_states_the_version() -> None:
    """CITATION.cff names a version (CFF has no way to read it): the header's."""
    cff = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert re.findall(r"^version: *\"?([^\s\"]+)\"? *$", cff, re.M) == [header_version()]


@checkout
def test_changelog_has_the_version() -> None:
    """CHANGELOG.md has a section for the header's version, the newest
    below Unreleased."""
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    sections = re.findall(r"^## \[([^\]]+)\]", changelog, re.M)
    assert sections[:2] == ["Unreleased", header_version()], sections
